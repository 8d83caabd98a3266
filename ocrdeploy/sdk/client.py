"""An HTTP client for the OCR service: /v1/models, /health, /metrics, /v1/chat/completions with an image.

It never goes through a proxy (loopback services behind a corporate proxy are the
classic "why is it stuck" of the seed's error table), and a 400 comes back explained.
"""

from __future__ import annotations

import base64

import httpx

from ..services.argv import SERVED_NAME


class ServiceError(Exception):
    def __init__(self, status: int | None, message: str, explanation: str | None = None):
        self.status, self.message, self.explanation = status, message, explanation
        super().__init__(f"HTTP {status}: {message}" + (f" ({explanation})" if explanation else ""))


def explain_400(message: str) -> str | None:
    low = message.lower()
    if "mm_processor_kwargs" in low or "trust-request-mm-kwargs" in low or "trust_request_mm_kwargs" in low:
        return ("per-request mm_processor_kwargs need the server started with --trust-request-mm-kwargs "
                "(vLLM 0.31+ rejects them without it)")
    if "is not a multimodal model" in low:
        return ("the served model takes no images (a text-only model, e.g. a --model-dir that is not "
                "MiniCPM-OCR-1.0): serve the OCR model")
    if "image(s) may be provided" in low or "limit_mm_per_prompt" in low or "limit-mm-per-prompt" in low:
        return "too many images for the server: start it with --limit-mm-per-prompt '{\"image\": 36}'"
    return None


class OcrClient:
    def __init__(self, base_url: str, api_key: str | None = None, timeout: float = 600.0, model: str = SERVED_NAME):
        self.base = base_url.rstrip("/")
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(base_url=self.base, headers=headers, timeout=timeout, trust_env=False)

    def close(self):
        self.http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _check(self, r: httpx.Response) -> httpx.Response:
        if r.status_code >= 400:
            try:
                err = r.json().get("error")
                message = err.get("message") if isinstance(err, dict) else str(err)
            except ValueError:
                message = r.text[:300]
            raise ServiceError(r.status_code, message or r.reason_phrase,
                               explain_400(message or "") if r.status_code == 400 else None)
        return r

    def models(self) -> list[str]:
        return [m.get("id") for m in self._check(self.http.get("/v1/models")).json().get("data", [])]

    def health(self) -> bool:
        try:
            return self.http.get("/health").status_code == 200
        except httpx.HTTPError:
            return False

    def metrics(self) -> str:
        return self._check(self.http.get("/metrics")).text

    def chat_image(self, image: bytes, prompt: str, mime: str = "image/png", max_tokens: int = 512,
                   mm_processor_kwargs: dict | None = None, extra: dict | None = None) -> str:
        """The answer to a prompt about one image: choices[0].message.content."""
        url = f"data:{mime};base64,{base64.b64encode(image).decode()}"
        body = {"model": self.model, "max_tokens": max_tokens, "temperature": 0,
                "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                                          {"type": "text", "text": prompt}]}]}
        if mm_processor_kwargs:
            body["mm_processor_kwargs"] = mm_processor_kwargs
        body.update(extra or {})
        data = self._check(self.http.post("/v1/chat/completions", json=body)).json()
        return data["choices"][0]["message"]["content"] or ""
