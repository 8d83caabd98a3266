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

(stop 51) The cases of the held-out batches 1..LEAD_THROUGH count too, once each batch has been scored blind: six
times the corpus's real logs (tests/corpus.py's training_sets: an item whose thread the corpus or rules.yaml cite is
left out, the corpus holds it already).  Measured by building the table from the corpus and the batches before a
cut only (--through N, --out FILE) and scoring the later batches with it (bench/diagnose_corpus.py --lead-words
FILE): see VARIANTS.md, "Stop 51".  A new batch is scored blind first, then LEAD_THROUGH is raised to take it in.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TABLE = ROOT / "ocrdeploy" / "diagnose" / "lead_words.json"
LEAD_THROUGH = 289  # the last held-out batch whose cases the table takes (each scored blind before it was taken)
MIN_CASES = 2       # a word one case alone holds is that case's, not the entry's
# the share of an entry's cases that hold a word, as if it had PRIOR more cases that do not: two cases that both hold a
# word say less about the entry than forty of which half do (8 for the corpus alone; 16 with the batches' cases, chosen
# on the batches 115-124 held out of a table built from the corpus and batches 1-114: see VARIANTS.md, "Stop 51")
PRIOR = 16


def build(through: int = LEAD_THROUGH) -> dict:
    sys.path.insert(0, str(ROOT / "tests"))
    import corpus

    from ocrdeploy.diagnose.engine import _lead_word, _words

    words: dict = defaultdict(Counter)
    cases: Counter = Counter()
    # real cases only: guide wordings are the seeds' words, source-derived ones a format string's
    taken = [c for data in corpus.training_sets(through) for c in data["cases"]
             if c.get("entry") and c.get("log") and corpus.is_real(c)]
    for case in taken:
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
    import argparse

    ap = argparse.ArgumentParser(description="build the 'looks like' lead's table of words")
    ap.add_argument("--check", action="store_true", help="exit 1 when the shipped table is stale")
    ap.add_argument("--through", type=int, default=LEAD_THROUGH, help="the last held-out batch taken (a measurement)")
    ap.add_argument("--out", type=Path, help="write here, not the shipped table (with --through: a measurement)")
    args = ap.parse_args()
    text = dump(build(args.through))
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}: batches 1-{args.through} and the corpus")
        return
    if args.check:
        ok = TABLE.exists() and TABLE.read_text(encoding="utf-8") == text
        print("lead_words.json is fresh" if ok else "lead_words.json is stale: run python bench/build_lead_words.py")
        sys.exit(0 if ok else 1)
    TABLE.write_text(text, encoding="utf-8")
    table = json.loads(text)
    print(f"wrote {TABLE.relative_to(ROOT)}: {len(table)} entries, {sum(len(v) for v in table.values())} words, "
          f"{len(text)} bytes")


if __name__ == "__main__":
    main()
