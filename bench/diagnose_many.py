"""`inv diagnose` over many small logs at once: what a directory of job logs or CI artefacts costs.

Usage: python bench/diagnose_many.py [--logs 100] [--repeat 3] [--old TREE]

Writes the first --logs corpus cases as files, then times one `inv diagnose --log ... --json` over all of them
(median of --repeat runs, whole command: interpreter start, table load, every scan).  With --old TREE (a checkout
of another commit, e.g. `git archive <rev> | tar -x -C TREE`) the same command runs from there too, in the same
run, and the ratio is printed; the JSON reports of both must agree.  The per-log figure is the whole time divided
by the number of logs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import corpus  # noqa: E402


def run(tree: Path, logs: list[str]) -> tuple[float, dict]:
    cmd = [sys.executable, "-m", "invoke", "diagnose", "--json"]
    for path in logs:
        cmd += ["--log", path]
    env = dict(os.environ, PYTHONPATH=str(tree))
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    took = time.perf_counter() - t
    if out.returncode not in (0, 1, 3):
        sys.exit(f"diagnose_many: {tree}: exit {out.returncode}: {out.stderr.strip()[-400:]}")
    return took, json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--old", type=Path, help="another checkout to compare with, in the same run")
    args = ap.parse_args()
    cases = corpus.load()["cases"][:args.logs]
    with tempfile.TemporaryDirectory(prefix="ocrdeploy-many-") as tmp:
        logs = []
        for i, case in enumerate(cases):
            path = Path(tmp) / f"case{i}.log"
            path.write_bytes(corpus.text_of(case))
            logs.append(str(path))
        trees = [("this tree", ROOT)] + ([("old tree", args.old.resolve())] if args.old else [])
        times = {name: [] for name, _ in trees}
        reports = {}
        for _ in range(args.repeat):
            for name, tree in trees:          # interleaved, so both see the same load
                took, rep = run(tree, logs)
                times[name].append(took)
                reports[name] = rep["reports"]
        for name, _ in trees:
            med = statistics.median(times[name])
            print(f"{name:10s} {len(logs)} logs: median {med:.2f} s ({1000 * med / len(logs):.1f} ms a log)"
                  f"  runs {', '.join(f'{t:.2f}' for t in times[name])}")
        if args.old:
            ratio = statistics.median(times["old tree"]) / statistics.median(times["this tree"])
            print(f"old / this: {ratio:.1f}x; reports {'agree' if reports['old tree'] == reports['this tree'] else 'DIFFER'}")


if __name__ == "__main__":
    main()
