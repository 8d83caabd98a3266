"""Two REAL vLLM CPU instances (tests/tinymodel.py's tiny model) behind the REAL pinned vllm-router, as a user
runs them (marker `engine`): `serve --instances 2 --router`, a client loop through the router during
`restart --rolling --max-model-len`, a roll stopped by an option the engine refuses.  Engine starts are
what cost here (70-300 s each on a loaded CPU): five in all, so this is one test.  Figures it prints:
the time to roll two instances, requests failed, router overhead per request (p50 through the router minus
p50 direct), and the router's resident memory."""

import json
import statistics
import time
from pathlib import Path

import httpx
import pytest
import yaml

from clientloop import ClientLoop
from engines import cli, engine_env, free_port, router_port
from tinymodel import make_tiny_llama

# Sized for CI (it was opt-in at 28 min): what a start of the tiny model costs on a CPU is three Python processes
# importing torch and vLLM (API server, engine core, worker: ~15-35 s each on 2 cores), then, by default, vLLM's
# inductor compile of the model (bench/router_instance_start.py, 2026-12-02 at load 3.5: 100 s to ready
# by default, 60 s with --enforce-eager).  --enforce-eager
# (compilation mode none) drops the compile, which the test need not pay: what is under test is the order of the
# roll, not the engine's speed.  KV cache 1 GiB, --max-model-len 2048.  Each CPU instance has cores of its own
# (VLLM_CPU_OMP_THREADS_BIND, commands/services.cpu_binds): before that, a restarted engine beside a busy one sat
# idle for 10+ minutes.  The client loop paces itself (one request every LOOP_PAUSE_S) so it shares the two
# cores with the starting engine without starving it, and still sends well over 40 requests during a roll.
pytestmark = [pytest.mark.engine]
LOOP_PAUSE_S = 0.5
MIN_REQUESTS = 40


def _chat(base, text="Say OK.", timeout=120):
    return httpx.post(f"{base}/v1/chat/completions", trust_env=False, timeout=timeout, json={
        "model": "minicpm-ocr", "max_tokens": 4, "temperature": 0, "messages": [{"role": "user", "content": text}]})


def _served(port) -> float:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", trust_env=False, timeout=30).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("vllm:request_success_total{"))


def _max_model_len(port) -> int:
    return httpx.get(f"http://127.0.0.1:{port}/v1/models", trust_env=False, timeout=30).json()["data"][0][
        "max_model_len"]


def _overhead(direct_urls, router, n=20):
    """p50 through the router and p50 direct, the two interleaved (and the direct ones spread over the
    workers as the router spreads them), so a load spike on this shared machine falls on both."""
    direct, through = [], []
    for i in range(n):
        for url, out in ((direct_urls[i % len(direct_urls)], direct), (router, through)):
            t0 = time.perf_counter()
            assert _chat(url).status_code == 200
            out.append(time.perf_counter() - t0)
    return statistics.median(direct), statistics.median(through)


def test_two_real_instances_behind_the_router_roll_without_a_failed_request(tmp_path):
    tiny = make_tiny_llama(tmp_path / "tiny-llama")
    wd = tmp_path / "wd"
    wd.mkdir()
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd), "vllm_cpu_kvcache_space": 1,
                                                    "vllm_env": str(engine_env("vllm")),
                                                    "router_env": str(engine_env("router"))}}}))
    port, rport = free_port(2), router_port()
    while abs(rport - port) < 3:
        rport = router_port()
    router = f"http://127.0.0.1:{rport}"
    ports = [port, port + 1]
    try:
        p = cli("serve", ["--standard", "--model-dir", str(tiny), "--gpu", "none", "--instances", "2",
                          "--port", str(port), "--max-model-len", "2048", "--enforce-eager", "--router", "--router-port", str(rport),
                          "--json"], inv, timeout=1800)
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        doc = json.loads(p.stdout)["hosts"]["localhost"]
        assert sorted(doc["router"]["workers"]) == sorted(f"http://127.0.0.1:{q}" for q in ports)
        assert all(i["router"]["joined"] and i["router"]["smoke"]["kind"] == "text (the model takes no image)"
                   for i in doc["instances"])
        router_pid = doc["router"]["pid"]

        # requests through the one URL reach both workers (their own success counters)
        before = {q: _served(q) for q in ports}
        for _ in range(6):
            assert _chat(router).status_code == 200
        assert all(_served(q) > before[q] for q in ports)

        # figures: router overhead per request, router memory
        direct, through = _overhead([f"http://127.0.0.1:{q}" for q in ports], router)
        rss_kb = int(Path(f"/proc/{router_pid}/status").read_text().split("VmRSS:")[1].split()[0])
        print(f"router overhead p50: {(through - direct) * 1000:.1f} ms (direct {direct * 1000:.1f} ms, through "
              f"{through * 1000:.1f} ms); router RSS {rss_kb / 1024:.1f} MiB")

        # a client loop during the rolling restart: no request fails
        with ClientLoop(lambda: _chat(router), LOOP_PAUSE_S) as clients:
            t0 = time.monotonic()
            p = cli("restart", ["--rolling", "--max-model-len", "4096", "--timeout", "900", "--json"], inv,
                    timeout=1800)
            rolled = time.monotonic() - t0
            while len(clients.results) < MIN_REQUESTS and time.monotonic() - t0 < rolled + 60:
                time.sleep(0.2)
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        roll = json.loads(p.stdout)["hosts"]["localhost"]
        results, failed = clients.results, clients.failed
        print(f"rolling restart of 2 instances: {rolled:.0f} s, {len(results)} requests, {len(failed)} failed")
        assert len(results) >= MIN_REQUESTS and failed == []
        assert [s for s, _ in roll["steps"]] == ["out", "drained", "restarted", "back"] * 2
        assert sorted(roll["pool"]) == sorted(f"http://127.0.0.1:{q}" for q in ports)
        assert [_max_model_len(q) for q in ports] == [4096, 4096]

        # an option the engine refuses: the roll stops at the first, the other keeps its old version and serves
        p = cli("restart", ["--rolling", "--max-model-len", "99999", "--timeout", "900"], inv, timeout=1800)
        assert p.returncode == 1, p.stdout[-3000:]
        assert "the roll stopped at" in p.stdout and "diagnosis max-model-len-too-long" in p.stdout
        st = json.loads(cli("status", ["--json"], inv).stdout)["hosts"]["localhost"]["router"][0]
        pool = [w["url"] for w in st["workers"] if w["in_pool"]]
        assert len(pool) == 1
        left = int(pool[0].rsplit(":", 1)[1])
        assert _max_model_len(left) == 4096 and _chat(router).status_code == 200
    finally:
        cli("stop", ["--grace", "20"], inv)
