"""What `inv bench --report` says, read from the HTML itself (no browser: test_html_report.py opens one):
the verdict's colour, where throughput stops growing, the levels table's cells, the answers of the level
the verdict chose, each check's result, the errors and the published figures, and the plot's floor line.
The document is the one bench.run_level and bench.verdict make from outcomes (the --through sdk hook, so no
server is needed)."""

import re

import pytest

from ocrdeploy.report.html import bench_report, gpu_cell, percentiles_ms, plot_svg
from ocrdeploy.sdk import bench
from ocrdeploy.sdk.pages import Page

TRUTH = "alpha beta gamma delta"
PAGES = [Page("a.png", b"png-a", "image/png", "user", TRUTH, source="a.png on disk"),
         Page("b.png", b"png-b", "image/png", "user", None, source="b.png on disk")]


def outcome(name, text, *, ok=True, start=0.0, end=2.0, ttft=0.5, kind=None):
    return bench.Outcome(name, ok, start, end, ttft if ok else None, 4 if ok else None, "usage" if ok else None,
                         text if ok else "", None if ok else kind, None if ok else f"{kind} said why")


def level(c, outcomes, wall):
    lv = bench.run_level("http://127.0.0.1:9", PAGES, [], c, load=lambda: (outcomes, wall, c))
    lv["output_tokens_per_s"] = round(lv["output_tokens"] / wall, 3)     # an API run's (the hook's is None)
    return lv


def document(levels, min_accuracy=0.85, references=()):
    return {"server": "http://gpu1:8000", "model": "minicpm-ocr", "backend": None, "prompt": bench.PROMPT,
            "extra_body": {}, "through": "api", "pages": [{"name": p.name, "kind": p.kind, "source": p.source}
                                                          for p in PAGES],
            "levels": levels, "verdict": bench.verdict(levels, min_accuracy), "references": list(references)}


def report(doc) -> str:
    return bench_report(doc, {p.name: (p.mime, p.image) for p in PAGES})


def levels_rows(html: str) -> list[list[str]]:
    table = re.search(r'<table class="grid levels">(.*?)</table>', html, re.S).group(1)
    return [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]]


@pytest.fixture(scope="module")
def two_levels():
    """Concurrency 1 reads page a right (accuracy 100%), concurrency 2 reads it half (50%), faster."""
    good = [outcome("a.png", TRUTH, start=0.0, end=2.0, ttft=0.5), outcome("b.png", "anything", end=1.0, ttft=0.2)]
    half = [outcome("a.png", "alpha beta", start=0.0, end=3.0, ttft=1.0), outcome("b.png", "x", end=1.0),
            outcome("a.png", "", ok=False, kind="timeout")]
    return [level(1, good, 60.0), level(2, half, 30.0)]


def test_the_verdict_is_green_when_a_level_holds_the_floor_and_red_when_none_does(two_levels):
    assert '<p class="verdict ok">' in report(document(two_levels))
    html = report(document(two_levels, min_accuracy=1.01))
    assert '<p class="verdict bad">' in html and "no level holds 101% accuracy" in html


def test_it_says_where_throughput_stops_growing_or_that_it_still_grows(two_levels):
    one, two = two_levels
    grows = report(document([one, two]))                           # 2 pages/min -> 4 pages/min: still growing
    assert "Throughput still grows at concurrency 2." in grows and "stops growing" not in grows
    flat = dict(two, pages_per_min=one["pages_per_min"])
    stops = report(document([one, flat]))
    assert "Throughput stops growing at concurrency 1 (no higher level adds 10%)." in stops
    alone = report(document([one]))                                # one level: nothing to say about growth
    assert "still grows" not in alone and "stops growing" not in alone


def test_the_levels_table_shows_each_levels_figures(two_levels):
    one, two = two_levels
    two = dict(two, server_running_max=1.0, client_in_flight_max=2,
               gpu={"util_mean_pct": 41.5, "util_max_pct": 97.0, "memory_max_mib": 70123, "source": "dmon"})
    rows = levels_rows(report(document([one, two])))
    assert [r[0] for r in rows] == ["1", "2"]
    c1, c2 = rows
    assert c1[1:4] == ["2", "0", "2.0"] and c2[1:4] == ["2", "1", "4.0"]     # pages, errors, pages/min
    assert c1[4] == "0.1"                                                  # output tok/s: 8 tokens in 60 s
    assert c1[5] == "350 / 485 / 497"                                      # TTFT p50 / p95 / p99 of 0.2 s, 0.5 s
    assert c1[7] == "100.0%" and c2[7] == "50.0%"                          # b.png has no truth: not scored
    assert c2[9] == "2 (1)"                                                # client in flight (server running)
    assert c2[11] == "42% 70123 MiB (dmon)"                                # the mean, not the peak


def test_the_answers_shown_are_those_of_the_level_the_verdict_chose(two_levels):
    html = report(document(two_levels))                            # the verdict: concurrency 1 (100%)
    assert "<h2>Pages and answers (concurrency 1)</h2>" in html
    assert f"<p>{TRUTH}</p>" in html and "a.png - accuracy 100.0%" in html
    assert "<h3>b.png</h3>" in html                                  # no truth: no accuracy in its heading
    # the verdict's level is not the first one: its answers, not the first level's
    one, two = two_levels
    html = report(document([dict(two, concurrency=1), dict(one, concurrency=2)]))
    assert "<h2>Pages and answers (concurrency 2)</h2>" in html and "a.png - accuracy 100.0%" in html
    assert "<p>alpha beta</p>" not in html


def test_each_check_says_passed_failed_or_not_scored():
    failed = dict(level(1, [outcome("a.png", "alpha"), outcome("b.png", "x")], 10.0))
    html = report(document([failed], min_accuracy=0.1))
    assert '<td>words recalled</td><td class="bad">failed</td>' in html
    assert '<td>ground truth</td><td class="na">not scored</td>' in html
    passed = report(document([level(1, [outcome("a.png", TRUTH)], 10.0)], min_accuracy=0.1))
    assert '<td>words recalled</td><td class="ok">passed</td>' in passed


def test_errors_and_published_figures_are_listed(two_levels):
    html = report(document(two_levels, references=bench.REFERENCES[:1]))
    assert "<li>concurrency 2: 1 x timeout: timeout said why</li>" in html
    assert "<h2>Published figures</h2>" in html and "1.2 pages/s (72 pages/min)" in html
    assert "Published figures" not in report(document(two_levels))


def test_percentiles_and_gpu_cells_keep_their_order_and_say_what_is_missing():
    assert percentiles_ms({"p50": 1.4, "p95": 20.6, "p99": None}) == "1 / 21 / -"
    assert gpu_cell({"util_mean_pct": 12.4, "util_max_pct": 99, "memory_max_mib": None}) == "12% -"
    assert gpu_cell(None) == "-"


def test_the_plot_draws_the_accuracy_floor_only_when_there_is_one(two_levels):
    red = "#d62728"                                                   # matplotlib's tab:red, the floor's colour
    assert red in plot_svg(two_levels, 0.85)
    assert red not in plot_svg(two_levels, None)


def test_verifys_report_marks_each_check_by_its_status():
    from ocrdeploy.report.html import verify_report

    doc = {"hosts": {"gpu1": {"checks": [
        {"check": "readiness", "status": "passed", "detail": "ready in 3 s"},
        {"check": "parse: table page", "status": "failed", "detail": "2 of 9 cells", "output": "<p>x</p>"},
        {"check": "accept length", "status": "skipped", "detail": "no draft model"}]}}}
    html = verify_report(doc, {})
    assert '<td>readiness</td><td class="ok">passed</td>' in html
    assert html.count('<td>parse: table page</td><td class="bad">failed</td>') == 2    # the table and the page's
    assert '<td>accept length</td><td class="na">skipped</td>' in html


def test_it_names_the_prompt_sent_or_says_the_sdk_built_its_own(two_levels):
    api = report(document(two_levels))
    assert f"prompt <q>{bench.PROMPT}</q>; through api" in api
    sdk = report({**document(two_levels), "prompt": None, "through": "sdk"})
    assert "prompt the SDK's own (minicpmvocr parse); through sdk" in sdk and "None" not in sdk


# Mutation sample 52: the GPU cell says why there is no GPU figure, the --through sdk timing split is listed,
# and the plot draws what the levels measured on axes that start at zero.
def test_the_gpu_cell_says_why_no_gpu_was_read(two_levels):
    one, two = two_levels
    noted = dict(one, gpu=None, gpu_note="not sampled: the server is not on this machine")
    rows = levels_rows(report(document([noted, dict(two, gpu=None, gpu_note=None)])))
    assert rows[0][11] == "not sampled: the server is not on this machine" and rows[1][11] == "-"


def test_the_sdk_timing_split_is_listed_per_level(two_levels):
    one, two = two_levels
    html = report({**document([dict(one, sdk_timing_s={"layout": 0.25, "ocr": 2.0}), dict(two, sdk_timing_s=None)]),
                   "prompt": None, "through": "sdk"})
    assert ("<h2>The SDK's timing split (median per page)</h2><ul><li>concurrency 1: layout 0.25 s, ocr 2 s</li></ul>"
            in html)
    assert "timing split" not in report(document(two_levels))


def test_the_plot_draws_the_measured_figures(two_levels, monkeypatch):
    from ocrdeploy.report import html as html_mod

    figs, real = [], html_mod._svg
    monkeypatch.setattr(html_mod, "_svg", lambda fig: figs.append(fig) or real(fig))
    svg = plot_svg(two_levels, 0.85)
    assert svg.startswith("<svg")
    ax, ax2 = figs[0].axes
    assert list(ax.lines[0].get_xdata()) == [1, 2]
    assert list(ax.lines[0].get_ydata()) == [lv["pages_per_min"] for lv in two_levels] == [2.0, 4.0]
    assert ax.get_ylim()[0] == 0                                      # pages/min from zero, not from the lowest
    accuracy, floor = ax2.lines
    assert list(accuracy.get_ydata()) == [100.0, 50.0]
    assert list(floor.get_ydata()) == [85.0, 85.0]                    # the floor at 85%, on the accuracy axis
    assert ax2.get_ylim()[0] == 0
