"""The error table: load, validate and prepare it for the scanner.

Entries live in rules.yaml beside this file; users add their own with --rules.
Every pattern gets the literal strings that must appear in a line it can match
(derived from the regex, or given as `literals:`); the scanner looks for those
literals first with a multi-string search and runs the regexes only on the few
lines that contain one.  That is what makes a scan of a multi-GB log cost about
as much as reading it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

try:  # Python 3.11+
    import re._parser as sre_parse  # type: ignore[import-not-found]
    from re import _constants as sre_c  # type: ignore[attr-defined]
except ImportError:  # Python 3.10
    import sre_constants as sre_c  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

from ..errors import UsageError

BUILTIN = Path(__file__).with_name("rules.yaml")
STAGES = ("install", "compile", "start", "parse", "client")
SEVERITIES = ("error", "warning", "harmless")
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
MIN_LITERAL = 3
_FIELDS = {"id", "stage", "severity", "patterns", "literals", "unless", "levels", "not_levels",
           "overrides", "cause", "fix", "remedy", "title"}
REMEDIES = ("relink-cuda", "reinstall-transformers", "uninstall-torchcodec", "uninstall-flashinfer-cubin",
            "install-pypdfium2", "install-cccl", "restart-enforce-eager", "lower-gpu-memory-utilization",
            "retry-half-jobs", "deepseek-oom-downgrade")


@dataclass
class Rule:
    id: str
    stage: str
    severity: str
    patterns: list[str]
    literals: list[str]
    cause: str
    fix: str
    title: str = ""
    unless: list[str] = field(default_factory=list)
    levels: list[str] = field(default_factory=list)
    not_levels: list[str] = field(default_factory=list)
    overrides: list[str] = field(default_factory=list)
    remedy: str | None = None
    origin: str = "builtin"

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in (
            "id", "stage", "severity", "patterns", "literals", "cause", "fix", "title", "unless", "levels",
            "not_levels", "overrides", "remedy", "origin")}


# ------------------------------------------------------------ literal extraction

def _seq_literals(items) -> list[str]:
    """Runs of plain characters that every match of this sequence contains."""
    runs, cur = [], []

    def flush():
        if cur:
            runs.append("".join(cur))
            cur.clear()

    for op, av in items:
        if op is sre_c.LITERAL:
            cur.append(chr(av))
        elif op is sre_c.SUBPATTERN:
            sub = av[-1]
            inner = list(sub)
            # A required group: its own sequence is part of ours.
            if len(inner) == 1 and inner[0][0] is sre_c.BRANCH:
                flush()
                runs.append(_branch_literals(inner[0][1][1]))
            else:
                flush()
                runs.extend(_seq_literals(inner))
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT) and av[0] >= 1:
            flush()
            runs.extend(_seq_literals(list(av[2])))
            flush()
        elif op is sre_c.AT:
            continue  # anchors consume nothing
        elif op is sre_c.BRANCH:
            flush()
            runs.append(_branch_literals(av[1]))
        else:
            flush()
    flush()
    return runs


def _branch_literals(branches):
    """Alternatives: each needs a literal of its own; returns a tuple (any of them)."""
    options = []
    for seq in branches:
        best = _best(_seq_literals(list(seq)))
        if best is None:
            return None
        options.extend(best if isinstance(best, tuple) else (best,))
    return tuple(options)


def _score(item) -> int:
    if isinstance(item, tuple):
        return min((len(s) for s in item), default=0)
    return len(item) if item else 0


def _best(runs):
    runs = [r for r in runs if r]
    if not runs:
        return None
    return max(runs, key=_score)


def derive_literals(pattern: str) -> list[str] | None:
    """The strings of which at least one is in every line the pattern matches, or None."""
    parsed = sre_parse.parse(pattern)
    items = list(parsed)
    if len(items) == 1 and items[0][0] is sre_c.BRANCH:
        best = _branch_literals(items[0][1][1])
    else:
        best = _best(_seq_literals(items))
    if best is None or _score(best) < MIN_LITERAL:
        return None
    lits = list(best) if isinstance(best, tuple) else [best]
    return sorted({s.lower() for s in lits})


# ------------------------------------------------------------ loading

def _where(source: str, entry, key=None) -> str:
    line = None
    if hasattr(entry, "line_of"):
        line = entry.line_of(key) if key is not None else entry.line
    return f"{source}:{line}" if line else source


def _str_list(value, source, entry, key) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{_where(source, entry, key)}: '{key}' must be a string or a list of strings")
    return list(value)


def parse_rules(data, source: str, origin: str) -> list[Rule]:
    entries = data.get("entries") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise UsageError(f"{source}: a rules file holds a list of entries (or 'entries:' with a list)")
    rules = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise UsageError(f"{source}: every entry must be a mapping, got {type(entry).__name__}")
        unknown = set(entry) - _FIELDS
        if unknown:
            key = sorted(unknown)[0]
            raise UsageError(f"{_where(source, entry, key)}: unknown field {key!r} "
                             f"(known: {', '.join(sorted(_FIELDS))})")
        for key in ("id", "stage", "patterns", "cause", "fix"):
            if not entry.get(key):
                raise UsageError(f"{_where(source, entry)}: entry {entry.get('id', '?')!r} lacks {key!r}")
        rid = entry["id"]
        if not isinstance(rid, str) or not re.fullmatch(r"[a-z0-9][a-z0-9.-]*", rid):
            raise UsageError(f"{_where(source, entry, 'id')}: id {rid!r} must be lowercase letters, digits, '-' and '.'")
        if entry["stage"] not in STAGES:
            raise UsageError(f"{_where(source, entry, 'stage')}: {rid}: stage {entry['stage']!r} is not one of "
                             f"{', '.join(STAGES)}")
        severity = entry.get("severity", "error")
        if severity not in SEVERITIES:
            raise UsageError(f"{_where(source, entry, 'severity')}: {rid}: severity {severity!r} is not one of "
                             f"{', '.join(SEVERITIES)}")
        patterns = _str_list(entry["patterns"], source, entry, "patterns")
        unless = _str_list(entry.get("unless"), source, entry, "unless")
        for key, pats in (("patterns", patterns), ("unless", unless)):
            for p in pats:
                try:
                    re.compile(p)
                except re.error as exc:
                    raise UsageError(f"{_where(source, entry, key)}: {rid}: bad regex {p!r}: {exc}")
        literals = [s.lower() for s in _str_list(entry.get("literals"), source, entry, "literals")]
        if not literals:
            for p in patterns:
                derived = derive_literals(p)
                if derived is None:
                    raise UsageError(
                        f"{_where(source, entry, 'patterns')}: {rid}: pattern {p!r} has no literal of "
                        f"{MIN_LITERAL}+ characters that every match contains; add 'literals:' to the entry")
                literals.extend(derived)
        elif any(len(s) < MIN_LITERAL for s in literals):
            raise UsageError(f"{_where(source, entry, 'literals')}: {rid}: literals must be {MIN_LITERAL}+ characters")
        levels = _str_list(entry.get("levels"), source, entry, "levels")
        not_levels = _str_list(entry.get("not_levels"), source, entry, "not_levels")
        for lv in levels + not_levels:
            if lv not in LEVELS:
                raise UsageError(f"{_where(source, entry)}: {rid}: level {lv!r} is not one of {', '.join(LEVELS)}")
        remedy = entry.get("remedy")
        if remedy is not None and remedy not in REMEDIES:
            raise UsageError(f"{_where(source, entry, 'remedy')}: {rid}: unknown remedy {remedy!r} "
                             f"(known: {', '.join(REMEDIES)})")
        rules.append(Rule(
            id=rid, stage=entry["stage"], severity=severity, patterns=patterns,
            literals=sorted(set(literals)), cause=str(entry["cause"]).strip(), fix=str(entry["fix"]).strip(),
            title=str(entry.get("title") or rid), unless=unless, levels=levels, not_levels=not_levels,
            overrides=_str_list(entry.get("overrides"), source, entry, "overrides"), remedy=remedy,
            origin=origin))
    return rules


def load_table(extra: list[str] | None = None) -> list[Rule]:
    """The built-in table plus user rule files; ids must be unique, overrides must exist."""
    from ..inventory.yamlfile import load_yaml

    rules = parse_rules(load_yaml(BUILTIN), str(BUILTIN.name), "builtin")
    for path in extra or []:
        rules.extend(parse_rules(load_yaml(Path(path)), str(path), str(path)))
    seen: dict[str, Rule] = {}
    for r in rules:
        if r.id in seen:
            raise UsageError(f"{r.origin}: rule id {r.id!r} is defined twice (also in {seen[r.id].origin})")
        seen[r.id] = r
    for r in rules:
        for o in r.overrides:
            if o not in seen:
                raise UsageError(f"{r.origin}: rule {r.id!r} overrides unknown rule {o!r}")
    return rules
