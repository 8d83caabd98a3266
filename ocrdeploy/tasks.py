"""The invoke tasks: thin; they parse options and call the rooms.

Only invoke is imported at module level so that `inv --list` stays fast; every
task imports what it needs when it runs.
"""

from __future__ import annotations

import functools
import json as _json
import sys

from invoke import Collection, task
from invoke.exceptions import Exit

HOST_HELP = {
    "host": "Host names from the inventory, comma separated; 'all' for every host (default: localhost)",
    "group": "An inventory group (comma separated for several)",
    "inventory": "Inventory file (default: $OCRDEPLOY_INVENTORY, then ./inventory.yml)",
    "accept-new-host-keys": "Accept and record SSH host keys never seen before (a CHANGED key is still refused)",
    "connect-timeout": "Seconds to wait for each SSH connection (default 10)",
    "json": "Print one JSON document instead of tables",
}


def cli_errors(fn):
    """Input errors end as one line on stderr and exit 2, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from .errors import UsageError

        try:
            return fn(*args, **kwargs)
        except UsageError as exc:
            sys.stderr.write(f"error: {exc}\n")
            raise Exit(code=exc.exit_code)
        except KeyboardInterrupt:
            sys.stderr.write("interrupted\n")
            raise Exit(code=130)

    return wrapper


def _positive(value, name):
    from .errors import UsageError

    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"--{name} must be a number, got {value!r}")
    if number <= 0:
        raise UsageError(f"--{name} must be > 0, got {value!r}")
    return number


def open_session(host, group, inventory, accept_new_host_keys, connect_timeout):
    from .inventory import find_inventory_path, load_inventory, select_hosts
    from .provision.session import Session

    inv = load_inventory(find_inventory_path(inventory))
    hosts = select_hosts(inv, host=host, group=group)
    return Session(hosts, connect_timeout=_positive(connect_timeout, "connect-timeout"),
                   accept_new_host_keys=accept_new_host_keys)


def _gather_all(session, net_timeout=1.0):
    from .provision import facts as facts_mod

    def one(conn, host):
        return facts_mod.gather(conn, facts_mod.probe_request(host.workdir, net_timeout=net_timeout))

    return session.map(one)


@task(help={**HOST_HELP, "raw": "With --json: the probe's full facts (default: a summary per host)"})
@cli_errors
def facts(c, host=None, group=None, inventory=None, json=False, raw=False,
          accept_new_host_keys=False, connect_timeout=10):
    """Gather each host's facts in one round trip and print them."""
    from .provision import facts as facts_mod
    from .provision import report

    with open_session(host, group, inventory, accept_new_host_keys, connect_timeout) as session:
        outcomes = _gather_all(session)
    failed = any(o.error for o in outcomes.values())
    if json:
        doc = {name: ({"reachable": False, "error": o.error} if o.error else
                      {"reachable": True, "facts": o.value if raw else facts_mod.summary(o.value)})
               for name, o in outcomes.items()}
        print(_json.dumps(doc, indent=2, sort_keys=False))
    else:
        from rich.markup import escape
        from rich.pretty import Pretty

        con = report.console()
        for name, o in outcomes.items():
            con.print(f"[bold]{escape(o.host.label())}[/bold]")
            if o.error:
                con.print(f"  [red]unreachable[/red]  {escape(o.error)}")
            else:
                con.print(Pretty(o.value if raw else facts_mod.summary(o.value), indent_guides=False))
    if failed:
        raise Exit(code=1)


@task(help={**HOST_HELP, "recipe": "Recipe whose requirements to check (default: dspark)",
            "network-timeout": "Seconds for the github.com:443 test; 0 skips it (default 1)"})
@cli_errors
def preflight(c, host=None, group=None, inventory=None, recipe=None, json=False,
              accept_new_host_keys=False, connect_timeout=10, network_timeout=1.0):
    """Check driver, VRAM, free GPU, disk, Pythons, gcc-13, GitHub and proxies on each host."""
    from .checks import run_preflight_checks
    from .provision import facts as facts_mod
    from .provision import report
    from .recipes import get_recipe

    chosen = get_recipe(recipe)
    net_timeout = float(network_timeout)
    with open_session(host, group, inventory, accept_new_host_keys, connect_timeout) as session:
        outcomes = _gather_all(session, net_timeout)
    doc = {"recipe": chosen.name, "hosts": {}}
    rows = []
    any_fail = False
    con = None if json else report.console()
    for name, o in outcomes.items():
        if o.error:
            any_fail = True
            doc["hosts"][name] = {"reachable": False, "error": o.error}
            rows.append((name, None, o.error))
            if con:
                con.print(report.checks_table(o.host.label(), []))
            continue
        results = run_preflight_checks(o.value, chosen.requirements)
        counts = {k: sum(1 for r in results if r.status == k) for k in ("pass", "warn", "fail", "skip")}
        any_fail |= counts["fail"] > 0
        doc["hosts"][name] = {"reachable": True, "summary": facts_mod.summary(o.value),
                              "checks": [r.to_dict() for r in results], "counts": counts}
        rows.append((name, counts, None))
        if con:
            con.print(report.checks_table(f"{o.host.label()}  [recipe {chosen.name}]", results))
    doc["ok"] = not any_fail
    if json:
        print(_json.dumps(doc, indent=2))
    else:
        report.recap(con, rows)
    if any_fail:
        raise Exit(code=1)


ns = Collection()
ns.add_task(facts)
ns.add_task(preflight)
