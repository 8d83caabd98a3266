"""What preflight's sources check costs: `ocrdeploy preflight` with the check and with
--network-timeout 0, locally, against local sources (a pip index and a ModelScope stand-in from
tests/), then with one of them closed (nothing listens: refused at once; a source that drops packets
instead costs at most 3 x --network-timeout, in parallel with the other probes).

Usage: python bench/preflight_sources.py [--repeat 5]
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

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from hubserver import HubServer  # noqa: E402
from pipindex import PipIndex  # noqa: E402


def run(inv, *extra):
    env = {k: v for k, v in os.environ.items() if k != "OCRDEPLOY_INVENTORY"}
    start = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "preflight", "--inventory", str(inv), "--recipe",
                        "sdk-only", "--json", *extra], capture_output=True, text=True, cwd=ROOT, env=env)
    took = time.perf_counter() - start
    check = next(c for c in json.loads(p.stdout)["hosts"]["localhost"]["checks"] if c["name"] == "sources")
    return took, check


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, PipIndex(Path(tmp)) as index, HubServer({}) as ms:
        for closed in (False, True):
            inv = Path(tmp) / "inv.yml"
            layout = "http://127.0.0.1:9/PP-DocLayoutV3_infer.tar" if closed else f"{ms.url}/layout.tar"
            inv.write_text(yaml.safe_dump({"all": {"vars": {
                "workdir": str(Path(tmp) / "wd"), "pip_index_url": index.url, "layout_url": layout}}}))
            for label, extra in (("sources check", ()), ("--network-timeout 0", ("--network-timeout", "0"))):
                times = []
                for _ in range(args.repeat):
                    took, check = run(inv, *extra)
                    times.append(took)
                print(f"{'one source closed' if closed else 'all answer':18} {label:22} median "
                      f"{statistics.median(times):.3f} s over {args.repeat} ({check['status']}: {check['message']})")


if __name__ == "__main__":
    main()
