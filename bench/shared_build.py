"""One vLLM compile per identical fleet: `inv install --step vllm-compile` on N sshd lab hosts vs one.

Usage: python bench/shared_build.py [--hosts 4] [--repeat 3] [--functions 4000] [--skip-opt-out]

vLLM's source cannot build here (no CUDA, no GPU), so the stand-in of the tests (tests/standin_vllm.py: a
package named `vllm` with a real C extension compiled by gcc, padded with `--functions` functions so that
its compile takes seconds) is what the hosts build.  Every run is forced (`--force`) on clean build trees,
so each compiles for real: one host alone (the guide's editable install), N hosts with the shared build (one
`pip wheel`, the controller copies it, the others install it), and N hosts with --no-shared-build.
Target: N hosts in <= 1.2x the time of one.  Prints medians, the compile counts and the load average.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from sshlab import SSHLab  # noqa: E402
from standin_vllm import clean, compiles, make_host, make_source, make_tools  # noqa: E402


def install(inv: Path, hosts: list[str], known_hosts: Path, *more) -> float:
    env = dict(os.environ, OCRDEPLOY_KNOWN_HOSTS=str(known_hosts))
    env.pop("OCRDEPLOY_INVENTORY", None)
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "install", "--inventory", str(inv), "--host",
                        ",".join(hosts), "--recipe", "dspark", "--step", "vllm-compile", "--skip-preflight",
                        "--force", *more], capture_output=True, text=True, cwd=ROOT, env=env)
    took = time.monotonic() - start
    if p.returncode != 0:
        raise SystemExit(f"install failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return took


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--functions", type=int, default=4000, help="C functions padding the stand-in's extension")
    ap.add_argument("--skip-opt-out", action="store_true", help="leave out the N-host --no-shared-build runs "
                                                                  "(N compiles at once: the slowest case)")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ocrdeploy-bench-shared-"))
    lab = SSHLab(root / "lab")
    try:
        marker = root / "compiles.log"
        template = make_source(root, marker, functions=args.functions)
        bin_, buildtools = make_tools(root)
        names, entries, vars_ = [], {}, {}
        for i in range(1, args.hosts + 1):
            name = f"gpu{i}"
            h = lab.start(name, f"127.0.0.{60 + i}", path_prefix=str(bin_))
            vars_[name] = make_host(root, name, template, buildtools)
            entries[name] = lab.inventory_entry(h, **vars_[name])
            names.append(name)
        inv = root / "inv.yml"
        inv.write_text(yaml.safe_dump({"all": {"hosts": entries}}))
        cases = {"1 host": (names[:1], ()), f"{args.hosts} hosts, shared build": (names, ()),
                 f"{args.hosts} hosts, --no-shared-build": (names, ("--no-shared-build",))}
        if args.skip_opt_out:
            cases.pop(f"{args.hosts} hosts, --no-shared-build")
        times = {c: [] for c in cases}
        counts = {c: [] for c in cases}
        loads = []
        for rep in range(args.repeat):
            for case, (hosts, more) in cases.items():
                clean({n: vars_[n] for n in hosts})
                before = compiles(marker)
                loads.append(os.getloadavg()[0])
                times[case].append(install(inv, hosts, lab.known_hosts, *more))
                counts[case].append(compiles(marker) - before)
                print(f"  run {rep + 1} {case}: {times[case][-1]:.2f} s, {counts[case][-1]} compile(s)", flush=True)
        one = statistics.median(times["1 host"])
        print(f"\nmedians of {args.repeat} (SSH lab hosts on 127.0.0.x, user {os.environ.get('USER') or os.getuid()}, "
              f"stand-in with {args.functions} C functions; load average 1 min at the runs: "
              f"{min(loads):.1f}-{max(loads):.1f}):")
        for case in cases:
            med = statistics.median(times[case])
            print(f"  {case:34s} {med:7.2f} s  {med / one:5.2f}x one host  compiles per run: "
                  f"{sorted(set(counts[case]))}")
    finally:
        lab.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
