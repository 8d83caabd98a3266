"""One router over workers on several hosts: real sshd lab hosts (tests/sshlab.py) each running
test_services' stand-in MiniCPM-OCR server on its own loopback, the real pinned vllm-router on the
inventory's `router` host (this machine), and the real OpenSSH tunnels it holds to each worker.  Each
`inv serve --router` on one worker host adds that host's worker; the one already in the pool stays."""

import json
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from clientloop import ClientLoop  # noqa: E402
from engines import engine_env, router_port  # noqa: E402
from test_services import SMI, cli, free_port, provision  # noqa: E402


def _served(port) -> float:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", trust_env=False, timeout=10).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("vllm:request_success_total{"))


def _max_model_len(port) -> int:
    return httpx.get(f"http://127.0.0.1:{port}/v1/models", trust_env=False, timeout=10).json()["data"][0][
        "max_model_len"]


def _chat(port):
    return httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", trust_env=False, timeout=60, json={
        "model": "minicpm-ocr", "max_tokens": 4, "messages": [{"role": "user", "content": "Say OK."}]})


def _two_workers(lab, tmp_path, ip1, ip2):
    """Two sshd lab hosts w1 and w2 with provisioned work dirs, and this machine as the inventory's `router`
    host: the inventory's path and the environment that trusts the lab's host keys."""
    h1, h2 = lab.start("w1", ip1, path_prefix=str(SMI)), lab.start("w2", ip2, path_prefix=str(SMI))
    wd1, wd2, rwd = tmp_path / "wd1", tmp_path / "wd2", tmp_path / "rwd"
    provision(wd1)
    provision(wd2)
    rwd.mkdir()
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {
        "hosts": {"w1": lab.inventory_entry(h1, workdir=str(wd1)), "w2": lab.inventory_entry(h2, workdir=str(wd2))},
        "children": {"router": {"hosts": {"localhost": {"ansible_connection": "local", "workdir": str(rwd),
                                                        "router_env": str(engine_env("router"))}}}}}}))
    return inv, {"OCRDEPLOY_KNOWN_HOSTS": str(lab.known_hosts)}


@pytest.mark.ssh
def test_one_router_over_two_ssh_hosts_through_tunnels(lab, tmp_path):
    inv, env = _two_workers(lab, tmp_path, "127.0.0.31", "127.0.0.32")
    p1, p2, rport = free_port(), free_port(), router_port()
    try:
        p = cli("serve", ["--host", "w1", "--port", str(p1), "--router", "--router-port", str(rport), "--json"], inv,
                env=env)
        assert p.returncode == 0, p.stdout + p.stderr
        doc = json.loads(p.stdout)["hosts"]
        first = doc["localhost"]["router"]["workers"]
        assert len(first) == 1 and first[0] != f"http://127.0.0.1:{p1}"            # the tunnel's port, not the worker's
        j = doc["w1"]["instances"][0]["router"]
        assert j["joined"] and j["tunnel"] == f"tunnel-w1-{p1}" and j["via"] == first[0]

        # the second host's serve adds its worker; the first stays as it was (same tunnel, same URL)
        p = cli("serve", ["--host", "w2", "--port", str(p2), "--router", "--router-port", str(rport), "--json"], inv,
                env=env)
        assert p.returncode == 0, p.stdout + p.stderr
        pool = json.loads(p.stdout)["hosts"]["localhost"]["router"]["workers"]
        assert len(pool) == 2 and first[0] in pool
        # w1's instance stopped and served again (a new version there): the router host's tunnel to it is kept
        assert cli("stop", ["--host", "w1", "--grace", "5"], inv, env=env).returncode == 0
        p = cli("serve", ["--host", "w1", "--port", str(p1), "--router", "--router-port", str(rport), "--json"], inv,
                env=env)
        assert p.returncode == 0, p.stdout + p.stderr                  # the same tunnel, not a second one
        doc = json.loads(p.stdout)["hosts"]
        assert sorted(doc["localhost"]["router"]["workers"]) == sorted(pool)
        assert doc["w1"]["instances"][0]["router"]["via"] == first[0]

        before = {q: _served(q) for q in (p1, p2)}
        for _ in range(6):
            assert _chat(rport).status_code == 200
        assert all(_served(q) > before[q] for q in (p1, p2))       # requests through the one URL reached both

        st = json.loads(cli("status", ["--host", "localhost", "--json"], inv, env=env).stdout)
        workers = st["hosts"]["localhost"]["router"][0]["workers"]
        assert sorted(w["service"] for w in workers) == [f"w1:{p1} via tunnel-w1-{p1}", f"w2:{p2} via tunnel-w2-{p2}"]
        assert all(w["in_pool"] and w["alive"] for w in workers)

        stopped = json.loads(cli("stop", ["--host", "localhost", "--json", "--grace", "5"], inv, env=env).stdout)
        assert set(stopped["hosts"]["localhost"]) == {f"vllm-router-{rport}", f"tunnel-w1-{p1}", f"tunnel-w2-{p2}"}
    finally:
        for h in ("w1", "w2", "localhost"):
            cli("stop", ["--host", h, "--grace", "2"], inv, env=env)


def test_router_host_must_name_one_host(tmp_path):
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"a": {"ansible_connection": "local"}}}}))
    p = cli("serve", ["--router", "--router-host", "nosuch"], inv)
    assert p.returncode == 2 and "--router-host" in p.stderr + p.stdout and "Traceback" not in p.stderr
    p = cli("serve", ["--router-host", "a"], inv)
    assert p.returncode == 2 and "go with --router" in p.stderr + p.stdout


@pytest.mark.ssh
def test_a_roll_and_a_drain_cross_hosts_through_the_one_router(lab, tmp_path):
    """Workers on two sshd lab hosts behind the one router the inventory's `router` host holds: `restart
    --rolling` over both hosts rolls each worker one at a time through that router (out on the router host,
    drained by its own /metrics, stopped and started on its own host, smoked through its tunnel, back in) while
    a client loop through the router sees no failed request; `stop --drain` on one worker host takes its
    worker out of the router held by the other host, waits for the request in flight, then stops it."""
    inv, env = _two_workers(lab, tmp_path, "127.0.0.33", "127.0.0.34")
    p1, p2, rport = free_port(), free_port(), router_port()
    try:
        for h, p in (("w1", p1), ("w2", p2)):
            r = cli("serve", ["--host", h, "--port", str(p), "--router",
                              "--router-port", str(rport)], inv, env=env)
            assert r.returncode == 0, r.stdout + r.stderr
        pool = httpx.get(f"http://127.0.0.1:{rport}/list_workers", trust_env=False, timeout=10).json()["urls"]
        assert len(pool) == 2

        with ClientLoop(lambda: _chat(rport), 0.05) as clients:
            r = cli("restart", ["--host", "w1:w2", "--rolling", "--max-model-len", "8192", "--json"], inv, env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        roll = json.loads(r.stdout)["hosts"]["localhost"]
        assert roll["worker_hosts"] == ["w1", "w2"] and roll["router_host"] == "localhost"
        assert [s for s, _ in roll["steps"]] == ["out", "drained", "restarted", "back"] * 2   # one at a time
        assert sorted({u for _, u in roll["steps"]}) == sorted(pool) == sorted(roll["pool"])    # through the tunnels
        assert [_max_model_len(q) for q in (p1, p2)] == [8192, 8192]
        assert len(clients.results) >= 20 and clients.failed == []

        # stop --drain on w1: out of the router on localhost first, the request in flight answered, then stopped
        held = {}
        ht = threading.Thread(target=lambda: held.setdefault("r", httpx.post(
            f"http://127.0.0.1:{p1}/v1/chat/completions", trust_env=False, timeout=60,
            json={"model": "minicpm-ocr", "messages": [{"role": "user", "content": "hold 6"}]})))
        ht.start()
        time.sleep(0.5)
        r = cli("stop", ["--host", "w1", "--drain", "--json", "--grace", "5"], inv, env=env)
        ht.join()
        assert r.returncode == 0, r.stdout + r.stderr
        d = json.loads(r.stdout)["hosts"]["w1"][f"minicpm-ocr-{p1}"]["drain"]
        assert d["removed_from"] == [f"vllm-router-{rport} on localhost"] and d["drained"] and d["waited"] >= 1
        assert held["r"].status_code == 200
        left = httpx.get(f"http://127.0.0.1:{rport}/list_workers", trust_env=False, timeout=10).json()["urls"]
        assert len(left) == 1 and left[0] in pool and _chat(rport).status_code == 200
    finally:
        for h in ("w1", "w2", "localhost"):
            cli("stop", ["--host", h, "--grace", "2"], inv, env=env)
