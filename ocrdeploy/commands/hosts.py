"""Opening the session on the selected hosts and mapping a function over them.

Every host command starts here, so the inventory lookup, the connection options and the
one-line report of an unreachable host are the same for all of them.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from dataclasses import dataclass

from ..provision.report import console, reachable
from ..provision.session import DEFAULT_FORKS
from .options import number


@dataclass(frozen=True)
class RunOptions:
    """The selection and output options every host command shares (--limit, --forks, -v).

    The tasks layer sets them once per invocation (like Ansible's context.CLIARGS), so that
    adding one does not thread a parameter through every command; open_session hands them
    to the engine explicitly.
    """

    limit: str | None = None
    forks: int = DEFAULT_FORKS
    verbosity: int = 0


_RUN_OPTIONS: contextvars.ContextVar[RunOptions] = contextvars.ContextVar("run_options", default=RunOptions())


@contextlib.contextmanager
def run_options(*, limit=None, forks=DEFAULT_FORKS, verbosity=0):
    token = _RUN_OPTIONS.set(RunOptions(limit=limit or None, forks=number(forks, "forks", DEFAULT_FORKS, whole=True, minimum=1),
                                        verbosity=number(verbosity or 0, "verbose", 0, whole=True, minimum=0)))
    try:
        yield _RUN_OPTIONS.get()
    finally:
        _RUN_OPTIONS.reset(token)


def current_options() -> RunOptions:
    return _RUN_OPTIONS.get()


def selected_hosts(host, group, inventory, limit=None):
    """The inventory's hosts the options select: --host/--group patterns, narrowed by --limit."""
    from ..inventory import find_inventory_path, load_inventory, select_hosts

    inv = load_inventory(find_inventory_path(inventory))
    return select_hosts(inv, host=host, group=group, limit=limit)


def open_session(host, group, inventory, accept_new_host_keys, connect_timeout):
    from ..provision.session import Session

    opts = current_options()
    hosts = selected_hosts(host, group, inventory, opts.limit)
    return Session(hosts, connect_timeout=number(connect_timeout, "connect-timeout", 10, above=0),
                   accept_new_host_keys=accept_new_host_keys, max_parallel=opts.forks,
                   verbosity=opts.verbosity, lazy=True)


def list_hosts(host, group, inventory, as_json) -> int:
    """--list-hosts: what the selection matches, how each host is reached; nothing is connected to."""
    hosts = selected_hosts(host, group, inventory, current_options().limit)
    rows = [{"name": h.name, "local": h.is_local, "address": None if h.is_local else h.address,
             "port": None if h.is_local else h.port, "user": h.user, "groups": h.groups, "source": h.source,
             "become_user": h.become_user, "python": h.python_interpreter, "ignored": h.ignored_settings()}
            for h in hosts]
    if as_json:
        print(json.dumps({"hosts": rows}, indent=2))
        return 0
    print(f"  hosts ({len(rows)}):")
    for h, row in zip(hosts, rows):
        extra = [f"[{', '.join(h.groups)}]"] if h.groups else []
        extra += [f"become {row['become_user']}"] if row["become_user"] else []
        extra += [f"python {row['python']}"] if row["python"] else []
        print("    " + "  ".join([h.label(), *extra]))
        for note in row["ignored"]:
            print(f"      ignored: {note}")
    return 0


@dataclass
class HostRun:
    """What a per-host command has to report: the reachable hosts' values, the JSON document
    (unreachable hosts already in it) and whether anything failed."""

    con: object
    as_json: bool
    doc: dict
    hosts: list          # (name, value) of every reachable host
    failed: bool

    def answered(self):
        """(name, value) of each reachable host, its value recorded in the JSON document; a value that
        carries an "error" is printed, makes the run fail and is left out."""
        for name, r in self.hosts:
            self.doc["hosts"][name] = r
            if isinstance(r, dict) and r.get("error"):
                self.failed = True
                self.con.print(f"{name}: {r['error']}", markup=False)
                continue
            yield name, r

    def exit_code(self) -> int:
        if self.as_json:
            print(json.dumps(self.doc, indent=2, default=str))
        return 1 if self.failed else 0


def map_hosts(fn, *, host, inventory, accept_new_host_keys, connect_timeout, as_json, con=None) -> HostRun:
    """fn(conn, host) on every selected host at once; an unreachable host is printed and recorded once."""
    session = open_session(host, None, inventory, accept_new_host_keys, connect_timeout)
    con = con or console(stderr=as_json)
    with session:
        outcomes = session.map(fn)
    doc = {"hosts": {}}
    hosts, failed = reachable(outcomes, con, doc["hosts"])
    return HostRun(con, as_json, doc, hosts, failed)
