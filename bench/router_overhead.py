"""What vLLM's router adds per request, and its memory: two stand-in workers (tests/workerstandin.py,
answering at once, so the difference is the router's own hop) behind the real vllm-router started with
the argv `inv serve --router` gives it; requests sent interleaved direct and through the router.

    .venv/bin/python bench/router_overhead.py ROUTER_EXE [N]

ROUTER_EXE: a vllm-router binary, e.g. ~/.cache/ocrdeploy-engines/vllm-router-0.1.17/bin/vllm-router.
Prints the p50 direct, the p50 through the router, their difference, and the router's RSS after the
run.  The same figures on a real engine come from tests/commands/test_router_engines.py.  Not a test:
figures depend on the machine (give `uptime` with them).
"""

import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

from ocrdeploy.services import router as rt

STANDIN = Path(__file__).parents[1] / "tests" / "workerstandin.py"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait(url, path):
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(url + path, trust_env=False, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{url} did not answer {path}")
        time.sleep(0.1)


def chat(client, url):
    t = time.perf_counter()
    r = client.post(url + "/v1/chat/completions", json={"model": "minicpm-ocr", "max_tokens": 4,
                                                         "messages": [{"role": "user", "content": "Say OK."}]})
    r.raise_for_status()
    return time.perf_counter() - t


exe, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200
procs = []
try:
    workers = []
    for _ in range(2):
        port = free_port()
        procs.append(subprocess.Popen([sys.executable, str(STANDIN), str(port)], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        workers.append(f"http://127.0.0.1:{port}")
    rport = free_port()
    router = subprocess.Popen(rt.argv(exe, rport), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs.append(router)
    rurl = f"http://127.0.0.1:{rport}"
    for w in workers:
        wait(w, "/health")
    wait(rurl, "/liveness")
    for w in workers:
        httpx.post(f"{rurl}/add_worker?url={w}", trust_env=False, timeout=90).raise_for_status()
    wait(rurl, "/v1/models")
    direct, through = [], []
    with httpx.Client(trust_env=False, timeout=60) as client:
        for i in range(5):
            chat(client, rurl)
        for i in range(n):
            direct.append(chat(client, workers[i % 2]))
            through.append(chat(client, rurl))
    rss = int(Path(f"/proc/{router.pid}/status").read_text().split("VmRSS:")[1].split()[0])
    d, t = statistics.median(direct), statistics.median(through)
    print(f"{n} requests each, stand-in workers: p50 direct {d * 1000:.2f} ms, through the router {t * 1000:.2f} ms, "
          f"router overhead {(t - d) * 1000:.2f} ms; router RSS {rss / 1024:.1f} MiB; load {os.getloadavg()[0]:.1f}")
finally:
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
