"""A local OpenAI-compatible OCR server for the bench tests: real HTTP on 127.0.0.1, streaming SSE.

It stands for a multimodal OCR service on a GPU (image answers and DSpark counters), which no engine here
can serve; the bench against real engines is in tests/commands/test_bench_engines.py (marker engine).
What it answers for a page is keyed by the sha256 of the image bytes it received, so a client that
re-encodes or resizes a page gets "unknown image" back.  It records every request body, the most
requests it held at once, and keeps vLLM's spec-decode counters, which start far from zero (a server
that has been up for a while) and grow by DRAFTS/ACCEPTED per answered request.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

START_DRAFTS, START_ACCEPTED = 1000.0, 5200.0      # totals: 1 + 5200/1000 = 6.2 over the server's life
DRAFTS, ACCEPTED = 10, 25                          # per request: the run's own accept length is 1 + 25/10 = 3.5


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class OcrServer:
    def __init__(self, answers: dict[str, str], *, gather: int = 1, gather_timeout: float = 5.0,
                 chunk_delay: float = 0.0, fail_every: int = 0, usage: bool = True, spec: bool = True,
                 model: str = "minicpm-ocr"):
        """answers: sha256 of an image -> the Markdown to answer.  gather: hold the first `gather` requests until
        that many are in flight at once (or gather_timeout passed): overlap seen without depending on timing.
        fail_every: every n-th request answers 500."""
        self.answers, self.gather, self.gather_timeout = answers, gather, gather_timeout
        self.chunk_delay, self.fail_every, self.usage, self.spec, self.model = (chunk_delay, fail_every, usage,
                                                                                 spec, model)
        self.lock = threading.Condition()
        self.in_flight = self.max_in_flight = self.count = 0
        self.drafts, self.accepted = START_DRAFTS, START_ACCEPTED
        self.bodies: list[dict] = []
        self.images: list[bytes] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                server.get(self)

            def do_POST(self):
                server.post(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda *a: None
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    @staticmethod
    def _send(h, code, body, ctype="application/json", close=False):
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        h.send_response(code)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(data)))
        if close:       # the server closes after this answer: said, or a client reusing the connection races it
            h.send_header("Connection", "close")
        h.end_headers()
        h.wfile.write(data)

    def get(self, h):
        if h.path == "/v1/models":
            return self._send(h, 200, {"object": "list", "data": [{"id": self.model, "object": "model"}]})
        if h.path == "/metrics":
            with self.lock:
                running, drafts, accepted = self.in_flight, self.drafts, self.accepted
            lines = ["# TYPE vllm:num_requests_running gauge",
                     f'vllm:num_requests_running{{engine="0",model_name="{self.model}"}} {running}.0']
            if self.spec:
                lines += ["# TYPE vllm:spec_decode_num_drafts_total counter",
                          f'vllm:spec_decode_num_drafts_total{{engine="0",model_name="{self.model}"}} {drafts}',
                          "# TYPE vllm:spec_decode_num_accepted_tokens_total counter",
                          f'vllm:spec_decode_num_accepted_tokens_total{{engine="0",model_name="{self.model}"}} '
                          f'{accepted}']
            return self._send(h, 200, "\n".join(lines) + "\n", "text/plain; version=0.0.4")
        self._send(h, 404, {"error": "not found"})

    def post(self, h):
        body = json.loads(h.rfile.read(int(h.headers.get("Content-Length") or 0)) or b"{}")
        if h.path != "/v1/chat/completions":
            return self._send(h, 404, {"error": "not found"})
        url = body["messages"][0]["content"][0]["image_url"]["url"]
        image = base64.b64decode(url.split(",", 1)[1])
        with self.lock:
            self.count += 1
            n = self.count
            self.bodies.append(body)
            self.images.append(image)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.lock.notify_all()
            self.met = getattr(self, "met", False) or self.in_flight >= self.gather
            if n <= self.gather:         # the first `gather` requests meet; the later ones pass
                self.lock.wait_for(lambda: self.met, timeout=self.gather_timeout)
        held = True
        try:
            if self.fail_every and n % self.fail_every == 0:
                return self._send(h, 500, {"error": {"message": "stand-in failure", "code": 500}}, close=True)
            answer = self.answers.get(sha(image), "unknown image")
            if not body.get("stream"):
                return self._send(h, 200, {"choices": [{"message": {"role": "assistant", "content": answer}}]}, close=True)
            h.send_response(200)
            h.send_header("Content-Type", "text/event-stream")
            h.send_header("Connection", "close")
            h.end_headers()
            pieces = [p + " " for p in answer.split(" ")]
            for p in pieces:
                chunk = {"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}
                h.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                h.wfile.flush()
                if self.chunk_delay:
                    time.sleep(self.chunk_delay)
            with self.lock:      # counted before the stream ends: what the client does next sees them
                self.drafts += DRAFTS
                self.accepted += ACCEPTED
                self.in_flight -= 1
                held = False
            if self.usage and (body.get("stream_options") or {}).get("include_usage"):
                usage = {"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": len(pieces) * 2}}
                h.wfile.write(f"data: {json.dumps(usage)}\n\n".encode())
            h.wfile.write(b"data: [DONE]\n\n")
            h.wfile.flush()
        finally:
            if held:
                with self.lock:
                    self.in_flight -= 1
            h.close_connection = True
