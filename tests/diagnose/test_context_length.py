"""(round ctx1) context-length-exceeded beside its neighbours: a start-time KV-cache failure and a later request refusal
in one log are two failures, each named; the refusal's lines are explained, not left to the safety net."""

import functools

import pytest

import corpus

SCAN = corpus.Scanner()
CORPUS = corpus.load()


_log = functools.partial(corpus.case_log, CORPUS)


@pytest.mark.parametrize("engine", corpus.ENGINES)
def test_kv_cache_start_failure_and_a_request_refusal_are_both_named(engine):
    # two real corpus logs, one after the other: the KV-cache check at start, then a request over the context
    log = _log("kv-cache-too-small", "basalam/product-catalog-generator/issues/10") + \
        _log("context-length-exceeded", "stepfun-ai/Step-Audio-R1/issues/3")
    report = SCAN.scan({"log": log}, engine)
    assert {f["id"] for f in report["findings"]} == {"kv-cache-too-small", "context-length-exceeded"}
    assert not report["unrecognised"]


@pytest.mark.parametrize("engine", corpus.ENGINES)
def test_the_refusals_are_not_left_to_the_safety_net(engine):
    cases = [c for c in CORPUS["cases"] if c.get("entry") == "context-length-exceeded"]
    assert len(cases) >= 10
    for case in cases:
        report = SCAN.scan(case, engine)
        assert [f["id"] for f in report["findings"]] == ["context-length-exceeded"], case["source"]
        assert not report["unrecognised"], case["source"]
