"""Human output: per-host tables and an Ansible-like recap; JSON goes elsewhere."""

from __future__ import annotations

import re
import sys

STATUS_STYLE = {"pass": "green", "ok": "green", "passed": "green", "warn": "yellow", "changed": "yellow",
                "fail": "red", "failed": "red", "skip": "dim", "skipped": "dim", "not run": "dim",
                "unreachable": "red bold"}


# rich.markup's own patterns (rich 13/14: RE_TAGS, escape()): a tag, and what escape() guards
_TAG = re.compile(r"((\\*)\[([a-z#/@][^[]*?)])")
_ESCAPABLE = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")


def escape(text: str) -> str:
    """rich.markup.escape, without importing rich (tests/provision/test_report.py holds it to rich's)."""
    text = _ESCAPABLE.sub(lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", text)
    if text.endswith("\\") and not text.endswith("\\\\"):
        return text + "\\"
    return text


def plain(markup: str) -> str:
    """The text rich prints for `markup` where it shows no styles: tags out, escaped brackets as written."""
    out, pos = [], 0
    for m in _TAG.finditer(markup):
        full, escapes, _ = m.groups()
        out.append(markup[pos:m.start()])
        pos = m.end()
        if escapes:
            backslashes, escaped = divmod(len(escapes), 2)
            out.append("\\" * backslashes)
            if escaped:
                out.append(full[len(escapes):])
    out.append(markup[pos:])
    return "".join(out)


def _rich_console(stderr: bool):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


class PlainConsole:
    """Output that goes to a file or a pipe (no styles to show): lines of markup are written as plain
    text without importing rich (a third of a no-op run's start-up); a table, a progress bar or any
    other rich feature gets a real rich Console, made when first needed."""

    def __init__(self, stderr: bool = False):
        self.stderr, self._rich = stderr, None

    @property
    def rich(self):
        if self._rich is None:
            self._rich = _rich_console(self.stderr)
        return self._rich

    def print(self, *objects, markup: bool = True, end: str = "\n", sep: str = " ", soft_wrap=None, **kw):
        if kw or not all(isinstance(o, str) for o in objects):
            return self.rich.print(*objects, markup=markup, end=end, sep=sep, soft_wrap=soft_wrap, **kw)
        stream = sys.stderr if self.stderr else sys.stdout
        stream.write(sep.join(plain(o) if markup else o for o in objects) + end)
        stream.flush()          # as rich does: a step line shows as it happens, in a pipe or a file too

    def __getattr__(self, name):
        return getattr(self.rich, name)


def console(stderr: bool = False):
    """rich in a terminal (or where FORCE_COLOR asks for styles); PlainConsole elsewhere."""
    import os

    stream = sys.stderr if stderr else sys.stdout
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if tty or os.environ.get("FORCE_COLOR") or os.environ.get("TTY_COMPATIBLE"):
        return _rich_console(stderr)
    return PlainConsole(stderr)


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
    ok, failed = [], False
    for name, o in outcomes.items():
        if o.error:
            failed = True
            hosts_doc[name] = {"reachable": not o.unreachable, "error": o.error}
            con.print(f"[red]{escape(name)}: {o.state}: {escape(o.error)}[/red]")
        else:
            ok.append((name, o.value))
    return ok, failed
