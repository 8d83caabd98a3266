"""Which entries an unrecognised failure line reads most like, by a linear model fitted on the real cases of the
corpus and the held-out batches: the learned half of the 'looks like' lead (engine.looks_like).

The lead's key tokens (an entry's pattern words and the words its cases share, engine.lead_index) name the right
entry first for about half the failures the table misses; a multinomial logistic regression over the words of
8000 real failing runs, each labelled with its entry, ranks better where the words are not the entry's own (a
wrapper's, another tool's, another language's).  bench/build_lead_model.py fits it with scikit-learn and ships, for
each entry, the words that weigh most for it (lead_model.json: each word's idf, then its entries' indexes and
weights); this module scores a text with them in plain Python:
lower case, TOKEN, docmodel.tfidf over the shipped words, each entry's weighted sum, and a softmax over the entries.  A lead, never a finding: the table's patterns alone make findings.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from . import docmodel

MODEL = Path(__file__).with_name("lead_model.json")
# words of two characters or more in any script, with the dots, pluses and dashes inside a name (libcudart.so.12,
# c++17, flash-attn) kept in it
TOKEN = r"(?u)\b\w[\w.+-]*\w\b"
_TOKEN = re.compile(TOKEN)
MAX_CHARS = 1 << 16     # a line and the lines shown about it; past this the text is cut (the work stays bounded)


def load(path: Path = MODEL) -> dict | None:
    """The shipped numbers (None when absent or unreadable: the key tokens alone lead), read once per path."""
    return docmodel.load(path)


def probabilities(text: str, model: dict) -> dict:
    """The probability, among the entries whose shipped words `text` holds, that `text` (a failure line and the lines
    about it) is a run of that entry's failure; {} when it holds none."""
    terms = model["terms"]
    counts: dict = {}
    for t in _TOKEN.findall(text[:MAX_CHARS].lower()):
        if t in terms:
            counts[t] = counts.get(t, 0) + 1
    if not counts:
        return {}
    entries = model["entries"]
    z: dict = {}     # the entries a shipped word of the text speaks for (the others' words are not shipped: not 0)
    for t, w in docmodel.tfidf(counts, terms).items():
        for i, coef in terms[t][1:]:
            z[entries[i]] = z.get(entries[i], 0.0) + w * coef
    top = max(z.values())
    e = {entry: math.exp(v - top) for entry, v in z.items()}
    total = sum(e.values())
    return {entry: v / total for entry, v in e.items()}
