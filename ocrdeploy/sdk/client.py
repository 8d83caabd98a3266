"""An HTTP client for the OCR service: /v1/models, /health, /metrics, /v1/chat/completions with an image.

It never goes through a proxy (loopback services behind a corporate proxy are the
classic "why is it stuck" of the seed's error table), and a 400 comes back explained.
A server may be anyone's (`inv verify --server-url`): every request has an overall
deadline (httpx's timeout is per read, which a server dripping a byte at a time never
trips) and its answer a size limit, checked while it arrives.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import threading
import time
from urllib.parse import urlsplit

import httpx

from ..services.argv import SERVED_NAME
from .inflate import ACCEPT, decoded


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


MAX_ANSWER = 8 << 20          # /v1/models, /metrics and one chat answer: KBs, a few hundred KB at most
MAX_MODEL_ID = 1024          # a served name or the path vLLM serves (the longest real ones: a few hundred characters)
QUICK = 15.0                  # /v1/models, /health, /metrics answer at once on a server that is up


class Answer:
    """What came back: status, reason, headers and the body (read within the deadline and the limit)."""

    def __init__(self, status_code: int, reason_phrase: str, content: bytes):
        self.status_code, self.reason_phrase, self.content = status_code, reason_phrase, content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self):
        return json.loads(self.content)


def _names_a_host(url: str) -> bool:
    """Whether reaching the URL takes a name lookup (its host is not an IP literal)."""
    host = urlsplit(url).hostname or ""
    try:
        ipaddress.ip_address(host)
        return False
    except ValueError:
        return True


class OcrClient:
    def __init__(self, base_url: str, api_key: str | None = None, timeout: float = 600.0, model: str = SERVED_NAME,
                 max_answer: int = MAX_ANSWER, quick: float = QUICK):
        self.base = base_url.rstrip("/")
        self.model = model
        self.timeout, self.max_answer, self.quick = float(timeout), int(max_answer), min(float(quick), float(timeout))
        headers = {"Accept-Encoding": ACCEPT, **({"Authorization": f"Bearer {api_key}"} if api_key else {})}
        self.http = httpx.Client(base_url=self.base, headers=headers, timeout=self.timeout, trust_env=False)
        self.named = _names_a_host(self.base)

    def request(self, method: str, path: str, deadline: float | None = None, **kw) -> Answer:
        """One request, ended after `deadline` seconds in all (name lookup, connect, headers, every byte of
        the body).  httpx's timeouts do not cover the name lookup (getaddrinfo blocks as long as the
        resolver takes), so a server given by name is asked from a daemon thread that is left behind
        when the deadline passes; an IP literal (the loopback of every tunnel) needs no lookup."""
        limit = self.timeout if deadline is None else deadline
        if not self.named:
            return self._request(method, path, limit, **kw)
        box = {}

        def work():
            try:
                box["answer"] = self._request(method, path, limit, **kw)
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=work, name=f"{method} {path}", daemon=True)
        worker.start()
        worker.join(limit)
        if worker.is_alive():
            raise httpx.TimeoutException(f"{method} {path}: no whole answer within {limit:g} s "
                                         "(name lookup included)")
        if "error" in box:
            raise box["error"]
        return box["answer"]

    def _request(self, method: str, path: str, limit: float, **kw) -> Answer:
        end = time.monotonic() + limit

        def left():
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise httpx.TimeoutException(f"{method} {path}: no whole answer within {limit:g} s")
            return remaining

        with self.http.stream(method, path, timeout=httpx.Timeout(left()), **kw) as r:
            declared = r.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > self.max_answer:
                raise httpx.DecodingError(f"{method} {path}: the answer is {int(declared)} bytes, more than "
                                          f"{self.max_answer}")
            body = bytearray()
            # the body as decoded (gzip/deflate undone), counted as it is decoded, so a small compressed answer
            # that inflates past the limit stops there; inflate.decoded, not httpx's iter_bytes, which inflates
            # each network read whole (64 KiB of a bomb: 64 MiB held before the count could stop it)
            for chunk in decoded(r.iter_raw(), r.headers.get("content-encoding")):
                body += chunk
                if len(body) > self.max_answer:
                    raise httpx.DecodingError(f"{method} {path}: the answer is over {self.max_answer} bytes")
                left()
            return Answer(r.status_code, r.reason_phrase, bytes(body))

    def close(self):
        self.http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _check(self, r: Answer) -> Answer:
        if r.status_code >= 400:
            try:
                doc = r.json()
                err = doc.get("error") if isinstance(doc, dict) else doc
                message = err.get("message") if isinstance(err, dict) else str(err)
            except (ValueError, RecursionError):
                message = r.text[:300]
            message = str(message)[:500]
            raise ServiceError(r.status_code, message or r.reason_phrase,
                               explain_400(message or "") if r.status_code == 400 else None)
        return r

    def models(self) -> list[str]:
        doc = self._check(self.request("GET", "/v1/models", self.quick)).json()
        data = doc.get("data") if isinstance(doc, dict) else None
        if not isinstance(data, list):
            raise ValueError("/v1/models: not an OpenAI model list (no \"data\" list)")
        ids = []
        for i, m in enumerate(data):
            mid = m.get("id") if isinstance(m, dict) else None
            # an id is the name a request sends back: one that is not a short printable string (null, a number,
            # a list, an escape sequence, a page of text) is not a model list, and neither truncated nor cleaned
            # into one (a cleaned name would be sent and refused, a readiness check passed on it)
            if not isinstance(mid, str) or not mid or len(mid) > MAX_MODEL_ID or not mid.isprintable():
                shown = repr(mid if isinstance(m, dict) else m)
                raise ValueError(f"/v1/models: not an OpenAI model list (entry {i + 1} has no model id of printable "
                                 f"text: {shown[:80]}{'...' if len(shown) > 80 else ''})")
            ids.append(mid)
        return ids

    def health(self) -> bool:
        try:
            return self.request("GET", "/health", self.quick).status_code == 200
        except httpx.HTTPError:
            return False

    def metrics(self) -> str:
        return self._check(self.request("GET", "/metrics", self.quick)).text

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
        data = self._check(self.request("POST", "/v1/chat/completions", json=body)).json()
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ValueError("the answer has no choices[0].message.content")
        return content_text(content, "choices[0].message.content")


def content_text(value, what: str) -> str:
    """A message's or a delta's content as text: a string; null (a reply all reasoning, a tool call) as ''; a
    list of typed parts (Mistral's reasoning models: [{"type": "thinking", ...}, {"type": "text", "text": ...}])
    as its text parts joined, the others skipped.  Anything else (a number, an object, a list of what is not a
    part) is an answer no OpenAI-compatible server sends: an error, not a page read as '123' or as nothing and
    scored as the model's text."""
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, list) and all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in value):
        texts = [p.get("text") for p in value if p["type"] == "text"]
        if all(isinstance(t, str) for t in texts):
            return "".join(texts)
    raise ValueError(f"{what} is a {type(value).__name__}, not text: {str(value)[:80]}")
