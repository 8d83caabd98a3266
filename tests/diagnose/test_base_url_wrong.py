"""(round url404) base-url-wrong beside served-model-name-mismatch: a 404 for the ROUTE (the base URL lacks /v1, doubles
it, or names another API; no model named) and a 404 whose body names the model are two failures, each named by its own
entry through its own pattern and never by the other. Real corpus logs only."""

import functools

import pytest

import corpus

SCAN = corpus.Scanner()
CORPUS = corpus.load()


_log = functools.partial(corpus.case_log, CORPUS)
_found = SCAN.findings


# a FastAPI server's {'detail': 'Not Found'} for a path it lacks (vLLM's OpenAI server answers so), vLLM's own access
# line for /generate on its OpenAI server, and the client's httpx line for Ollama's /chat/completions without /v1
ROUTE_404 = [("hiyouga/LlamaFactory/issues/4868", 0), ("run-llama/llama_index/issues/13041", 3),
             ("abetlen/llama-cpp-python/issues/1032", 3), ("Plush-for-ComfyUI/issues/152 (round url404: the same thread's title", 4)]
# vLLM's 404 that names the model ("The model `x` does not exist."), as JSON and as openai-python's repr
MODEL_404 = ["vllm-project/vllm/issues/3485", "THUDM/LongBench/issues/102"]


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("thread,pattern", ROUTE_404)
def test_a_404_for_the_route_is_base_url_wrong(engine, thread, pattern):
    assert pattern in SCAN.alone(_log("base-url-wrong", thread), engine, "base-url-wrong")


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("thread", MODEL_404)
def test_a_404_that_names_the_model_is_served_model_name_mismatch(engine, thread):
    assert 0 in SCAN.alone(_log("served-model-name-mismatch", thread), engine, "served-model-name-mismatch")


@pytest.mark.parametrize("engine", corpus.ENGINES)
def test_both_404s_in_one_log_are_two_failures(engine):
    # a client that first reached the server without /v1, then with the right path but a name the server does not serve
    log = _log("base-url-wrong", "hiyouga/LlamaFactory/issues/4868") + _log("served-model-name-mismatch",
                                                                            "vllm-project/vllm/issues/3485")
    assert set(_found(log, engine)) == {"base-url-wrong", "served-model-name-mismatch"}
