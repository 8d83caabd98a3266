"""Recall per entry and false alarms of the diagnose table on its real corpus, as a table.

Usage: python bench/diagnose_corpus.py [--engine hyperscan|grep|python] [--all] [--json]
       python bench/diagnose_corpus.py --folds K        (held-out folds of the corpus, by source thread)
       python bench/diagnose_corpus.py --heldout FILE   (a held-out batch: tests/fixtures/diagnose/heldout/;
                                                    items from threads the corpus or rules.yaml cite are left out)
       python bench/diagnose_corpus.py --blind --heldout FILE [--heldout FILE ...]
                                                   (one aggregate, per stage and per entry, and no item's source
                                                    or log: the check of a tuning round on batches it must not read)

Reads tests/fixtures/diagnose/corpus (the same cases and judgement the tests use):
  - recall: per entry, the real cases (from public threads) recognised through the pattern
    they are written for; guide wordings (reconstructed from the seeds) and source-derived ones
    (corpus/derived.yaml: a tool's format string filled in) are counted apart, in the "guide" column;
  - false alarms: near-misses that produced the entry they must not, benign real logs that
    raised an error/warning or an unrecognised line;
  - the safety net: unnamed real failures that were reported as unrecognised (not clean).
--all prints every entry, not only those below 100% or with fewer than 4 real cases.

--folds K splits the corpus by source thread (the URL of `source`; a thread never straddles two
folds) into K folds and prints, for each held-out fold, recall of its real cases and false alarms
of its near-misses and benign logs, per stage. The table is written by hand and not re-fitted per
fold, so these figures measure the fitted table on threads grouped apart, not a held-out score:
the honest held-out figure is --heldout on cases collected after the patterns were frozen, scored
before any tuning on them (see tests/fixtures/diagnose/heldout/README.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import corpus  # noqa: E402


thread_of = corpus.thread_of


def fold_of(item, k: int) -> int:
    return int(hashlib.sha1(thread_of(item).encode()).hexdigest(), 16) % k


def stage_of(item, stages) -> str:
    if item.get("entry"):
        return stages.get(item["entry"], "?")
    nots = item.get("not") or []
    return stages.get(nots[0], "?") if nots else "benign"


def lead_of(rep, rules):
    """The entries the report's unrecognised lines look like (the "looks like" lead of `inv diagnose`), or None
    when the report names a finding or has no unrecognised line."""
    if rep["findings"] or not rep["unrecognised"]:
        return None
    from ocrdeploy.diagnose.engine import unrecognised_lead

    leadable = [r for r in rules if r.severity != "harmless"]
    return sorted({rid for u in rep["unrecognised"] for rid in unrecognised_lead(u, leadable)})


def lead_top(rep, rules):
    """(round scan12) The lead's top entry: the first entry of the first unrecognised line that has a lead."""
    from ocrdeploy.diagnose.engine import unrecognised_lead

    leadable = [r for r in rules if r.severity != "harmless"]
    return next((near[0] for u in rep["unrecognised"] for near in [unrecognised_lead(u, leadable)] if near), None)


def score(data, scan, engine, stages, any_pattern=False):
    """Per stage: real cases recognised / real cases, false alarms / near-misses and benign logs."""
    by = {}

    def row(stage):
        return by.setdefault(stage, {"real": 0, "ok": 0, "alarm_items": 0, "alarms": 0, "misses": []})
    for case in data["cases"]:
        if not corpus.is_real(case):
            continue
        r = row(stage_of(case, stages))
        r["real"] += 1
        rep = scan.scan(case, engine)
        why = corpus.judge_case(case, rep, any_pattern)
        if why is None:
            r["ok"] += 1
        else:
            leads = lead_of(rep, scan.rules)
            if leads is not None:
                # a miss reported as unrecognised (exit 3): does its "looks like" lead name the right entry?
                r["unrec"] = r.get("unrec", 0) + 1
                r["led"] = r.get("led", 0) + (case["entry"] in leads)
                r["top"] = r.get("top", 0) + (lead_top(rep, scan.rules) == case["entry"])
                why += f"; looks like {leads}"
            r["misses"].append(f"{case.get('source')}: {why}")
            # for --blind: what the miss was, without its source
            kind = "named another" if rep["findings"] else "unrecognised" if leads is not None else "clean"
            r.setdefault("missed", []).append((case["entry"], kind))
    for item in data["near_misses"]:
        r = row(stage_of(item, stages))
        r["alarm_items"] += 1
        rep = scan.scan(item, engine)
        why = corpus.judge_near_miss(item, rep)
        # stricter than the `not` list: a near-miss is not a run, so an error finding of ANY entry misleads too
        # (a `not` list written before an entry existed cannot name it)
        err = any(f["severity"] == "error" for f in rep["findings"])
        r["strict"] = r.get("strict", 0) + err
        if err and not why:
            r["misses"].append(f"near-miss {item['source']}: error finding of an entry outside its `not` list: "
                               f"{sorted(f['id'] for f in rep['findings'])}")
        if why:
            r["alarms"] += 1
            r["misses"].append(f"near-miss {item['source']}: {why}")
            r.setdefault("alarmed", []).extend(f["id"] for f in rep["findings"] if f["id"] in item.get("not", []))
    for item in data["benign"]:
        r = row("benign")
        r["alarm_items"] += 1
        why = corpus.judge_benign(scan.scan(item, engine))
        if why:
            r["alarms"] += 1
            r["misses"].append(f"benign {item['file']}: {why}")
    for item in data.get("unrecognised") or []:
        r = row("unnamed")
        r["real"] += 1
        rep = scan.scan(item, engine)
        why = corpus.judge_unrecognised(item, rep)
        if why is None:
            r["ok"] += 1
        elif rep["findings"]:
            # a failure the batch collected as unnamed that an entry added since names: not a miss of the safety net,
            # not a pass either; counted apart so that the figure says which
            r["named"] = r.get("named", 0) + 1
            r["misses"].append(f"{item.get('source')}: now named by {[f['id'] for f in rep['findings']]}")
        else:
            r["misses"].append(f"{item.get('source')}: {why}")
    return by


def print_score(title, by):
    print(title)
    real = sum(r["real"] for s, r in by.items() if s != "unnamed")
    ok = sum(r["ok"] for s, r in by.items() if s != "unnamed")
    alarms = sum(r["alarms"] for r in by.values())
    items = sum(r["alarm_items"] for r in by.values())
    for stage in sorted(by):
        r = by[stage]
        rec = f"{r['ok']}/{r['real']}" if r["real"] else "-"
        named = f"   ({r['named']} now named by an entry)" if r.get("named") else ""
        led = f"   (lead right on {r['led']}/{r['unrec']} misses reported unrecognised)" if r.get("unrec") else ""
        print(f"  {stage:10} recall {rec:>9}   false alarms {r['alarms']}/{r['alarm_items']}{named}{led}")
        for m in r["misses"]:
            print(f"      {m}")
    pct = 100.0 * ok / real if real else 0.0
    print(f"  all        recall {ok}/{real} ({pct:.1f}%)   false alarms {alarms}/{items}")
    near = sum(r["alarm_items"] for s, r in by.items() if s != "benign")
    if near:
        print(f"  strict     {sum(r.get('strict', 0) for r in by.values())}/{near} near-misses produce an error "
              "finding of any entry")
    unrec = sum(r.get("unrec", 0) for r in by.values())
    if unrec:
        print(f"  leads      {sum(r.get('led', 0) for r in by.values())}/{unrec} misses reported unrecognised have the"
              f" right entry in their 'looks like' lead ({sum(r.get('top', 0) for r in by.values())}/{unrec} as its top"
              " entry)")


def print_blind(title, bys):
    """One aggregate over several batches and no item's source or log: a tuner may check a change on batches it
    must not read (tune on the early batches, run this on the later ones) without learning their wordings."""
    total = {}
    for by in bys:
        for stage, r in by.items():
            t = total.setdefault(stage, {"real": 0, "ok": 0, "alarm_items": 0, "alarms": 0, "named": 0,
                                         "missed": [], "alarmed": []})
            for key in ("real", "ok", "alarm_items", "alarms", "named"):
                t[key] += r.get(key, 0)
            t["missed"] += r.get("missed", [])
            t["alarmed"] += r.get("alarmed", [])
    real = sum(r["real"] for s, r in total.items() if s != "unnamed")
    ok = sum(r["ok"] for s, r in total.items() if s != "unnamed")
    alarms = sum(r["alarms"] for r in total.values())
    items = sum(r["alarm_items"] for r in total.values())
    net = total.get("unnamed", {"ok": 0, "real": 0})
    pct = 100.0 * ok / real if real else 0.0
    print(f"{title}: named {ok}/{real} ({pct:.1f}%)   false alarms {alarms}/{items}   "
          f"unnamed not clean {net['ok']}/{net['real']}")
    for stage in sorted(s for s in total if s not in ("unnamed", "benign")):
        r = total[stage]
        print(f"  {stage:10} named {r['ok']}/{r['real']}   false alarms {r['alarms']}/{r['alarm_items']}")
    missed = {}
    for entry, kind in (m for r in total.values() for m in r["missed"]):
        missed.setdefault(entry, {}).setdefault(kind, 0)
        missed[entry][kind] += 1
    if missed:
        print("  misses by expected entry: " + ", ".join(
            f"{e} " + "/".join(f"{n} {k}" for k, n in sorted(kinds.items())) for e, kinds in sorted(missed.items())))
    alarmed = {}
    for entry in (a for r in total.values() for a in r["alarmed"]):
        alarmed[entry] = alarmed.get(entry, 0) + 1
    if alarmed:
        print("  false alarms by entry: " + ", ".join(f"{e} {n}" for e, n in sorted(alarmed.items())))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default=corpus.ENGINES[-1], choices=["hyperscan", "grep", "python"])
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--folds", type=int, default=0)
    ap.add_argument("--heldout", action="append", default=[])
    ap.add_argument("--blind", action="store_true", help="with --heldout: one aggregate over the batches given, "
                                                         "per stage and per entry, no item's source or log")
    ap.add_argument("--lead-words", type=Path, help="the lead's table to use (bench/build_lead_words.py --through N "
                                                      "--out FILE: the lead measured on the batches after N)")
    ap.add_argument("--doc-model", type=Path, help="the document model to use (bench/build_doc_model.py --through N "
                                                     "--out FILE: measured on the batches after N)")
    ap.add_argument("--lead-model", type=Path, help="the lead's learned half to use (bench/build_lead_model.py "
                                                      "--through N --out FILE; a missing file: the key tokens alone)")
    args = ap.parse_args()
    if args.doc_model:
        from ocrdeploy.diagnose import docmodel

        docmodel.MODEL = args.doc_model
    if args.lead_words or args.lead_model:
        from ocrdeploy.diagnose import engine

        engine.LEAD_WORDS = args.lead_words or engine.LEAD_WORDS
        engine.LEAD_MODEL = args.lead_model or engine.LEAD_MODEL
    if args.folds or args.heldout:
        scan = corpus.Scanner()
        stages = {r.id: r.stage for r in scan.rules}
        if args.folds:
            data = corpus.load()
            for k in range(args.folds):
                part = {key: [i for i in data[key] if fold_of(i, args.folds) == k] for key in data}
                threads = len({thread_of(i) for key in part for i in part[key]})
                print_score(f"fold {k + 1}/{args.folds} held out ({threads} threads):", score(part, scan, args.engine,
                                                                                          stages))
        cited = corpus.cited_threads() if args.heldout else set()
        bys, left_out = [], 0
        for path in args.heldout:
            data, dropped = corpus.without_cited(corpus.load_file(Path(path)), cited)
            by = score(data, scan, args.engine, stages, any_pattern=True)
            left_out += len(dropped)
            if args.blind:
                bys.append(by)
                continue
            if dropped:
                print(f"{path}: {len(dropped)} thread(s) left out, also cited by the corpus or rules.yaml: "
                      + ", ".join(dropped))
            print_score(f"held-out batch {path} ({data.get('note', '')}):", by)
        if args.blind and args.heldout:
            print_blind(f"{len(args.heldout)} held-out batch(es), {left_out} cited thread(s) left out", bys)
        scan.close()
        return
    data = corpus.load()
    scan = corpus.Scanner()
    rows = {r.id: {"real": 0, "real_ok": 0, "guide": 0, "guide_ok": 0, "misses": []} for r in scan.rules}
    for case in data["cases"]:
        why = corpus.judge_case(case, scan.scan(case, args.engine))
        row = rows[case["entry"]]
        kind = "real" if corpus.is_real(case) else "guide"
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
    # (round scan7) source-derived unnamed failures (derived.yaml) prove a safety-net class, not a real log: counted apart
    net_real = [i for i in data["unrecognised"] if corpus.is_real(i)]
    net_derived = [i for i in data["unrecognised"] if not corpus.is_real(i)]
    net_ok = sum(corpus.judge_unrecognised(i, scan.scan(i, args.engine)) is None for i in net_real)
    net_derived_ok = sum(corpus.judge_unrecognised(i, scan.scan(i, args.engine)) is None for i in net_derived)
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
        "unnamed_failures": len(net_real), "unnamed_not_clean": net_ok,
        "unnamed_derived": len(net_derived), "unnamed_derived_not_clean": net_derived_ok,
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
    print(f"safety net: {net_ok}/{len(net_real)} unnamed real failures reported as unrecognised"
          + (f"; source-derived {net_derived_ok}/{len(net_derived)}" if net_derived else ""))


if __name__ == "__main__":
    main()
