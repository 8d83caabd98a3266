"""Findings for humans: what matched where, what it means, what to do."""

from __future__ import annotations

from rich.markup import escape

SEVERITY_STYLE = {"error": "red bold", "warning": "yellow bold", "harmless": "dim"}


def _where(f) -> str:
    if f["count"] > 1:
        return f"x{f['count']}, first at line {f['first_line']}"
    return f"line {f['first_line']}"


def _context(con, f):
    for n, text in f.get("context", []):
        mark = ">" if n == f["first_line"] else " "
        style = "" if n == f["first_line"] else "dim"
        line = escape(text if len(text) <= 400 else text[:400] + " ...")
        con.print(f"    {mark}{n:>7} | " + (f"[{style}]{line}[/{style}]" if style else line), soft_wrap=True)


def render(con, reports: list[dict], host_label: str | None = None):
    for rep in reports:
        where = f"{host_label}:" if host_label else ""
        if "error" in rep:
            con.print(f"[red]error[/red] {escape(where + rep['file'])}: {escape(rep['error'])}")
            if "findings" not in rep:
                continue
        n_err = len(rep["findings"])
        con.print(f"[bold]{escape(where + rep['file'])}[/bold]  [dim]{n_err} known, {len(rep['harmless'])} "
                  f"harmless, {len(rep['unrecognised'])} unrecognised[/dim]")
        if rep.get("note"):
            con.print(f"  [dim]{escape(rep['note'])}[/dim]")
        elif not (rep["findings"] or rep["harmless"] or rep["unrecognised"]):
            con.print("  [green]no known failure and no error line found[/green]")
        for f in rep["findings"]:
            style = SEVERITY_STYLE[f["severity"]]
            con.print(f"\n  [{style}]{f['severity'].upper()}[/{style}] {escape('[' + f['stage'] + ']')} [bold]{escape(f['id'])}"
                      f"[/bold]: {escape(f['title'])}  [dim]({_where(f)})[/dim]")
            _context(con, f)
            con.print(f"    [bold]cause[/bold]: {escape(f['cause'])}", soft_wrap=True)
            fix = escape(f["fix"]).replace("\n", "\n         ")
            con.print(f"    [bold]fix[/bold]:   {fix}", soft_wrap=True)
            if f.get("remedy"):
                con.print(f"    [dim]automatic remedy: {f['remedy']} (inv diagnose --fix)[/dim]")
        if rep["unrecognised"]:
            con.print("\n  [bold]unrecognised errors[/bold] [dim](no entry explains them)[/dim]")
            for u in rep["unrecognised"]:
                where_u = f"x{u['count']}, first at line {u['first_line']}" if u["count"] > 1 else f"line {u['first_line']}"
                kind = f"{u['class']}, " if u.get("class") else ""
                con.print(f"\n    [yellow]{escape(u['text'][:300])}[/yellow]  [dim]({kind}{where_u})[/dim]",
                          soft_wrap=True)
                _context(con, {"first_line": u["first_line"], "context": u["context"]})
        if rep["harmless"]:
            con.print("\n  [bold]harmless[/bold] [dim](known, nothing to do)[/dim]")
            for f in rep["harmless"]:
                con.print(f"    [dim]{escape(f['id'])} ({_where(f)}): {escape(f['cause'])}[/dim]", soft_wrap=True)
        con.print()
