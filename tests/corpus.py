"""The diagnose corpus (tests/fixtures/diagnose/corpus): loading it and judging one case.

Shared by tests/diagnose/test_corpus.py and bench/diagnose_corpus.py, so that the recall the
bench prints is the one the tests hold the table to.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import yaml

from ocrdeploy.diagnose import scanner
from ocrdeploy.diagnose.engine import wire_rules
from ocrdeploy.diagnose.table import load_table

CORPUS = Path(__file__).parent / "fixtures" / "diagnose" / "corpus"
LOGS = Path(__file__).parent / "fixtures" / "diagnose" / "logs"
ENGINES = ["grep", "python"] + (["hyperscan"] if scanner.hyperscan is not None else [])


def load() -> dict:
    """cases, near_misses, unrecognised (each item knows its file) and the benign log list."""
    out = {"cases": [], "near_misses": [], "unrecognised": [], "benign": []}
    for path in sorted(CORPUS.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for key in out:
            for item in doc.get(key) or []:
                item["_file"] = path.name
                out[key].append(item)
    return out


def load_file(path: Path) -> dict:
    """One corpus-shaped file alone (a held-out batch: never part of load())."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    out = {"cases": [], "near_misses": [], "unrecognised": [], "benign": [], "note": doc.get("note", "")}
    for key in ("cases", "near_misses", "unrecognised", "benign"):
        for item in doc.get(key) or []:
            item["_file"] = path.name
            out[key].append(item)
    return out


def training_sets(through: int) -> list:
    """What the learned parts of the diagnose train on (bench/build_lead_words.py, build_lead_model.py and
    build_doc_model.py): the
    corpus, then held-out batches 1..through (each scored blind before it is taken), a batch item whose thread the
    corpus or rules.yaml cite left out (the corpus holds it already)."""
    data = load()
    cited = cited_threads(data)
    sets = [data]
    for n in range(1, through + 1):
        path = CORPUS.parent / "heldout" / f"batch{n}.yaml"
        if path.exists():
            sets.append(without_cited(load_file(path), cited)[0])
    return sets


DERIVED_FILE = "derived.yaml"


def is_real(case) -> bool:
    """A case copied from a public thread: not a guide wording (reconstructed from the seeds) and not a
    source-derived one (a tool's format string filled in, derived.yaml): those prove a pattern, not a recall."""
    return not (case.get("guide") or case.get("derived"))


def thread_of(item) -> str:
    """The public thread a case comes from: its URL without scheme, fragment or query (else its source text)."""
    src = str(item.get("source") or item.get("file") or "")
    m = re.search(r"https?://[^\s)\"'#?]+", src)
    return _url_key(m.group(0)) if m else src.lower()


def _url_key(url: str) -> str:
    return re.sub(r"^https?://(www\.)?", "", url).rstrip("/.,`'\"").lower()


def cited_threads(data: dict | None = None, rules_text: str | None = None) -> set:
    """Every thread the corpus or the table itself cites: a held-out item from one of them was not unseen."""
    from ocrdeploy.diagnose.table import BUILTIN

    data = load() if data is None else data
    out = {thread_of(i) for key in ("cases", "near_misses", "unrecognised", "benign") for i in data.get(key) or []}
    text = BUILTIN.read_text(encoding="utf-8") if rules_text is None else rules_text
    out |= {_url_key(u) for u in re.findall(r"https?://[^\s)\"'#?]+", text)}
    return {t for t in out if "/" in t}


def without_cited(batch: dict, cited: set) -> tuple[dict, list]:
    """The held-out batch without the items whose thread is cited (and the threads left out, sorted)."""
    kept, dropped = {}, set()
    for key, items in batch.items():
        if not isinstance(items, list):
            kept[key] = items
            continue
        kept[key] = []
        for item in items:
            if thread_of(item) in cited:
                dropped.add(thread_of(item))
            else:
                kept[key].append(item)
    return kept, sorted(dropped)


def text_of(item) -> bytes:
    if "file" in item:
        return (LOGS / item["file"]).read_bytes()
    return item["log"].replace("\\e", "\x1b").encode("utf-8")


class Scanner:
    """Scans case texts with the built-in table, one temp file per scan."""

    def __init__(self):
        self.rules = load_table()
        self.wire = wire_rules(self.rules)
        self.ids = {r.id for r in self.rules}
        self._dir = tempfile.TemporaryDirectory(prefix="ocrdeploy-corpus-")

    def scan(self, item, engine: str) -> dict:
        path = Path(self._dir.name) / "case.log"
        path.write_bytes(text_of(item))
        # as `inv diagnose --log` reads a file it is given: a text about errors keeps its findings as quotes
        return scanner.judge_document(scanner.scan(str(path), self.wire, engine=engine), str(path))

    def findings(self, log: str, engine: str) -> dict:
        """Each error finding's entry id and the indexes of the patterns that matched it."""
        report = self.scan({"log": log}, engine)
        return {f["id"]: f["patterns"] for f in report["findings"]}

    def alone(self, log: str, engine: str, entry: str, note=None) -> list:
        """The indexes of `entry`'s patterns that matched, once the test holds `entry` as the log's only error finding."""
        found = self.findings(log, engine)
        assert set(found) == {entry}, found if note is None else (note, found)
        return found[entry]

    def close(self):
        self._dir.cleanup()


def case_log(data: dict, entry: str, thread: str) -> str:
    """The log of the real corpus case of `entry` whose source names `thread`: how a test cites a corpus case."""
    return next(c["log"] for c in data["cases"] if c.get("entry") == entry and thread in c["source"])


def found(report) -> dict:
    return {f["id"]: f for f in report["findings"] + report["harmless"]}


def judge_case(case, report, any_pattern=False) -> str | None:
    """None when the case passes: its entry found, through the pattern it is written for (any of the
    entry's patterns for a held-out case: the right entry is what a user needs)."""
    hits = found(report)
    f = hits.get(case["entry"])
    if f is None:
        return f"{case['entry']} not found (found {sorted(hits)})"
    if not any_pattern and case["pattern"] not in f["patterns"]:
        return f"{case['entry']} found through pattern(s) {f['patterns']}, not {case['pattern']}"
    wrong = [other for other in case.get("not", []) if other in hits]
    if wrong:
        return f"{case['entry']} found, but also {wrong} (they should be overridden)"
    if not any_pattern:
        # a corpus case names its own entry and no other finding, unless the log holds that failure too (`also`):
        # an entry loosened on purpose or by mistake shows up on the other entries' cases, not only on its own
        named = {f["id"] for f in report["findings"]} - {case["entry"]}
        also = set(case.get("also", []))
        if named - also:
            return f"{case['entry']} found, but also {sorted(named - also)} (not in the case's `also`)"
        if also - named:
            return f"{case['entry']} found, but `also` lists {sorted(also - named)}, which the scan no longer finds"
    return None


def judge_near_miss(item, report) -> str | None:
    hits = found(report)
    wrong = [e for e in item["not"] if e in hits]
    return f"near-miss produced {wrong}" if wrong else None


def judge_unrecognised(item, report) -> str | None:
    """A real failure no entry names: never clean, exit 3 with the line of the expected class."""
    if report["findings"]:
        return f"expected no known entry, found {[f['id'] for f in report['findings']]}"
    classes = [u.get("class") for u in report["unrecognised"]]
    if item["class"] == "any" and classes:
        return None
    if item["class"] not in classes:
        return f"expected an unrecognised {item['class']} line, got {classes or 'a clean report'}"
    return None


def judge_benign(report) -> str | None:
    """A healthy log: no error or warning finding, no unrecognised error (harmless is fine)."""
    bad = [f["id"] for f in report["findings"]] + [u["text"][:80] for u in report["unrecognised"]]
    return f"false alarm: {bad}" if bad else None


def family_tests(cases: list, wordings: list, quiet: list, near: list) -> tuple:
    """The four checks of a round that widened entries by their key tokens, over its own tables, so each round's test
    module binds them rather than writing the same four bodies again: every new corpus case is named through its new
    pattern (`cases`: entry, pattern index, thread), every wording through its pattern (`wordings`: entry, pattern
    index, line), lines left to other entries stay out (`quiet`: entry, line), and the round's near-misses stay quiet
    (`near`: entry, thread), each on every scan engine. Returns the four test functions, in that order."""
    import pytest

    scan, data = Scanner(), load()

    @pytest.mark.parametrize("engine", ENGINES)
    @pytest.mark.parametrize("entry,pattern,thread", cases)
    def test_each_new_case_is_named_through_its_new_pattern(engine, entry, pattern, thread):
        assert pattern in scan.alone(case_log(data, entry, thread), engine, entry, thread)

    @pytest.mark.parametrize("engine", ENGINES)
    @pytest.mark.parametrize("entry,pattern,line", wordings)
    def test_each_wording_is_named_through_its_pattern(engine, entry, pattern, line):
        assert pattern in scan.alone(line + "\n", engine, entry)

    @pytest.mark.parametrize("engine", ENGINES)
    @pytest.mark.parametrize("entry,line", quiet)
    def test_lines_left_to_others_stay_out_of_the_entry(engine, entry, line):
        assert entry not in scan.findings(line + "\n", engine)

    @pytest.mark.parametrize("engine", ENGINES)
    @pytest.mark.parametrize("entry,thread", near)
    def test_the_near_misses_stay_quiet(engine, entry, thread):
        item = next(i for i in data["near_misses"] if thread in i["source"])
        assert entry in item["not"] and entry not in scan.findings(item["log"], engine)

    return (test_each_new_case_is_named_through_its_new_pattern, test_each_wording_is_named_through_its_pattern,
            test_lines_left_to_others_stay_out_of_the_entry, test_the_near_misses_stay_quiet)


def pattern_hits(rule, line: str) -> list:
    """The indexes of `rule`'s patterns that match `line`, [] when a veto (`unless`) holds; a matching line must hold
    one of the entry's literals (else the scanner never runs the regex on it). For line-by-line tests of a widened
    entry against its own patterns and vetoes, without the document model."""
    if any(re.search(u, line) for u in rule.unless):
        return []
    found = [i for i, p in enumerate(rule.patterns) if re.search(p, line)]
    if found:
        assert any(lit in line.lower() for lit in rule.literals), line
    return found
