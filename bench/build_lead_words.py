"""Build ocrdeploy/diagnose/lead_words.json: the words of each entry's real corpus cases, for the 'looks like' lead.

Usage: python bench/build_lead_words.py [--check]

The lead (engine.looks_like) names the entries nearest to an unrecognised line by the key tokens they share. An
entry's patterns spell one or two wordings of its failure; the logs of its corpus cases (tests/fixtures/diagnose/
corpus) spell the words that stand around it in real runs (the tool, the library, the model's family, the call
that failed). The lead runs on the controller without the corpus, so this script ships those words as a compact
table: for each entry, the words (engine._words, four letters or more, or a number of three digits or more) that
two or more of its cases' logs hold, each with the share of its cases that hold it (against a prior, PRIOR).
--check exits 1 when the shipped table is not the one the corpus gives (tests/diagnose/test_engine_edges.py runs
the same comparison).
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TABLE = ROOT / "ocrdeploy" / "diagnose" / "lead_words.json"
CORPUS = ROOT / "tests" / "fixtures" / "diagnose" / "corpus"
MIN_CASES = 2       # a word one case alone holds is that case's, not the entry's
# the share of an entry's cases that hold a word, as if it had PRIOR more cases that do not: two cases that both hold a
# word say less about the entry than forty of which half do
PRIOR = 8


def build() -> dict:
    import yaml

    from ocrdeploy.diagnose.engine import _lead_word, _words

    words: dict = defaultdict(Counter)
    cases: Counter = Counter()
    for path in sorted(CORPUS.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for case in doc.get("cases") or []:
            # real cases only: guide wordings are the seeds' words, source-derived ones a format string's
            if not case.get("entry") or not case.get("log") or case.get("guide") or case.get("derived"):
                continue
            cases[case["entry"]] += 1
            words[case["entry"]].update(w for w in _words(case["log"]) if _lead_word(w))
    out = {}
    for entry in sorted(words):
        kept = {w: round(n / (cases[entry] + PRIOR), 2) for w, n in sorted(words[entry].items()) if n >= MIN_CASES}
        if kept:
            out[entry] = kept
    return out


def dump(table: dict) -> str:
    return json.dumps(table, sort_keys=True, separators=(",", ":")) + "\n"


def main():
    text = dump(build())
    if "--check" in sys.argv[1:]:
        ok = TABLE.exists() and TABLE.read_text(encoding="utf-8") == text
        print("lead_words.json is fresh" if ok else "lead_words.json is stale: run python bench/build_lead_words.py")
        sys.exit(0 if ok else 1)
    TABLE.write_text(text, encoding="utf-8")
    table = json.loads(text)
    print(f"wrote {TABLE.relative_to(ROOT)}: {len(table)} entries, {sum(len(v) for v in table.values())} words, "
          f"{len(text)} bytes")


if __name__ == "__main__":
    main()
