"""The facts probe's ssh, started before the rest of the program is imported.

A no-op `ocrdeploy install` over SSH is one round trip, and until now that round trip began only after the
controller had imported invoke, the tasks and the recipes and built the plan (about half as long again as
the handshake on a quiet machine).  The probe's command line does not depend on the plan: the request
(paths, venvs, sources) travels on stdin.  So the program entry reads the command line's host selection
first, starts one ssh per selected host with the probe's command, and the host's python3 starts, loads the
probe and waits on stdin while the controller imports and plans: the handshake and the host's interpreter
start overlap the controller's own start.

The run takes over a started ssh only when the argv it would spawn itself is the same, word for word (the
same connection options, the same remote text); anything else (a --set that changes the work dir, a host
the paramiko path must reach, a run that never probes) leaves it unused, and it is ended when the program
exits.  An ended one runs nothing on the host: the probe exits at once when its stdin closes with no
request (probe.main).  A host without any Python runs the read-only sh fallback, which takes no request.

The lines a run took over are remembered (the cache dir's early-probe.json), under a key of everything they
are made from: the command line, the working directory, the environment variables that reach them, and the
identity (size, times, inode) of the inventory, ~/.ssh/config and the modules that build the line.  A re-run with
the same key starts them before importing anything of ours, where reading the inventory would take longer than
the spawn itself; the run still takes one over only when it is its own line, and a remembered line it did not
take is forgotten.

Which command lines start anything, and the lines themselves, are commands/early_install.py's: this module
only starts, hands over, ends and remembers them.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import threading

_PENDING: dict[tuple, subprocess.Popen] = {}
_LOCK = threading.Lock()
STATS = {"started": 0, "adopted": 0, "ended": 0}


def start(args: list[str], opts: dict, lines_for) -> int:
    """Start the probe's ssh for each line `install ARGS` (read into `opts`) would spawn: the remembered lines of
    the same key at once, else `lines_for(opts)` (commands/early_install.py: the inventory read, the hosts
    selected, each line built as the run builds it).  How many started; never raises: whatever goes wrong here,
    the run itself meets again and reports."""
    try:
        key = _key(args, opts)
        lines = _remembered(key)
        if lines:
            _STATE["key"], _STATE["remembered"] = key, lines
            atexit.register(discard)
            for line in lines:
                _spawn(tuple(line))
            return len(lines)
    except Exception:
        discard()
        return 0
    import contextlib
    import io
    import sys

    # the inventory's warnings (a name both a host and a group, an ssh config's skipped Match block) are the
    # run's to say, once: here they are kept quiet, and what ~/.ssh/config's reader notes as said is forgotten
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            lines = lines_for(opts)
            for line in lines:
                _spawn(line)
            started = len(lines)
            if started:
                _STATE["key"], _STATE["remembered"] = key, None     # what the run takes over is remembered at exit
                atexit.register(discard)
            return started
        except Exception:
            discard()
            return 0
        finally:
            said = getattr(sys.modules.get("ocrdeploy.inventory.sshconfig"), "_said", None)
            if said is not None:
                said.clear()


def _spawn(line: tuple):
    proc = subprocess.Popen(list(line), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with _LOCK:
        old = _PENDING.pop(line, None)
        _PENDING[line] = proc
        STATS["started"] += 1
    if old is not None:
        _end(old)


# what the remembered line is made from, besides the command line and the files below
KEY_ENV = ("OCRDEPLOY_INVENTORY", "OCRDEPLOY_KNOWN_HOSTS", "OCRDEPLOY_SSH_CONFIG", "HOME", "USER", "LOGNAME", "PATH",
           "XDG_CACHE_HOME", "SSH_AUTH_SOCK")
KEY_MODULES = ("early_probe.py", "facts.py", "probe.py", "probe_fallback.sh", "connection.py", "openssh.py",
               "command.py", "session.py", "../commands/early_install.py", "../commands/options.py")
DEFAULT_INVENTORIES = ("inventory.yml", "inventory.yaml", "inventory.ini")   # inventory/model.py's DEFAULT_FILES
REMEMBERED_KEYS = 16
_STATE: dict = {"key": None, "remembered": None}
_ADOPTED: list = []


def _stamp(path: str):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _key(args: list[str], opts: dict) -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    home = os.path.expanduser("~")
    files = [opts["inventory"]] if opts.get("inventory") else \
        [os.environ["OCRDEPLOY_INVENTORY"]] if os.environ.get("OCRDEPLOY_INVENTORY") else list(DEFAULT_INVENTORIES)
    files += [os.environ.get("OCRDEPLOY_SSH_CONFIG") or os.path.join(home, ".ssh", "config")]
    files += [os.path.join(here, name) for name in KEY_MODULES]
    return json.dumps([1, os.getcwd(), args, {k: os.environ.get(k) for k in KEY_ENV},
                       [[f, _stamp(os.path.abspath(os.path.expanduser(f)))] for f in files]])


def _memory_file() -> str:
    # the cache dir of inventory/cache.py (cache_dir(), without importing pathlib for it)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ocrdeploy", "early-probe.json")


def _read_memory() -> dict:
    try:
        with open(_memory_file(), encoding="utf-8") as fh:
            doc = json.load(fh)
        return doc if isinstance(doc, dict) else {}
    except (OSError, ValueError):
        return {}


def _remembered(key: str):
    lines = _read_memory().get(key)
    if isinstance(lines, list) and all(isinstance(ln, list) and ln and all(isinstance(w, str) for w in ln)
                                       for ln in lines):
        return lines
    return None


def _remember():
    """Keep the lines this run took over under its key (or forget the key when it took none of them)."""
    key = _STATE["key"]
    if key is None:
        return
    taken = [list(line) for line in _ADOPTED]
    if taken == (_STATE["remembered"] or None) or (not taken and _STATE["remembered"] is None):
        return
    doc = _read_memory()
    doc.pop(key, None)
    if taken:
        doc[key] = taken
    while len(doc) > REMEMBERED_KEYS:
        doc.pop(next(iter(doc)))
    path = _memory_file()
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as fh:
            json.dump(doc, fh)
        os.replace(tmp, path)
    except OSError:
        pass


def adopt(argv: list[str]) -> subprocess.Popen | None:
    """The started ssh whose argv is exactly `argv` (the caller writes the request to its stdin), or None."""
    if not _PENDING:
        return None
    with _LOCK:
        proc = _PENDING.pop(tuple(argv), None)
        if proc is not None:
            STATS["adopted"] += 1
            _ADOPTED.append(tuple(argv))
    return proc


def _end(proc: subprocess.Popen):
    """The ssh ends, so its session closes; the host's probe, still waiting for its request, reads EOF and
    exits without doing anything."""
    try:
        proc.kill()
        proc.communicate(timeout=5)
    except Exception:
        pass


def discard():
    """End every started ssh no run took over; remember the ones it took."""
    with _LOCK:
        left = list(_PENDING.values())
        _PENDING.clear()
        STATS["ended"] += len(left)
    for proc in left:
        _end(proc)
    try:
        _remember()
    finally:
        _STATE["key"] = None
