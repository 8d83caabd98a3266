"""How long an inventory takes to load as it grows: N hosts in one group, and an alias DAG of L levels
(each group listing the next one twice through YAML aliases, 2**L paths).

    python bench/inventory_scale.py [--hosts 5000,20000] [--levels 12,16,40]

Prints seconds per case; a case over --limit seconds is reported as such (run in a subprocess).
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASE = """import sys, time
from pathlib import Path
from ocrdeploy.inventory import load_inventory
t = time.monotonic(); load_inventory(Path(sys.argv[1])); print(round(time.monotonic() - t, 2))
"""


def hosts_file(d: Path, n: int) -> Path:
    p = d / f"hosts{n}.yml"
    p.write_text("all:\n  children:\n    rack:\n      hosts:\n" + "".join(f"        h{i}:\n" for i in range(n)))
    return p


def dag_file(d: Path, levels: int) -> Path:
    lines = [f"lvl{levels}: &lvl{levels}", "  hosts: {leaf: {ansible_host: 10.0.0.2}}"]
    for i in range(levels - 1, -1, -1):
        lines += [f"lvl{i}: &lvl{i}", "  children:", f"    a{i + 1}: *lvl{i + 1}", f"    b{i + 1}: *lvl{i + 1}"]
    p = d / f"dag{levels}.yml"
    p.write_text("\n".join(["all:", "  vars:", "    defs:"] + ["      " + line for line in lines]
                           + ["  children:", "    top: *lvl0"]) + "\n")
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", default="5000,20000")
    ap.add_argument("--levels", default="12,16,40")
    ap.add_argument("--limit", type=float, default=120)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        cases = [(f"{n} hosts", hosts_file(Path(d), int(n))) for n in a.hosts.split(",") if n]
        cases += [(f"alias DAG, {n} levels", dag_file(Path(d), int(n))) for n in a.levels.split(",") if n]
        for label, path in cases:
            try:
                out = subprocess.run([sys.executable, "-c", CASE, str(path)], capture_output=True, text=True,
                                     timeout=a.limit, check=True).stdout.strip()
                print(f"{label:>24}: {out} s")
            except subprocess.TimeoutExpired:
                print(f"{label:>24}: over {a.limit:g} s")


if __name__ == "__main__":
    main()
