"""`inv bench --through sdk`, `--router` and the host's GPU readings, as a user runs them (the CLI), on a host
session to this machine.

What stands in, and why:
- minicpmvocr: the MiniCPM-OCR SDK (pip name minicpm-ocr, per its model card) is not in the package index
  this machine reaches (`pip download minicpm-ocr`: no matching distribution, 2026-12-02), so a stand-in
  CLI takes its place in sdk-env: it takes the argv `inv parse` builds, renders page 1
  of --input with PDFium at 144 dpi, sends the chat request to --server-url over real HTTP, writes the
  answer to --output and prints a `stage: N s` timing split.  It has no layout model or stitching.
- the server: tests/ocrserver.py (a multimodal OCR model on a GPU cannot run here).
- the router: a second ocrserver on the router's port (the real vllm-router runs in test_router_engines.py).
- nvidia-smi: recorded `nvidia-smi dmon -s um` output replayed (tests/fixtures/nvidia-smi, sources named).
"""

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
sys.path.insert(0, str(Path(__file__).parent))
from rates import assert_pages_per_min  # noqa: E402
from ocrserver import OcrServer, sha  # noqa: E402
from test_services import FIX, cli, free_port, provision, site  # noqa: E402,F401 - `site` is a shared fixture
from test_verify import FAITHFUL, sdk_env  # noqa: E402

from ocrdeploy.sdk import pages as pages_mod  # noqa: E402

STANDIN_SDK = r'''#!{python}
"""Stand-in for `minicpmvocr parse` (see tests/commands/test_bench_sdk.py): one real chat request per run."""
import json, os, sys, time
import httpx
from ocrdeploy.sdk.pages import render_pdf
here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
with open(os.path.join(here, "calls.jsonl"), "a") as fh:
    fh.write(json.dumps({{"argv": args}}) + "\n")
get = lambda flag: args[args.index(flag) + 1]
inp, out, url, model = get("--input"), get("--output"), get("--server-url"), get("--model")
if os.path.basename(inp).startswith(os.environ.get("STANDIN_FAIL_ON", "\0")):
    sys.exit("stand-in: told to fail on " + inp)
t0 = time.perf_counter()
data = open(inp, "rb").read()
png = render_pdf(data, inp)[0] if inp.endswith(".pdf") else data
t1 = time.perf_counter()
import base64
body = {{"model": model, "messages": [{{"role": "user", "content": [
    {{"type": "image_url", "image_url": {{"url": "data:image/png;base64," + base64.b64encode(png).decode()}}}},
    {{"type": "text", "text": "parse"}}]}}]}}
r = httpx.post(url + "/v1/chat/completions", json=body, timeout=60, trust_env=False)
text = r.json()["choices"][0]["message"]["content"]
t2 = time.perf_counter()
open(out, "w").write(text)
print(f"layout: {{t1 - t0:.4f}} s")
print(f"ocr: {{(t2 - t1) * 1000:.1f}} ms")
'''

A100 = FIX / "nvidia-smi" / "a100-535"


@pytest.fixture(scope="module")
def answers():
    return {sha(p.image): FAITHFUL[p.kind] for p in pages_mod.sample_pages()}


def standin_sdk(wd):
    calls = sdk_env(wd)
    script = wd / "sdk-env" / "bin" / "minicpmvocr"
    script.write_text(STANDIN_SDK.format(python=sys.executable))
    return calls


def test_through_sdk_runs_the_sdk_per_page_at_each_level(site, answers, capsys):
    wd, inv = site
    provision(wd)
    calls = standin_sdk(wd)
    with OcrServer(answers, gather=2) as srv:
        p = cli("bench", ["--through", "sdk", "--server-url", srv.url, "--concurrency", "2,1", "--requests", "3",
                          "--warmup", "0", "--json"], inv, timeout=300)
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
        assert srv.max_in_flight == 2                 # the level of 2 had two SDK runs' requests at once
    doc = json.loads(p.stdout)
    assert doc["through"] == "sdk" and doc["prompt"] is None
    for lv in doc["levels"]:
        assert lv["pages"] == lv["requests"] == 3 and lv["errors"] == 0 and lv["accuracy"] == 1.0
        assert_pages_per_min(lv, 3)
        assert lv["ttft_ms"]["p50"] is None and lv["e2el_ms"]["p50"] > 0 and lv["output_tokens_per_s"] is None
        assert set(lv["sdk_timing_s"]) == {"layout", "ocr"} and lv["sdk_timing_s"]["ocr"] < 60
    assert [lv["client_in_flight_max"] for lv in doc["levels"]] == [2, 1]
    runs = [json.loads(line)["argv"] for line in calls.read_text().splitlines()]
    assert len(runs) == 6
    for argv in runs:                                  # the guide's command, as `inv parse` builds it
        assert argv[:3] == ["parse", "--config", f"{wd}/minicpmvocr-sdk/configs/backends/openai.yaml"]
        assert argv[argv.index("--server-url") + 1] == srv.url and argv[argv.index("--model") + 1] == "minicpm-ocr"
        assert argv[argv.index("--input") + 1].endswith((".pdf",))
    assert len({argv[argv.index("--output") + 1] for argv in runs}) == 6          # a fresh output per run
    assert doc["levels"][0]["gpu"] is None
    from ocrdeploy.commands.bench import show

    capsys.readouterr()
    show(doc)                                          # the table a run without --json prints of this document
    out = capsys.readouterr().out
    assert "concurrency 2: the SDK's timing split (median s): layout " in out, out
    assert "printed no timing split" not in out, out


def test_a_failed_sdk_run_is_an_error_not_a_page(site, answers):
    wd, inv = site
    provision(wd)
    standin_sdk(wd)
    with OcrServer(answers) as srv:
        p = cli("bench", ["--through", "sdk", "--server-url", srv.url, "--concurrency", "1", "--requests", "3",
                          "--warmup", "0", "--json"], inv, env={"STANDIN_FAIL_ON": "table"}, timeout=300)
    doc = json.loads(p.stdout)
    lv = doc["levels"][0]
    assert lv["pages"] == 2 and lv["errors"] == 1 and list(lv["errors_by_kind"]) == ["minicpmvocr exit 1"]
    assert "told to fail" in lv["error_examples"]["minicpmvocr exit 1"]
    assert_pages_per_min(lv, 2)


def test_through_sdk_says_why_it_cannot_run(site):
    wd, inv = site
    provision(wd)                                      # no sdk-env
    with OcrServer({}) as srv:
        p = cli("bench", ["--through", "sdk", "--server-url", srv.url, "--requests", "1"], inv)
    assert p.returncode == 1 and "sdk-env has no minicpmvocr" in p.stderr, p.stderr[-2000:]


def test_router_is_benched_at_the_routers_url_with_the_hosts_gpu_readings(site, answers):
    """--router: the URL `inv verify --router` uses (commands/router.router_url), reached through the host
    session; the host's GPUs read by nvidia-smi dmon during each level (the recorded A100)."""
    wd, inv = site
    provision(wd)
    with OcrServer(answers) as router, OcrServer({}) as other:
        port = int(router.url.rsplit(":", 1)[1])
        path = f"{A100}:{os.environ['PATH']}"
        p = cli("bench", ["--router", "--router-port", str(port), "--concurrency", "1,2", "--requests", "3",
                          "--json"], inv, env={"PATH": path})
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
        assert router.count == 1 + 6 and other.count == 0
    doc = json.loads(p.stdout)
    assert doc["router"] == f"http://127.0.0.1:{port}" and "the router" in doc["target"]
    assert doc["extra_body"] == {"mm_processor_kwargs": {"downsample_mode": "4x"}}      # vLLM behind it: standard
    for lv in doc["levels"]:
        assert lv["gpu"]["util_mean_pct"] == 90.9 and lv["gpu"]["util_max_pct"] == 100
        assert lv["gpu"]["memory_max_mib"] == 14813 and lv["gpu"]["per_gpu"]["0"]["samples"] == 17
        assert lv["gpu"]["source"] == "nvidia-smi dmon on localhost" and lv["gpu_note"] is None
    table = cli("bench", ["--router", "--router-port", str(port), "--requests", "1", "--concurrency", "1"], inv,
                env={"PATH": os.environ["PATH"]})
    assert "no nvidia-smi on localhost: no GPU readings" in table.stdout, table.stdout[-2000:] + table.stderr


@pytest.mark.parametrize("args, message", [
    (["--router", "--server-url", "http://127.0.0.1:9"], "--router benches the router"),
    (["--router", "--router-port", "0"], "--router-port must be between 1 and 65534"),
    (["--router", "--name", "x"], "--name picks a service"),
])
def test_router_bad_input_is_one_line_and_exit_2(site, args, message):
    wd, inv = site
    p = cli("bench", args, inv)
    assert p.returncode == 2 and message in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def _sleepers():
    """pids of `sleep 600`: what the replayed dmon becomes (fake-nvidia-smi.sh) until it is killed."""
    out = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if open(f"/proc/{pid}/cmdline", "rb").read() == b"sleep\x00600\x00":
                out.add(pid)
        except OSError:
            pass
    return out


@pytest.mark.ssh
def test_the_hosts_gpus_are_read_over_ssh_and_dmon_is_stopped(lab, tmp_path):
    """--host over a real sshd: the service through a tunnel, dmon started on the host in the background over
    the same connection for each level, read back, and stopped (no dmon left running there)."""
    import yaml

    h = lab.start("gpu", "127.0.0.14", path_prefix=str(A100))
    wd = tmp_path / "rwd"
    provision(wd)
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"gpu": lab.inventory_entry(h, workdir=str(wd))}}}))
    env = {"OCRDEPLOY_KNOWN_HOSTS": str(lab.known_hosts)}
    before = _sleepers()
    try:
        assert cli("serve", ["--host", "gpu", "--port", str(free_port())], inv, env=env).returncode == 0
        p = cli("bench", ["--host", "gpu", "--concurrency", "1,2", "--requests", "2", "--json"], inv, env=env)
        doc = json.loads(p.stdout)
        for lv in doc["levels"]:
            assert lv["pages"] == 2 and lv["gpu"]["memory_max_mib"] == 14813, lv
            assert lv["gpu"]["source"] == "nvidia-smi dmon on gpu"
    finally:
        cli("stop", ["--host", "gpu"], inv, env=env)
    assert not (_sleepers() - before)
