"""Opening the session on the selected hosts and mapping a function over them.

Every host command starts here, so the inventory lookup, the connection options and the
one-line report of an unreachable host are the same for all of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..errors import UsageError
from ..provision.report import console, reachable


def _positive(value, name):
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"--{name} must be a number, got {value!r}")
    if number <= 0:
        raise UsageError(f"--{name} must be > 0, got {value!r}")
    return number


def open_session(host, group, inventory, accept_new_host_keys, connect_timeout):
    from ..inventory import find_inventory_path, load_inventory, select_hosts
    from ..provision.session import Session

    inv = load_inventory(find_inventory_path(inventory))
    hosts = select_hosts(inv, host=host, group=group)
    return Session(hosts, connect_timeout=_positive(connect_timeout, "connect-timeout"),
                   accept_new_host_keys=accept_new_host_keys)


@dataclass
class HostRun:
    """What a per-host command has to report: the reachable hosts' values, the JSON document
    (unreachable hosts already in it) and whether anything failed."""

    con: object
    as_json: bool
    doc: dict
    hosts: list          # (name, value) of every reachable host
    failed: bool

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
