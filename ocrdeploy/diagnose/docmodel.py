"""Whether a whole text reads as a text ABOUT errors (a pull request, a how-to page, a feature request, release
notes) rather than a run's log, by a linear model fitted on the corpus and the held-out batches.

The scanner's page and prose vetoes are shapes written by hand; the false alarms collected blind after them are
texts in shapes they were not shown (other languages, other sites).  The words of the whole text generalise
better: the model is fitted by bench/build_doc_model.py with scikit-learn and shipped as numbers
(doc_model.json); this module scores a text with them in plain Python, the same arithmetic as scikit-learn's
TfidfVectorizer (lower case, TOKEN, words and word pairs, 1 + log of the count, times the idf, scaled to unit
length) and LogisticRegression (the weighted sum, the intercept, the logistic).  The build checks the two agree.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path

MODEL = Path(__file__).with_name("doc_model.json")
# words of two characters or more (any script), and the marks that shape a page or a diff (headings, quotes, list
# and table rules, code fences)
TOKEN = r"(?u)\b\w\w+\b|[#*>`|\-]{1,3}"
_TOKEN = re.compile(TOKEN)
MAX_CHARS = 1 << 20     # past this a text is a log, not a page (scanner.PAGE_MAX_BYTES); and it bounds the work
# A text about an error says something in sentences; a log without one sentence is a log, whatever its words (a pip
# summary is a run's line, however many healthy logs the model saw it in): eight words or more ending as a sentence
# ends, or twelve CJK characters ending with a CJK full stop, in a line of up to SENTENCE_MAX characters
_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
SENTENCE_MAX = 2000


def has_sentence(text: str) -> bool:
    for line in text.splitlines():
        line = line.rstrip()
        if not line or len(line) > SENTENCE_MAX:
            continue
        if line[-1] in ".!?:;)" and len(_WORD.findall(line)) >= 8:
            return True
        if line[-1] in "。！？：；" and len(_CJK.findall(line)) >= 12:
            return True
    return False


@lru_cache(maxsize=2)
def load(path: Path = MODEL) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def probability(text: str, model: dict) -> float:
    """The model's probability that `text` is a text about errors, not a run's log."""
    terms = model["terms"]
    tokens = _TOKEN.findall(text.lower())
    counts: dict = {}
    for t in tokens:
        if t in terms:
            counts[t] = counts.get(t, 0) + 1
    for a, b in zip(tokens, tokens[1:]):
        pair = a + " " + b
        if pair in terms:
            counts[pair] = counts.get(pair, 0) + 1
    weights = {t: (1.0 + math.log(n)) * terms[t][0] for t, n in counts.items()}
    norm = math.sqrt(sum(w * w for w in weights.values()))
    z = model["intercept"] + (sum(w * terms[t][1] for t, w in weights.items()) / norm if norm else 0.0)
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def about_errors(text: str, path: Path | None = None) -> float | None:
    """The probability when it reaches the model's threshold (the text reads as one about errors), else None;
    None too for a text past MAX_CHARS or when no model is shipped."""
    model = load(path or MODEL)
    if model is None or len(text) > MAX_CHARS or not has_sentence(text):
        return None
    p = probability(text, model)
    return p if p >= model["threshold"] else None
