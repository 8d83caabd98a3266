"""(round cli55) model-not-multimodal by its key tokens: a subject (model, server, endpoint, provider...) that does not
support / accept / handle / process images, vision or multimodal input on a line with an error token (pattern 11), an
image token "not supported by/for/with this model" or a model "not supported for vision" (pattern 12), and llama.cpp's
web UI tooltip "Images require vision models to be processed" (pattern 13). Line by line against the table's own
patterns and vetoes (the document model is left out here, so a dropped context or veto shows up on its own)."""

import pytest

import corpus
from ocrdeploy.diagnose.table import load_table

RULE = next(r for r in load_table() if r.id == "model-not-multimodal")
CORPUS = corpus.load()


def hits(line):
    return corpus.pattern_hits(RULE, line)


def _line(thread, needle):
    log = corpus.case_log(CORPUS, "model-not-multimodal", thread)
    return next(ln for ln in log.splitlines() if needle in ln)


@pytest.mark.parametrize("thread,needle,pattern", [
    ("n8n-io/n8n/issues/12186", "errorMessage", 11),
    ("github/copilot-cli/issues/3523", "CAPIError", 12),
])
def test_the_real_lines_are_named_through_the_new_patterns(thread, needle, pattern):
    assert pattern in hits(_line(thread, needle))


def test_the_web_ui_tooltip_is_named_but_not_its_source():
    assert 13 in hits("It tell me that images require vision models to be processed. ")
    assert 13 in hits("Images require vision models to be processed")
    # llama.cpp's webui source itself (ChatFormActionFileAttachments.svelte), quoted in a diff or a paste
    assert hits("\t\t\t\t? 'Images require vision models to be processed'") == []
    assert hits("\t\t\t\t\t\t<p>Images require vision models to be processed</p>") == []


@pytest.mark.parametrize("line", [
    # the same refusal in words the corpus does not hold: each needs only the key tokens
    "Error: 400 The model does not accept image_url content",
    "ERROR [provider] request failed: endpoint cannot process images",
    "openai.BadRequestError: Error code: 400 - {'error': {'message': 'This deployment does not support vision'}}",
    "HTTP 422: images are not supported by this model",
    "APIError: multimodal input is not supported for the selected model",
])
def test_unseen_wordings_of_the_refusal_are_named(line):
    assert hits(line), line


@pytest.mark.parametrize("line", [
    # cline/cline#13943: a pull request's description of the warning it adds (no error token on the line)
    '- every image thumbnail gets a warning badge (tooltip: "The selected model doesn\'t support images, so this '
    'image will be ignored.") and is dimmed;',
    # a model card's sentence, a feature request's title
    "Note: this model does not support images; use the VL variant for documents.",
    "feat: compatibility errors are raised if images not supported by model",
    # ollama/ollama#9741 and dyad-sh/dyad#3774: the error a change will give, a request for a better message (vetoed)
    "this change will return an error to the user if they try to use vision on a model in the ollama engine that "
    "does not support vision or has not loaded any vision tensors",
    "improve error message when using model that doesn't support image input (e.g. GLM 5.2)",
    # other failures that name an image: a file that is not an image, a format the server refuses
    "ValueError: cannot identify image file 'page_003.png'",
    "Error: unsupported image format: image/tiff is not supported",
])
def test_texts_that_only_quote_the_wording_stay_quiet(line):
    assert hits(line) == [], line
