"""The closing figures of the router on real engines: two vLLM CPU instances of the tests' tiny model
(tests/tinymodel.py) behind the real pinned vllm-router, started as a user starts them (`serve --gpu none
--instances 2 --enforce-eager --router`), then: the router's overhead per request (p50 through the router
minus p50 direct, interleaved pairs), its resident memory, and a rolling restart (`restart --rolling
--max-model-len 4096`) under a client loop: its wall time, requests sent, requests failed.

    flock /tmp/ocrdeploy-engine.lock .venv/bin/python bench/router_roll.py [PAIRS] [PAUSE_S]

Needs the engine venvs .ci/run installs (tests/engines.py finds them).  Not a test: give `uptime` with the
figures; tests/commands/test_router_engines.py asserts the outcome (0 failed) and prints the same figures.
"""

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from clientloop import ClientLoop  # noqa: E402
from engines import cli, engine_env, free_port  # noqa: E402
from tinymodel import make_tiny_llama  # noqa: E402


def chat(base):
    return httpx.post(f"{base}/v1/chat/completions", trust_env=False, timeout=120, json={
        "model": "minicpm-ocr", "max_tokens": 4, "temperature": 0, "messages": [{"role": "user", "content": "Say OK."}]})


def main(pairs=50, pause=0.5):
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        tiny = make_tiny_llama(d / "tiny")
        (d / "wd").mkdir()
        inv = d / "inv.yml"
        inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(d / "wd"), "vllm_cpu_kvcache_space": 1,
                                                        "vllm_env": str(engine_env("vllm")),
                                                        "router_env": str(engine_env("router"))}}}))
        port, rport = free_port(), free_port()
        while rport > 65000 or abs(rport - port) < 3:
            rport = free_port()
        router = f"http://127.0.0.1:{rport}"
        try:
            t0 = time.monotonic()
            p = cli("serve", ["--standard", "--model-dir", str(tiny), "--gpu", "none", "--instances", "2",
                              "--port", str(port), "--max-model-len", "2048", "--enforce-eager", "--router",
                              "--router-port", str(rport), "--json"], inv, timeout=1800)
            if p.returncode:
                raise SystemExit(p.stdout[-3000:] + p.stderr[-3000:])
            print(f"serve of 2 instances + router: {time.monotonic() - t0:.0f} s", flush=True)
            pid = json.loads(p.stdout)["hosts"]["localhost"]["router"]["pid"]
            direct, through = [], []
            for i in range(pairs):
                for url, out in ((f"http://127.0.0.1:{port + i % 2}", direct), (router, through)):
                    t = time.perf_counter()
                    assert chat(url).status_code == 200
                    out.append(time.perf_counter() - t)
            rss = int(Path(f"/proc/{pid}/status").read_text().split("VmRSS:")[1].split()[0]) / 1024
            print(f"router overhead p50: {(statistics.median(through) - statistics.median(direct)) * 1000:.1f} ms "
                  f"(direct {statistics.median(direct) * 1000:.1f} ms, through {statistics.median(through) * 1000:.1f}"
                  f" ms, {pairs} pairs); router RSS {rss:.1f} MiB", flush=True)
            with ClientLoop(lambda: chat(router), pause) as clients:
                t0 = time.monotonic()
                p = cli("restart", ["--rolling", "--max-model-len", "4096", "--json"], inv, timeout=1800)
                rolled = time.monotonic() - t0
            results, failed = clients.results, clients.failed
            print(f"rolling restart of 2 instances: {rolled:.0f} s (exit {p.returncode}), {len(results)} requests, "
                  f"{len(failed)} failed", flush=True)
        finally:
            cli("stop", ["--grace", "20"], inv)
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[0]) if args else 50, float(args[1]) if len(args) > 1 else 0.5)
