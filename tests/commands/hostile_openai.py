"""A hostile "OpenAI-compatible" server on 127.0.0.1 for the verify/status tests (red team M7-M9, L7, L20).

Modes (what the red team's hostile_srv.py did):
  badmetrics  /v1/models and chat answer as vLLM does; /metrics is not the exposition format
  drip        /v1/models declares 100 KB and sends one byte every 0.5 s
  huge        /v1/models declares 3 GiB and sends zeros as fast as it is read
  escapes     model ids and error messages carry terminal escape sequences (OSC 52 clipboard, clear screen,
              window title) and rich markup
  errescapes  clean model ids; error messages carry the escape sequences and markup
  badids      /v1/models lists entries whose ids are not names (null, a number, an empty string)
  nomodels    /v1/models lists no model
  frozen      DSpark counters that never rise, whatever is asked
Run in a thread (`with HostileOpenAI(mode) as srv: srv.url`) or as a process: python hostile_openai.py MODE PORT.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ESCAPES = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b]0;pwned\x1b\\[red]x[/]"
FROZEN_METRICS = (
    "# TYPE vllm:spec_decode_num_drafts_total counter\n"
    'vllm:spec_decode_num_drafts_total{engine="0",model_name="minicpm-ocr"} 9.0\n'
    "# TYPE vllm:spec_decode_num_accepted_tokens_total counter\n"
    'vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="minicpm-ocr"} 48.0\n')
BAD_METRICS = 'vllm:spec_decode_num_drafts_total{a="x" 1\nvllm:spec_decode_num_drafts_total{{a="x"\n'


def handler(mode):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def answer(self, code, body, ctype="application/json"):
            data = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body)).encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def models(self):
            if mode == "badids":
                return {"object": "list", "data": [{"id": None}, {"id": 7}, {"id": ""}, "minicpm-ocr"]}
            if mode == "nomodels":
                return {"object": "list", "data": []}
            ident = "minicpm-ocr" + (ESCAPES if mode == "escapes" else "")
            return {"object": "list", "data": [{"id": ident}, {"id": "minicpm-ocr"}]}

        def do_GET(self):
            try:
                if self.path == "/v1/models" and mode == "drip":
                    self.send_response(200)
                    self.send_header("Content-Length", "100000")
                    self.end_headers()
                    for _ in range(100000):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(0.5)
                    return
                if self.path == "/v1/models" and mode == "huge":
                    self.send_response(200)
                    self.send_header("Content-Length", str(3 << 30))
                    self.end_headers()
                    chunk = b"0" * (1 << 20)
                    for _ in range(3 << 10):
                        self.wfile.write(chunk)
                    return
                if self.path == "/v1/models":
                    return self.answer(200, self.models())
                if self.path == "/health":
                    return self.answer(200, "")
                if self.path == "/metrics":
                    text = BAD_METRICS if mode == "badmetrics" else FROZEN_METRICS
                    return self.answer(200, text, "text/plain; version=0.0.4")
                self.answer(404, {"error": "not found"})
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if mode in ("escapes", "errescapes"):
                return self.answer(400, {"error": {"message": "bad request" + ESCAPES}})
            self.answer(200, {"choices": [{"message": {"content": "# Sample page\n\nThe quick brown fox."}}]})

    return H


class HostileOpenAI:
    def __init__(self, mode: str, port: int = 0):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler(mode))
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


if __name__ == "__main__":
    srv = HostileOpenAI(sys.argv[1], int(sys.argv[2]))
    print("listening on", srv.url, flush=True)
    srv.httpd.serve_forever()
