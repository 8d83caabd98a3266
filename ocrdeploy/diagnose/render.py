"""Findings for humans: what matched where, what it means, what to do.

Everything printed here that came from a log or a host (file names, lines, texts, errors) goes
through terminal.safe_markup: escape sequences and control bytes out, `[rank0]:` and `[/]` shown
as written."""

from __future__ import annotations

from ..terminal import safe_markup

SEVERITY_STYLE = {"error": "red bold", "warning": "yellow bold", "harmless": "dim"}


def _where(f) -> str:
    if f["count"] > 1:
        return f"x{f['count']}, first at line {f['first_line']}"
    return f"line {f['first_line']}"


def _context(con, f):
    for n, text in f.get("context", []):
        mark = ">" if n == f["first_line"] else " "
        style = "" if n == f["first_line"] else "dim"
        line = safe_markup(text if len(text) <= 400 else text[:400] + " ...")
        con.print(f"    {mark}{n:>7} | " + (f"[{style}]{line}[/{style}]" if style else line), soft_wrap=True)


def render(con, reports: list[dict], host_label: str | None = None):
    for rep in reports:
        where = f"{host_label}:" if host_label else ""
        if "error" in rep:
            con.print(f"[red]error[/red] {safe_markup(where + rep['file'])}: {safe_markup(rep['error'])}")
            if "findings" not in rep:
                continue
        n_err = len(rep["findings"])
        con.print(f"[bold]{safe_markup(where + rep['file'])}[/bold]  [dim]{n_err} known, {len(rep['harmless'])} "
                  f"harmless, {len(rep['unrecognised'])} unrecognised[/dim]")
        if rep.get("note"):
            con.print(f"  [dim]{safe_markup(rep['note'])}[/dim]")
        elif rep.get("quoted"):
            ids = ", ".join(f["id"] for f in rep["quoted"])
            con.print(f"  [yellow]reads as a text about errors[/yellow] (a pull request, a how-to page, a feature "
                      f"request; probability {rep['document']:.2f}), not a run's log: {safe_markup(ids)} held back "
                      f"as quoted, not found; [dim]--as-log reads it as a run's log[/dim]", soft_wrap=True)
        elif not (rep["findings"] or rep["harmless"] or rep["unrecognised"]):
            con.print("  [green]no known failure and no error line found[/green]")
        for f in rep["findings"]:
            style = SEVERITY_STYLE[f["severity"]]
            con.print(f"\n  [{style}]{f['severity'].upper()}[/{style}] {safe_markup('[' + f['stage'] + ']')} [bold]{safe_markup(f['id'])}"
                      f"[/bold]: {safe_markup(f['title'])}  [dim]({_where(f)})[/dim]")
            _context(con, f)
            con.print(f"    [bold]cause[/bold]: {safe_markup(f['cause'])}", soft_wrap=True)
            fix = safe_markup(f["fix"]).replace("\n", "\n         ")
            con.print(f"    [bold]fix[/bold]:   {fix}", soft_wrap=True)
            if f.get("remedy"):
                con.print(f"    [dim]automatic remedy: {f['remedy']} (inv diagnose --fix)[/dim]")
        if rep["unrecognised"]:
            con.print("\n  [bold]unrecognised errors[/bold] [dim](no entry explains them)[/dim]")
            for u in rep["unrecognised"]:
                where_u = f"x{u['count']}, first at line {u['first_line']}" if u["count"] > 1 else f"line {u['first_line']}"
                kind = f"{u['class']}, " if u.get("class") else ""
                con.print(f"\n    [yellow]{safe_markup(u['text'][:300])}[/yellow]  [dim]({kind}{where_u})[/dim]",
                          soft_wrap=True)
                if u.get("looks_like"):
                    con.print(f"      [dim]looks like: {safe_markup(', '.join(u['looks_like']))}? "
                              f"(shared key words only: not a finding)[/dim]")
                _context(con, {"first_line": u["first_line"], "context": u["context"]})
        if rep["harmless"]:
            con.print("\n  [bold]harmless[/bold] [dim](known, nothing to do)[/dim]")
            for f in rep["harmless"]:
                con.print(f"    [dim]{safe_markup(f['id'])} ({_where(f)}): {safe_markup(f['cause'])}[/dim]", soft_wrap=True)
        con.print()
