"""Reading what the feat-ocr verification scripts print (the MiniCPM-OCR guide, section 7).

The pass criteria: on the transformers side no missing, unexpected or mismatched keys and
1.300B parameters; on both sides the same number of prompt tokens and the same output,
character for character, ending with </otsl>.  The guide's reference line reads
`prompt 1975 tokens, vision 1936 tokens, generation 284 tokens, output 677 characters`;
the scripts are not public, so every spelling of a count (`prompt 1975 tokens`,
`prompt tokens: 1975`, `prompt_tokens=1975`) is read.
"""

from __future__ import annotations

import re

PARAMS_WANT = "1.300B"

_COUNT = r"(?i)\b{0}(?:[ _]tokens?)?\s*[:=]?\s*(\d[\d,]*)(?:\s*tokens?)?"
COUNTS = {k: re.compile(_COUNT.format(k)) for k in ("prompt", "vision", "generation")}
_PARAMS = re.compile(r"(?i)\bparam(?:eter)?s?\b[^\d\n]{0,24}(\d+(?:\.\d+)?)\s*([BM])\b"
                     r"|(\d+(?:\.\d+)?)\s*([BM])\s+param(?:eter)?s?\b"
                     r"|\bparam(?:eter)?s?\b[^\d\n]{0,24}(\d{6,}(?:,\d{3})*|\d{1,3}(?:,\d{3}){2,})\b")
# transformers 4.x warnings and the transformers 5 LOAD REPORT table
_KEY_PROBLEMS = (
    ("missing", re.compile(r"(?i)were not initialized from the model checkpoint|\|\s*MISSING\s*\||"
                           r"\bmissing[ _]keys?\b\s*[:=]\s*\[\s*['\"]")),
    ("unexpected", re.compile(r"(?i)were not used when initializing|\|\s*UNEXPECTED\s*\||"
                              r"\bunexpected[ _]keys?\b\s*[:=]\s*\[\s*['\"]")),
    ("mismatched", re.compile(r"(?i)shapes? did not match|size mismatch for|\|\s*MISMATCH\w*\s*\||"
                              r"\bmismatched[ _]keys?\b\s*[:=]\s*\[\s*['\"]")),
)
_OTSL = re.compile(r"(?s)<otsl>.*?</otsl>")


def count(text: str, what: str) -> int | None:
    m = COUNTS[what].search(text)
    return int(m.group(1).replace(",", "")) if m else None


def parameters(text: str) -> str | None:
    """The parameter count the script printed, as '1.300B'."""
    m = _PARAMS.search(text)
    if not m:
        return None
    if m.group(1) or m.group(3):
        value, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        billions = float(value) / (1000 if unit.upper() == "M" else 1)
    else:
        billions = int(m.group(5).replace(",", "")) / 1e9
    return f"{billions:.3f}B"


def key_problems(text: str) -> list[str]:
    return [kind for kind, rx in _KEY_PROBLEMS if rx.search(text)]


def output(text: str) -> str:
    """The generated OTSL (the last <otsl>...</otsl>), else the last non-empty line."""
    found = _OTSL.findall(text)
    if found:
        return found[-1]
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def compare(tf_out: str, vllm_out: str) -> list[str]:
    """The section 7 criteria that failed (empty: both ends agree)."""
    problems = []
    keys = key_problems(tf_out)
    if keys:
        problems.append(f"transformers reported {', '.join(keys)} keys while loading")
    params = parameters(tf_out)
    if params != PARAMS_WANT:
        problems.append(f"transformers parameter count {params or 'not printed'}, want {PARAMS_WANT}")
    tt, vt = count(tf_out, "prompt"), count(vllm_out, "prompt")
    if tt is None or vt is None or tt != vt:
        problems.append(f"prompt tokens transformers={tt} vllm={vt}")
    to, vo = output(tf_out), output(vllm_out)
    if to != vo:
        problems.append(f"outputs differ (transformers {len(to)} chars, vllm {len(vo)} chars)")
    if not (to.endswith("</otsl>") and vo.endswith("</otsl>")):
        problems.append("an output does not end with </otsl>")
    return problems
