"""sdk/client.OcrClient at the edges of what it accepts, against a real local HTTP server whose answers the
test sets: an answer of exactly the limit (declared or not) is read, one byte more is refused; a 400 is an
error with its explanation, a 399 is not an error; /health is up only on 200."""

import json

import httpx
import pytest

from loopback import LoopbackServer
from ocrdeploy.sdk.client import OcrClient, ServiceError


class Server(LoopbackServer):
    """Answers every request with self.status and self.body; Content-Length only when self.declare."""

    def __init__(self):
        super().__init__()
        self.status, self.body, self.declare = 200, b"", True

    def handle(self, h, head: bool):
        h.send_response(self.status)
        h.send_header("Content-Type", "application/json")
        if self.declare:
            h.send_header("Content-Length", str(len(self.body)))
        else:
            h.send_header("Connection", "close")
        h.end_headers()
        if not head:
            h.wfile.write(self.body)

    def handle_post(self, h):
        h.rfile.read(int(h.headers.get("Content-Length") or 0))
        self.handle(h, head=False)


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


# vLLM's own 400 wordings (vllm/multimodal and the chat serving code; the second and third as vLLM 0.6-0.10 and later
# versions word the image limit), each with the remedy the explanation must name; explain_400's branch for the option's
# Python spelling (limit_mm_per_prompt) has no recorded server wording here, so no test invents one
VLLM_400 = [
    ("minicpm-ocr is not a multimodal model", "takes no images"),
    ("At most 1 image(s) may be provided in one prompt.", "--limit-mm-per-prompt"),
    ("You set image=1 (or defaulted to 1) in `--limit-mm-per-prompt`, but found 2 items in the same prompt.",
     "--limit-mm-per-prompt"),
]


@pytest.mark.parametrize("message,remedy", VLLM_400)
def test_each_of_vllms_400_refusals_gets_its_own_remedy(srv, message, remedy):
    srv.status, srv.body = 400, json.dumps({"error": {"message": message, "type": "BadRequestError"}}).encode()
    with OcrClient(srv.url) as client:
        with pytest.raises(ServiceError) as err:
            client.chat_image(b"png", "read it")
    assert err.value.message == message and remedy in err.value.explanation, err.value.explanation


def test_a_400_that_names_no_known_cause_has_no_explanation(srv):
    srv.status, srv.body = 400, json.dumps({"error": {"message": "temperature must be non-negative"}}).encode()
    with OcrClient(srv.url) as client:
        with pytest.raises(ServiceError) as err:
            client.chat_image(b"png", "read it")
    assert err.value.explanation is None


def test_a_server_given_by_name_answers_and_fails_through_the_lookup_thread(srv):
    """A host name (not an IP literal) is asked from a worker thread: its answer and its error both reach the
    caller as they are."""
    named = srv.url.replace("127.0.0.1", "localhost")
    srv.status, srv.body = 200, json.dumps({"data": [{"id": "m"}]}).encode()
    with OcrClient(named) as client:
        assert client.named and client.models() == ["m"]
    srv.status, srv.body = 400, json.dumps({"error": {"message": "At most 1 image(s) may be provided"}}).encode()
    with OcrClient(named) as client:
        with pytest.raises(ServiceError) as err:
            client.chat_image(b"png", "read it")
    assert err.value.status == 400


@pytest.mark.parametrize("data,said", [
    ([{"id": None}], "entry 1 has no model id of printable text: None"),
    ([{"id": "m"}, {"id": 3}], "entry 2 has no model id of printable text: 3"),
    ([{"id": ""}], "entry 1 has no model id"),
    (["m"], "entry 1 has no model id of printable text: 'm'"),      # a bare string: not an OpenAI model object
    ([{"id": "m\x1b[2J"}], "entry 1 has no model id of printable text: 'm\\x1b[2J'"),
    ([{"id": "m" * 1025}], "entry 1 has no model id"),
])
def test_a_model_list_whose_ids_are_not_names_is_refused(srv, data, said):
    srv.body = json.dumps({"data": data}).encode()
    with OcrClient(srv.url) as client:
        with pytest.raises(ValueError) as err:
            client.models()
    assert said in str(err.value) and len(str(err.value)) < 200


def test_model_ids_are_returned_whole(srv):
    long_path = "/models/" + "x" * 900                  # vLLM serves a path's name when no --served-model-name
    srv.body = json.dumps({"data": [{"id": long_path}, {"id": "模型-ocr"}]}).encode()
    with OcrClient(srv.url) as client:
        assert client.models() == [long_path, "模型-ocr"]


def test_health_is_down_when_nothing_answers():
    """No server on the port (connection refused): down, not an error and never up."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]              # bound and closed: nothing listens there
    with OcrClient(f"http://127.0.0.1:{port}", timeout=5) as client:
        assert client.health() is False


def test_a_long_error_message_is_kept_to_500_characters(srv):
    message = "the request was refused because " + "x" * 600
    srv.status, srv.body = 400, json.dumps({"error": {"message": message}}).encode()
    with OcrClient(srv.url) as client:
        with pytest.raises(ServiceError) as err:
            client.chat_image(b"png", "read it")
    assert err.value.message == message[:500]


def chat_answer(*contents):
    return json.dumps({"choices": [{"index": i, "message": {"role": "assistant", "content": c}}
                                   for i, c in enumerate(contents)]}).encode()


def test_the_answer_is_the_first_choices_content(srv):
    srv.body = chat_answer("# Sample page\n\nThe quick brown fox.")
    with OcrClient(srv.url) as client:
        assert client.chat_image(b"png", "read it") == "# Sample page\n\nThe quick brown fox."
    srv.body = chat_answer("first", "second")              # n > 1: the first choice is the answer
    with OcrClient(srv.url) as client:
        assert client.chat_image(b"png", "read it") == "first"
    srv.body = chat_answer([{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "# a"}])
    with OcrClient(srv.url) as client:
        assert client.chat_image(b"png", "read it") == "# a"


@pytest.mark.parametrize("content", [123, {}, {"type": "text", "text": "# a"}, [{"type": "text", "text": 5}]])
def test_content_that_is_not_text_is_a_value_error_naming_it(srv, content):
    """Content no OpenAI-compatible server sends (a number, an object, even an empty one): a ValueError that says
    which field, never a page read as '' or as '123', and never a TypeError from iterating it."""
    srv.body = chat_answer(content)
    with OcrClient(srv.url) as client:
        with pytest.raises(ValueError, match=r"choices\[0\]\.message\.content is a"):
            client.chat_image(b"png", "read it")
