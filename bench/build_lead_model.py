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

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
MODEL = ROOT / "ocrdeploy" / "diagnose" / "lead_model.json"
import learned_build  # noqa: E402
from build_lead_words import LEAD_THROUGH  # noqa: E402  (one cut for both halves of the lead)
from learned_build import digest  # noqa: E402,F401  (the tests check the shipped model with it)

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
    learned_build.main("build the learned half of the diagnose's 'looks like' lead", MODEL, LEAD_THROUGH, training,
                       fit, "build_lead_model.py")


if __name__ == "__main__":
    main()
