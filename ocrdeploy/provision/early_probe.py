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

Only a command line this module reads without doubt starts anything: `install` with the flags it knows;
an unknown or combined flag, -v, --help, --facts, --docker or --list-hosts start nothing, so no host is ever
reached that the run itself would not reach.
"""

from __future__ import annotations

import atexit
import subprocess
import threading

# long flags of `install` that take a value, and the boolean ones; nothing here changes which hosts are
# reached or how, except host/group/inventory/limit/forks/connect-timeout/accept-new-host-keys/set
VALUE_FLAGS = frozenset({"host", "group", "inventory", "limit", "forks", "connect-timeout", "recipe", "step",
                         "from", "deps-dir", "installer", "set"})
BOOL_FLAGS = frozenset({"json", "check", "force", "skip-preflight", "accept-new-host-keys", "no-shared-build"})
# invoke's short flags for them (it gives each the first free letter; tests/provision/test_early_probe.py
# holds this table to the install task's real parser, so a new flag that moves one fails there)
SHORT = {"H": "host", "g": "group", "i": "inventory", "l": "limit", "n": "connect-timeout", "r": "recipe",
         "s": "step", "f": "from", "d": "deps-dir", "t": "installer", "e": "set", "j": "json", "c": "check",
         "o": "force", "k": "skip-preflight", "p": "accept-new-host-keys", "b": "no-shared-build"}

_PENDING: dict[tuple, subprocess.Popen] = {}
_LOCK = threading.Lock()
STATS = {"started": 0, "adopted": 0, "ended": 0}


def read_install_args(args: list[str]) -> dict | None:
    """The options of `install ARGS` that decide its hosts, or None when the line is not one this module
    reads without doubt (then nothing starts early)."""
    if not args or args[0] != "install":
        return None
    opts: dict = {"set": []}
    words = iter(args[1:])
    for word in words:
        if len(word) == 2 and word[0] == "-" and word[1] in SHORT:
            name, eq, value = SHORT[word[1]], "", ""
        elif word.startswith("--") and word != "--":
            name, eq, value = word[2:].partition("=")
        else:
            return None                         # a combined or unknown short flag, another task's name
        if name in BOOL_FLAGS and not eq:
            opts[name] = True
        elif name in VALUE_FLAGS:
            if not eq:
                value = next(words, None)
                if value is None or value.startswith("-"):
                    return None
            if name == "set":
                opts["set"].append(value)
            elif name in opts:
                return None                     # given twice: invoke's answer is not ours to guess
            else:
                opts[name] = value
        else:
            return None
    return opts


def start(args: list[str]) -> int:
    """Start the probe's ssh for each SSH host `install ARGS` selects; how many started.  Never raises:
    whatever goes wrong here, the run itself meets again and reports."""
    opts = read_install_args(args)
    if opts is None:
        return 0
    import contextlib
    import io
    import sys

    # the inventory's warnings (a name both a host and a group, an ssh config's skipped Match block) are the
    # run's to say, once: here they are kept quiet, and what ~/.ssh/config's reader notes as said is forgotten
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            return _start(opts)
        except Exception:
            discard()
            return 0
        finally:
            said = getattr(sys.modules.get("ocrdeploy.inventory.sshconfig"), "_said", None)
            if said is not None:
                said.clear()


def _start(opts: dict) -> int:
    from ..commands.options import number, parse_sets
    from ..inventory import find_inventory_path, load_inventory, select_hosts

    path = find_inventory_path(opts.get("inventory"))
    if path is None:
        return 0
    hosts = select_hosts(load_inventory(path), host=opts.get("host"), group=opts.get("group"),
                         limit=opts.get("limit"))
    if all(h.is_local for h in hosts):
        return 0                                # probed in-process: nothing to start, nothing more to import
    from .connection import SSHConnection
    from .facts import probe_command
    from .openssh import ssh_argv
    from .session import DEFAULT_FORKS

    overrides = parse_sets(opts["set"] + ([f"installer={opts['installer']}"] if "installer" in opts else []))
    if "deps-dir" in opts:
        overrides["deps_dir"] = opts["deps-dir"]
    forks = number(opts.get("forks"), "forks", DEFAULT_FORKS, whole=True, minimum=1)
    timeout = number(opts.get("connect-timeout"), "connect-timeout", 10, above=0)
    started = 0
    for h in hosts[:int(forks)]:               # the run's first wave: later hosts wait for a free slot anyway
        if h.is_local:
            continue
        h.vars.update(overrides)
        conn = SSHConnection(h, connect_timeout=timeout, accept_new_host_keys=bool(opts.get("accept-new-host-keys")))
        argv = ssh_argv(conn)
        if argv is None:
            continue
        command = conn.prepare(probe_command({"workdir": h.workdir}))
        line = (*argv, conn.shell(command))
        proc = subprocess.Popen(list(line), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        with _LOCK:
            old = _PENDING.pop(line, None)
            _PENDING[line] = proc
            STATS["started"] += 1
        if old is not None:
            _end(old)
        started += 1
    if started:
        atexit.register(discard)
    return started


def adopt(argv: list[str]) -> subprocess.Popen | None:
    """The started ssh whose argv is exactly `argv` (the caller writes the request to its stdin), or None."""
    if not _PENDING:
        return None
    with _LOCK:
        proc = _PENDING.pop(tuple(argv), None)
        if proc is not None:
            STATS["adopted"] += 1
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
    """End every started ssh no run took over."""
    with _LOCK:
        left = list(_PENDING.values())
        _PENDING.clear()
        STATS["ended"] += len(left)
    for proc in left:
        _end(proc)
