"""The rooms import one way (shared/DESIGN.md): tasks -> commands -> domain -> engine.

Read from the source with ast, so a lazy import inside a function counts as much as one at the
top: a climb back up anywhere is a failure here, not a surprise at run time.
"""

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "ocrdeploy"
LEVEL = {"tasks": 4, "cli": 5, "__main__": 5, "commands": 3,
         "services": 2, "recipes": 2, "models": 2, "sdk": 2, "report": 2,
         "provision": 1, "checks": 1, "diagnose": 1, "inventory": 1,
         "errors": 0, "terminal": 0, "__init__": 0}


def _room(parts):
    return parts[0] if parts else "__init__"


def imports():
    """(importing room, imported room, file:line) for every import between rooms."""
    out = []
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).with_suffix("").parts
        pkg = list(rel[:-1]) if rel[-1] != "__init__" else list(rel[:-1])
        if rel[-1] == "__init__":
            pkg = list(rel[:-1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg[: len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                    mod = base + (node.module.split(".") if node.module else [])
                    if not node.module:
                        targets = [mod + [a.name] for a in node.names]
                    else:
                        targets = [mod]
                elif node.module and node.module.split(".")[0] == "ocrdeploy":
                    targets = [node.module.split(".")[1:]]
            elif isinstance(node, ast.Import):
                targets = [a.name.split(".")[1:] for a in node.names if a.name.split(".")[0] == "ocrdeploy"]
            for t in targets:
                src, dst = _room(list(rel)), _room(t)
                if rel[0] in ("tasks.py",):
                    src = "tasks"
                src = src if src in LEVEL else rel[0]
                if src != dst:
                    out.append((src, dst, f"{path.relative_to(PKG.parent)}:{node.lineno}"))
    return out


def test_every_room_is_known():
    rooms = {p.name for p in PKG.iterdir() if p.is_dir() and not p.name.startswith("__")}
    rooms |= {p.stem for p in PKG.glob("*.py")}
    assert rooms <= set(LEVEL), f"new room without a level in tests/test_layout.py: {rooms - set(LEVEL)}"


def test_no_import_climbs_up():
    bad = [f"{where}: {src} imports {dst}" for src, dst, where in imports()
           if dst in LEVEL and LEVEL[dst] > LEVEL.get(src, 0)]
    assert not bad, "imports that climb back up:\n" + "\n".join(bad)


def test_rooms_form_no_cycle():
    edges = {}
    for src, dst, _ in imports():
        if dst in LEVEL and src != dst:
            edges.setdefault(src, set()).add(dst)
    seen, stack = set(), []

    def visit(n):
        if n in stack:
            pytest.fail("rooms import each other in a cycle: " + " -> ".join(stack[stack.index(n):] + [n]))
        if n in seen:
            return
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            visit(m)
        stack.pop()
        seen.add(n)

    for n in sorted(edges):
        visit(n)


def test_engine_knows_no_domain():
    bad = [f"{where}: provision imports {dst}" for src, dst, where in imports()
           if src == "provision" and dst in ("recipes", "models", "sdk", "services", "commands", "diagnose")]
    assert not bad, "\n".join(bad)


def test_the_inventory_imports_no_room_that_reads_it():
    """The inventory is read by provision, diagnose, models and the commands; what it checks for them at load (the
    URL vars, installer, model_source) lives in it (inventory/varchecks.py, model.py) and the plans read it from
    there.  Borrowed from provision instead, it made a cycle (withdrawn in 11f9f76e): named here by file and line."""
    readers = {src for src, dst, _ in imports() if dst == "inventory"}
    assert {"provision", "models"} <= readers
    bad = [f"{where}: inventory imports {dst}" for src, dst, where in imports()
           if src == "inventory" and dst in readers]
    assert not bad, "\n".join(bad)
