"""A server that answers the bench's request with what no OpenAI server sends: each answer is one request's
error of its kind, never a traceback, and the bench reads no more of it than it bounds (real HTTP on
127.0.0.1, the bodies written by hand below)."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ocrdeploy.sdk import bench, pages as pages_mod


class Hostile:
    """Answers every POST with (status, content-type, body); `endless` keeps sending `body` until the
    client hangs up, and counts what it managed to send."""

    def __init__(self, status, ctype, body: bytes, endless=False, metrics_endless=False):
        self.sent = self.metrics_sent = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                if not metrics_endless:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                try:
                    while True:
                        self.wfile.write(b"# HELP x y\n" * 4096)
                        server.metrics_sent += 12 * 4096
                except OSError:
                    return

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                if not endless:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    while True:
                        self.wfile.write(body)
                        server.sent += len(body)
                        if not endless:
                            return
                except OSError:
                    return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda *a: None
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


SSE = "text/event-stream"


@pytest.mark.parametrize("status,ctype,body", [
    (200, SSE, b"data: 1\n\n"),                                            # a chunk that is not an object
    (200, SSE, b'data: {"choices": ["x"]}\n\n'),                           # a choice that is not an object
    (200, SSE, b'data: {"choices": [{"delta": "x"}]}\n\n'),
    (200, SSE, b'data: {"usage": 5}\n\ndata: [DONE]\n\n'),                 # usage that is not an object
    (200, "application/json", b"[1, 2]"),                                  # an answer that is not an object
    (200, "application/json", b'{"choices": [1]}'),
    (500, "application/json", b'{"error": {"message": 5}}'),
    # content that is not text: an error of the request, never the page '123' scored as the model's reading
    (200, SSE, b'data: {"choices": [{"delta": {"content": 123}}]}\n\ndata: [DONE]\n\n'),
    (200, SSE, b'data: {"choices": [{"delta": {"content": ["# a"]}}]}\n\ndata: [DONE]\n\n'),
    (200, "application/json", b'{"choices": [{"message": {"content": 123}}]}'),
    (200, "application/json", b'{"choices": [{"message": {"content": {"text": "# a"}}}]}'),
    (200, "application/json", b'{"choices": [{"text": 5}]}'),
    (200, "application/json", b'{"choices": [{"message": {"content": [{"type": "text", "text": 5}]}}]}'),
])
def test_a_malformed_answer_is_one_error_not_a_traceback(status, ctype, body):
    page = pages_mod.sample_pages()[:1]
    with Hostile(status, ctype, body) as srv:
        doc = bench.run(srv.url, page, levels=(1,), requests=1, warmup=0)
    lv = doc["levels"][0]
    assert lv["errors"] == 1 and lv["pages"] == 0, lv
    assert not doc["verdict"]["passed"]


def test_a_reply_whose_content_is_null_is_an_empty_page_not_an_error():
    """content null (a reply that was all reasoning, a model that said nothing): a page read as nothing, which
    the checks then score, not a malformed answer."""
    page = pages_mod.sample_pages()[:1]
    body = b'data: {"choices": [{"delta": {"reasoning_content": "hm", "content": null}}]}\n\ndata: [DONE]\n\n'
    with Hostile(200, SSE, body) as srv:
        doc = bench.run(srv.url, page, levels=(1,), requests=1, warmup=0)
    lv = doc["levels"][0]
    assert lv["errors"] == 0 and lv["pages"] == 1, lv
    assert not doc["verdict"]["passed"]


@pytest.mark.parametrize("stream", [False, True])
def test_content_as_typed_parts_is_its_text_parts_joined(stream):
    """Mistral's reasoning models answer content as a list of parts, thinking then text (streamed deltas too):
    the page read is the text parts, the thinking skipped."""
    import asyncio
    import json

    import httpx

    parts = [{"type": "thinking", "thinking": [{"type": "text", "text": "let me look"}]},
             {"type": "text", "text": "# Sample page"}, {"type": "text", "text": "\n\nThe fox."}]
    if stream:
        body = b"".join(b"data: " + json.dumps({"choices": [{"delta": {"content": [p]}}]}).encode() + b"\n\n"
                        for p in parts) + b"data: [DONE]\n\n"
        ctype = SSE
    else:
        body, ctype = json.dumps({"choices": [{"message": {"content": parts}}]}).encode(), "application/json"

    async def one(url):
        async with httpx.AsyncClient(base_url=url, trust_env=False, timeout=10) as client:
            return await bench.send(client, {"model": "m", "messages": [], "stream": True}, "p1")

    with Hostile(200, ctype, body) as srv:
        out = asyncio.run(one(srv.url))
    assert out.ok and out.text == "# Sample page\n\nThe fox.", out


def test_a_token_count_that_is_not_a_number_is_not_taken():
    page = pages_mod.sample_pages()[:1]
    body = b'data: {"choices": [{"delta": {"content": "a"}}]}\n\ndata: {"usage": {"completion_tokens": "many"}}\n\n'
    with Hostile(200, SSE, body) as srv:
        doc = bench.run(srv.url, page, levels=(1,), requests=1, warmup=0)
    lv = doc["levels"][0]
    assert lv["pages"] == 1 and lv["output_tokens"] == 1 and lv["tokens_from"] == ["chunks"]


@pytest.mark.parametrize("status,ctype,body", [
    (500, "text/plain", b"x" * 65536),                     # an error page without end
    (200, "application/json", b"{" * 65536),               # an unstreamed answer without end
    (200, SSE, b"data: " + b"y" * 65530),                  # one SSE line without end
    (200, SSE, b'data: {"choices": [{"delta": {"content": "' + b"z" * 4000 + b'"}}]}\n\n'),  # a stream without end
])
def test_an_answer_without_end_is_read_only_up_to_its_bound(status, ctype, body):
    page = pages_mod.sample_pages()[:1]
    with Hostile(status, ctype, body, endless=True) as srv:
        doc = bench.run(srv.url, page, levels=(1,), requests=1, warmup=0, timeout=30)
    lv = doc["levels"][0]
    assert lv["errors"] == 1 and lv["pages"] == 0, lv
    assert srv.sent < bench.ANSWER_MAX + 64 * 2**20       # stopped near the bound, not at the timeout


def test_a_metrics_page_without_end_is_dropped_not_read_forever():
    page = pages_mod.sample_pages()[:1]
    body = b'data: {"choices": [{"delta": {"content": "a"}}]}\n\ndata: [DONE]\n\n'
    with Hostile(200, SSE, body, metrics_endless=True) as srv:
        doc = bench.run(srv.url, page, levels=(1,), requests=1, warmup=0, timeout=30)
    lv = doc["levels"][0]
    assert lv["pages"] == 1 and lv["spec_decode"]["why"] == "no /metrics read"
    assert srv.metrics_sent < bench.METRICS_MAX + 64 * 2**20


@pytest.mark.parametrize("usage,tokens,source", [(b"0", 0, "usage"), (b"true", 1, "chunks"), (b"-3", 1, "chunks"),
                                                 (b"7", 7, "usage")])
def test_a_token_count_is_a_whole_number_from_zero_never_a_boolean(usage, tokens, source):
    page = pages_mod.sample_pages()[:1]
    body = (b'data: {"choices": [{"delta": {"content": "a"}}]}\n\ndata: {"usage": {"completion_tokens": ' + usage +
            b'}}\n\ndata: [DONE]\n\n')
    with Hostile(200, SSE, body) as srv:
        lv = bench.run(srv.url, page, levels=(1,), requests=1, warmup=0)["levels"][0]
    assert lv["pages"] == 1 and lv["output_tokens"] == tokens and lv["tokens_from"] == [source]


def test_a_long_answer_within_the_bound_is_read_whole():
    """1024 streamed tokens are some 200 KiB: far under ANSWER_MAX, every chunk counted."""
    page = pages_mod.sample_pages()[:1]
    chunk = b'data: {"choices": [{"delta": {"content": "' + b"w" * 180 + b'"}}]}\n\n'
    with Hostile(200, SSE, chunk * 1024 + b"data: [DONE]\n\n") as srv:
        lv = bench.run(srv.url, page, levels=(1,), requests=1, warmup=0)["levels"][0]
    assert lv["pages"] == 1 and lv["output_tokens"] == 1024 and lv["errors"] == 0



def test_a_server_that_never_answers_is_a_timeout_whose_example_says_which_wait_and_how_long():
    release = threading.Event()

    class Silent(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):           # /metrics: none, at once
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):          # the page's request: read, answered never
            release.wait(30)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Silent)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        doc = bench.run(f"http://127.0.0.1:{httpd.server_address[1]}", pages_mod.sample_pages()[:1], levels=(1,),
                        requests=1, warmup=0, timeout=1)
    finally:
        release.set()
        httpd.shutdown()
        httpd.server_close()
    lv = doc["levels"][0]
    assert lv["errors_by_kind"] == {"timeout": 1} and lv["pages"] == 0, lv
    assert lv["error_examples"]["timeout"] == "ReadTimeout: no read within 1 s", lv["error_examples"]


@pytest.mark.parametrize("extra, example", [(0, "the image is too large"), (1, '{"error": {"message": "the image')])
def test_an_error_page_is_read_up_to_error_max_and_one_byte_more_is_cut(extra, example):
    """An error answer of exactly 64 KiB (ERROR_MAX) is read whole and its message shown; one byte more and only
    the first 64 KiB are read: the JSON is cut, the example is its raw start."""
    page = pages_mod.sample_pages()[:1]
    head, tail = b'{"error": {"message": "the image is too large"}, "pad": "', b'"}'
    size = 64 * 2**10 + extra                 # the bound as a figure, not read from the code under test
    body = head + b"p" * (size - len(head) - len(tail)) + tail
    assert len(body) == size
    with Hostile(400, "application/json", body) as srv:
        lv = bench.run(srv.url, page, levels=(1,), requests=1, warmup=0)["levels"][0]
    assert lv["errors_by_kind"] == {"HTTP 400": 1}, lv
    assert lv["error_examples"]["HTTP 400"].startswith(example), lv["error_examples"]
