"""sdk/client.OcrClient at the edges of what it accepts, against a real local HTTP server whose answers the
test sets: an answer of exactly the limit (declared or not) is read, one byte more is refused; a 400 is an
error with its explanation, a 399 is not an error; /health is up only on 200."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from ocrdeploy.sdk.client import OcrClient, ServiceError


class Server:
    """Answers every request with self.status and self.body; Content-Length only when self.declare."""

    def __init__(self):
        self.status, self.body, self.declare = 200, b"", True
        outer = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def answer(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/json")
                if outer.declare:
                    self.send_header("Content-Length", str(len(outer.body)))
                else:
                    self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(outer.body)

            do_GET = do_POST = answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def srv():
    with Server() as s:
        yield s


def models_of_size(n):
    doc = json.dumps({"data": [{"id": "m"}], "pad": ""}).encode()
    return doc[:-2] + b" " * (n - len(doc)) + doc[-2:]


@pytest.mark.parametrize("declare", [True, False])
def test_an_answer_of_exactly_the_limit_is_read_and_one_byte_more_is_not(srv, declare):
    srv.declare = declare
    srv.body = models_of_size(1000)
    with OcrClient(srv.url, max_answer=1000) as client:
        assert client.models() == ["m"]
    srv.body = models_of_size(1001)
    with OcrClient(srv.url, max_answer=1000) as client:
        with pytest.raises(httpx.DecodingError, match="1001 bytes, more than 1000" if declare else "over 1000 bytes"):
            client.models()


def test_a_400_is_an_error_with_its_explanation(srv):
    srv.status, srv.body = 400, json.dumps({"error": {"message": "unexpected mm_processor_kwargs"}}).encode()
    with OcrClient(srv.url) as client:
        with pytest.raises(ServiceError) as err:
            client.chat_image(b"png", "read it", mm_processor_kwargs={"max_slice_nums": 1})
    assert err.value.status == 400 and "--trust-request-mm-kwargs" in err.value.explanation
    srv.status, srv.body = 500, json.dumps({"error": {"message": "unexpected mm_processor_kwargs"}}).encode()
    with OcrClient(srv.url) as client:
        with pytest.raises(ServiceError) as err:
            client.models()
    assert err.value.status == 500 and err.value.explanation is None       # only a 400 is the request's fault


def test_a_399_is_an_answer_not_an_error(srv):
    srv.status, srv.body = 399, json.dumps({"data": [{"id": "m"}]}).encode()
    with OcrClient(srv.url) as client:
        assert client.models() == ["m"]


@pytest.mark.parametrize("status,up", [(200, True), (204, False), (503, False)])
def test_health_is_up_on_200_only(srv, status, up):
    srv.status, srv.body = status, b""
    with OcrClient(srv.url) as client:
        assert client.health() is up


def test_the_quick_deadline_never_exceeds_the_overall_one():
    assert OcrClient("http://127.0.0.1:9", timeout=3).quick == 3.0
    assert OcrClient("http://127.0.0.1:9", timeout=600).quick == 15.0
