"""Build ocrdeploy/diagnose/lead_model.json: the learned half of the 'looks like' lead.

Usage: pip install scikit-learn; python bench/build_lead_model.py [--check] [--through N --out FILE]

The lead (engine.looks_like) names the entries nearest to a failure line the table does not recognise.  Its key
tokens are each entry's own words; a multinomial logistic regression over the words of every real failing run of
the corpus and the held-out batches 1..LEAD_THROUGH (each batch scored blind before it was taken), labelled with
its entry, ranks the entries by all the words around a failure.  Fused with the key-token lead (engine.LEARNED_MIX):
chosen on batches 125-136 held out of a model of 1-124, measured on batches 137-142 held out of a model of 1-136
(VARIANTS.md, "Stop 52").

scikit-learn fits it (TfidfVectorizer, LogisticRegression: the library's job); the package ships, for each entry,
the KEEP words of largest positive weight with their idf, and ocrdeploy/diagnose/leadmodel.py scores a text with
them in plain Python (no scikit-learn at run time).  The shipped model is the pruned one, so the held-out figures
are measured with leadmodel.py itself (bench/diagnose_corpus.py --lead-model FILE), not with scikit-learn.

--check exits 1 when the shipped model was trained on other data than today's (its `data` digest);
tests/diagnose/test_leadmodel.py runs the same comparison without scikit-learn.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
MODEL = ROOT / "ocrdeploy" / "diagnose" / "lead_model.json"
from build_lead_words import LEAD_THROUGH  # noqa: E402  (one cut for both halves of the lead)

# Chosen on batches 125-136 held out of a model of the corpus and batches 1-124 (VARIANTS.md, "Stop 52"): words
# alone (pairs: no better, twice the size), C 10 (3: the same), the 300 words of largest weight per entry (100 and
# 600: within one case)
KEEP = 300
C = 10.0


def training(through: int = LEAD_THROUGH) -> tuple[list, list]:
    """(texts, entries): the real cases of the corpus, then of batches 1..through (corpus.training_sets)."""
    import corpus

    texts, entries = [], []
    for data in corpus.training_sets(through):
        for case in data["cases"]:
            if case.get("entry") and corpus.is_real(case):
                texts.append(corpus.text_of(case).decode("utf-8", "replace"))
                entries.append(case["entry"])
    return texts, entries


def digest(texts: list, entries: list) -> str:
    h = hashlib.sha256()
    for text, entry in zip(texts, entries):
        h.update(f"{entry}:{len(text)}:".encode() + text.encode("utf-8", "replace"))
    return h.hexdigest()[:16]


def fit(texts: list, entries: list) -> dict:
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    from ocrdeploy.diagnose.leadmodel import TOKEN

    vec = TfidfVectorizer(token_pattern=TOKEN, lowercase=True, sublinear_tf=True, min_df=2, dtype=np.float64)
    x = vec.fit_transform(texts)
    model = LogisticRegression(C=C, max_iter=5000).fit(x, entries)
    names = vec.get_feature_names_out()
    terms: dict = {}    # word -> [idf, [entry's index in "entries", weight], ...]: four decimals, a third of the size
    for ci in range(len(model.classes_)):
        coef = model.coef_[ci]
        for j in np.argsort(-coef, kind="stable")[:KEEP]:
            if coef[j] > 0:
                terms.setdefault(str(names[j]), [round(float(vec.idf_[j]), 4)]).append([ci, round(float(coef[j]), 4)])
    return {"entries": [str(e) for e in model.classes_], "terms": terms}


def main():
    import argparse

    ap = argparse.ArgumentParser(description="build the learned half of the diagnose's 'looks like' lead")
    ap.add_argument("--check", action="store_true", help="exit 1 when the shipped model was trained on other data")
    ap.add_argument("--through", type=int, default=LEAD_THROUGH, help="the last held-out batch trained on")
    ap.add_argument("--out", type=Path, help="write here, not the shipped model")
    args = ap.parse_args()
    texts, entries = training(args.through)
    data = digest(texts, entries)
    if args.check:
        shipped = json.loads(MODEL.read_text(encoding="utf-8")).get("data") if MODEL.exists() else None
        print("lead_model.json is fresh" if shipped == data else
              "lead_model.json is stale: pip install scikit-learn; python bench/build_lead_model.py")
        sys.exit(0 if shipped == data else 1)
    model = {"data": data, "through": args.through, "texts": len(texts), **fit(texts, entries)}
    out = args.out or MODEL
    out.write_text(json.dumps(model, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(model['terms'])} words for {len(model['entries'])} entries from {len(texts)} runs, "
          f"{out.stat().st_size} bytes")


if __name__ == "__main__":
    main()
