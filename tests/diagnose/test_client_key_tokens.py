"""(round cli56) client entries widened by their concept's key tokens rather than one engine's sentence:
context-length-exceeded (patterns 23-24: a subject that exceeds / does not fit the context on an error line, and the
context told as exceeded / full, by an SDK's machine name or by Gemini's token count) and service-unreachable (pattern
37: a connect failure in any language's words beside a service address with its port: loopback, 0.0.0.0, a LAN
address, host.docker.internal).
Line by line against the table's own patterns and vetoes (the document model is left out here, so a dropped context
or veto shows up on its own)."""

import pytest

import corpus
from ocrdeploy.diagnose.table import load_table

TABLE = {r.id: r for r in load_table()}
CORPUS = corpus.load()


def hits(entry, line):
    return corpus.pattern_hits(TABLE[entry], line)


def _line(entry, thread, needle):
    log = corpus.case_log(CORPUS, entry, thread)
    return next(ln for ln in log.splitlines() if needle in ln)


@pytest.mark.parametrize("entry,thread,needle,pattern", [
    ("context-length-exceeded", "OpenHands/OpenHands/issues/5350", "ContextWindowExceededError", 24),
    ("context-length-exceeded", "BerriAI/litellm/issues/15968", "Input tokens exceed", 23),
    ("context-length-exceeded", "google-gemini/gemini-cli/issues/6678", "input token count", 24),
    ("service-unreachable", "aaif-goose/goose/issues/1388", "error sending request", 37),
    ("service-unreachable", "aaif-goose/goose/issues/4032", "error sending request", 37),
])
def test_the_new_threads_are_named_through_the_key_token_patterns(entry, thread, needle, pattern):
    assert pattern in hits(entry, _line(entry, thread, needle))


@pytest.mark.parametrize("line", [
    # training items (batches 101-169) in their own words
    'data: {"error":{"message":"Input does not fit in context length. The input has 31430 tokens, but the context '
    'length only supports 30000 tokens."}}',
    "⏺ API Error: 400 Prompt exceeds maximum context length",
    'data: {"error":{"code":"server_error","message":"unable to process request: the context window is full. Please '
    'reduce the input size or increase the context window","type":"server_error"}}',
    "Assert failed: Context size exceeded",
    "500 input length too long",
    "Message not sent — prompt_too_long: tokenized VLM text prompt has 20771 tokens, max prompt/context tokens is 20119",
])
def test_context_length_key_tokens_take_other_servers_words(line):
    assert {23, 24} & set(hits("context-length-exceeded", line)), line


@pytest.mark.parametrize("line", [
    # Ollama's runner warning: the prompt is cut and served (the stop-47 ruling)
    'time=2024-11-19T19:56:32.863Z level=WARN source=runner.go:122 msg="input exceeds context length" prompt=2782 '
    "limit=2048",
    # a client that truncates and goes on
    "ERROR-free run: prompt exceeds the context window, truncating to 4096 tokens",
    # a sentence of documentation, no error on the line
    "The prompt exceeds the context length of the model.",
    # a client that splits the chunk and tries again (the stop-50 review's healthy run)
    "ollama embed: the input length exceeds the context length (status code: 400); splitting chunk and re-embedding",
    # a conditional: what an API does, not a run
    "If the input exceeds the context window, the server returns an error.",
    # the class named in code or a PR's prose, not printed as a raised exception
    "catch `litellm.exceptions.ContextWindowExceededError` and raise `SkyvernContextWindowExceededError`.",
])
def test_context_length_key_tokens_stay_quiet_on_look_alikes(line):
    assert not {23, 24} & set(hits("context-length-exceeded", line)), line


@pytest.mark.parametrize("line", [
    "Failed to connect to http://localhost:4000. Skipping model addition to litellm.",
    'Error: Head "http://127.0.0.1:11434/": dial tcp 127.0.0.1:11434: connectex: No connections could be made because '
    "the target machine actively refused them.",
    "API is not accessible at localhost:1337 as localhost refused to connect.",
    "curl: (7) Failed to connect to 0.0.0.0 port 8000: connection refused",
    "i have an error  :  `cant connect to OLLAMA  http://host.docker.internal:11434`. ",
    "Error: connect EHOSTUNREACH 192.168.20.12:11434",
    # the kubelet-probe near-miss's own connect, told by a client instead of a probe
    'Error: Get "http://10.100.70.142:8482/health": dial tcp 10.100.70.142:8482: connect: connection refused',
])
def test_service_unreachable_key_tokens_take_each_languages_words(line):
    assert 37 in hits("service-unreachable", line), line


@pytest.mark.parametrize("line", [
    # torch.distributed's rendezvous, not a served model
    "[W socket.cpp:601] [c10d] The client socket has failed to connect to localhost:29500 (errno: 111 - Connection "
    "refused).",
    # pip's retry through a LAN mirror
    "  Retrying (Retry(total=4)) after connection broken by 'NewConnectionError(': Failed to establish a new "
    "connection: [Errno 111] Connection refused')': http://192.168.1.10:3141/simple/torch/",
    # a router waiting for its worker to come up (endpoint-not-ready's)
    "[Router (Rust)] INFO - Worker http://0.0.0.0:31000 health check is pending with error: error sending request for "
    "url (http://0.0.0.0:31000/health)",
    "ERROR sglang_router_rs::core::worker: Failed to connect gRPC client for worker grpc://localhost:20000: transport "
    "error",
    # an HTTP answer, not a failed connect
    "ERROR [open_webui.routers.ollama] Connection error: 503, message='Attempt to decode JSON with unexpected "
    "mimetype: ', url='http://localhost:11434/api/version'",
    # a healthy start line
    "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
    # a timeout: the server may be up and hung (generic.yaml's curl (28), left unrecognised)
    "curl: (28) Failed to connect to 0.0.0.0 port 8000 after 133149 ms: Connection timed out",
    # git's fetch through a proxy on the LAN (github-fetch-failed's)
    "fatal: unable to access 'https://github.com/rathor08/Assignment2.git/': Failed to connect to 10.10.78.62 port "
    "3128: Connection timed out",
    # the kubelet's probe of a pod it is starting (stop 56: VictoriaMetrics/helm-charts#309 in the corpus; batch 187's
    # kubeai#499, a false alarm when 187 was scored blind, taken after)
    '21m         Warning   Unhealthy   pod/vmstorage-ops-0   Readiness probe failed: Get '
    '"http://10.100.70.142:8482/health": dial tcp 10.100.70.142:8482: connect: connection refused',
    'Startup probe failed: Get "http://10.244.0.208:8000/health": dial tcp 10.244.0.208:8000: connect: connection '
    'refused',
])
def test_service_unreachable_key_tokens_stay_quiet_on_look_alikes(line):
    assert 37 not in hits("service-unreachable", line), line
