"""A real HTTP/1.1 server on 127.0.0.1, on a thread of its own, for the stand-in hubs and indexes the
tests download from (a test never reaches the internet).  A subclass answers GET and HEAD in
handle(h, head), and POST in handle_post(h) if it takes any; a client that hangs up mid-answer is part of the tests, so it is not reported."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LoopbackServer:
    url_path = ""            # what follows host:port in self.url

    def __init__(self, host="127.0.0.1"):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_HEAD(self):
                server.handle(self, head=True)

            def do_GET(self):
                server.handle(self, head=False)

            def do_POST(self):
                server.handle_post(self)

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.handle_error = lambda *a: None
        self.url = f"http://{host}:{self.httpd.server_address[1]}{self.url_path}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def handle(self, h, head: bool):
        raise NotImplementedError

    def handle_post(self, h):
        """A server that takes no POST answers as http.server does without a do_POST."""
        h.send_error(501, "Unsupported method ('POST')")

    @staticmethod
    def send(h, code, body: bytes, ctype, head, extra=None):
        """One whole answer; HEAD gets the headers only."""
        h.send_response(code)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            h.send_header(k, v)
        h.end_headers()
        if not head:
            h.wfile.write(body)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
