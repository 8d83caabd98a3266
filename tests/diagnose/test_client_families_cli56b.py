"""(round cli56b) four client families by their key tokens: LM Studio's llama.cpp "n_keep (N) >= n_ctx (M)" refusal
(context-length-exceeded), an app's capability refusal naming the model or dropping the images (model-not-multimodal),
Ollama's GIN 404 pasted with typographic quotes and an app's "<url> (404)" for a route without /v1 (base-url-wrong),
Ollama's "model is required" as its clients relay it (served-model-name-mismatch); each beside a near-miss."""

import pytest

import corpus

SCAN = corpus.Scanner()

NAMED = [
    ("context-length-exceeded", "Cannot truncate prompt with n_keep (32903) >= n_ctx (32768)"),
    ("context-length-exceeded", "ERROR - Error generating security product summary: Error code: 400 - "
                                "{'error': 'Cannot truncate prompt with n_keep (14169) >= n_ctx (4096)'}"),
    ("model-not-multimodal", "Model does not support images: ollama/qwen3-vl:2b"),
    ("model-not-multimodal", "The current model Ollama (llava:latest) does not support sending images. "
                             "Recommended model: Chatbox AI 4."),
    ("model-not-multimodal", '  warn gateway {"subsystem":"gateway"} parseMessageWithAttachments: 1 attachment(s) '
                             "dropped — model does not support images"),
    ("base-url-wrong", "[GIN] 2026/02/15 - 11:57:35 | 404 |            0s |             ::1 | POST     “/chat/completions”"),
    ("base-url-wrong", "- `http://127.0.0.1:11434/chat/completions` (404)"),
    ("served-model-name-mismatch", "OllamaSharp.Models.Exceptions.OllamaException: model is required"),
    ("served-model-name-mismatch", "ResponseError: model is required (status code: 400)"),
    ("served-model-name-mismatch", 'Error running  Other( "{\\"error\\":\\"model is required\\"}", )'),
]

CLEAN = [
    ("context-length-exceeded", "slot update_slots: id  3 | task 0 | new prompt, n_ctx_slot = 65536, n_keep = 0, "
                                "task.n_tokens = 68885"),
    ("model-not-multimodal", "the error messages that get returned when trying to attach an image to an LLM that "
                             "doesn't support images is pretty rough/unhelpful."),
    ("base-url-wrong", '[GIN] 2024/03/08 - 17:26:20 | 200 |  9.789041042s |       127.0.0.1 | POST     "/api/chat"'),
    ("base-url-wrong", '[GIN] 2024/03/08 - 17:26:21 | 404 |      12.3µs |       127.0.0.1 | GET      “/favicon.ico”'),
    ("base-url-wrong", "- `http://127.0.0.1:11434/v1/chat/completions` (200)"),
    ("served-model-name-mismatch", '      def initialize(msg="model is required for validations.  Either pass it '
                                   'as a dependency in the constructor")'),
]


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("entry,line", NAMED)
def test_the_family_is_named(engine, entry, line):
    report = SCAN.scan({"log": line + "\n"}, engine)
    assert entry in {f["id"] for f in report["findings"]}, line


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("entry,line", CLEAN)
def test_the_near_miss_stays_clean(engine, entry, line):
    report = SCAN.scan({"log": line + "\n"}, engine)
    assert entry not in {f["id"] for f in report["findings"]}, line


@pytest.mark.parametrize("engine", corpus.ENGINES)
def test_a_negative_budget_is_the_context_and_zero_is_not(engine):
    named = "Error code: 400 - {'object': 'error', 'message': 'max_tokens must be at least 1, got -186.', 'code': 400}\n"
    assert "context-length-exceeded" in {f["id"] for f in SCAN.scan({"log": named}, engine)["findings"]}
    clean = 'raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}.")\n'
    assert "context-length-exceeded" not in {f["id"] for f in SCAN.scan({"log": clean}, engine)["findings"]}
