"""`inv facts` and `inv preflight`: the one-round-trip probe on every host, and the checks over it."""

from __future__ import annotations

import json as _json

from .hosts import open_session
from .options import number


def _gather_all(session, net_timeout=1.0, sources=None, requirements=None):
    """sources: {host name: [source dicts]} for preflight's sources check (recipes/sources.py); requirements:
    the recipe's, whose checkouts the probe reads the commit of."""
    from ..checks.preflight import probe_git
    from ..provision import facts as facts_mod

    def one(conn, host):
        git = probe_git(requirements, host.vars) if requirements is not None else []
        return facts_mod.gather(conn, facts_mod.probe_request(host.workdir, net_timeout=net_timeout, git=git,
                                                              sources=(sources or {}).get(host.name)))

    return session.map(one)


def run_facts(*, host, group, inventory, json, raw, accept_new_host_keys, connect_timeout) -> int:
    """Exit 1 when a host could not be probed."""
    from ..provision import facts as facts_mod
    from ..provision import report

    with open_session(host, group, inventory, accept_new_host_keys, connect_timeout) as session:
        outcomes = _gather_all(session)
    failed = any(o.error for o in outcomes.values())
    if json:
        # {"hosts": {name: ...}} as every other command's --json; each host's facts (--raw: the probe's whole
        # document) under it
        doc = {"hosts": {name: ({"reachable": not o.unreachable, "error": o.error} if o.error else
                                {"reachable": True, "facts": o.value if raw else facts_mod.summary(o.value)})
                         for name, o in outcomes.items()}}
        print(_json.dumps(doc, indent=2, sort_keys=False))
    else:
        from rich.markup import escape
        from rich.pretty import Pretty

        con = report.console()
        for name, o in outcomes.items():
            con.print(f"[bold]{escape(o.host.label())}[/bold]")
            if o.error:
                con.print(f"  [red]{o.state}[/red]  {escape(o.error)}")
            else:
                con.print(Pretty(o.value if raw else facts_mod.summary(o.value), indent_guides=False))
    if failed:
        return 1
    return 0


def run_preflight(*, host, group, inventory, recipe, json, accept_new_host_keys, connect_timeout,
                  network_timeout) -> int:
    """Exit 1 when a check fails or a host could not be probed."""
    from ..checks import run_preflight_checks
    from ..provision import facts as facts_mod
    from ..provision import report
    from ..recipes import get_recipe
    from ..recipes.sources import sources_for

    chosen = get_recipe(recipe)
    net_timeout = number(network_timeout, "network-timeout", 1.0, minimum=0)
    session = open_session(host, group, inventory, accept_new_host_keys, connect_timeout)
    sources = {h.name: [s.to_dict() for s in sources_for(chosen.name, h.vars)] for h in session.hosts}
    with session:
        outcomes = _gather_all(session, net_timeout, sources, chosen.requirements)
    doc = {"recipe": chosen.name, "hosts": {}}
    rows = []
    any_fail = False
    con = None if json else report.console()
    for name, o in outcomes.items():
        if o.error:
            any_fail = True
            doc["hosts"][name] = {"reachable": not o.unreachable, "error": o.error}
            rows.append((name, None, o))        # its one line is in the recap: no empty table for it
            continue
        results = run_preflight_checks(o.value, chosen.requirements, o.host.vars)
        counts = {k: sum(1 for r in results if r.status == k) for k in ("pass", "warn", "fail", "skip")}
        any_fail |= counts["fail"] > 0
        doc["hosts"][name] = {"reachable": True, "summary": facts_mod.summary(o.value),
                              "checks": [r.to_dict() for r in results], "counts": counts}
        rows.append((name, counts, None))
        if con:
            con.print(report.checks_table(f"{o.host.label()}  [recipe {chosen.name}]", results))
            rows_ = next((r.value for r in results if r.name == "sources" and r.value), None)
            if rows_:
                con.print(report.sources_table(f"{o.host.name}: sources", rows_))
    doc["ok"] = not any_fail
    if json:
        print(_json.dumps(doc, indent=2))
    else:
        report.recap(con, rows)
    if any_fail:
        return 1
    return 0
