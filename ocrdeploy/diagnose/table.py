"""The error table: load, validate and prepare it for the scanner.

Entries live in rules.yaml beside this file; users add their own with --rules.
Every pattern gets the literal strings that must appear in a line it can match
(derived from the regex, or given as `literals:`); the scanner looks for those
literals first with a multi-string search and runs the regexes only on the few
lines that contain one.  That is what makes a scan of a multi-GB log cost about
as much as reading it.
"""

from __future__ import annotations

import os
import re
import stat
import string
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
           "overrides", "cause", "fix", "remedy", "title", "preceded_by", "followed_by", "within", "reset_by",
           "context_on_line", "retried_by"}
# The only {names} a cause or fix may hold; engine.fix_context fills them with the host's values.
PLACEHOLDERS = ("vllm_env", "sdk_env", "tf_env", "transformers_src", "vllm_src", "cu13", "deps_dir", "workdir", "port")
MAX_WITHIN = 500
REMEDIES = ("relink-cuda", "reinstall-transformers", "uninstall-torchcodec", "uninstall-flashinfer-cubin",
            "install-pypdfium2", "install-cccl", "restart-enforce-eager", "lower-gpu-memory-utilization",
            "retry-half-jobs", "deepseek-oom-downgrade", "restart-no-flashinfer-sampler")


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
    preceded_by: list[str] = field(default_factory=list)
    followed_by: list[str] = field(default_factory=list)
    within: int = 20
    reset_by: list[str] = field(default_factory=list)
    context_on_line: bool = False
    retried_by: list[str] = field(default_factory=list)
    origin: str = "builtin"

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in (
            "id", "stage", "severity", "patterns", "literals", "cause", "fix", "title", "unless", "levels",
            "not_levels", "overrides", "remedy", "preceded_by", "followed_by", "within", "reset_by", "context_on_line",
            "retried_by", "origin")}


# ------------------------------------------------------------ cause and fix texts

def text_parts(text: str):
    """(literal text, placeholder name or None) pairs of a cause or fix; ValueError on a stray brace.

    The syntax is str.format's: {name} is a placeholder, {{ and }} are literal braces.
    """
    for literal, name, spec, conversion in string.Formatter().parse(text):
        if name is not None and (spec or conversion):
            raise ValueError(f"{{{name}...}} may not carry a format spec or conversion")
        yield literal, name


def check_text(text: str, where: str, rid: str, key: str) -> None:
    try:
        names = [name for _, name in text_parts(text) if name is not None]
    except ValueError as exc:
        raise UsageError(f"{where}: {rid}: {key}: {exc} (write {{{{ and }}}} for a literal brace)")
    for name in names:
        if name not in PLACEHOLDERS:
            raise UsageError(f"{where}: {rid}: {key}: unknown placeholder {{{name}}} (known: "
                             f"{', '.join('{' + p + '}' for p in PLACEHOLDERS)}; write {{{{ and }}}} for a literal "
                             f"brace)")


def fill(text: str, ctx: dict) -> str:
    """A validated text with its placeholders filled; unknown values read <NAME>. Never raises."""
    try:
        return "".join(literal + ("" if name is None else str(ctx.get(name) or f"<{name.upper()}>"))
                       for literal, name in text_parts(text))
    except ValueError:
        return text


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
            key = sorted(unknown, key=str)[0]
            raise UsageError(f"{_where(source, entry, key)}: unknown field {key!r} "
                             f"(known: {', '.join(sorted(_FIELDS))})")
        for key in ("id", "stage", "patterns", "cause", "fix"):
            if entry.get(key) in (None, "", []):
                raise UsageError(f"{_where(source, entry)}: entry {entry.get('id', '?')!r} lacks {key!r}")
        rid = entry["id"]
        if not isinstance(rid, str) or not re.fullmatch(r"[a-z0-9][a-z0-9.-]*", rid):
            raise UsageError(f"{_where(source, entry, 'id')}: id {rid!r} must be lowercase letters, digits, '-' and '.'")
        if not isinstance(entry["stage"], str) or entry["stage"] not in STAGES:
            raise UsageError(f"{_where(source, entry, 'stage')}: {rid}: stage {entry['stage']!r} is not one of "
                             f"{', '.join(STAGES)}")
        severity = entry.get("severity", "error")
        if not isinstance(severity, str) or severity not in SEVERITIES:
            raise UsageError(f"{_where(source, entry, 'severity')}: {rid}: severity {severity!r} is not one of "
                             f"{', '.join(SEVERITIES)}")
        patterns = _str_list(entry["patterns"], source, entry, "patterns")
        unless = _str_list(entry.get("unless"), source, entry, "unless")
        near = {key: _str_list(entry.get(key), source, entry, key) for key in ("preceded_by", "followed_by",
                                                                             "reset_by", "retried_by")}
        on_line = entry.get("context_on_line", False)
        if not isinstance(on_line, bool) or (on_line and not near["preceded_by"]):
            raise UsageError(f"{_where(source, entry, 'context_on_line')}: {rid}: context_on_line is true or false, "
                             f"and true needs preceded_by")
        within = entry.get("within", 20)
        if isinstance(within, bool) or not isinstance(within, int) or not 1 <= within <= MAX_WITHIN:
            raise UsageError(f"{_where(source, entry, 'within')}: {rid}: within must be a whole number of lines "
                             f"from 1 to {MAX_WITHIN}, got {within!r}")
        for key, pats in (("patterns", patterns), ("unless", unless), *near.items()):
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
        if remedy is not None and (not isinstance(remedy, str) or remedy not in REMEDIES):
            raise UsageError(f"{_where(source, entry, 'remedy')}: {rid}: unknown remedy {remedy!r} "
                             f"(known: {', '.join(REMEDIES)})")
        texts = {}
        for key in ("cause", "fix", "title"):
            value = entry.get(key) or (rid if key == "title" else "")
            if not isinstance(value, (str, int, float)):
                raise UsageError(f"{_where(source, entry, key)}: {rid}: {key!r} must be text")
            texts[key] = str(value).strip()
            check_text(texts[key], _where(source, entry, key), rid, key)
        rules.append(Rule(
            id=rid, stage=entry["stage"], severity=severity, patterns=patterns,
            literals=sorted(set(literals)), cause=texts["cause"], fix=texts["fix"],
            title=texts["title"], unless=unless, levels=levels, not_levels=not_levels,
            overrides=_str_list(entry.get("overrides"), source, entry, "overrides"), remedy=remedy,
            preceded_by=near["preceded_by"], followed_by=near["followed_by"], within=within,
            reset_by=near["reset_by"], context_on_line=on_line, retried_by=near["retried_by"], origin=origin))
    return rules


def load_table(extra: list[str] | None = None) -> list[Rule]:
    """The built-in table plus user rule files; ids must be unique, overrides must exist."""
    from ..inventory.yamlfile import load_yaml

    rules = parse_rules(load_yaml(BUILTIN), str(BUILTIN.name), "builtin")
    for path in extra or []:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            raise UsageError(f"{path}: not a regular file (a FIFO or device cannot hold rules)")
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
