"""Which processes a service record names, and which it may signal (red team M4, L4, L13).

Real processes and real /proc reads throughout: a wrapper script that execs the real python (a conda-run or
module-load style bin/python), a child that leaves the process group with setsid, a forged record naming a
bystander, records owned by another user or writable by others."""

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from ocrdeploy.services import hostside

SERVER = textwrap.dedent("""\
    import http.server, sys
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = b'{"object": "list", "data": [{"id": "minicpm-ocr"}]}'
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body)
        def log_message(self, *a): pass
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
    """)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def cleanup():
    """pids (and process groups) a test leaves behind; all killed by pid at the end."""
    pids = []
    yield pids
    for pid in pids:
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def wrapper(tmp_path, body):
    """A bin/python that is a shell script (what conda run / module load setups put there)."""
    path = tmp_path / "env" / "bin" / "python"
    path.parent.mkdir(parents=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def start(wd, argv, port, name="minicpm-ocr-1"):
    return hostside.start({"workdir": str(wd), "name": name, "port": port, "argv": [str(a) for a in argv],
                           "log": str(wd / f"{name}.log"), "served_name": "minicpm-ocr"})


def test_a_wrapper_that_execs_the_server_is_the_service(tmp_path, cleanup):
    """M4: identity taken of /bin/sh before it execs python; the server must still be the recorded
    service: ready, alive in status, and stopped by stop, never an 'exited' that forgets it."""
    (tmp_path / "server.py").write_text(SERVER)
    py = wrapper(tmp_path, f'sleep 0.3\nexec {sys.executable} "$@"\n')
    port = free_port()
    r = start(tmp_path, [py, tmp_path / "server.py", port], port)
    assert r["ok"]
    cleanup.append(r["pid"])
    out = hostside.wait({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "served_name": "minicpm-ocr",
                         "timeout": 20, "interval": 0.1})
    assert out["ready"], out
    exe = os.readlink(f"/proc/{r['pid']}/exe")
    assert "python" in os.path.basename(exe)                     # the wrapper did exec: another program now
    (s,) = hostside.status({"workdir": str(tmp_path)})["services"]
    assert s["alive"] and s["ready"] and "stale" not in s
    stopped = hostside.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "grace": 5})
    assert stopped["was_alive"] and stopped["stopped"] and not alive(r["pid"])
    assert not hostside.port_open(port) and not (tmp_path / ".ocrdeploy" / "services" / "minicpm-ocr-1.json").exists()


def test_a_wrapper_that_forks_the_server_and_ends_is_still_tracked(tmp_path, cleanup):
    """The wrapper starts the server as its child and exits: the server carries the service's token."""
    (tmp_path / "server.py").write_text(SERVER)
    py = wrapper(tmp_path, f'{sys.executable} "$@" &\nsleep 0.5\nexit 0\n')
    port = free_port()
    r = start(tmp_path, [py, tmp_path / "server.py", port], port)
    cleanup.append(r["pid"])
    out = hostside.wait({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "served_name": "minicpm-ocr",
                         "timeout": 20, "interval": 0.1})
    assert out["ready"], out
    deadline = time.time() + 10
    while alive(r["pid"]) and time.time() < deadline:
        time.sleep(0.05)
    assert not alive(r["pid"])
    (s,) = hostside.status({"workdir": str(tmp_path)})["services"]
    assert s["alive"] and s["ready"]
    stopped = hostside.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "grace": 5})
    assert stopped["was_alive"] and stopped["stopped"] and not hostside.port_open(port)


SETSID_CHILD = textwrap.dedent("""\
    import os, subprocess, sys, time
    env = dict(os.environ)
    if sys.argv[2] == "clean-env":
        env.pop("OCRDEPLOY_SERVICE")
    child = subprocess.Popen([sys.executable, sys.argv[3], sys.argv[1]], start_new_session=True, env=env)
    print(child.pid, flush=True)
    time.sleep(300)
    """)


@pytest.mark.parametrize("how", ["keeps-env", "clean-env"])
def test_a_child_that_left_the_group_is_stopped_too(tmp_path, cleanup, how):
    """L13: a helper that left the process group with setsid (with the token in its environment, or
    without it but still a child of the service) is signalled too; stop never says 'stopped' over it."""
    (tmp_path / "server.py").write_text(SERVER)
    (tmp_path / "leader.py").write_text(SETSID_CHILD)
    port = free_port()
    r = start(tmp_path, [sys.executable, tmp_path / "leader.py", port, how, tmp_path / "server.py"], port)
    cleanup.append(r["pid"])
    deadline = time.time() + 10
    while not hostside.port_open(port) and time.time() < deadline:
        time.sleep(0.05)
    child = int(open(hostside.read_record(str(tmp_path), "minicpm-ocr-1")["log"]).read().split()[-1])
    cleanup.append(child)
    assert os.getpgid(child) != r["pid"]                       # out of the service's group
    stopped = hostside.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "grace": 5})
    assert stopped["stopped"] and not alive(child) and not hostside.port_open(port), stopped
    assert "port_held" not in stopped


def test_what_escaped_is_said_not_called_stopped(tmp_path, cleanup):
    """A helper that double-forked away, left the group and dropped the token cannot be found as the
    service's: stop says that the port is still held (and by whom) instead of a clean 'stopped'."""
    (tmp_path / "server.py").write_text(SERVER)
    escape = textwrap.dedent("""\
        import os, subprocess, sys, time
        env = {k: v for k, v in os.environ.items() if k != "OCRDEPLOY_SERVICE"}
        p = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; p = subprocess.Popen(sys.argv[1:], "
                              "start_new_session=True, env=%r); print(p.pid, flush=True)" % env, sys.executable,
                              sys.argv[2], sys.argv[1]], env=env)
        p.wait()
        time.sleep(300)
        """)
    (tmp_path / "leader.py").write_text(escape)
    port = free_port()
    r = start(tmp_path, [sys.executable, tmp_path / "leader.py", port, tmp_path / "server.py"], port)
    cleanup.append(r["pid"])
    deadline = time.time() + 10
    while not hostside.port_open(port) and time.time() < deadline:
        time.sleep(0.05)
    escaped = int(open(hostside.read_record(str(tmp_path), "minicpm-ocr-1")["log"]).read().split()[-1])
    cleanup.append(escaped)
    stopped = hostside.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "grace": 3})
    assert alive(escaped) and stopped["port_held"].startswith(f"port {port} still answers")


LEADER_FIRST = textwrap.dedent("""\
    import ctypes, os, signal, socket, sys, threading, time
    s = socket.socket()
    s.bind(("127.0.0.1", int(sys.argv[1])))
    s.listen(8)
    ended = threading.Event()
    def rest():                            # the rest of the process, still holding the socket a while
        ended.wait()
        time.sleep(float(sys.argv[2]))
        os._exit(0)
    threading.Thread(target=rest).start()
    def term(*_):
        ended.set()
        ctypes.CDLL(None).pthread_exit(None)   # the main thread ends first
    signal.signal(signal.SIGTERM, term)
    print("listening", flush=True)
    while True:
        time.sleep(1)
    """)


def _leader_first(tmp_path, cleanup, hold):
    """A service whose main thread ends on SIGTERM while its other thread keeps the listening socket
    `hold` seconds: what a busy host shows of any multi-threaded server (a stand-in worker's
    ThreadingHTTPServer, vLLM's API server) while the kernel ends its threads one by one, and of a
    driver's teardown that holds a thread: /proc/PID/stat says "Z" for the whole time."""
    (tmp_path / "leader.py").write_text(LEADER_FIRST)
    port = free_port()
    r = start(tmp_path, [sys.executable, tmp_path / "leader.py", port, hold], port)
    cleanup.append(r["pid"])
    log = hostside.read_record(str(tmp_path), "minicpm-ocr-1")["log"]
    deadline = time.time() + 10
    while "listening" not in open(log).read() and time.time() < deadline:     # its SIGTERM handler is set
        time.sleep(0.05)
    assert hostside.port_open(port)
    return r["pid"], port


def test_a_service_whose_main_thread_ends_first_is_stopped_only_when_all_of_it_has(tmp_path, cleanup):
    """CI once saw `stop --drain` say "pid N stopped", then "port P still answers: another process (...
    stop it yourself)" and exit 1: the stand-in's main thread was a zombie while a thread of it still held
    the port (ss names no pid for it: the leader's /proc/PID/fd is empty by then).  The stop waits for
    the whole process; its port is then free and nothing is blamed on another process."""
    pid, port = _leader_first(tmp_path, cleanup, 1.5)
    t0 = time.monotonic()
    stopped = hostside.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "grace": 10})
    assert stopped["stopped"] and "port_held" not in stopped and not stopped.get("killed"), stopped
    assert time.monotonic() - t0 >= 1.0                        # it waited for the thread that held the port
    assert not hostside.port_open(port)


def test_a_zombie_leader_with_a_live_thread_still_runs(tmp_path, cleanup):
    pid, port = _leader_first(tmp_path, cleanup, 3)
    start_ticks = hostside._stat(pid)[3]
    os.kill(pid, signal.SIGTERM)
    deadline = time.time() + 5
    while hostside._stat(pid)[0] != "Z" and time.time() < deadline:
        time.sleep(0.02)
    assert hostside._stat(pid)[0] == "Z" and hostside.port_open(port)          # the main thread ended ...
    assert hostside.still_running({pid: start_ticks}) == [pid]                # ... but the process runs on
    assert hostside.group_left(pid) == [pid]
    deadline = time.time() + 10
    while hostside.still_running({pid: start_ticks}) and time.time() < deadline:
        time.sleep(0.05)
    assert hostside.still_running({pid: start_ticks}) == [] and hostside.group_left(pid) == []
    assert not hostside.port_open(port)


def test_a_port_no_process_is_named_for_gets_a_moment_to_close(monkeypatch):
    """A listener ss names no pid for (a socket being closed) is given PORT_RELEASE_S before stop says
    "another process"; one it names is said at once; a free port is None."""
    monkeypatch.setattr(hostside, "who_listens", lambda port: "another process")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    port = s.getsockname()[1]
    closer = __import__("threading").Timer(0.5, s.close)
    closer.start()
    assert hostside.port_held(port) is None
    closer.join()
    with socket.socket() as s2:
        s2.bind(("127.0.0.1", 0))
        s2.listen(8)
        t0 = time.monotonic()
        assert hostside.port_held(s2.getsockname()[1], within=0.5) == "another process"
        assert time.monotonic() - t0 >= 0.5
        monkeypatch.setattr(hostside, "who_listens", lambda port: "pid 1 (x)")
        t0 = time.monotonic()
        assert hostside.port_held(s2.getsockname()[1]) == "pid 1 (x)" and time.monotonic() - t0 < 1
    assert hostside.port_held(port, within=0) is None


def test_a_forged_record_naming_a_bystander_signals_nothing(tmp_path, cleanup):
    """L4: everything in the old identity (boot, start time, cmdline hash, exe) is readable by anyone in
    /proc; a record made of it, with any token, must not make stop signal the bystander."""
    bystander = subprocess.Popen(["sleep", "300"], start_new_session=True)
    cleanup.append(bystander.pid)
    forged = hostside.identity(bystander.pid)
    forged["token"] = "minicpm-ocr-1/" + "0" * 32
    hostside.write_record(str(tmp_path), "minicpm-ocr-1", {"name": "minicpm-ocr-1", "pid": bystander.pid,
                                                             "port": free_port(), "identity": forged})
    out = hostside.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "grace": 1})
    assert out["was_alive"] is False and "nothing signalled" in out["stale"], out
    assert alive(bystander.pid)
    without = hostside.identity(bystander.pid)                   # no token at all: not ours either
    hostside.write_record(str(tmp_path), "minicpm-ocr-1", {"name": "minicpm-ocr-1", "pid": bystander.pid,
                                                             "port": free_port(), "identity": without})
    out = hostside.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "grace": 1})
    assert out["ok"] is False and "no process identity" in out["error"] and alive(bystander.pid)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a record owned by another user needs root")
def test_a_record_owned_by_another_user_is_refused(tmp_path, cleanup):
    r = start(tmp_path, ["sleep", "300"], free_port())
    cleanup.append(r["pid"])
    rec = tmp_path / ".ocrdeploy" / "services" / "minicpm-ocr-1.json"
    os.chown(rec, 65534, 65534)
    with pytest.raises(hostside.BadRecord, match="owned by uid 65534"):
        hostside.read_record(str(tmp_path), "minicpm-ocr-1")
    out = hostside.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "grace": 1})
    assert out["ok"] is False and "nothing signalled" in out["error"] and alive(r["pid"])


@pytest.mark.parametrize("what", ["record", "directory"])
def test_a_record_others_can_write_is_refused(tmp_path, cleanup, what):
    r = start(tmp_path, ["sleep", "300"], free_port())
    cleanup.append(r["pid"])
    rec = tmp_path / ".ocrdeploy" / "services" / "minicpm-ocr-1.json"
    assert rec.stat().st_mode & 0o777 == 0o600 and rec.parent.stat().st_mode & 0o777 == 0o700
    (rec if what == "record" else rec.parent).chmod(0o666 if what == "record" else 0o777)
    out = hostside.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "grace": 1})
    assert out["ok"] is False and "writable by others" in out["error"] and alive(r["pid"])
    (s,) = hostside.status({"workdir": str(tmp_path)})["services"]
    assert s["record"] == "unreadable" and "writable by others" in s["error"]


@pytest.mark.parametrize("pid", [0, -1, 2 ** 31 + 1, True])
def test_a_record_pid_outside_what_a_process_can_have_is_refused(tmp_path, pid):
    """pid 0 would make killpg signal stop's own process group; -1 every process it may signal."""
    hostside.write_record(str(tmp_path), "minicpm-ocr-1", {"name": "minicpm-ocr-1", "pid": pid, "port": 18499,
                                                             "identity": {"token": "x"}})
    with pytest.raises(hostside.BadRecord, match="pid must be a number from 1"):
        hostside.read_record(str(tmp_path), "minicpm-ocr-1")


@pytest.mark.parametrize("started_at, shown", [(0, None), (-5, None), (1e12, None), ("x", None), (True, None)])
def test_uptime_of_a_time_this_boot_never_saw_is_unknown(started_at, shown):
    assert hostside.uptime(started_at) is shown


def test_uptime_of_a_real_start():
    assert 9 <= hostside.uptime(time.time() - 10) <= 12


TITLED = textwrap.dedent("""\
    import ctypes, sys
    # what setproctitle does (vllm-router's `vllm::router`): the title written over the environment block
    fields = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
    start, end = int(fields[47]), int(fields[48])          # env_start, env_end (stat fields 50, 51)
    ctypes.memset(start, 0, end - start)
    exec(open(sys.argv[1]).read().replace("sys.argv[1]", "sys.argv[2]"))
    """)


def test_a_service_that_wrote_its_title_over_its_environment_is_still_the_service(tmp_path, cleanup):
    """vllm-router sets its process title over its environment block, so no token can be read back;
    the service is still known (the trusted record and its start time), found alive, and stopped."""
    (tmp_path / "server.py").write_text(SERVER)
    (tmp_path / "titled.py").write_text(TITLED)
    port = free_port()
    r = start(tmp_path, [sys.executable, tmp_path / "titled.py", tmp_path / "server.py", port], port)
    assert r["ok"]
    cleanup.append(r["pid"])
    out = hostside.wait({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "served_name": "minicpm-ocr",
                         "timeout": 20, "interval": 0.1})
    assert out["ready"], out
    with open(f"/proc/{r['pid']}/environ", "rb") as fh:
        assert b"=" not in fh.read()                                # nothing left to read the token from
    (s,) = hostside.status({"workdir": str(tmp_path)})["services"]
    assert s["alive"] and "stale" not in s, s
    gone = {"pid": 2 ** 22 + 7, "identity": {"token": "minicpm-ocr-2/" + "0" * 32}}   # another service, ended
    assert r["pid"] not in hostside.service_processes(gone)        # unreadable is never "carries any token"
    again = start(tmp_path, [sys.executable, tmp_path / "server.py", port], port)
    assert not again["ok"] and "already runs" in again["error"]    # the re-run finds it, no second start
    stopped = hostside.stop({"workdir": str(tmp_path), "name": "minicpm-ocr-1", "grace": 5})
    assert stopped["was_alive"] and stopped["stopped"] and not alive(r["pid"])


def test_an_empty_environment_never_carries_the_token_even_for_the_recorded_pid(cleanup):
    """/proc/PID/environ reads empty for a program run with no environment, and for any process in the moment
    its exec is under way: anyone can make such a process, so an empty block is never "cannot tell" (a forged
    record naming it would get it signalled); start() waits past that moment instead (next test)."""
    p = subprocess.Popen(["sleep", "30"], env={}, start_new_session=True)
    cleanup.append(p.pid)
    for _ in range(200):
        with open(f"/proc/{p.pid}/cmdline", "rb") as fh:
            if fh.read(1):
                break
        time.sleep(0.01)
    with open(f"/proc/{p.pid}/environ", "rb") as fh:
        assert fh.read() == b""
    assert hostside._carries(p.pid, "minicpm-ocr-1/" + "0" * 32, unreadable_ok=True) is False


def test_the_identity_recorded_at_start_holds_the_programs_command_line(tmp_path, cleanup):
    """start() records the identity once the program's arguments can be read, not in the moment after Popen
    returns and before the kernel has set them up (an empty command line in the record)."""
    import hashlib

    empty = hashlib.sha256(b"").hexdigest()
    for i in range(20):
        wd = tmp_path / str(i)
        r = start(wd, ["sleep", "300"], free_port())
        cleanup.append(r["pid"])
        assert r["ok"] and r["record"]["identity"]["cmdline"] != empty, r
        (s,) = hostside.status({"workdir": str(wd)})["services"]
        assert s["alive"] and "stale" not in s, s
