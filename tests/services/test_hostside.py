"""The host side of serve/status/stop (services.hostside) on this machine: records, process identity, names,
the start lock and damaged records.  Real processes throughout: a `sleep` stands for a server where only
its pid, start time and command line matter."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ocrdeploy.services import hostside as service_host
from ocrdeploy.provision.connection import LocalConnection
from ocrdeploy.services.control import host_call, status_all, stop_service
from ocrdeploy.inventory import Host

HOST_PY = Path(service_host.__file__)


@pytest.fixture
def procs():
    """Processes a test starts; all killed (by pid) at the end."""
    started = []

    def spawn(*argv):
        p = subprocess.Popen(list(argv) or ["sleep", "300"], start_new_session=True)
        started.append(p)
        return p

    yield spawn
    for p in started:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0] != "Z"


def start(wd, name="minicpm-ocr-18499", argv=("sleep", "300"), port=None):
    port = port or _free_port()
    return service_host.start({"workdir": str(wd), "name": name, "port": port, "argv": list(argv),
                               "log": str(wd / f"{name}.log")})


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def record_file(wd, name="minicpm-ocr-18499"):
    return wd / ".ocrdeploy" / "services" / f"{name}.json"


def test_a_reused_pid_is_a_stale_record_never_a_kill(tmp_path, procs):
    """The recorded server died and the kernel gave its pid to another process: stop must not signal
    it and status must not call it alive (the identity recorded at launch no longer matches)."""
    r = start(tmp_path, argv=(sys.executable, "-c", "pass"))
    assert r["ok"] and r["record"]["identity"]["start"] > 0
    deadline = time.time() + 10
    while alive(r["pid"]) and time.time() < deadline:
        time.sleep(0.05)
    bystander = procs("sleep", "300")
    rec = json.loads(record_file(tmp_path).read_text())
    rec["pid"] = bystander.pid                       # what a reused pid looks like to the record
    record_file(tmp_path).write_text(json.dumps(rec))

    (s,) = service_host.status({"workdir": str(tmp_path)})["services"]
    assert s["alive"] is False and s["stale"].startswith(f"stale record: pid {bystander.pid} is now another process")
    out = service_host.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-18499", "grace": 1})
    assert out["ok"] and out["was_alive"] is False and "nothing signalled" in out["stale"]
    assert alive(bystander.pid) and not record_file(tmp_path).exists()


def test_a_record_without_identity_is_not_signalled(tmp_path, procs):
    bystander = procs("sleep", "300")
    record_file(tmp_path).parent.mkdir(parents=True)
    record_file(tmp_path).write_text(json.dumps({"name": "minicpm-ocr-18499", "pid": bystander.pid, "port": 18499}))
    out = service_host.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-18499", "grace": 1})
    assert out["ok"] is False and "no process identity" in out["error"]
    assert alive(bystander.pid) and record_file(tmp_path).exists()


def test_the_recorded_process_itself_is_stopped(tmp_path):
    r = start(tmp_path)
    (s,) = service_host.status({"workdir": str(tmp_path)})["services"]
    assert s["alive"] is True and "stale" not in s
    out = service_host.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-18499", "grace": 5})
    assert out["was_alive"] and out["stopped"] and not alive(r["pid"])


LINGERING = "trap 'sleep 1.5; exit 0' TERM; while :; do sleep 0.1; done"     # ends 1.5 s after SIGTERM
DEAF = "trap '' TERM; sleep 300"                                                # ignores SIGTERM


@pytest.mark.parametrize("child, killed", [(LINGERING, False), (DEAF, True)])
def test_stop_waits_for_the_whole_group_not_only_its_leader(tmp_path, child, killed):
    """vLLM's API server exits on SIGTERM before its engine core does, and a worker may ignore SIGTERM:
    stop returns only when no member of the group runs, killing those left after the grace period."""
    leader = ("import subprocess, sys, time; subprocess.Popen(['sh', '-c', sys.argv[1]]); time.sleep(300)")
    r = start(tmp_path, argv=(sys.executable, "-c", leader, child))
    try:
        deadline = time.time() + 10
        while len(service_host.group_left(r["pid"])) < 2 and time.time() < deadline:
            time.sleep(0.05)
        assert len(service_host.group_left(r["pid"])) >= 2
        t0 = time.time()
        out = service_host.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-18499", "grace": 3})
        assert out["stopped"] and bool(out.get("killed")) is killed and service_host.group_left(r["pid"]) == []
        assert time.time() - t0 >= (1.5 if not killed else 3)
    finally:
        if service_host.group_left(r["pid"]):
            os.killpg(r["pid"], signal.SIGKILL)


@pytest.mark.parametrize("name", ["/tmp/v", "../../x", "a/b", "..", ".hidden", "x" * 200, ""])
def test_names_are_plain_names_on_the_host(tmp_path, procs, name):
    """A name reaches the host helper as it was typed; it must never address a file elsewhere."""
    victim = procs("sleep", "300")
    outside = tmp_path / "v.json"
    outside.write_text(json.dumps({"pid": victim.pid, "port": 1, "identity": None}))
    conn = LocalConnection(Host("localhost"))
    wd = tmp_path / "wd"
    for out in (stop_service(conn, str(wd), name, grace=1),
                host_call(conn, {"action": "wait", "workdir": str(wd), "name": name, "timeout": 1})):
        assert out["ok"] is False and "is not a service name" in out["error"]
    assert outside.exists() and alive(victim.pid)


def test_names_are_plain_names_on_the_command_line(tmp_path):
    target = tmp_path / "v.json"
    target.write_text("{}")
    inv = tmp_path / "inv.yml"
    inv.write_text(json.dumps({"all": {"vars": {"workdir": str(tmp_path / "wd")}}}))
    for task, name in (("stop", str(tmp_path / "v")), ("stop", "../../x"), ("status", "../v")):
        p = subprocess.run([sys.executable, "-m", "ocrdeploy", task, "--inventory", str(inv), "--name", name],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and p.stderr.startswith(f"error: --name {name!r} is not a service name"), p.stderr
    assert target.exists()


DRIVER = """import json, sys, time
sys.path.insert(0, {dir!r})
import hostside as service_host
req, at = json.loads(sys.argv[1]), float(sys.argv[2])
time.sleep(max(0, at - time.time()))
print(json.dumps(service_host.start(req)))
"""


def test_simultaneous_starts_of_one_service_accept_exactly_one(tmp_path):
    """Several starts of one service at the same instant (separate processes, as two `inv serve` runs):
    exactly one is accepted, and the record names the process that runs."""
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER.format(dir=str(HOST_PY.parent)))
    pids = []
    try:
        for trial in range(5):
            wd = tmp_path / f"wd{trial}"
            req = {"workdir": str(wd), "name": "minicpm-ocr-18499", "port": _free_port(),
                   "argv": ["sleep", "300"], "log": str(wd / "s.log")}
            at = time.time() + 1.5
            runs = [subprocess.Popen([sys.executable, str(driver), json.dumps(req), str(at)], stdout=subprocess.PIPE,
                                     text=True) for _ in range(6)]
            outs = [json.loads(p.communicate(timeout=60)[0]) for p in runs]
            pids += [o["pid"] for o in outs if o.get("ok")]
            accepted = [o for o in outs if o["ok"]]
            assert len(accepted) == 1, outs
            assert all("already runs" in o["error"] for o in outs if not o["ok"])
            assert json.loads(record_file(wd).read_text())["pid"] == accepted[0]["pid"]
    finally:
        for pid in pids:
            os.killpg(pid, signal.SIGKILL)


def test_two_services_cannot_claim_one_port_while_the_first_loads(tmp_path):
    port = _free_port()
    first = start(tmp_path, "minicpm-ocr-%d" % port, port=port)       # runs, not listening yet
    try:
        second = start(tmp_path, "deepseek-ocr-%d" % port, port=port)
        assert not second["ok"] and second["error"] == (
            f"port {port} belongs to minicpm-ocr-{port} (pid {first['pid']}, still starting or running)")
    finally:
        os.killpg(first["pid"], signal.SIGKILL)


@pytest.mark.parametrize("damage", ["truncated", "a list", "pid as text", "port as text", "pid negative"])
def test_a_damaged_record_is_shown_and_spares_the_others(tmp_path, damage):
    good = start(tmp_path, "minicpm-ocr-1")
    bad = record_file(tmp_path, "minicpm-ocr-2")
    sound = json.loads(record_file(tmp_path, "minicpm-ocr-1").read_text())
    try:
        bad.write_text({"truncated": json.dumps(sound)[:40], "a list": "[1, 2]",
                        "pid as text": json.dumps({**sound, "pid": "123"}),
                        "port as text": json.dumps({**sound, "port": "x"}),
                        "pid negative": json.dumps({**sound, "pid": -1})}[damage])
        services = {s["name"]: s for s in service_host.status({"workdir": str(tmp_path)})["services"]}
        assert services["minicpm-ocr-1"]["alive"] is True
        assert services["minicpm-ocr-2"]["record"] == "unreadable" and str(bad) in services["minicpm-ocr-2"]["error"]
        again = start(tmp_path, "minicpm-ocr-2")       # a live service may hide behind it: never started over
        assert not again["ok"] and str(bad) in again["error"]
        out = service_host.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-2"})
        assert not out["ok"] and "nothing signalled" in out["error"] and bad.exists()
        assert service_host.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "grace": 5})["stopped"]
    finally:
        if alive(good["pid"]):
            os.killpg(good["pid"], signal.SIGKILL)


def test_the_key_never_reaches_the_helpers_command_line(tmp_path):
    """status/wait/request carry the API key: it goes to the host helper on stdin, not in its argv."""
    shown = []

    class Watched(LocalConnection):
        def _run_text(self, text, shown_text, **kw):
            shown.append(text)
            return super()._run_text(text, shown_text, **kw)

    conn = Watched(Host("localhost"))
    out = status_all(conn, str(tmp_path), None, "s3cret-key")
    assert out == {"services": []} and shown and not any("s3cret-key" in t for t in shown)


def test_readiness_needs_the_served_id_not_any_answer(tmp_path, procs):
    """A server that answers /v1/models with another model is not ready (a stray server on the port,
    or the wrong --served-model-name): the wait runs out its time instead of reporting ready."""
    port = _free_port()
    body = json.dumps({"object": "list", "data": [{"id": "some-other-model"}]})
    token = "minicpm-ocr-1/" + "7" * 32            # what start() gives a service it launches
    os.environ[service_host.TOKEN_ENV] = token
    server = procs(sys.executable, "-c", (
        "import http.server, sys\n"
        "class H(http.server.BaseHTTPRequestHandler):\n"
        "    def do_GET(self):\n"
        "        self.send_response(200); self.send_header('Content-Length', str(len(sys.argv[2])))\n"
        "        self.end_headers(); self.wfile.write(sys.argv[2].encode())\n"
        "    def log_message(self, *a): pass\n"
        "http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()\n"), str(port), body)
    del os.environ[service_host.TOKEN_ENV]
    deadline = time.time() + 10
    while not service_host.port_open(port) and time.time() < deadline:
        time.sleep(0.05)
    wd = tmp_path
    rec = {"name": "minicpm-ocr-1", "pid": server.pid, "port": port, "log": str(wd / "x.log"),
           "identity": service_host.identity(server.pid, token)}
    service_host.write_record(str(wd), "minicpm-ocr-1", rec)
    out = service_host.wait({"workdir": str(wd), "name": "minicpm-ocr-1", "served_name": "minicpm-ocr",
                             "timeout": 1.5, "interval": 0.2})
    assert out["ready"] is False and out["reason"] == "timeout"
    body_ok = service_host.model_ids(port)
    assert body_ok == ["some-other-model"]


# ---------------------------------------------------------------- mutation round mut1: behaviour no test pinned


def test_the_ephemeral_warning_covers_both_ends_of_the_range():
    """net.ipv4.ip_local_port_range is inclusive at both ends: its first and last port are handed out too."""
    low, high = service_host.ephemeral_range()
    assert service_host.ephemeral_warnings(low) and service_host.ephemeral_warnings(high)
    assert service_host.ephemeral_warnings(low - 1) == []
    if high < 65535:
        assert service_host.ephemeral_warnings(high + 1) == []


def test_the_ephemeral_advice_names_the_option_and_the_value_that_leaves_the_range():
    """The advice is about the option the user sets (--port, --router-port) and its value: the n-th instance
    of --port P listens on P+n, and the router's --prometheus-port is its port + 1.  A port the tool picked
    itself (a tunnel's) has no option to advise on."""
    low, _ = service_host.ephemeral_range()
    (w,) = service_host.ephemeral_warnings(low + 2, "--port", 2)
    assert w.startswith(f"port {low + 2} lies in") and w.endswith(f"a --port below {low - 2} avoids that")
    (w,) = service_host.ephemeral_warnings(low - 1, "--router-port", 0, also=[(low, "its metrics port")])
    assert w.startswith(f"port {low} (its metrics port) lies in") and f"a --router-port below {low - 1} " in w
    assert service_host.ephemeral_warnings(low - 2, "--router-port", 0, also=[(low - 1, "m")]) == []
    assert service_host.ephemeral_warnings(low, None) == []


def test_a_record_from_an_earlier_boot_is_stale_even_when_the_start_time_matches(tmp_path, procs):
    """After a reboot pids and start ticks begin again: a record from the last boot can name a process of
    this one with the very same pid and start time.  The boot id tells them apart: it is not called alive."""
    r = start(tmp_path)
    try:
        rec = json.loads(record_file(tmp_path).read_text())
        rec["identity"]["boot"] = "00000000-0000-0000-0000-000000000000"
        record_file(tmp_path).write_text(json.dumps(rec))
        (s,) = service_host.status({"workdir": str(tmp_path)})["services"]
        assert s["alive"] is False and s["stale"].startswith(f"stale record: pid {r['pid']} is now another process")
    finally:
        os.killpg(r["pid"], signal.SIGKILL)


def _ended(pid, within=10):
    deadline = time.time() + within
    while alive(pid) and time.time() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_a_dead_service_on_the_port_does_not_keep_it(tmp_path):
    """A service that died (its record left, e.g. a failed start kept for diagnose) no longer claims its port:
    another service may start there, and so may the same one."""
    port = _free_port()
    dead = start(tmp_path, "minicpm-ocr-%d" % port, argv=(sys.executable, "-c", "pass"), port=port)
    _ended(dead["pid"])
    for _ in range(2):          # another service on the port, then the same one once more
        r = start(tmp_path, "deepseek-ocr-%d" % port, port=port)
        try:
            assert r["ok"], r
        finally:
            os.killpg(r["pid"], signal.SIGKILL)
        _ended(r["pid"])


def test_a_start_keeps_the_newest_logs_of_the_service(tmp_path):
    """Each start gets its own log; the 4 newest earlier ones are kept with it (5 in all), the oldest go,
    and another service's logs in the folder are not touched."""
    folder = tmp_path / "logs"
    folder.mkdir()
    old = [folder / f"minicpm-ocr-1-2026010{i}-000000-{100 + i}.log" for i in range(1, 8)]
    for i, f in enumerate(old):
        f.write_text(str(i))
        os.utime(f, (1_700_000_000 + i * 60, 1_700_000_000 + i * 60))   # the 1st oldest, the 7th newest
    stranger = folder / "minicpm-ocr-2-20260101-000000-1.log"
    stranger.write_text("x")
    os.utime(stranger, (1_600_000_000, 1_600_000_000))
    log = service_host.start_log(str(folder / "minicpm-ocr-1.log"), "minicpm-ocr-1")
    Path(log).write_text("this start")                 # start() opens it
    kept = sorted(p.name for p in folder.glob("minicpm-ocr-1-*.log"))
    assert kept == sorted([f.name for f in old[-4:]] + [os.path.basename(log)])
    assert stranger.exists() and os.readlink(folder / "minicpm-ocr-1.log") == os.path.basename(log)


def test_the_wait_counts_from_the_launch_the_record_names(tmp_path, procs):
    """The time limit is the start's own: a wait that begins late (a loaded controller) does not get the
    whole limit again, and "elapsed" is the time since the launch."""
    r = start(tmp_path)
    try:
        rec = json.loads(record_file(tmp_path).read_text())
        rec["started_at"] = time.time() - 5
        record_file(tmp_path).write_text(json.dumps(rec))
        t0 = time.time()
        out = service_host.wait({"workdir": str(tmp_path), "name": "minicpm-ocr-18499", "served_name": "minicpm-ocr",
                                 "timeout": 3, "interval": 0.2})
        assert out["ready"] is False and out["reason"] == "timeout" and out["elapsed"] >= 5
        assert time.time() - t0 < 2.5
    finally:
        os.killpg(r["pid"], signal.SIGKILL)


SPAWNS_ON_TERM = "trap 'sleep 300 & exit 0' TERM; while :; do sleep 0.1; done"   # starts a process as it ends


def test_stop_follows_processes_started_during_the_grace_period(tmp_path):
    """A member that starts another process as it handles SIGTERM (an engine respawning a worker, a shutdown
    hook): stop looks again while it waits, and what is left at the end of the grace period is killed."""
    leader = ("import subprocess, sys, time; subprocess.Popen(['sh', '-c', sys.argv[1]]); time.sleep(300)")
    r = start(tmp_path, argv=(sys.executable, "-c", leader, SPAWNS_ON_TERM))
    try:
        deadline = time.time() + 10
        while len(service_host.group_left(r["pid"])) < 2 and time.time() < deadline:
            time.sleep(0.05)
        out = service_host.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-18499", "grace": 2})
        assert out["stopped"] and out.get("killed") and service_host.group_left(r["pid"]) == []
        assert not record_file(tmp_path).exists()
    finally:
        if service_host.group_left(r["pid"]):
            os.killpg(r["pid"], signal.SIGKILL)


def test_a_taken_port_the_service_also_needs_refuses_the_start(tmp_path):
    """also_ports: a port the process binds besides its own (the router's --prometheus-port) is checked with
    it; taken, nothing is launched and no record is written."""
    import socket

    port = _free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        extra = s.getsockname()[1]
        out = service_host.start({"workdir": str(tmp_path), "name": "router-1", "port": port, "argv": ["sleep", "300"],
                                  "log": str(tmp_path / "router-1.log"), "also_ports": [[extra, "its --prometheus-port"]]})
    assert out["ok"] is False and out["error"].startswith(
        f"port {port} is free, but port {extra}, which it needs too (its --prometheus-port), is already taken")
    assert not record_file(tmp_path, "router-1").exists()


ORPHAN = "env -u OCRDEPLOY_SERVICE sh -c \"trap '' TERM; exec sleep 300\" & exit 0"   # no token, no parent left


def test_stop_kills_a_group_member_that_is_neither_a_child_nor_a_token_carrier(tmp_path):
    """A member of the service's process group whose parent ended (reparented: no descendant of the leader any
    more) and that dropped OCRDEPLOY_SERVICE is still the service's: stop waits for it and kills it when it
    ignores SIGTERM, instead of calling the service stopped while it runs."""
    leader = "import subprocess, sys, time; subprocess.run(['sh', '-c', sys.argv[1]]); time.sleep(300)"
    r = start(tmp_path, argv=(sys.executable, "-c", leader, ORPHAN))
    try:
        deadline = time.time() + 10
        while len(service_host.group_left(r["pid"])) < 2 and time.time() < deadline:
            time.sleep(0.05)
        (orphan,) = [p for p in service_host.group_left(r["pid"]) if p != r["pid"]]
        assert service_host._stat(orphan)[1] != r["pid"]
        out = service_host.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-18499", "grace": 1})
        assert out["stopped"] and out.get("killed") and not alive(orphan)
    finally:
        if service_host.group_left(r["pid"]):
            os.killpg(r["pid"], signal.SIGKILL)


def test_the_wait_ends_when_its_time_is_up(tmp_path):
    """A server that never answers (a systemd unit: no record, the port comes with the request) ends the wait
    at its time limit, not later."""
    port = _free_port()
    t0 = time.time()
    out = service_host.wait({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "port": port, "served_name": "minicpm-ocr",
                             "log": str(tmp_path / "none.log"), "timeout": 2, "interval": 0.2})
    assert out["ready"] is False and out["reason"] == "timeout" and 2 <= out["elapsed"] < 3.5
    assert time.time() - t0 < 3.8
