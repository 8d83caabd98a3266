"""Human output: per-host tables and an Ansible-like recap; JSON goes elsewhere."""

from __future__ import annotations

import sys

STATUS_STYLE = {"pass": "green", "ok": "green", "passed": "green", "warn": "yellow", "changed": "yellow",
                "fail": "red", "failed": "red", "skip": "dim", "skipped": "dim", "not run": "dim",
                "unreachable": "red bold"}


def console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def checks_table(title: str, results):
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_lines=False, expand=False)
    table.add_column("check", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("result")
    for r in results:
        from rich.markup import escape

        style = STATUS_STYLE.get(r.status, "")
        text = escape(r.message) + (f"\n[dim]fix: {escape(r.fix)}[/dim]" if r.fix and r.status in ("fail", "warn")
                                    else "")
        table.add_row(r.name, f"[{style}]{r.status}[/{style}]", text)
    return table


def sources_table(title: str, rows):
    """preflight's sources: does each answer from the host, how fast, through which proxy, and the var to
    set when it is slow or closed."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title, title_justify="left", expand=False)
    for col in ("source", "url", "answers", "latency", "proxy", "if slow or closed"):
        table.add_column(col, no_wrap=col in ("source", "latency"))
    for r in rows:
        verdict = r.get("verdict")
        style = {"ok": "green", "slow": "yellow"}.get(verdict, "red")
        answers = (f"[{style}]yes (HTTP {r.get('status')}){' slow' if verdict == 'slow' else ''}[/{style}]"
                   if r.get("reachable") else f"[red]no: {escape(str(r.get('error')))}[/red]")
        table.add_row(escape(r["name"]), escape(r["url"]), answers, f"{r.get('ms')} ms",
                      escape(r.get("proxy") or "direct"), "" if verdict == "ok" else f"set {escape(r['var'])}")
    return table


def recap(con, rows):
    """rows: (host label, counts dict, None) or, for a host that could not be worked on, (host label,
    None, its HostOutcome)."""
    from rich.markup import escape

    con.print("\n[bold]RECAP[/bold]")
    width = max((len(r[0]) for r in rows), default=0)
    for label, counts, problem in rows:
        if problem is not None:
            con.print(f"{label:<{width}} : [red bold]{problem.state}[/red bold]  {escape(problem.error)}")
            continue
        parts = []
        for key, n in counts.items():
            style = STATUS_STYLE.get(key, "") if n else "dim"
            parts.append(f"[{style}]{key}={n}[/{style}]")
        con.print(f"{escape(label):<{width}} : " + "  ".join(parts))


def error_line(message: str):
    sys.stderr.write(f"error: {message}\n")


def reachable(outcomes, con, hosts_doc: dict) -> tuple[list, bool]:
    """Session.map's outcomes: a host that could not be worked on (unreachable, or a command that
    failed under it) is recorded and printed once, here; returns the (name, value) of the others and
    whether any host had such an error."""
    from rich.markup import escape

    ok, failed = [], False
    for name, o in outcomes.items():
        if o.error:
            failed = True
            hosts_doc[name] = {"reachable": not o.unreachable, "error": o.error}
            con.print(f"[red]{escape(name)}: {o.state}: {escape(o.error)}[/red]")
        else:
            ok.append((name, o.value))
    return ok, failed
