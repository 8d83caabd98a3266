"""A host that was reached but failed is not reported as unreachable."""

import io

import pytest

from rich.console import Console

from ocrdeploy.inventory.model import Host
from ocrdeploy.provision.report import reachable, recap
from ocrdeploy.provision.session import HostOutcome


def test_reached_but_failed_is_not_unreachable():
    a, b, c = (Host(name=n) for n in ("a", "b", "c"))
    outcomes = {"a": HostOutcome(a, error="ssh: connect timed out", unreachable=True),
                "b": HostOutcome(b, error="`python3 -c ...` exited 1"),
                "c": HostOutcome(c, value={"ok": True})}
    out = io.StringIO()
    con = Console(file=out, width=200)
    doc = {}
    ok, failed = reachable(outcomes, con, doc)
    assert failed and ok == [("c", {"ok": True})]
    assert doc == {"a": {"reachable": False, "error": "ssh: connect timed out"},
                   "b": {"reachable": True, "error": "`python3 -c ...` exited 1"}}
    assert "a: unreachable:" in out.getvalue() and "b: failed:" in out.getvalue()
    recap(con, [("a", None, outcomes["a"]), ("b", None, outcomes["b"]), ("c", {"ok": 3}, None)])
    lines = out.getvalue().splitlines()
    assert any(line.startswith("a : unreachable") for line in lines)
    assert any(line.startswith("b : failed") for line in lines)


@pytest.mark.parametrize("text", ["[rank0]: CUDA error", "[/]", "a\\", "x \\[bold] y", "[red]a[/red]", "path\\",
                                  "[link=https://x]y", "\\\\[b]", "no brackets", "[0/8] ninja", "[@click]"])
def test_plain_output_is_what_rich_prints_and_escape_is_richs(text):
    """PlainConsole writes markup without rich (a no-op install's start-up): it must read as rich renders it."""
    from rich.markup import escape as rich_escape, render

    from ocrdeploy.provision.report import escape, plain

    assert escape(text) == rich_escape(text)
    markup = f"[red bold]{escape(text)}[/red bold] and [dim]{escape(text)}[/]"
    assert plain(markup) == render(markup).plain
