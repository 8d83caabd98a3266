"""`inv install` with its shared-build phases timed, for bench/shared_build.py.

Usage: python bench/shared_build_trace.py TRACE.json -- <inv install arguments>

Runs the real CLI in this process with the Applier's and SharedBuilds' phase methods wrapped by a timer (a
monotonic clock read before and after: nothing else changes), then writes each host's spans and this
process's CPU seconds (the controller's) to TRACE.json.  The wrappers are the bench's, never the package's:
the package keeps no timing code for a bench.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
import time

T0 = time.monotonic()
SPANS: list[dict] = []
_lock = threading.Lock()


def _label(cmds) -> str:
    argv = [str(a) for c in cmds for a in getattr(c, "argv", c)]
    if "wheel" in argv and "pip" in argv:
        return "compile (pip wheel)"
    if "-e" in argv:
        return "compile + install (pip install -e)"
    if "uninstall" in argv:
        return "uninstall old vllm"
    if "install" in argv:
        return "install wheel"
    return "prepare dirs"


def _timed(cls, name, label):
    real = getattr(cls, name)

    def wrapper(self, *args, **kwargs):
        host = getattr(getattr(self, "host", None), "name", None) or (args[0] if args and isinstance(args[0], str) else "?")
        what = label(self, args) if callable(label) else label
        start = time.monotonic()
        try:
            return real(self, *args, **kwargs)
        finally:
            with _lock:
                SPANS.append({"host": host, "phase": what, "start": start - T0, "end": time.monotonic() - T0})

    setattr(cls, name, wrapper)


def install_tracers():
    from ocrdeploy.provision import apply, fleet

    A, S = apply.Applier, fleet.SharedBuilds
    _timed(A, "gather", lambda self, args: "checks (verify facts)" if args and args[0] is not None else "facts")
    _timed(A, "_run_logged", lambda self, args: _label(args[1]))
    for name, label in (("plan", "plan barrier"), ("wait", "wait for wheel")):
        _timed(S, name, label)
    for name, label in (("built_sum", "fetch sha256 to controller"), ("fetch", "fetch wheel to controller")):
        _by_conn(S, name, label)
    from ocrdeploy.provision import connection

    _by_conn(connection.SSHConnection, "put", "copy to follower", conn_is_self=True)


def _by_conn(cls, name, label, conn_is_self=False):
    """A method whose host is its connection's (the first argument, or self)."""
    real = getattr(cls, name)

    def wrapper(self, *args, **kwargs):
        start = time.monotonic()
        try:
            return real(self, *args, **kwargs)
        finally:
            host = (self if conn_is_self else args[0]).name
            with _lock:
                SPANS.append({"host": host, "phase": label, "start": start - T0, "end": time.monotonic() - T0})

    setattr(cls, name, wrapper)


def main():
    trace, sep, *args = sys.argv[1:]
    assert sep == "--"

    def write():
        t = os.times()
        with open(trace, "w") as fh:
            json.dump({"spans": SPANS, "wall": time.monotonic() - T0, "cpu": t.user + t.system,
                       "cpu_children": t.children_user + t.children_system}, fh)

    atexit.register(write)
    sys.argv = ["inv", "install", *args]
    install_tracers()
    from ocrdeploy.cli import main as cli

    cli()


if __name__ == "__main__":
    main()
