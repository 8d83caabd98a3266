"""`ocrdeploy bench` as a user runs it (a subprocess), against the local OpenAI-compatible stand-in
(tests/ocrserver.py); the real engines are in test_bench_engines.py."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
sys.path.insert(0, str(Path(__file__).parent))

from ocrserver import OcrServer, sha  # noqa: E402
from test_verify import FAITHFUL  # noqa: E402

from ocrdeploy.sdk import pages as pages_mod  # noqa: E402

ROOT = Path(__file__).parents[2]


def bench(*args, timeout=300):
    e = dict(os.environ, COLUMNS="220", OCRDEPLOY_PROBE_NO_NVML="1")
    e.pop("OCRDEPLOY_INVENTORY", None)
    return subprocess.run([sys.executable, "-m", "ocrdeploy", "bench", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=e, timeout=timeout)


@pytest.fixture(scope="module")
def sample_pages():
    return pages_mod.sample_pages()


def _answers(pages, text=None):
    return {sha(p.image): text if text is not None else FAITHFUL[p.kind] for p in pages}


def test_json_document_and_exit_0_when_the_floor_holds(sample_pages, tmp_path):
    with OcrServer(_answers(sample_pages)) as srv:
        p = bench("--server-url", srv.url, "--concurrency", "1,2", "--requests", "3", "--json",
                  "--report", tmp_path / "r.html")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert [lv["concurrency"] for lv in doc["levels"]] == [1, 2]
    for lv in doc["levels"]:
        for key in ("concurrency", "pages", "errors", "pages_per_min", "output_tokens_per_s", "ttft_ms", "e2el_ms",
                    "accuracy", "accept_length"):
            assert key in lv
        assert lv["pages"] == 3 and lv["errors"] == 0 and lv["accuracy"] == 1.0
        assert lv["accept_length"] == 3.5
    assert set(doc["verdict"]) >= {"concurrency", "pages_per_min", "accuracy", "min_accuracy", "passed"}
    assert doc["verdict"]["passed"] is True and doc["model"] == "minicpm-ocr"
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")

    # the same run as a baseline: a baseline 10x faster than today is a drop past any tolerance
    base = dict(doc, verdict=dict(doc["verdict"], pages_per_min=doc["verdict"]["pages_per_min"] * 10))
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "same.json").write_text(json.dumps(dict(doc, verdict=dict(doc["verdict"], pages_per_min=1e-6))))
    with OcrServer(_answers(sample_pages)) as srv:
        slow = bench("--server-url", srv.url, "--concurrency", "1", "--requests", "3", "--baseline",
                     tmp_path / "base.json", "--tolerance", "0.2")
        fine = bench("--server-url", srv.url, "--concurrency", "1", "--requests", "3", "--baseline",
                     tmp_path / "same.json")
    assert slow.returncode == 1 and "under the baseline's" in slow.stdout and "tolerance 20%" in slow.stdout
    assert fine.returncode == 0 and "within 10% of the baseline" in fine.stdout, fine.stdout + fine.stderr


def test_table_and_exit_1_when_no_level_holds_the_floor(sample_pages):
    with OcrServer(_answers(sample_pages, "aaa bbb")) as srv:
        p = bench("--server-url", srv.url, "--concurrency", "1,2", "--requests", "2")
    assert p.returncode == 1, p.stderr
    assert "no level holds 85% accuracy" in p.stdout and "pages/min" in p.stdout
    assert "timing split" not in p.stdout       # --through api runs no SDK: nothing to say of its timing
    with OcrServer(_answers(sample_pages, "aaa bbb")) as srv:
        p = bench("--server-url", srv.url, "--concurrency", "1", "--requests", "2", "--min-accuracy", "0",
                  "--max-tokens", "1")                  # 1 is the least --max-tokens takes
    assert p.returncode == 0 and "pages/min at >= 0% accuracy" in p.stdout


def test_a_server_that_fails_every_request_is_errors_not_pages(sample_pages):
    with OcrServer(_answers(sample_pages), fail_every=1) as srv:
        p = bench("--server-url", srv.url, "--concurrency", "1", "--requests", "3", "--json")
    doc = json.loads(p.stdout)
    lv = doc["levels"][0]
    assert p.returncode == 1 and lv["pages"] == 0 and lv["errors"] == 3 and lv["pages_per_min"] == 0
    assert lv["accuracy"] is None and "nothing could be scored" in doc["verdict"]["line"]


@pytest.mark.parametrize("args, message", [
    (["--concurrency", "0"], "--concurrency must be between 1 and 4096"),
    (["--concurrency", "1,x"], "--concurrency must be a whole number"),
    (["--duration", "5", "--requests", "3"], "not both"),
    (["--min-accuracy", "1.5"], "--min-accuracy must be between 0 and 1"),
    (["--pages", "/nonexistent/pages"], "no such file or directory"),
    (["--through", "gpu"], "--through 'gpu'"),
    (["--report", "out.txt"], "ending in .html"),
    (["--report", "/nonexistent/dir/r.html"], "--report /nonexistent/dir/r.html: no directory /nonexistent/dir"),
    (["--baseline", "/nonexistent.json"], "--baseline /nonexistent.json"),
    (["--server-url", "localhost:8000"], "give the server's base URL"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    p = bench("--server-url", "http://127.0.0.1:9", *args) if "--server-url" not in args else bench(*args)
    assert p.returncode == 2, p.stdout + p.stderr
    assert message in p.stderr and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_bad_paths_are_one_line_and_exit_2(tmp_path):
    """A --pages file that cannot be read as a page, a --report that is a directory, a --baseline that is a
    directory: each a one-line error naming the option, exit 2, before any request."""
    from ocrdeploy.sdk import samples

    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "p.png").write_bytes(samples.png())
    (tmp_path / "pages" / "p.md").write_bytes(b"\xff\xfe not utf-8 \x80")
    (tmp_path / "dir.html").mkdir()
    for args, message in ((["--pages", tmp_path / "pages"], "is not UTF-8"),
                          (["--report", tmp_path / "dir.html"], "is a directory"),
                          (["--baseline", tmp_path], "--baseline")):
        p = bench("--server-url", "http://127.0.0.1:9", *args)
        assert p.returncode == 2, p.stdout + p.stderr
        assert message in p.stderr and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, \
            p.stderr


@pytest.mark.parametrize("verdict", ['"fast"', '{"pages_per_min": "fast"}', '{"pages_per_min": true}',
                                     '{"pages_per_min": [1]}'])
def test_a_baseline_whose_figure_is_not_a_number_is_bad_input(verdict, tmp_path):
    (tmp_path / "base.json").write_text('{"verdict": %s}' % verdict)
    p = bench("--server-url", "http://127.0.0.1:9", "--baseline", tmp_path / "base.json")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "--baseline" in p.stderr and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_bench_a_service_inv_serve_started_on_the_host(tmp_path):
    """--host: the ready service of the serve stand-in (it answers without streaming: timed whole, no TTFT),
    found through `inv status`'s records, its kind's request body and served name used."""
    from test_services import cli as host_cli, free_port, provision
    import yaml

    wd = tmp_path / "wd"
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd)}}}))
    provision(wd)
    port = free_port()
    assert host_cli("serve", ["--port", str(port)], inv).returncode == 0
    try:
        p = host_cli("bench", ["--concurrency", "1,2", "--requests", "3", "--json"], inv)
        doc = json.loads(p.stdout)
        assert p.returncode == 1, p.stderr             # the stand-in answers one fixed page: under the floor
        assert doc["target"].startswith("localhost: minicpm-ocr-") and f"port {port}" in doc["target"]
        assert doc["extra_body"] == {"mm_processor_kwargs": {"downsample_mode": "4x"}}       # dspark's body
        for lv in doc["levels"]:
            assert lv["pages"] == 3 and lv["errors"] == 0 and lv["ttft_ms"]["p50"] is None
            assert lv["accept_length"] == round(1 + 16 / 3, 3) and 0 < lv["accuracy"] < 0.85
        p = host_cli("bench", ["--name", "nothing-here", "--requests", "1"], inv)
        assert p.returncode == 1 and "no ready service named nothing-here" in p.stderr
    finally:
        host_cli("stop", [], inv)


@pytest.mark.parametrize("figure", ["NaN", "-1", "1e400", "-Infinity"])
def test_a_baseline_figure_no_run_makes_is_bad_input(figure, tmp_path):
    """NaN compared as never worse, so the CI gate passed whatever the run did; -1 and Infinity as always
    worse.  Each is one line naming the file."""
    from ocrdeploy.commands.bench import _baseline
    from ocrdeploy.errors import UsageError

    (tmp_path / "base.json").write_text('{"verdict": {"pages_per_min": %s}}' % figure)
    with pytest.raises(UsageError, match=r"^--baseline .*base\.json: its verdict's pages_per_min .* is not a figure"):
        _baseline(tmp_path / "base.json")
    (tmp_path / "ok.json").write_text('{"verdict": {"pages_per_min": 0}}')
    assert _baseline(tmp_path / "ok.json")["verdict"]["pages_per_min"] == 0
