"""A stand-in OpenAI-compatible worker on 127.0.0.1 for the router's orchestration tests, where the engine
is not the point: /health, /v1/models (with max_model_len, as vLLM lists it), /v1/chat/completions, and
/metrics with vLLM's own gauge names (vllm:num_requests_running / vllm:num_requests_waiting) counting the
requests it is really holding; with a key (VLLM_API_KEY, as vLLM reads it) its /v1 paths need it.  A request whose last message says "hold N" is held N seconds, so a
test has a request in flight for as long as it needs.  The real router (vllm-router) talks to it."""

from __future__ import annotations

import json
import os
import threading
import time

from loopback import LoopbackServer


class Worker(LoopbackServer):
    def __init__(self, model="minicpm-ocr", max_model_len=4096, multimodal=False, key=None):
        super().__init__()
        self.model, self.max_model_len, self.multimodal, self.key = model, max_model_len, multimodal, key
        self.running = 0
        self.served = 0
        self.chats = []                  # the request bodies it answered, in order
        self.lock = threading.Lock()
        server = self
        handler = self.httpd.RequestHandlerClass

        def do_POST(h):
            server.post(h)

        handler.do_POST = do_POST

    @property
    def port(self):
        return self.httpd.server_address[1]

    def metrics(self) -> str:
        # the shape of vLLM 0.32's /metrics for these two gauges (names, labels, a float value)
        lab = f'{{engine="0",model_name="{self.model}"}}'
        return (f"# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
                f"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{lab} {float(self.running)}\n"
                f"# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"
                f"# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{lab} 0.0\n")

    def authorized(self, h, head) -> bool:
        """As vLLM's --api-key / VLLM_API_KEY: /v1 paths need `Authorization: Bearer KEY`; /health and
        /metrics stay open."""
        if not self.key or h.headers.get("Authorization") == f"Bearer {self.key}":
            return True
        self.send(h, 401, b'{"error":"Unauthorized"}', "application/json", head)
        return False

    def handle(self, h, head):
        path = h.path.split("?")[0]
        if path == "/health":
            return self.send(h, 200, b"", "application/json", head)
        if path.startswith("/v1/") and not self.authorized(h, head):
            return None
        if path == "/v1/models":
            body = {"object": "list", "data": [{"id": self.model, "object": "model",
                                                "max_model_len": self.max_model_len}]}
            return self.send(h, 200, json.dumps(body).encode(), "application/json", head)
        if path == "/metrics":
            return self.send(h, 200, self.metrics().encode(), "text/plain; version=0.0.4", head)
        return self.send(h, 404, b'{"detail":"Not Found"}', "application/json", head)

    def post(self, h):
        length = int(h.headers.get("Content-Length") or 0)
        body = json.loads(h.rfile.read(length) or b"{}")
        if h.path.split("?")[0] != "/v1/chat/completions":
            return self.send(h, 404, b'{"detail":"Not Found"}', "application/json", False)
        if not self.authorized(h, False):
            return None
        content = body["messages"][-1]["content"]
        if isinstance(content, list) and not self.multimodal and any(p.get("type") == "image_url" for p in content):
            err = {"error": {"message": "minicpm-ocr is not a multimodal model", "type": "BadRequestError",
                             "code": 400}}
            return self.send(h, 400, json.dumps(err).encode(), "application/json", False)
        text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
        with self.lock:
            self.running += 1
            self.chats.append(body)
        try:
            if text.startswith("hold "):
                time.sleep(float(text.split()[1]))
        finally:
            with self.lock:
                self.running -= 1
                self.served += 1
        answer = {"id": "x", "object": "chat.completion", "model": self.model, "choices": [
            {"index": 0, "message": {"role": "assistant", "content": f"answer from {self.port}"},
             "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        return self.send(h, 200, json.dumps(answer).encode(), "application/json", False)


def main(argv):
    """`python workerstandin.py PORT [MAX_MODEL_LEN]`: the stand-in as a process of its own, for records that
    hostside starts and stops like a service's."""
    import http.server

    w = Worker(max_model_len=int(argv[2]) if len(argv) > 2 else 4096, key=os.environ.get("VLLM_API_KEY"))
    w.httpd.server_close()
    w.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", int(argv[1])), w.httpd.RequestHandlerClass)
    w.httpd.serve_forever()


if __name__ == "__main__":
    import sys

    sys.path.insert(0, __import__("os").path.dirname(__file__))
    main(sys.argv)
