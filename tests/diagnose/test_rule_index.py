"""The shortcuts the scanner takes on each candidate line give the answers of the slow way.

RuleIndex finds the rules whose literals a line holds in one pass (hyperscan, or a trie regex
without it); the hint words in front of the safety net's regexes skip regexes that cannot
match. Both are only allowed to be faster: every line of the corpus and of the held-out
batches, and lines crafted around overlapping literals, must get the same rules and the same
safety-net class as the plain loop and the bare regexes give.
"""

import time
from pathlib import Path

import pytest

import corpus
from ocrdeploy.diagnose import scanner
from ocrdeploy.diagnose.engine import wire_rules
from ocrdeploy.diagnose.table import load_table

HELDOUT = Path(corpus.CORPUS).parent / "heldout"


def _all_lines():
    items = []
    data = corpus.load()
    for key in ("cases", "near_misses", "unrecognised"):
        items += data[key]
    for path in sorted(HELDOUT.glob("batch*.yaml")):
        part = corpus.load_file(path)
        for key in ("cases", "near_misses", "unrecognised"):
            items += part[key]
    lines = set()
    for item in items:
        for raw in corpus.text_of(item).split(b"\n"):
            for seg in scanner.clean(raw):
                lines.add(scanner.unwrap(seg))
    return sorted(lines)


LINES = _all_lines()
RULES = wire_rules(load_table())
COMPILED = [scanner.CompiledRule(r) for r in RULES]


def _crafted():
    """Literals alone, in upper case, glued to each other (one's end overlapping the next's start), one
    inside a longer one, and next to characters whose lower case is longer than they are."""
    lits = sorted({lit for r in COMPILED for lit in r.literals})
    out = []
    for i, lit in enumerate(lits):
        nxt = lits[(i * 7 + 3) % len(lits)]
        out += [lit, lit.upper(), "x" + lit + "x", lit + nxt, lit[:-1] + nxt, lit + lit[1:],
                "İ" + lit + "ß", lit[: len(lit) // 2]]
    return out


BACKENDS = [False] + ([True] if scanner.hyperscan is not None else [])


@pytest.mark.parametrize("use_hyperscan", BACKENDS, ids=lambda b: "hyperscan" if b else "trie")
def test_the_index_names_the_rules_the_loop_names(use_hyperscan):
    index = scanner.RuleIndex(COMPILED, lazy=0, use_hyperscan=use_hyperscan)
    reference = scanner.RuleIndex(COMPILED, lazy=10 ** 9)
    checked = 0
    for line in LINES + _crafted():
        low = line.lower()
        want = [r.id for r in reference.loop(low)]
        assert [r.id for r in index.find(low)] == want, line[:200]
        checked += bool(want)
    assert checked > 1000       # the lines did reach rules: the comparison was not of empty lists


def test_the_index_is_built_only_for_a_log_with_many_candidate_lines():
    index = scanner.RuleIndex(COMPILED, lazy=3)
    for _ in range(3):
        index.find("nothing to see")
    assert index.find == index.loop
    index.find("cuda error: out of memory")
    assert index.find != index.loop
    assert [r.id for r in index.find("cuda out of memory")] == [r.id for r in index.loop("cuda out of memory")]


def test_a_scan_with_the_index_finds_what_the_loop_finds(tmp_path):
    """One log past the lazy threshold, scanned once with the index and once with the loop alone."""
    log = tmp_path / "mixed.log"
    lines = [ln for ln in LINES if ln.strip()][:4000]
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fast = scanner.scan(str(log), RULES, engine="python")
    old = scanner.RuleIndex.LAZY
    scanner.RuleIndex.LAZY = 10 ** 9
    try:
        slow = scanner.scan(str(log), RULES, engine="python")
    finally:
        scanner.RuleIndex.LAZY = old
    assert fast["candidates"] > scanner.RuleIndex.LAZY
    assert fast["findings"] == slow["findings"] and fast["unrecognised"] == slow["unrecognised"]
    assert fast["findings"]


def _bare_generic(text, only=None):
    for name, rx in scanner.GENERIC_CLASSES:
        if (only is None or name in only) and rx.search(text):
            return name
    return None


def _bare_fatal(text):
    for name, rx in scanner.FATAL_CLASSES:
        if rx.search(text):
            return name
    return None


# compilers' error lines in the shapes the hint words must let through, whether or not the corpus holds one today:
# rustc's coded error, gcc's fatal error in German, French, Spanish and Chinese, upper and mixed case
COMPILER_LINES = [
    "error[E0599]: no method named `cuda` found for struct `Device` in the current scope",
    "cuda_ops.cpp:3:10: schwerwiegender Fehler: cuda.h: Datei oder Verzeichnis nicht gefunden",
    "cuda_ops.cpp:3:10: erreur fatale : cuda.h : Aucun fichier ou dossier de ce type",
    "cuda_ops.cpp:3:10: erreur fatale: cuda.h : Aucun fichier ou dossier de ce type",
    "/usr/include/stdc-predef.h:40:1: error fatal: cuda_runtime.h: No existe el archivo o el directorio",
    "cuda_ops.cpp:3:10: 致命错误：cuda.h：没有那个文件或目录",
    "ld: FATAL ERROR occurred while linking",
    "Error: the build stopped",
]


def test_the_hint_words_never_hide_a_class_the_regexes_would_report():
    lines = LINES + COMPILER_LINES
    assert all(_bare_generic(ln) == "compiler-error" for ln in COMPILER_LINES)
    differ = [ln for ln in lines if scanner._generic(ln) != _bare_generic(ln)]
    assert not differ, differ[:5]
    differ = [ln for ln in lines if scanner.fatal_class(ln) != _bare_fatal(ln)]
    assert not differ, differ[:5]
    assert sum(_bare_generic(ln) is not None for ln in LINES) > 1000


@pytest.mark.parametrize("use_hyperscan", BACKENDS, ids=lambda b: "hyperscan" if b else "trie")
def test_a_line_of_literals_back_to_back_costs_milliseconds(use_hyperscan):
    """The worst line for the per-line pass is one where a literal starts at every few characters (each start is
    one more search); 16 KiB of the shortest literals, glued or spaced, must stay far from a slow path."""
    index = scanner.RuleIndex(COMPILED, lazy=0, use_hyperscan=use_hyperscan)
    lits = sorted({lit for r in COMPILED for lit in r.literals}, key=len)[:12]
    n = scanner.MAX_LINE
    for lit in lits:
        for unit in (lit, lit + " ", lit[:-1]):
            line = (unit * (n // len(unit) + 1))[:n]
            t = time.process_time()
            index.find(line)
            assert time.process_time() - t < 0.25, (lit, unit)
