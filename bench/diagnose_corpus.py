"""Recall per entry and false alarms of the diagnose table on its real corpus, as a table.

Usage: python bench/diagnose_corpus.py [--engine hyperscan|grep|python] [--all] [--json]

Reads tests/fixtures/diagnose/corpus (the same cases and judgement the tests use):
  - recall: per entry, the real cases (from public threads) recognised through the pattern
    they are written for; guide wordings (reconstructed from the seeds) are counted apart;
  - false alarms: near-misses that produced the entry they must not, benign real logs that
    raised an error/warning or an unrecognised line;
  - the safety net: unnamed real failures that were reported as unrecognised (not clean).
--all prints every entry, not only those below 100% or with fewer than 4 real cases.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import corpus  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default=corpus.ENGINES[-1], choices=["hyperscan", "grep", "python"])
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    data = corpus.load()
    scan = corpus.Scanner()
    rows = {r.id: {"real": 0, "real_ok": 0, "guide": 0, "guide_ok": 0, "misses": []} for r in scan.rules}
    for case in data["cases"]:
        why = corpus.judge_case(case, scan.scan(case, args.engine))
        row = rows[case["entry"]]
        kind = "guide" if case.get("guide") else "real"
        row[kind] += 1
        if why is None:
            row[kind + "_ok"] += 1
        else:
            row["misses"].append(f"{case.get('source')}: {why}")
    alarms = []
    for item in data["near_misses"]:
        why = corpus.judge_near_miss(item, scan.scan(item, args.engine))
        if why:
            alarms.append(f"near-miss {item['source']}: {why}")
    for item in data["benign"]:
        why = corpus.judge_benign(scan.scan(item, args.engine))
        if why:
            alarms.append(f"benign {item['file']}: {why}")
    net_ok = sum(corpus.judge_unrecognised(i, scan.scan(i, args.engine)) is None for i in data["unrecognised"])
    scan.close()

    real = sum(r["real"] for r in rows.values())
    real_ok = sum(r["real_ok"] for r in rows.values())
    guide = sum(r["guide"] for r in rows.values())
    guide_ok = sum(r["guide_ok"] for r in rows.values())
    summary = {
        "engine": args.engine, "entries": len(rows), "real_cases": real, "real_recognised": real_ok,
        "guide_cases": guide, "guide_recognised": guide_ok,
        "entries_with_4_real": sum(1 for r in rows.values() if r["real"] >= 4),
        "near_misses": len(data["near_misses"]), "benign_logs": len(data["benign"]), "false_alarms": len(alarms),
        "unnamed_failures": len(data["unrecognised"]), "unnamed_not_clean": net_ok,
    }
    if args.json:
        print(json.dumps({"summary": summary, "entries": rows, "false_alarms": alarms}, indent=2))
        return
    print(f"{'entry':36} {'real':>9} {'guide':>7}")
    for rid, r in rows.items():
        if args.all or r["real_ok"] < r["real"] or r["guide_ok"] < r["guide"] or r["real"] < 4:
            real_s = f"{r['real_ok']}/{r['real']}"
            guide_s = f"{r['guide_ok']}/{r['guide']}" if r["guide"] else "-"
            print(f"{rid:36} {real_s:>9} {guide_s:>7}")
            for m in r["misses"]:
                print(f"    miss: {m}")
    print()
    pct = 100.0 * real_ok / real if real else 0.0
    print(f"engine {args.engine}: {len(rows)} entries; real cases {real_ok}/{real} recognised ({pct:.1f}%), "
          f"guide wordings {guide_ok}/{guide}; {summary['entries_with_4_real']} entries have >= 4 real cases")
    print(f"false alarms: {len(alarms)} (on {len(data['near_misses'])} near-misses and "
          f"{len(data['benign'])} benign real logs)")
    for a in alarms:
        print(f"    {a}")
    print(f"safety net: {net_ok}/{len(data['unrecognised'])} unnamed real failures reported as unrecognised")


if __name__ == "__main__":
    main()
