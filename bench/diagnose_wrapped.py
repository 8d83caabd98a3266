"""How much of what the diagnose table recognises survives a runner's prefix before every line.

Usage: python bench/diagnose_wrapped.py [--from N] [--only NAME ...] [--engine hyperscan|grep|python]

Users paste logs the way they ran things: under docker compose, journald, a CI runner's timestamps, Ray's or vLLM's
process tags, torchrun's rank tee.  Every real case the table names (the corpus, and held-out batches N-last) is
scanned again with each line wrapped in one runner's prefix; a case lost is one the prefix hid (a pattern anchored at
the line's start, a level read there).  Near-misses are wrapped too: a false alarm that appears is counted, and counted
apart where the document model reads the near-miss as a page.  Most of the others are pages, pull requests and articles
too, quiet unwrapped through the page and prose vetoes, which read a page's shape that a stamp on every line hides;
no runner stamps a page.  The safety net's unnamed failures must stay not clean.

The prefixes come in two lists: those the scanner reads through (scanner.WRAPPER's prefixes, and the ANSI colours and
CRs that clean() drops; they should keep ~100%), and some it does not (Heroku's
router tag, Airflow's task log, swarm's task names, cat -n), which show what an unknown prefix still costs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
import corpus  # noqa: E402

KNOWN = {
    "compose": "api-1  | {}",
    "journald": "Dec 07 10:00:00 gpu01 python3[1234]: {}",
    "ci-iso-time": "2026-12-07T10:00:00.1234567Z {}",
    "buildkit": "#12 3.456 {}",
    "k8s-cri": "2026-12-07T10:00:00.123456789Z stderr F {}",
    "kubectl-prefix": "[pod/vllm-0/vllm] {}",
    "srun-l": "0: {}",
    "compose+iso": "api-1  | 2026-12-07T10:00:00.123Z {}",
    "ray-actor": "(RayWorkerWrapper pid=1234, ip=10.0.0.2) {}",
    "ray-task": "(pid=1234) {}",
    "vllm-worker": "(VllmWorker rank=1 pid=2345) {}",
    "skypilot": "(worker1, rank=1, pid=2345, ip=10.0.0.2) {}",
    "torchrun": "[rank0]: {}",
    "torchrun-old": "[default0]:{}",
    "pm2": "0|vllm     | {}",
    "jenkins-iso": "[2026-12-07T10:00:00.123Z] {}",
    "jenkins-time": "10:00:00 {}",
    "bracketed-time": "[2026-12-07 10:00:00,123] {}",
    "markdown-quote": "> {}",
    "ansi": "\x1b[31m{}\x1b[0m",
    "crlf": "{}\r",
}
UNKNOWN = {
    "heroku": "2026-12-07T10:00:00.000000+00:00 app[web.1]: {}",
    "airflow": "[2026-12-07, 10:00:00 UTC] {{subprocess.py:93}} INFO - {}",
    "swarm": "ocr_vllm.1.k3j2h1g0f9e8@node-1    | {}",
    "cat-n": "     1\t{}",
    "moreutils-ts": "Dec 07 10:00:00 {}",
}


def wrap(text: str, form: str) -> str:
    return "\n".join(form.format(line) for line in text.split("\n"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--from", dest="first", type=int, default=190, help="the first held-out batch taken (to the last)")
    ap.add_argument("--only", nargs="*", help="only these prefixes (names as listed)")
    ap.add_argument("--engine", default=corpus.ENGINES[-1], choices=["hyperscan", "grep", "python"])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    scan = corpus.Scanner()
    cited = corpus.cited_threads()
    data = corpus.load()
    fails = [c for c in data["cases"] if corpus.is_real(c)]
    nears = list(data["near_misses"])
    unnamed = [c for c in data["unrecognised"] if corpus.is_real(c)]
    heldout = sorted(ROOT.glob("tests/fixtures/diagnose/heldout/batch*.yaml"), key=lambda p: int(p.stem[5:]))
    for path in heldout:
        if int(path.stem[5:]) >= args.first:
            batch, _ = corpus.without_cited(corpus.load_file(path), cited)
            fails += [c for c in batch["cases"] if corpus.is_real(c)]
            nears += batch["near_misses"]
            unnamed += batch.get("unrecognised") or []

    def text(c):
        return corpus.text_of(c).decode("utf-8", "replace")

    named = [c for c in fails if corpus.judge_case(c, scan.scan(c, args.engine), True) is None]
    quiet, docs = [], set()
    for c in nears:
        rep = scan.scan(c, args.engine)
        if corpus.judge_near_miss(c, rep) is None:
            quiet.append(c)
            if "document" in rep or "quoted" in rep:
                docs.add(id(c))
    net = [c for c in unnamed if corpus.judge_unrecognised(c, scan.scan(c, args.engine)) is None]
    rows = []
    for kind, forms in (("known", KNOWN), ("unknown", UNKNOWN)):
        for name, form in forms.items():
            if args.only and name not in args.only:
                continue
            kept = sum(corpus.judge_case(c, scan.scan({"log": wrap(text(c), form)}, args.engine), True) is None
                       for c in named)
            alarms = [c for c in quiet
                      if corpus.judge_near_miss(c, scan.scan({"log": wrap(text(c), form)}, args.engine)) is not None]
            net_kept = sum(corpus.judge_unrecognised(c, scan.scan({"log": wrap(text(c), form)}, args.engine)) is None
                           for c in net)
            rows.append({"prefix": name, "kind": kind, "kept": kept, "named": len(named), "net_kept": net_kept,
                         "net": len(net), "new_alarms": len(alarms),
                         "new_alarms_on_documents": sum(id(c) in docs for c in alarms)})
            if not args.json:
                r = rows[-1]
                print(f"{name:16} {kind:8} named kept {kept}/{len(named)} ({100.0 * kept / max(1, len(named)):.1f}%)"
                      f"   unnamed not clean {net_kept}/{len(net)}   new false alarms {r['new_alarms']}"
                      f" ({r['new_alarms_on_documents']} the document model reads as pages)", flush=True)
    if args.json:
        print(json.dumps({"engine": args.engine, "named": len(named), "near_misses_quiet": len(quiet),
                          "unnamed_not_clean": len(net), "rows": rows}, indent=2))
    scan.close()


if __name__ == "__main__":
    main()
