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


def has_sentence(text: str, is_log=None) -> bool:
    """Whether a line of `text` is a sentence; a line `is_log` takes for a log's (a level, a traceback frame) is not."""
    for line in text.splitlines():
        line = line.rstrip()
        if not line or len(line) > SENTENCE_MAX or (is_log is not None and is_log(line)):
            continue
        if line[-1] in ".!?:;)" and len(_WORD.findall(line)) >= 8:
            return True
        if line[-1] in "。！？：；" and len(_CJK.findall(line)) >= 12:
            return True
    return False


# (stop 51, the review) A user's bug report pasted whole is a run's report, however much page it carries: the model's
# runs are excerpts, its texts about errors whole pages, so a form's headings, fences and checkboxes pushed four of
# 20 real bug reports over the threshold.  A text that fills in an issue form's bug sections is never judged; and the
# model reads every text without its markdown scaffolding (plain), in the build and here alike.
BUG_FORM = re.compile(r"(?im)^[ \t]*(?:#{1,4}[ \t]*|\*\*)?[^\w\n]{0,3}[ \t]*(?:describe the bug|current behaviou?r|"
                      r"actual (?:results|behaviou?r)|expected (?:results|behaviou?r)|steps to reproduce|"
                      r"relevant log output|what is the issue\?|what happened\?|your current environment|"
                      r"error traceback output|reminder|当前行为|期望行为|复现方法|错误描述)")
_MARKDOWN = (
    (re.compile(r"(?m)^[ \t]*```[^\n]*$"), ""),                  # code fences
    (re.compile(r"(?m)^[ \t]{0,3}#{1,6}[ \t]"), ""),               # heading marks
    (re.compile(r"(?m)^[ \t]*[-*] \[[xX ]\][ \t]"), ""),           # task-list boxes
    (re.compile(r"`"), ""),                                      # inline code marks
    (re.compile(r"(?m)^[ \t]*\|?[-:| \t]{3,}\|?[ \t]*$"), ""),      # table rules
    (re.compile(r"(?m)^>[ \t]?"), ""),                            # quote marks
)


def plain(text: str) -> str:
    """The text without its markdown scaffolding: what the model reads, in training and here."""
    for pattern, repl in _MARKDOWN:
        text = pattern.sub(repl, text)
    return text


@lru_cache(maxsize=4)
def load(path: Path = MODEL) -> dict | None:
    """A shipped model's numbers, read once per path (leadmodel's too); None when absent or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def tfidf(counts: dict, terms: dict) -> dict:
    """scikit-learn's TfidfVectorizer(sublinear_tf=True) of the shipped terms a text holds (`counts`; `terms[t][0]` is
    each term's idf): 1 + log of the count times the idf, scaled to unit length.  Both shipped models read it."""
    weights = {t: (1.0 + math.log(n)) * terms[t][0] for t, n in counts.items()}
    norm = math.sqrt(sum(w * w for w in weights.values()))
    return {t: w / norm for t, w in weights.items()} if norm else {}


def probability(text: str, model: dict) -> float:
    """The model's probability that `text` is a text about errors, not a run's log."""
    terms = model["terms"]
    tokens = _TOKEN.findall(plain(text).lower())
    counts: dict = {}
    for t in tokens:
        if t in terms:
            counts[t] = counts.get(t, 0) + 1
    for a, b in zip(tokens, tokens[1:]):
        pair = a + " " + b
        if pair in terms:
            counts[pair] = counts.get(pair, 0) + 1
    weights = tfidf(counts, terms)
    z = model["intercept"] + sum(w * terms[t][1] for t, w in weights.items())
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def mostly_log(text: str, is_log) -> bool:
    """(stop 51, CI) Whether half or more of the text's non-blank lines are a log's (`is_log`): a run's log, however its
    words score.  The model had held a vLLM server's own log (INFO lines, one RuntimeError) at 0.99: its near-misses
    hold healthy runs' logs beside the pages, so it also learned 'a log without much error'."""
    lines = [line for line in text.splitlines()[:5000] if line.strip()]
    return bool(lines) and 2 * sum(1 for line in lines if is_log(line)) >= len(lines)


def reads_as_document(text: str, path: Path | None = None, is_log=None) -> float | None:
    """The probability when it reaches the model's threshold (the text reads as one about errors), else None;
    None too for a text past MAX_CHARS, without a sentence, filled into a bug form, mostly a log's lines (`is_log`:
    the scanner's reading of a log line), or when no model is shipped."""
    model = load(path or MODEL)
    if model is None or len(text) > MAX_CHARS or not has_sentence(text, is_log) or BUG_FORM.search(text):
        return None
    if is_log is not None and mostly_log(text, is_log):
        return None
    p = probability(text, model)
    return p if p >= model["threshold"] else None
