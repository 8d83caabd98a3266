"""The bench's load and scoring against a local OpenAI-compatible stand-in (tests/ocrserver.py: real HTTP,
streamed answers keyed by the image bytes received, spec-decode counters that start far from zero)."""

import base64
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
sys.path.insert(0, str(Path(__file__).parents[1] / "commands"))

from rates import assert_pages_per_min  # noqa: E402
from ocrserver import ACCEPTED, DRAFTS, START_ACCEPTED, START_DRAFTS, OcrServer, sha  # noqa: E402
from test_verify import FAITHFUL  # noqa: E402  - what the SDK writes for the sample pages read right

from ocrdeploy.errors import UsageError  # noqa: E402
from ocrdeploy.sdk import bench, pages as pages_mod, samples  # noqa: E402


@pytest.fixture(scope="module")
def sample_pages():
    return pages_mod.sample_pages()


def answers_for(pages, **by_kind):
    return {sha(p.image): by_kind.get(p.kind, FAITHFUL.get(p.kind, "")) for p in pages}


def test_sample_pages_are_pngs_of_the_verify_pdfs(sample_pages):
    assert [p.kind for p in sample_pages] == ["text", "table", "formula"]
    for p in sample_pages:
        assert p.mime == "image/png" and p.image.startswith(b"\x89PNG\r\n\x1a\n")
        assert len(p.image) > 5000          # a rendered page, not an empty bitmap


def test_true_content_scores_full_and_the_figures_are_consistent(sample_pages):
    with OcrServer(answers_for(sample_pages)) as srv:
        doc = bench.run(srv.url, sample_pages, levels=(1, 2), requests=6, warmup=1, backend="dspark")
    assert [lv["concurrency"] for lv in doc["levels"]] == [1, 2]
    for lv in doc["levels"]:
        assert lv["accuracy"] == 1.0 and lv["scored_pages"] == 6
        assert lv["requests"] == 6 and lv["pages"] == 6 and lv["errors"] == 0
        # the rate is of the unrounded wall time; wall_s is shown to the millisecond (a fast level lasts ~40 ms)
        assert lv["pages"] * 60 / (lv["wall_s"] + 0.0005) <= lv["pages_per_min"] + 0.001
        assert lv["pages_per_min"] - 0.001 <= lv["pages"] * 60 / (lv["wall_s"] - 0.0005)
        assert lv["tokens_from"] == ["usage"] and lv["output_tokens"] > 0
        for key in ("ttft_ms", "e2el_ms"):
            assert set(lv[key]) == {"p50", "p95", "p99"}
            assert 0 < lv[key]["p50"] <= lv[key]["p95"] <= lv[key]["p99"]
        assert lv["ttft_ms"]["p50"] <= lv["e2el_ms"]["p50"]
        assert {a["accuracy"] for a in lv["answers"].values()} == {1.0}
    assert srv.count == 1 + 6 + 6               # the warm-up is sent and not counted
    v = doc["verdict"]
    assert v["passed"] and v["accuracy"] == 1.0 and v["min_accuracy"] == 0.85
    assert v["concurrency"] in (1, 2) and v["line"].startswith(f"{v['pages_per_min']:.1f} pages/min at >= 85%")


def test_the_request_is_the_sdks_the_image_exactly_as_on_disk(tmp_path):
    png = samples.png(40, 30)
    (tmp_path / "scan.png").write_bytes(png)
    (tmp_path / "scan.md").write_text("Optical character recognition")
    pages = pages_mod.user_pages(str(tmp_path))
    with OcrServer({sha(png): "Optical character recognition"}) as srv:
        doc = bench.run(srv.url, pages, levels=(1,), requests=1, warmup=0, backend="dspark", model="minicpm-ocr")
    body = srv.bodies[0]
    part = body["messages"][0]["content"]
    assert part[0]["type"] == "image_url" and part[0]["image_url"]["url"] == (
        "data:image/png;base64," + base64.b64encode(png).decode())
    assert srv.images[0] == png
    assert part[1] == {"type": "text", "text": bench.PROMPT}
    assert body["mm_processor_kwargs"] == {"downsample_mode": "4x"} and body["stream"] is True
    assert body["model"] == "minicpm-ocr" and body["temperature"] == 0
    assert doc["levels"][0]["accuracy"] == 1.0          # the .md beside the page was used
    assert [r["pages_per_min"] for r in doc["references"]] == [72.0, 111.6]    # MiniCPM-OCR's published figures

    with OcrServer({sha(png): "x"}) as srv:
        doc = bench.run(srv.url, pages, levels=(1,), requests=1, warmup=0, backend="transformers", model="/m/tiny")
    assert doc["references"] == []                        # not beside another model's figures
    assert srv.bodies[0]["chat_template_kwargs"] == {"enable_thinking": False}
    assert "mm_processor_kwargs" not in srv.bodies[0]


def test_aaa_bbb_fails_the_floor(sample_pages):
    with OcrServer(answers_for(sample_pages, text="aaa bbb", table="aaa bbb", formula="aaa bbb")) as srv:
        doc = bench.run(srv.url, sample_pages, levels=(1, 2), requests=3, warmup=0)
    assert all(lv["accuracy"] == 0.0 and lv["pages"] == 3 for lv in doc["levels"])
    v = doc["verdict"]
    assert not v["passed"] and v["concurrency"] is None and v["line"].startswith("no level holds 85% accuracy")
    text = doc["levels"][0]["answers"]["text"]
    assert any(c["passed"] is False and "missing" in c["detail"] for c in text["checks"])


def test_truncated_and_shuffled_content_score_what_they_should(sample_pages):
    kept = "# Document parsing with MiniCPM-OCR\n\nThe quick brown fox jumps over the lazy dog."
    # recall counted here with a regex of its own (not driver.words): the words of `kept` among the page's
    want = set(re.findall(r"[a-z0-9]+", " ".join(samples.TEXT).lower()))
    have = set(re.findall(r"[a-z0-9]+", kept.lower()))
    formula = "Equation 1\n\n$$x = \\frac{2c}{a + b}$$"     # numerator and denominator swapped
    table = "<table>" + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>"
                                for row in samples.TABLE[:2]) + "</table>"     # the last row lost
    with OcrServer(answers_for(sample_pages, text=kept, formula=formula, table=table)) as srv:
        doc = bench.run(srv.url, sample_pages, levels=(1,), requests=3, warmup=0)
    a = doc["levels"][0]["answers"]
    assert a["text"]["accuracy"] == pytest.approx(len(want & have) / len(want))
    assert 0.2 < a["text"]["accuracy"] < 0.5
    assert a["table"]["accuracy"] == pytest.approx(6 / 9)
    # all 8 tokens present, none of a + b (3) in the numerator nor 2 c (2) in the denominator: 8 of 13
    assert a["formula"]["accuracy"] == pytest.approx(8 / 13)
    assert doc["levels"][0]["accuracy"] == pytest.approx((len(want & have) / len(want) + 6 / 9 + 8 / 13) / 3,
                                                         abs=1e-4)


def test_failed_requests_are_errors_by_kind_not_pages(sample_pages):
    with OcrServer(answers_for(sample_pages), fail_every=3) as srv:
        doc = bench.run(srv.url, sample_pages, levels=(1,), requests=9, warmup=0)
    lv = doc["levels"][0]
    assert lv["requests"] == 9 and lv["errors"] == 3 and lv["pages"] == 6
    assert lv["errors_by_kind"] == {"HTTP 500": 3} and "stand-in failure" in lv["error_examples"]["HTTP 500"]
    assert_pages_per_min(lv, 6)         # the 6 good pages, not the 9 requests


def test_accept_length_from_the_runs_deltas_not_the_totals(sample_pages):
    with OcrServer(answers_for(sample_pages)) as srv:
        doc = bench.run(srv.url, sample_pages, levels=(1, 2), requests=4, warmup=1)
    for lv in doc["levels"]:
        assert lv["spec_decode"]["drafts"] == 4 * DRAFTS and lv["spec_decode"]["accepted"] == 4 * ACCEPTED
        assert lv["accept_length"] == round(1 + ACCEPTED / DRAFTS, 3)
        assert lv["accept_length"] != round(1 + START_ACCEPTED / START_DRAFTS, 3)
    with OcrServer(answers_for(sample_pages), spec=False) as srv:
        doc = bench.run(srv.url, sample_pages, levels=(1,), requests=2, warmup=0)
    assert doc["levels"][0]["accept_length"] is None


@pytest.mark.parametrize("concurrency", [2, 4])
def test_a_level_really_overlaps_its_requests(sample_pages, concurrency):
    """The stand-in holds each request until `concurrency` are in flight (5 s at most): a client that sends
    one at a time never gets there."""
    with OcrServer(answers_for(sample_pages), gather=concurrency) as srv:
        doc = bench.run(srv.url, sample_pages, levels=(concurrency,), requests=2 * concurrency, warmup=0)
    lv = doc["levels"][0]
    assert srv.max_in_flight == concurrency and lv["client_in_flight_max"] == concurrency
    assert lv["server_running_max"] is not None and lv["wall_s"] < 5
    assert lv["pages"] == 2 * concurrency


def test_duration_mode_counts_what_finished(sample_pages):
    with OcrServer(answers_for(sample_pages), chunk_delay=0.01) as srv:
        doc = bench.run(srv.url, sample_pages, levels=(2,), duration=0.3, warmup=0)
    lv = doc["levels"][0]
    assert lv["pages"] == lv["requests"] == srv.count and lv["pages"] >= 2
    assert lv["wall_s"] >= 0.3


def test_user_pages_truth_and_bad_input(tmp_path):
    png = samples.png()
    (tmp_path / "a.png").write_bytes(png)
    (tmp_path / "a.md").write_text("| k | v |\n| --- | --- |\n| alpha | 1 |\n\n$$E = mc^2$$\n")
    (tmp_path / "b.png").write_bytes(samples.png(20, 20))
    (tmp_path / "notes.txt").write_text("ignored")
    pages = pages_mod.user_pages(str(tmp_path))
    assert [(p.name, p.truth is not None) for p in pages] == [("a.png", True), ("b.png", False)]
    a = bench.score(pages[0], "<table><tr><td>k</td><td>v</td></tr><tr><td>alpha</td><td>1</td></tr></table>"
                              " $E = mc^2$")
    assert a["accuracy"] == 1.0 and [c["check"] for c in a["checks"]] == ["words recalled", "table cells",
                                                                             "formula tokens"]
    half = bench.score(pages[0], "| k | v |\n|---|---|\n| alpha | 2 |")       # a pipe table counts as cells
    assert half["checks"][1]["detail"].startswith("3 of 4 cells")
    assert bench.score(pages[1], "anything")["accuracy"] is None

    (tmp_path / "bad.png").write_bytes(b"GIF89a not a png")
    with pytest.raises(UsageError, match="bad.png: not a image/png file"):
        pages_mod.user_pages(str(tmp_path))
    with pytest.raises(UsageError, match="no such file"):
        pages_mod.user_pages(str(tmp_path / "missing"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError, match="no image or PDF pages"):
        pages_mod.user_pages(str(empty))


def test_a_user_pdf_is_rendered_and_its_md_used(tmp_path):
    (tmp_path / "doc.pdf").write_bytes(samples.text_page())
    (tmp_path / "doc.md").write_text("\n".join(samples.TEXT))
    pages = pages_mod.user_pages(str(tmp_path / "doc.pdf"))
    assert len(pages) == 1 and pages[0].name == "doc.pdf-p1" and pages[0].truth.startswith("Document parsing")
    assert pages[0].image.startswith(b"\x89PNG")
    assert bench.score(pages[0], FAITHFUL["text"])["accuracy"] == 1.0


def test_percentiles_are_vllms_linear_interpolation():
    assert bench.percentiles([0.001 * i for i in range(1, 101)]) == {"p50": 50.5, "p95": 95.05, "p99": 99.01}
    assert bench.percentiles([]) == {"p50": None, "p95": None, "p99": None}


def test_verdict_best_level_holding_the_floor_and_the_knee():
    def lv(c, ppm, acc):
        return {"concurrency": c, "pages_per_min": ppm, "accuracy": acc, "pages": 1}

    v = bench.verdict([lv(1, 10, 0.9), lv(2, 19, 0.9), lv(4, 30, 0.8), lv(8, 31, 0.95)], 0.85)
    assert v["concurrency"] == 8 and v["pages_per_min"] == 31 and v["passed"]
    assert v["throughput_stops_growing_at"] == 4           # 4 -> 8 adds 3%
    v = bench.verdict([lv(1, 10, 0.9), lv(2, 19, 0.9), lv(4, 30, 0.8)], 0.85)
    assert v["concurrency"] == 2 and v["throughput_stops_growing_at"] is None      # still growing at 4
    v = bench.verdict([lv(1, 10, 0.9), lv(2, 10.5, 0.9), lv(4, 20, 0.9)], 0.85)
    assert v["throughput_stops_growing_at"] is None                 # a pause at 2 is not where it stops
    v = bench.verdict([lv(1, 0, None)], 0.85)
    assert not v["passed"] and v["line"] == "no level holds 85% accuracy (nothing could be scored)"


def _two_page_pdf() -> bytes:
    import io

    import pypdfium2 as pdfium

    src = pdfium.PdfDocument(samples.text_page())
    doc = pdfium.PdfDocument.new()
    doc.import_pages(src)
    doc.import_pages(src)
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def test_a_many_page_pdf_takes_each_pages_own_md_and_never_the_documents(tmp_path):
    """doc.md is the truth of a one-page doc.pdf only: for a longer PDF it cannot say which page it is, so
    each page is scored against its own doc-N.md or only timed."""
    (tmp_path / "doc.pdf").write_bytes(_two_page_pdf())
    (tmp_path / "doc.md").write_text("the whole document")
    (tmp_path / "doc-2.md").write_text("page two")
    pages = pages_mod.user_pages(str(tmp_path / "doc.pdf"))
    assert [(p.name, p.truth) for p in pages] == [("doc.pdf-p1", None), ("doc.pdf-p2", "page two")]


def test_a_pdf_page_is_rendered_at_the_stated_dpi(tmp_path):
    """DPI dots per inch of a PDF's 72 points: the size the report states for every user PDF page."""
    import pypdfium2 as pdfium

    data = samples.text_page()
    width_pt, height_pt = pdfium.PdfDocument(data)[0].get_size()
    png = pages_mod.render_pdf(data, "sample")[0]
    width_px, height_px = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")  # the IHDR chunk
    assert (width_px, height_px) == (round(width_pt * pages_mod.DPI / 72), round(height_pt * pages_mod.DPI / 72))
