"""Cache the named misses of held-out batches that the scan reports unrecognised (their unrecognised lines), for
tuning the 'looks like' lead offline (round scan13).  Writes JSON: [{"batch": N, "entry": id, "unrecognised": [...]}].

    PYTHONPATH=$PWD python bench/lead_cache.py OUT.json FIRST LAST
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import corpus  # noqa: E402


def main():
    out, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    scan = corpus.Scanner()
    cited = corpus.cited_threads()
    rows = []
    heldout = Path(__file__).resolve().parents[1] / "tests/fixtures/diagnose/heldout"
    for n in range(first, last + 1):
        data, _ = corpus.without_cited(corpus.load_file(heldout / f"batch{n}.yaml"), cited)
        for case in data["cases"]:
            if not corpus.is_real(case):
                continue
            rep = scan.scan(case, "python")
            if corpus.judge_case(case, rep, True) is None or rep["findings"] or not rep["unrecognised"]:
                continue
            rows.append({"batch": n, "entry": case["entry"], "source": case.get("source", "")[:100],
                         "unrecognised": [{"text": u["text"], "context": u.get("context")} for u in rep["unrecognised"]]})
    scan.close()
    Path(out).write_text(json.dumps(rows), encoding="utf-8")
    print(len(rows), "misses reported unrecognised")


if __name__ == "__main__":
    main()
