"""Edges of this stop's new patterns that a review found misfiring: the lines here are WRITTEN, shaped on real logs
(named per case), not recorded; each pair holds the failure's line named and the look-alike line clean."""

import pytest

import corpus
from ocrdeploy.diagnose import scanner

ENGINES = ["grep", "python"] + (["hyperscan"] if scanner.hyperscan is not None else [])


@pytest.fixture(scope="module")
def scan():
    s = corpus.Scanner()
    yield lambda text, engine: set(corpus.found(s.scan({"log": text}, engine)))
    s.close()


CASES = [
    # xformers' warning with a CUDA torch is the extension built for another torch (ComfyUI-Manager#926's shape) ...
    ("flash-attn-undefined-symbol", True,
     "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
     "    PyTorch 2.4.0+cu121 with CUDA 1201 (you have 2.3.1+cu121)\n"),
    # ... and with a macOS torch (no +cu suffix, SEINE#21's shape) it is a torch without CUDA, which runs on
    ("flash-attn-undefined-symbol", False,
     "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
     "    PyTorch 2.0.1 with CUDA 1106 (you have 2.0.1)\n"),
    # a reply whose think block closes at a line's start, or after an escaped newline of a JSON dump ...
    ("thinking-not-disabled", True, "</think>\n\nThe table has three columns.\n"),
    ("thinking-not-disabled", True, 'data: {"choices":[{"delta":{"content":"\\n</think>"}}]}\n'),
    # ... and the closing tag named mid-line by a tokenizer or a template dump is no reply
    ("thinking-not-disabled", False, "load: special token '</think>' (151668) is control\n"),
    ("thinking-not-disabled", False, "common_chat_templates_init: thinking end tag: </think>\n"),
    # torch's allocator message with the device number lost, at a line's start or after the exception's name ...
    ("cuda-oom", True, "!!! Exception during processing !!! Allocation on device \n"),
    ("cuda-oom", True, "torch.OutOfMemoryError: Allocation on device \n"),
    # ... and a status line that happens to end in the same words is not
    ("cuda-oom", False, "INFO Memory Allocation on device \n"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("entry,named,text", CASES, ids=[f"{c[0]}-{'named' if c[1] else 'clean'}-{i}" for i, c in enumerate(CASES)])
def test_review_edge(scan, engine, entry, named, text):
    assert (entry in scan(text, engine)) is named


@pytest.mark.parametrize("engine", ENGINES)
def test_a_users_gerund_title_is_not_an_articles(scan, engine):
    error = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.25 GiB\n"
    # an explainer's title over the quoted error makes the text a page about errors (scanner.PAGE_TITLE) ...
    assert "cuda-oom" not in scan("Fixing CUDA Out of Memory Errors in PyTorch\n\n" + error, engine)
    # ... a user's title in the same gerund, telling their own failed attempt, does not
    assert "cuda-oom" in scan("Fixing this error on my A100 box is not working\n\n" + error, engine)
