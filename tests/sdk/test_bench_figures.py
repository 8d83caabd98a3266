"""The bench's arithmetic on figures already measured: a level's aggregation of its outcomes (run_level with
`load`, the hook --through sdk uses, so no server is needed), the verdict's floor and knee at their edges,
the baseline comparison, the accept length over a run without drafts, and the SDK's printed timings."""

import pytest

from ocrdeploy.sdk import bench
from ocrdeploy.sdk.pages import Page


def metrics(drafts, accepted):
    return ("# TYPE vllm:spec_decode_num_drafts_total counter\n"
            f"vllm:spec_decode_num_drafts_total{{engine=\"0\"}} {drafts}\n"
            "# TYPE vllm:spec_decode_num_accepted_tokens_total counter\n"
            f"vllm:spec_decode_num_accepted_tokens_total{{engine=\"0\"}} {accepted}\n")


def test_no_drafts_during_the_run_is_no_accept_length_not_a_division_by_zero():
    same = metrics(1000, 5200)
    assert bench.spec_delta(same, same) == {"accept_length": None, "drafts": 0, "accepted": 0,
                                            "why": "no drafts during the run"}
    assert bench.spec_delta(metrics(1000, 5200), metrics(1010, 5225))["accept_length"] == 3.5


def test_the_accept_length_is_given_to_three_decimals():
    """3 drafts with 1 token accepted: 1 + 1/3, shown as 1.333 (the figure the report prints beside vLLM's)."""
    assert bench.spec_delta(metrics(1000, 5200), metrics(1003, 5201)) == {"accept_length": 1.333, "drafts": 3,
                                                                         "accepted": 1}
    assert bench.spec_delta(metrics(0, 0), metrics(7, 12))["accept_length"] == 2.714


def lv(c, ppm, acc):
    return {"concurrency": c, "pages_per_min": ppm, "accuracy": acc, "pages": 1}


def test_a_level_exactly_at_the_floor_holds_it():
    v = bench.verdict([lv(1, 10, 0.85), lv(2, 12, 0.84)], 0.85)
    assert v["passed"] and v["concurrency"] == 1 and v["accuracy"] == 0.85
    assert v["line"] == "10.0 pages/min at >= 85% accuracy (measured 85.0%) at concurrency 1"


def test_a_level_without_pages_holds_no_floor():
    v = bench.verdict([{"concurrency": 1, "pages_per_min": 0.0, "accuracy": 1.0, "pages": 0}], 0.85)
    assert not v["passed"] and v["line"] == "no level holds 85% accuracy (best 100.0%)"


@pytest.mark.parametrize("later, knee", [(10.9, 1), (11.5, None), (10.4, 1)])
def test_the_knee_is_where_no_later_level_gains_ten_percent(later, knee):
    assert bench.verdict([lv(1, 10, 0.9), lv(2, later, 0.9)], 0.85)["throughput_stops_growing_at"] == knee


def test_the_knee_looks_at_every_later_level_not_only_the_next():
    v = bench.verdict([lv(1, 10, 0.9), lv(2, 10.2, 0.9), lv(4, 10.4, 0.9), lv(8, 30, 0.9)], 0.85)
    assert v["throughput_stops_growing_at"] is None
    v = bench.verdict([lv(1, 10, 0.9), lv(2, 20, 0.9), lv(4, 30, 0.9), lv(8, 31, 0.9)], 0.85)
    assert v["throughput_stops_growing_at"] == 4


def doc(ppm, passed=True):
    return {"verdict": {"pages_per_min": ppm, "passed": passed, "min_accuracy": 0.85}}


def test_a_drop_of_exactly_the_tolerance_is_within_it():
    assert bench.compare_baseline(doc(75), doc(100), 0.25) == []
    problems = bench.compare_baseline(doc(74), doc(100), 0.25)
    assert problems == ["pages/min 74 is 26% under the baseline's 100 (tolerance 25%)"]
    assert bench.compare_baseline(doc(200), doc(100), 0.0) == []       # faster is never a drop


def test_accuracy_under_the_floor_is_a_problem_even_when_faster():
    assert bench.compare_baseline(doc(200, passed=False), doc(100), 0.1) == ["accuracy under the floor 85%"]
    assert bench.compare_baseline(doc(None, passed=False), {}, 0.1) == ["accuracy under the floor 85%"]


def test_the_sdks_timings_are_read_in_seconds():
    assert bench.sdk_timing("layout: 250 ms\nOCR time = 1.5 s\nnothing here\n") == {"layout": 0.25, "ocr": 1.5}
    assert bench.sdk_timing("no figures") is None


def outcome(name, *, ok=True, start=0.0, end=2.0, ttft=0.5, tokens=4, text="alpha beta", timing=None,
            kind=None):
    return bench.Outcome(name, ok, start, end, ttft, tokens if ok else None, "usage" if ok else None,
                         text if ok else "", None if ok else kind, None if ok else f"{kind} happened",
                         timing=timing)


def level(outcomes, wall, pages):
    return bench.run_level("http://127.0.0.1:9", pages, [], 2, load=lambda: (outcomes, wall, 2))


def test_a_levels_figures_from_its_outcomes():
    """tpot is (E2EL - TTFT) / (tokens - 1): the first token is TTFT's; a one-token answer has no TPOT."""
    pages = [Page("a.png", b"", "image/png", "user", "alpha beta gamma delta"),
             Page("b.png", b"", "image/png", "user", None)]
    outcomes = [outcome("a.png", start=0.0, end=2.0, ttft=0.5, tokens=4, timing={"ocr": 1.0}),
                outcome("a.png", start=1.0, end=5.0, ttft=1.0, tokens=7, timing={"ocr": 9.0}),
                outcome("b.png", start=0.0, end=1.0, ttft=0.2, tokens=1, timing={"ocr": 2.0}),
                outcome("b.png", ok=False, kind="timeout"), outcome("a.png", ok=False, kind="timeout"),
                outcome("b.png", ok=False, kind="HTTP 500")]
    got = level(outcomes, 30.0, pages)
    assert (got["requests"], got["pages"], got["errors"]) == (6, 3, 3)
    assert got["errors_by_kind"] == {"timeout": 2, "HTTP 500": 1}
    assert got["error_examples"] == {"timeout": "timeout happened", "HTTP 500": "HTTP 500 happened"}
    assert got["pages_per_min"] == 6.0                     # 3 answered pages in 30 s; failures are not pages
    assert got["output_tokens"] == 12
    assert got["tpot_ms"]["p50"] == 500.0                  # (2 - 0.5) / 3 and (4 - 1) / 6: both 0.5 s
    assert got["ttft_ms"] == {"p50": 500.0, "p95": 950.0, "p99": 990.0}
    assert got["e2el_ms"]["p50"] == 2000.0
    assert got["accuracy"] == 0.5 and got["scored_pages"] == 2        # b.png has no truth: timed, not scored
    assert got["sdk_timing_s"] == {"ocr": 2.0}                         # the median, not the last or the mean


def test_a_user_pages_accuracy_averages_its_measures():
    """Words, table cells and formula tokens each count once, whatever their sizes."""
    truth = "Total\n\n<table><tr><td>alpha</td><td>beta</td></tr></table>\n\n$x = a$\n"
    page = Page("p.png", b"", "image/png", "user", truth)
    # every word and every formula token, but one of the two cells
    answer = "Total\n\n<table><tr><td>alpha</td><td>gamma beta</td></tr></table>\n\n$x = a$\n"
    s = bench.score(page, answer)
    assert [c["check"] for c in s["checks"]] == ["words recalled", "table cells", "formula tokens"]
    assert [c["passed"] for c in s["checks"]] == [True, False, True]
    assert s["accuracy"] == pytest.approx((1.0 + 0.5 + 1.0) / 3)


def test_a_share_exactly_at_the_checks_minimum_passes():
    truth = " ".join(f"w{i}" for i in range(20))               # 20 words; 17 of them are 85%
    page = Page("p.png", b"", "image/png", "user", truth)
    s = bench.score(page, " ".join(f"w{i}" for i in range(17)))
    assert s["checks"][0]["passed"] is True and s["accuracy"] == pytest.approx(0.85)
    s = bench.score(page, " ".join(f"w{i}" for i in range(16)))
    assert s["checks"][0]["passed"] is False
