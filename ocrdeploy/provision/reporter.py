"""What `inv install` prints while it works: a line per step, the commands in --check
and -v, the log tail and diagnosis of a failure, and progress bars for long builds."""

from __future__ import annotations

import threading

from .report import STATUS_STYLE, escape


class Reporter:
    def __init__(self, console, show_commands=False, quiet=False):
        self.con = console
        self.show_commands = show_commands
        self.quiet = quiet
        self._lock = threading.Lock()
        self._progress = None
        self._tasks = {}

    def _print(self, text):
        if self.quiet:
            return
        with self._lock:
            (self._progress.console if self._progress else self.con).print(text, soft_wrap=True)

    def preflight_failed(self, host, results):
        bad = [r for r in results if r.status == "fail"]
        self._print(f"[red bold]{escape(host.name)}[/] preflight failed: " + "; ".join(
            escape(f"{r.name}: {r.message}") for r in bad) + " [dim](--skip-preflight to install anyway)[/dim]")

    def running(self, host, step, reason, attempt):
        if attempt == 1:
            self._print(f"[dim]{escape(host.name)} | {escape(step)}: running ({escape(reason)})[/dim]")

    def retrying(self, host, step, findings, commands):
        ids = ", ".join(f["id"] for f in findings) or "?"
        self._print(f"[yellow]{escape(host.name)} | {escape(step)}: retrying ({escape(ids)})[/yellow]")
        for c in commands:
            self._print(f"    $ {escape(c)}")

    def step(self, host, result, check):
        style = STATUS_STYLE.get(result.status, "")
        label = "would change" if (check and result.status == "changed") else result.status
        self._finish_progress(host, result.step)
        self._print(f"{escape(host.name)} | {escape(result.step):<22} [{style}]{label:<12}[/{style}] "
                    f"{escape(result.reason)}")
        if result.status == "changed" and result.outcome:
            self._print(f"      [dim]now: {escape(result.outcome)}[/dim]")
        if result.commands and (check or self.show_commands or result.status == "failed"):
            for c in result.commands:
                self._print(f"      $ {escape(c)}")
        if result.status == "failed" and result.log:
            self._print(f"      [bold]log[/bold] ({escape(host.name)}): {escape(result.log)}")
            if result.tail:
                for line in result.tail.splitlines()[-15:]:
                    self._print(f"      [dim]| {escape(line[:300])}[/dim]")
            for f in result.findings:
                self._print(f"      [red]diagnosis[/red] {escape(f['id'])} (line {f['first_line']}): "
                            f"{escape(f['cause'])}")
                self._print(f"      [bold]fix[/bold]: {escape(f['fix'])}")
            if not result.findings:
                self._print("      [dim]diagnosis: no known failure in the log[/dim]")

    def progress(self, host, step, done, total, unit="items"):
        """A bar per (host, step): compile jobs as N/M, downloads and hashing as bytes with a rate."""
        with self._lock:
            if self._progress is None:
                from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

                self._progress = Progress(TextColumn("{task.description}"), BarColumn(), _Amount(),
                                          TimeElapsedColumn(), console=getattr(self.con, "rich", self.con),
                                          transient=True)
                self._progress.start()
            key = (host.name, step)
            if key not in self._tasks:
                label = f"{host.name} | {step}" + (" (ninja)" if unit == "items" else "")
                self._tasks[key] = self._progress.add_task(label, total=total or None, unit=unit)
            self._progress.update(self._tasks[key], completed=done, total=total or None)

    def _finish_progress(self, host, step):
        with self._lock:
            for key in [k for k in self._tasks if k[0] == host.name and (k[1] == step or
                                                                          k[1].startswith(step + " "))]:
                self._progress.remove_task(self._tasks.pop(key))
            if self._progress is not None and not self._tasks:
                self._progress.stop()
                self._progress = None


def _Amount():
    """N/M for compile jobs; bytes and a transfer rate for downloads and hashing."""
    from rich.progress import DownloadColumn, ProgressColumn, TransferSpeedColumn
    from rich.text import Text

    class Amount(ProgressColumn):
        def __init__(self):
            super().__init__()
            self.download, self.speed = DownloadColumn(), TransferSpeedColumn()

        def render(self, task):
            if task.fields.get("unit") == "bytes":
                return Text.assemble(self.download.render(task), " ", self.speed.render(task))
            return Text(f"{int(task.completed)}/{int(task.total or 0)}")

    return Amount()
