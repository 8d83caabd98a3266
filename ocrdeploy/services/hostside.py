"""Services on the host: start detached, wait until ready, report, stop.  Runs ON the host.

Standard library only; one command per action, its request read from stdin (it may hold
the API key, which must never be on a command line).  A service is a JSON record in
<workdir>/.ocrdeploy/services/<name>.json (pid, port, log, argv, started_at, kind and the
process's identity), written to a temp file and moved into place.  Readiness is
/v1/models listing the served id (vLLM) or /health answering ok (transformers serve,
whose /v1/models lists the hub cache, not the directory it serves), polled from the host itself (the service binds
127.0.0.1 by default); the wait ends at once when the process dies, and reports the
start-up phase read from the log (loading weights, compiling, capturing CUDA graphs).

A pid alone names a process only until it dies: the kernel hands the number to the next
one.  So the record keeps what tells the process apart (the boot, its start time) and a
random token the service carries in its environment (OCRDEPLOY_SERVICE).  The start time
survives exec (a venv whose bin/python is a wrapper script that execs the real one), the
command line does not; the environment is readable only by the process's owner, so a
record forged from world-readable /proc data names no process of ours.  Nothing is
signalled or called alive unless they still match, and a record is read only when the
user running the command owns it and nobody else can write it or its directory.
"""

import fcntl
import hashlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

MARKER = "@@OCRDEPLOY-SERVICE@@"
PHASES = (
    ("capturing CUDA graphs", re.compile(r"(?i)captur\w* cuda ?graph")),
    ("compiling", re.compile(r"(?i)torch\.compile|compil(ing|ation)|dynamo")),
    ("loading weights", re.compile(r"(?i)loading (safetensors|weights|model)|Loading .*checkpoint shards")),
    ("starting the API server", re.compile(r"(?i)Starting vLLM API server|Uvicorn running|api_server")),
)


NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


TOKEN_ENV = "OCRDEPLOY_SERVICE"     # <name>/<token> in the service's environment (and its children's)
MAX_RECORD = 1 << 20


class BadRecord(Exception):
    """A service record that cannot be trusted (truncated, or a pid/port of the wrong type)."""


def valid_name(name):
    """Service names are plain names: no path, no '..', so a record never leaves the services directory."""
    return isinstance(name, str) and NAME.fullmatch(name) is not None and ".." not in name


def name_error(name):
    return ("%r is not a service name (letters, digits, '.', '_' and '-', no '..', e.g. minicpm-ocr-18499)"
            % (name,))


def state_dir(workdir):
    return os.path.join(workdir, ".ocrdeploy", "services")


def record_path(workdir, name):
    if not valid_name(name):
        raise ValueError(name_error(name))
    return os.path.join(state_dir(workdir), name + ".json")


def _trusted(path):
    """Why a record (or its directory) may have been written by someone else; None when it cannot."""
    for where in (os.path.dirname(path), path):
        st = os.stat(where)
        if st.st_uid != os.geteuid():
            return "%s is owned by uid %d, not by uid %d running this: not trusted (it could name any " \
                   "process)" % (where, st.st_uid, os.geteuid())
        if st.st_mode & 0o022:
            return "%s is writable by others (mode %o): not trusted; `chmod go-w %s`" % (
                where, st.st_mode & 0o777, where)
    return None


def read_record(workdir, name):
    """The record, None when there is none; BadRecord when one is there but unusable or untrusted."""
    path = record_path(workdir, name)
    try:
        with open(path, "rb") as fh:
            why = _trusted(path)
            raw = fh.read(MAX_RECORD + 1)
        if why:
            raise BadRecord(why)
        if len(raw) > MAX_RECORD:
            raise ValueError("over %d bytes" % MAX_RECORD)
        rec = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        raise BadRecord("%s is unreadable (%s)" % (path, exc))
    if not isinstance(rec, dict):
        raise BadRecord("%s is not a service record (a JSON %s)" % (path, type(rec).__name__))
    for key, low, high in (("pid", 1, 2 ** 31), ("port", 1, 65535)):
        v = rec.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or not low <= v <= high:
            raise BadRecord("%s: %s must be a number from %d to %d, got %r" % (path, key, low, high, v))
    if not isinstance(rec.get("identity"), (dict, type(None))):
        raise BadRecord("%s: identity must be an object, got %r" % (path, rec.get("identity")))
    return rec


def make_state_dir(workdir):
    """The services directory, 0700: its records name processes to signal."""
    d = state_dir(workdir)
    os.makedirs(d, mode=0o700, exist_ok=True)
    st = os.stat(d)
    if st.st_uid == os.geteuid() and st.st_mode & 0o077:
        os.chmod(d, 0o700)
    return d


def write_record(workdir, name, rec):
    make_state_dir(workdir)
    tmp = record_path(workdir, name) + ".%d.tmp" % os.getpid()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(rec, fh, indent=2, sort_keys=True)
    os.replace(tmp, record_path(workdir, name))


def alive(pid):
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is not alive
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def _boot_id():
    try:
        with open("/proc/sys/kernel/random/boot_id") as fh:
            return fh.read().strip()
    except OSError:
        return None


def group_left(pgid):
    """The members of a process group still running.  A leader that exits on SIGTERM may leave its
    children (engine cores, tokenizer workers) behind for a moment or for good; a zombie is dead,
    only not yet reaped, so it does not count (a leader that shows "Z" while its other threads run is
    no zombie yet: see _ended)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []
    except PermissionError:
        pass
    try:
        entries = os.listdir("/proc")
    except OSError:
        return [pgid]                 # no /proc to look in: the group answered, so someone is in it
    left = []
    for d in entries:
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d, "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid).encode() and not _ended(int(d), fields[0].decode()):
            left.append(int(d))
    return left


def _ended(pid, state):
    """Whether a process whose /proc/PID/stat says `state` has ended (it may wait to be reaped).

    "Z" there is the state of the leader thread alone: a process whose main thread ended first (an exit
    under way while the kernel ends its other threads one by one, slower on a loaded host or in a
    driver's teardown; or a main thread that called pthread_exit) shows "Z" while its other threads
    still run and its descriptors, the listening socket among them, are still open.  It has ended
    when no thread of it runs (/proc/PID/task)."""
    if state not in ("Z", "X"):
        return False
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return True
    for t in tasks:
        if t == str(pid):
            continue
        try:
            with open("/proc/%d/task/%s/stat" % (pid, t), "rb") as fh:
                if fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X"):
                    return False
        except (OSError, IndexError):
            continue
    return True


def _stat(pid):
    """(state, ppid, pgid, start ticks) of a process, None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        # field 22 of /proc/PID/stat (the 20th after the command name) is the start time in clock ticks
        return fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _carries(pid, token, unreadable_ok=False):
    """Whether the process's environment holds the service's token (readable by its owner only).

    A process that wrote its title over its own environment block (setproctitle, as vllm-router's
    `vllm::router` does) leaves no KEY=VALUE there to read: that is "cannot tell".  For the recorded
    pid itself (unreadable_ok) the record, which only its owner can write (_trusted), and the start
    time then decide alone; a scan for the token's other carriers never takes such a process."""
    try:
        with open("/proc/%d/environ" % pid, "rb") as fh:
            env = fh.read(1 << 20)
    except OSError:
        return False
    entries = env.split(b"\0")
    if env and not any(b"=" in e for e in entries):   # empty: a zombie or an exec under way, not a title
        return unreadable_ok
    return ("%s=%s" % (TOKEN_ENV, token)).encode() in entries


def identity(pid, token=None):
    """What tells this process from a later one with the same pid; None when it is gone.

    boot and start survive exec; token (the value of OCRDEPLOY_SERVICE the service was started
    with) is what a forger cannot choose.  cmdline and exe are kept for reading only."""
    st = _stat(pid)
    if st is None:
        return None
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            cmdline = fh.read()
    except OSError:
        cmdline = b""
    try:
        exe = os.readlink("/proc/%d/exe" % pid)
    except OSError:
        exe = None
    out = {"boot": _boot_id(), "start": st[3], "cmdline": hashlib.sha256(cmdline).hexdigest(), "exe": exe}
    if token:
        out["token"] = token
    return out


def same_process(rec):
    """(True, None) when the recorded pid is still the process that was started, else (False, why)."""
    pid, want = rec.get("pid"), rec.get("identity")
    if not alive(pid):
        return False, "not running"
    if not want or not isinstance(want.get("token"), str):
        return False, ("the record has no process identity (written by an older ocrdeploy): pid %d is not "
                       "signalled; check it with `ps -p %d -o args` and stop it yourself" % (pid, pid))
    have = _stat(pid)
    if have is None:
        return False, "not running"
    if _boot_id() != want.get("boot") or have[3] != want.get("start"):
        return False, "stale record: pid %d is now another process (started later)" % pid
    if not _carries(pid, want["token"], unreadable_ok=True):
        return False, ("stale record: pid %d is not the service this record names (its environment does not "
                       "carry the service's token)" % pid)
    return True, None


def _pids():
    try:
        return [int(d) for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return []


def service_processes(rec):
    """{pid: start ticks} of every live process of the service: the leader's process group, every
    descendant of its members (a child that left the group with setsid is still a child, or was:
    it carries the token) and every process that carries the service's token."""
    want = rec.get("identity") or {}
    token = want.get("token")
    pid = rec.get("pid")
    leader_ok = same_process(rec)[0]
    table = {}
    for p in _pids():
        st = _stat(p)
        if st and st[0] != "Z":
            table[p] = st
    found = {}
    if leader_ok:
        for p, st in table.items():
            if st[2] == pid:
                found[p] = st[3]
    if token:
        for p, st in table.items():
            if p not in found and p != os.getpid() and _carries(p, token):
                found[p] = st[3]
    children = {}
    for p, st in table.items():
        children.setdefault(st[1], []).append(p)
    todo = list(found)
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in found:
                found[c] = table[c][3]
                todo.append(c)
    return found


def runs(rec):
    """The service still runs: its leader, or (a wrapper that forked the server and ended) a process
    that carries its token."""
    return same_process(rec)[0] or bool(service_processes(rec))


def still_running(procs):
    """Those of {pid: start ticks} that still run as the same process (one whose main thread ended while
    others run still runs: see _ended)."""
    left = []
    for p, start in sorted(procs.items()):
        st = _stat(p)
        if st and st[3] == start and not _ended(p, st[0]):
            left.append(p)
    return left


def port_open(port, host="127.0.0.1"):
    try:
        socket.create_connection((host, port), timeout=0.5).close()
        return True
    except OSError:
        return False


MAX_BODY = 8 << 20      # /v1/models, /health, /metrics: a few KB to a few hundred KB


def get(url, timeout=3.0, key=None):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + key} if key else {})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))   # never through a proxy
    with opener.open(req, timeout=timeout) as resp:
        body = resp.read(MAX_BODY + 1)
        if len(body) > MAX_BODY:
            raise ValueError("%s: the answer is over %d MiB" % (url, MAX_BODY >> 20))
        return resp.status, body.decode("utf-8", "replace")


def model_ids(port, key=None):
    status, body = get("http://127.0.0.1:%d/v1/models" % port, key=key)
    return [m.get("id") for m in json.loads(body).get("data", [])]


def readiness(rec, key=None):
    """(ready, ids) as the record's readiness kind sees it; raises while the server does not answer."""
    if rec.get("ready") == "health":
        status, body = get("http://127.0.0.1:%d/health" % rec["port"], key=key)
        ok = status == 200 and json.loads(body).get("status") == "ok"
        return ok, [rec.get("served_name")] if ok else []
    ids = model_ids(rec["port"], key)
    return rec.get("served_name") in ids, ids


def uptime(started_at):
    """Seconds since the start, None when the recorded time is not one this boot could have seen."""
    if not isinstance(started_at, (int, float)) or isinstance(started_at, bool):
        return None
    try:
        with open("/proc/uptime") as fh:
            booted = time.time() - float(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        booted = 0.0
    now = time.time()
    return now - started_at if booted - 5 <= started_at <= now + 5 else None


def tail(path, nbytes=16384):
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - nbytes))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def phase(text):
    last, where = None, -1
    for name, rx in PHASES:
        for m in rx.finditer(text):
            if m.start() > where:
                last, where = name, m.start()
    return last


# ------------------------------------------------------------------ actions
KEEP_LOGS = 5


def start_log(base, name):
    """A fresh log for this start, <name>-<time>-<pid>.log beside `base` (<name>.log), which becomes a link
    to it.  Each start is read on its own: a line a previous start left (a CUDA-graph timeout from
    yesterday) never decides about this one.  The newest KEEP_LOGS logs of the service are kept."""
    folder = os.path.dirname(base)
    os.makedirs(folder, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    log = os.path.join(folder, "%s-%s-%d.log" % (name, stamp, os.getpid()))
    if os.path.isfile(base) and not os.path.islink(base):          # a log from before logs per start
        os.replace(base, os.path.join(folder, "%s-before.log" % name))
    tmp = "%s.%d.tmp" % (base, os.getpid())
    os.symlink(os.path.basename(log), tmp)
    os.replace(tmp, base)
    own = re.compile(r"^%s-\d{8}-\d{6}-\d+\.log$" % re.escape(name))
    old = sorted((f for f in os.listdir(folder) if own.match(f)), key=lambda f: os.path.getmtime(
        os.path.join(folder, f)))
    for f in old[:max(0, len(old) - (KEEP_LOGS - 1))]:
        os.unlink(os.path.join(folder, f))
    return log


def _lock(workdir, port):
    """Held while one start checks the record and the port, launches and records: two starts of one
    service (or two services on one port) can never both be accepted."""
    make_state_dir(workdir)
    fd = os.open(os.path.join(state_dir(workdir), ".port-%d.lock" % port), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _claimed(workdir, port, name):
    """Another live recorded service on this port (it may not listen yet: still loading)."""
    for other in _names(workdir):
        if other == name:
            continue
        try:
            rec = read_record(workdir, other)
        except BadRecord:
            continue
        if rec and rec.get("port") == port and same_process(rec)[0]:
            return other, rec
    return None, None


def _exec_done(proc, within=2.0):
    """Wait (briefly) until the started program's arguments can be read: Popen returns when the child's
    exec pipe closes, before the kernel has set up the new program's arguments, and the identity
    recorded from that moment would hold an empty command line."""
    deadline = time.time() + within
    while time.time() < deadline and proc.poll() is None:
        try:
            with open("/proc/%d/cmdline" % proc.pid, "rb") as fh:
                if fh.read(1):
                    return
        except OSError:
            return
        time.sleep(0.005)


def start(req):
    wd, name, port = req["workdir"], req["name"], int(req["port"])
    fd = _lock(wd, port)
    try:
        try:
            rec = read_record(wd, name)
        except BadRecord as exc:
            return {"ok": False, "error": "%s; if no %s runs, remove it and start again" % (exc, name)}
        if rec and same_process(rec)[0]:
            return {"ok": False, "error": "%s already runs (pid %d, port %d); `inv stop` it first" % (
                name, rec["pid"], rec["port"])}
        other, orec = _claimed(wd, port, name)
        if other:
            return {"ok": False, "error": "port %d belongs to %s (pid %d, still starting or running)" % (
                port, other, orec["pid"])}
        if port_open(port):
            return {"ok": False, "error": "port %d is already taken on this host: %s" % (port, who_listens(port))}
        for extra, why in req.get("also_ports") or ():
            if port_open(int(extra)):
                return {"ok": False, "error": "port %d is free, but port %d, which it needs too (%s), is already "
                                             "taken on this host: %s" % (port, int(extra), why, who_listens(int(extra)))}
        log = start_log(req["log"], name)
        token = "%s/%s" % (name, secrets.token_hex(16))
        env = dict(os.environ)
        env.update(req.get("env") or {})
        env[TOKEN_ENV] = token
        with open(log, "ab") as out:
            out.write(("\n==== %s starting %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%S"), name)).encode())
            out.flush()
            proc = subprocess.Popen(req["argv"], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=env, cwd=req.get("cwd") or wd, start_new_session=True, close_fds=True)
        _exec_done(proc)
        rec = {"name": name, "pid": proc.pid, "port": port, "log": log, "argv": req.get("shown") or req["argv"],
               "started_at": time.time(), "kind": req.get("kind"), "gpu": req.get("gpu"), "bind": req.get("bind"),
               "served_name": req.get("served_name"), "has_key": bool(req.get("has_key")),
               "options": req.get("options") or {}, "identity": identity(proc.pid, token),
               "ready": req.get("ready") or "models"}
        write_record(wd, name, rec)
        return {"ok": True, "pid": proc.pid, "record": rec, "warnings": ephemeral_warnings(
            port, *(req.get("port_flag") or (None, 0)), also=req.get("also_ports") or ())}
    finally:
        os.close(fd)


def ephemeral_range():
    """The kernel's range for ports handed out to bind(0) and outgoing connections; None where unknown."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as fh:
            low, high = (int(x) for x in fh.read().split())
        return (low, high) if 0 < low <= high < 65536 else None
    except (OSError, ValueError):
        return None


def ephemeral_warnings(port, flag="--port", offset=0, also=()):
    """A server port inside the ephemeral range can be taken between the check and the bind, or while a
    sibling instance starts: vLLM's engine core and workers bind ephemeral ports of their own while they start
    (vllm#43206; CI, 2026-12-05: the second of `serve --instances 2 --port 33031` lost 33032 that way).
    flag: the option the user sets this port with (None: the tool picked it, nothing to advise); offset: this
    port minus that option's value (the n-th instance); also: (port, why) the process binds besides."""
    rng = ephemeral_range()
    if not rng or not flag:
        return []
    out = []
    for p, why in [(port, None)] + [(int(x), w) for x, w in also]:
        if rng[0] <= p <= rng[1]:
            out.append("port %d%s lies in this host's ephemeral port range (%d-%d, net.ipv4.ip_local_port_range): "
                       "an outgoing connection or a starting engine's own sockets can take it at any time; a %s "
                       "below %d avoids that" % (p, " (%s)" % why if why else "", rng[0], rng[1], flag,
                                                 rng[0] - offset - (p - port)))
    return out


def who_listens(port):
    try:
        out = subprocess.run(["ss", "-ltnpH", "sport = :%d" % port], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, universal_newlines=True, timeout=5).stdout.strip()
        m = re.search(r'pid=(\d+)', out)
        name = re.search(r'users:\(\("([^"]+)"', out)
        if m:
            return "pid %s (%s)" % (m.group(1), name.group(1) if name else "?")
    except (OSError, subprocess.SubprocessError):
        pass
    return "another process"


PORT_RELEASE_S = 3.0


def port_held(port, within=PORT_RELEASE_S):
    """None when the port no longer answers, else who holds it (who_listens), once the services' processes
    are gone.  A listener that no process can be named for yet (ss finds the socket, or none, but no
    pid: a socket being closed, a process whose descriptors cannot be read) gets up to `within` seconds to
    close before "another process" is said; a listener that ss names is said at once."""
    deadline = time.time() + within
    while port_open(port):
        who = who_listens(port)
        if who != "another process" or time.time() >= deadline:
            return who
        time.sleep(0.1)
    return None


def wait(req):
    """Poll until the service is ready (see readiness); stop at once if the process dies or time runs out.

    Without a record (a systemd unit) the port comes with the request and only the time limit ends it."""
    wd, name, timeout = req["workdir"], req["name"], float(req.get("timeout", 900))
    rec = read_record(wd, name) if req.get("port") is None else None
    rec = rec or {}
    log = req.get("log") or rec.get("log")
    probe = {"port": req.get("port") or rec.get("port"), "served_name": req.get("served_name") or rec.get("served_name"),
             "ready": req.get("ready") or rec.get("ready") or "models"}
    # time runs from the launch the record names (the wait may begin a moment after it, more under load),
    # so "ready after N s" and the time limit are the start's own
    now = time.time()
    launched = rec.get("started_at")
    start_t = launched if isinstance(launched, (int, float)) and now - 60 < launched <= now else now
    last_phase = None
    while True:
        elapsed = time.time() - start_t
        if rec and not runs(rec):
            return {"ready": False, "reason": "exited", "phase": phase(tail(log)), "elapsed": elapsed}
        try:
            ok, ids = readiness(probe, req.get("key"))
            if ok:
                return {"ready": True, "ids": ids, "elapsed": elapsed}
        except (OSError, ValueError, AttributeError, urllib.error.URLError):
            pass                                  # refused: still starting
        ph = phase(tail(log))
        if ph != last_phase or int(elapsed) % 10 == 0:
            sys.stdout.write("@@phase %s %.0f\n" % ((ph or "starting").replace(" ", "_"), elapsed))
            sys.stdout.flush()
            last_phase = ph
        if elapsed > timeout:
            return {"ready": False, "reason": "timeout", "phase": ph, "elapsed": elapsed}
        time.sleep(float(req.get("interval", 1.0)))


def _names(workdir):
    try:
        return sorted(f[:-5] for f in os.listdir(state_dir(workdir)) if f.endswith(".json") and valid_name(f[:-5]))
    except OSError:
        return []


def status(req):
    wd = req["workdir"]
    out = []
    for name in _names(wd):
        if req.get("name") and name != req["name"]:
            continue
        try:
            rec = read_record(wd, name)
        except BadRecord as exc:       # shown, never hidden: a live service may be behind it
            out.append({"name": name, "alive": None, "ready": False, "error": str(exc), "record": "unreadable"})
            continue
        if not rec:
            continue
        live, why = same_process(rec)
        if not live and why == "not running" and service_processes(rec):
            live, why = True, None           # the leader (a wrapper) ended; the server it started runs on
        s = {"name": name, "pid": rec.get("pid"), "port": rec.get("port"), "log": rec.get("log"),
             "failed": rec.get("failed") if isinstance(rec.get("failed"), dict) else None,
             "kind": rec.get("kind"), "alive": live, "started_at": rec.get("started_at"),
             "uptime": uptime(rec.get("started_at")),
             "gpu": rec.get("gpu"), "bind": rec.get("bind"), "served_name": rec.get("served_name"),
             "has_key": rec.get("has_key"), "options": rec.get("options"),
             "ready_by": rec.get("ready") or "models"}
        if why and why != "not running":
            s["stale"] = why
        if s["alive"]:
            try:
                s["ready"], s["ids"] = readiness(rec, req.get("key"))
            except urllib.error.HTTPError as exc:
                s["ready"], s["error"] = False, str(exc)
                if exc.code == 401:       # started with --api-key: say so instead of a bare "not ready"
                    s["error"] = ("the service requires its API key: pass --api-key" if not req.get("key") else
                                  "the service refused the API key given")
                    s["auth"] = "key missing" if not req.get("key") else "key refused"
            except (OSError, ValueError, AttributeError, urllib.error.URLError) as exc:
                s["ready"], s["error"] = False, str(exc)
            try:
                s["metrics"] = get("http://127.0.0.1:%d/metrics" % rec["port"], key=req.get("key"))[1]
            except (OSError, urllib.error.URLError) as exc:
                s["metrics"], s["metrics_error"] = None, str(exc)
        out.append(s)
    return {"services": out}


def _signal(procs, pgid, sig):
    """Signal the group (its leader was verified) and every other process of the service by pid."""
    if pgid:
        try:
            os.killpg(pgid, sig)        # the whole group: vLLM's engine core too
        except (ProcessLookupError, PermissionError):
            pass
    for p in still_running(procs):
        st = _stat(p)
        if st and st[2] != pgid:
            try:
                os.kill(p, sig)
            except (ProcessLookupError, PermissionError):
                pass


def stop(req):
    """SIGTERM to the service (its group, and what left the group: by descent or by its token), the grace
    period, SIGKILL to what is left; what still runs after that, or still holds the port, is said."""
    wd, name, grace = req["workdir"], req["name"], float(req.get("grace", 30))
    try:
        rec = read_record(wd, name)
    except BadRecord as exc:
        return {"ok": False, "error": "%s: nothing signalled; check for the process yourself, then remove the "
                                      "record" % exc}
    if not rec:
        return {"ok": False, "error": "no service %s recorded on this host" % name}
    pid = rec["pid"]
    live, why = same_process(rec)
    procs = service_processes(rec)
    result = {"ok": True, "pid": pid, "was_alive": live or bool(procs)}
    if not live and not procs and why != "not running":
        if why.startswith("stale record"):
            os.unlink(record_path(wd, name))
            result["stale"] = why + "; nothing signalled, record removed"
        else:
            result.update({"ok": False, "error": why})
        return result
    if procs:
        # the leader was verified, so the group is the service's (the kernel hands out no pid that is
        # still some group's id); the others carry its token or descend from it
        pgid = pid if live and _stat(pid) and _stat(pid)[2] == pid else None
        _signal(procs, pgid, signal.SIGTERM)
        deadline = time.time() + grace
        while time.time() < deadline:
            procs.update(service_processes(rec))
            if not still_running(procs):
                # one more look once all of them ended: a member may have started a process between the look
                # above and its own end (a SIGTERM handler's last act); ended, none of them can start another
                procs.update(service_processes(rec))
                if not still_running(procs):
                    break
            time.sleep(0.2)
        if still_running(procs):
            _signal(procs, pgid, signal.SIGKILL)
            result["killed"] = True
            end = time.time() + 5
            while still_running(procs) and time.time() < end:
                time.sleep(0.1)
        left = still_running(procs)
        result["stopped"] = not left
        if left:
            result["left"] = left
    if isinstance(rec.get("port"), int):
        who = port_held(rec["port"])
        if who:
            result["port_held"] = "port %d still answers: %s" % (rec["port"], who)
    if not runs(rec):
        if isinstance(req.get("failed"), dict):
            # a start that failed: its record stays, marked, so `inv diagnose --service --fix` finds its log
            # and its options (the OOM remedy restarts it); a later start or `inv stop` replaces it
            write_record(wd, name, {**rec, "failed": {**req["failed"], "at": time.time()}})
            result["kept"] = "failed"
        else:
            os.unlink(record_path(wd, name))
    return result


def request_url(req):
    """A request to the service from the host itself (smoke tests, metrics before/after)."""
    data = req.get("body")
    hdrs = {"Content-Type": "application/json"}
    if req.get("key"):
        hdrs["Authorization"] = "Bearer " + req["key"]
    r = urllib.request.Request("http://127.0.0.1:%d%s" % (int(req["port"]), req["path"]),
                               data=json.dumps(data).encode() if data is not None else None, headers=hdrs)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(r, timeout=float(req.get("timeout", 600))) as resp:
            return {"status": resp.status, "body": resp.read().decode("utf-8", "replace")}
    except urllib.error.HTTPError as exc:
        return {"status": exc.code, "body": exc.read().decode("utf-8", "replace")}
    except (OSError, urllib.error.URLError) as exc:
        return {"status": None, "error": str(exc)}


ACTIONS = {"start": start, "wait": wait, "status": status, "stop": stop, "request": request_url}


def main(argv):
    req = json.loads(sys.stdin.read() if argv[1] == "-" else argv[1])
    if "name" in req and req["name"] is not None and not valid_name(req["name"]):
        out = {"ok": False, "error": name_error(req["name"]), "services": []}
    else:
        try:
            out = ACTIONS[req["action"]](req)
        except BadRecord as exc:
            out = {"ok": False, "ready": False, "reason": "bad record", "error": str(exc)}
    sys.stdout.write(MARKER + "\n" + json.dumps(out) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
