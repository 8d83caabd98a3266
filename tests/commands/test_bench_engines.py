"""`inv bench` against REAL engines (marker `engine`) serving the tiny random model (tests/tinymodel.py):
vLLM's CPU build with an ngram speculative config, and transformers serve.

The tiny model is a text-only Llama.  The real vLLM refuses the SDK-shaped image request ("is not a
multimodal model"), and the bench must count those as errors by kind, not as pages; the load figures,
the overlap and the accept length are then measured on the same machinery with a text request (the
`body` hook of sdk.bench.run).  transformers serve answers the image request (its template drops the
image), so there the whole SDK-shaped path runs, through the CLI, to the JSON and the HTML report.
"""

import json
import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from rates import assert_pages_per_min  # noqa: E402
from engines import cli, engine_env, free_port  # noqa: E402
from test_services_engines import NGRAM, _site  # noqa: E402

from ocrdeploy.sdk import bench, pages as pages_mod  # noqa: E402

pytestmark = pytest.mark.engine


def _counter(port, name):
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(f"http://127.0.0.1:{port}/metrics", trust_env=False, timeout=30).text
    return sum(s.value for f in text_string_to_metric_families(text) for s in f.samples if s.name == name)


DRAFTS, ACCEPTED = "vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_accepted_tokens_total"
SUCCESS = "vllm:request_success_total"


def test_bench_on_real_vllm_with_ngram_speculation(tmp_path, tiny):
    wd, inv = _site(tmp_path, vllm_env=str(engine_env("vllm")))
    port = free_port()
    try:
        # --enforce-eager: what is measured here is the bench's arithmetic, not the engine's compiled speed
        # (vLLM's inductor compile was 100 s of this test's start on 2 cores)
        p = cli("serve", ["--dspark", "--speculative-config", NGRAM, "--max-num-seqs", "4", "--enforce-eager",
                          "--model-dir", str(tiny), "--gpu", "none", "--port", str(port), "--json"], inv)
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        url = f"http://127.0.0.1:{port}"
        pages = pages_mod.sample_pages()

        # the SDK's request, as sent: the real server refuses the image; errors by kind, no pages
        doc = bench.run(url, pages, levels=(2,), requests=2, warmup=0, backend="dspark")
        lv = doc["levels"][0]
        assert lv["pages"] == 0 and lv["errors"] == 2 and lv["pages_per_min"] == 0
        assert list(lv["errors_by_kind"]) == ["HTTP 400"] and "not a multimodal model" in \
            lv["error_examples"]["HTTP 400"]

        # counters far from the run's own ratio first: non-repeating text drafts little and accepts less
        for i in range(3):
            httpx.post(f"{url}/v1/chat/completions", trust_env=False, timeout=300, json={
                "model": "minicpm-ocr", "max_tokens": 24,
                "messages": [{"role": "user", "content": f"zq{i} xw vk jm plo {i * 7}"}]})
        text = " ".join(["the quick brown fox jumps over the lazy dog"] * 6)

        def body(page):
            return {"model": "minicpm-ocr", "max_tokens": 48, "temperature": 0, "stream": True,
                    "stream_options": {"include_usage": True},
                    "messages": [{"role": "user", "content": f"{page.kind}: {text}"}]}

        before = {n: _counter(port, n) for n in (DRAFTS, ACCEPTED, SUCCESS)}
        doc = bench.run(url, pages, levels=(4,), requests=8, warmup=0, body=body)
        after = {n: _counter(port, n) for n in (DRAFTS, ACCEPTED, SUCCESS)}
        lv = doc["levels"][0]
        print("vllm-cpu level 4:", json.dumps({k: lv[k] for k in ("pages", "wall_s", "pages_per_min", "ttft_ms",
                                                                   "e2el_ms", "accept_length", "server_running_max",
                                                                   "output_tokens_per_s")}))
        # consistent: pages = the requests the server counts as succeeded; pages/min = pages / wall time
        assert lv["pages"] == lv["requests"] == 8 == after[SUCCESS] - before[SUCCESS]
        assert_pages_per_min(lv, lv["pages"])
        assert lv["tokens_from"] == ["usage"] and lv["output_tokens"] > 0
        # the accept length of this run: the counters' growth over it, not their totals
        d_drafts, d_acc = after[DRAFTS] - before[DRAFTS], after[ACCEPTED] - before[ACCEPTED]
        assert d_drafts > 0 and lv["spec_decode"]["drafts"] == d_drafts and lv["spec_decode"]["accepted"] == d_acc
        assert lv["accept_length"] == round(1 + d_acc / d_drafts, 3)
        assert lv["accept_length"] != round(1 + after[ACCEPTED] / after[DRAFTS], 3)
        # the real engine's gauge is found and read (its name, labels and parsing: vllm:num_requests_running); how
        # high it reads is the engine's timing: on a fresh 2-core machine vllm-cpu 0.32 counted 0 running in 6 of 7
        # reads while 4 requests were in flight (a tiny model spends a few ms of each request in model execution),
        # so the reading's value is tested against a server whose gauge is known (tests/sdk/test_bench_run_document)
        assert lv["client_in_flight_max"] == 4 and lv["server_running_max"] is not None
        assert lv["accuracy"] is None or lv["accuracy"] < 0.85     # a random model reads nothing
    finally:
        cli("stop", ["--grace", "20"], inv)


def test_bench_cli_on_real_transformers_serve(tmp_path, tiny):
    """Started by hand without --continuous-batching (and under an 8 GB address-space limit): on this 23 GB
    box the continuous-batching server `inv serve --backend transformers` starts grew to 19.7 GB RSS on
    its first image request and was OOM-killed (2026-12-01), taking the machine's memory from everyone."""
    import os
    import resource
    import subprocess
    import time

    venv = engine_env("transformers")
    port = free_port()
    log = open(tmp_path / "tf.log", "wb")

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))

    proc = subprocess.Popen([str(venv / "bin" / "transformers"), "serve", str(tiny), "--port", str(port), "--host",
                             "127.0.0.1"], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=dict(os.environ, HF_HOME=str(tmp_path / "hf-home")), start_new_session=True,
                            preexec_fn=limit)
    try:
        deadline = time.monotonic() + 600
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", trust_env=False, timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, (tmp_path / "tf.log").read_text()[-3000:]
            assert time.monotonic() < deadline
            time.sleep(1)
        report = tmp_path / "bench.html"
        inv = tmp_path / "inv.yml"
        inv.write_text("all: {}\n")
        p = cli("bench", ["--server-url", f"http://127.0.0.1:{port}", "--model", str(tiny), "--backend",
                          "transformers", "--concurrency", "1,2", "--requests", "3", "--max-tokens", "16", "--json",
                          "--report", str(report)], inv)
        assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]        # a random model: under the floor
        doc = json.loads(p.stdout)
        for lv in doc["levels"]:
            print(f"transformers serve level {lv['concurrency']}:", json.dumps(
                {k: lv[k] for k in ("pages", "wall_s", "pages_per_min", "ttft_ms", "e2el_ms", "tokens_from")}))
            assert lv["pages"] == lv["requests"] == 3 and lv["errors"] == 0, lv["error_examples"]
            assert_pages_per_min(lv, lv["pages"])
            assert lv["ttft_ms"]["p50"] is not None and lv["ttft_ms"]["p50"] <= lv["e2el_ms"]["p50"]
            assert lv["tokens_from"] == ["usage"] and 0 < lv["output_tokens"] <= 3 * 16
            assert lv["accuracy"] is not None and lv["accuracy"] < 0.85
            assert lv["accept_length"] is None          # no /metrics on transformers serve
        assert doc["verdict"]["passed"] is False and doc["extra_body"] == {
            "chat_template_kwargs": {"enable_thinking": False}}
        html = report.read_text()
        assert html.count('src="data:image/png;base64,') == 3 and "<svg" in html
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=60)
        log.close()
