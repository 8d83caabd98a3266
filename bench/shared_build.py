"""One vLLM compile per identical fleet: `inv install --step vllm-compile` on N sshd lab hosts vs one.

Usage: python bench/shared_build.py [--hosts 4] [--repeat 3] [--functions 4000] [--skip-opt-out] [--installer uv|pip]

vLLM's source cannot build here (no CUDA, no GPU), so the stand-in of the tests (tests/standin_vllm.py: a
package named `vllm` with a real C extension compiled by gcc, padded with `--functions` functions so that
its compile takes seconds) is what the hosts build.  Every run is forced (`--force`) on clean build trees,
so each compiles for real: one host alone (the guide's editable install), N hosts with the shared build (one
`pip wheel`, the controller copies it, the others install it), and N hosts with --no-shared-build.
Target: N hosts in <= 1.2x the time of one.  Prints medians, the compile counts and the load average, and for
the shared build the phases of its median run (bench/shared_build_trace.py times them per host) with the CPU
seconds of the controller and of each host (its sshd's reaped children: every command it ran).  All lab hosts
share this machine's cores, so the CPU seconds say what would run in parallel on real hosts.
"""

from __future__ import annotations

import argparse
import json
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
from standin_vllm import clean, compiles, make_host, make_source, make_tools, uv_binary  # noqa: E402


def host_cpu(lab: SSHLab, name: str) -> float:
    """CPU seconds of everything the host's sshd has run and reaped (its sessions and their commands)."""
    pid = next(h.proc.pid for h in lab.hosts if h.name == name)
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def install(inv: Path, hosts: list[str], lab: SSHLab, *more) -> tuple[float, dict]:
    env = dict(os.environ, OCRDEPLOY_KNOWN_HOSTS=str(lab.known_hosts))
    env.pop("OCRDEPLOY_INVENTORY", None)
    trace = inv.parent / "trace.json"
    cpu0 = {h: host_cpu(lab, h) for h in hosts}
    start = time.monotonic()
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "shared_build_trace.py"), str(trace), "--",
                        "--inventory", str(inv), "--host", ",".join(hosts), "--recipe", "dspark", "--step",
                        "vllm-compile", "--skip-preflight", "--force", *more], capture_output=True, text=True,
                       cwd=ROOT, env=env)
    took = time.monotonic() - start
    if p.returncode != 0:
        raise SystemExit(f"install failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    time.sleep(0.3)                          # the sessions' sshd processes end and are reaped
    doc = json.loads(trace.read_text())
    doc["host_cpu"] = {h: host_cpu(lab, h) - cpu0[h] for h in hosts}
    return took, doc


def phases(doc: dict, hosts: list[str]) -> str:
    """Per host: seconds in each phase (summed), the first start and last end, its CPU seconds."""
    lines = []
    for h in hosts:
        spans = [s for s in doc["spans"] if s["host"] == h]
        by: dict[str, float] = {}
        for s in spans:
            by[s["phase"]] = by.get(s["phase"], 0.0) + s["end"] - s["start"]
        parts = ", ".join(f"{k} {v:.2f}" for k, v in by.items())
        lines.append(f"    {h}: {parts}; ends at {max((s['end'] for s in spans), default=0):.2f} s; "
                     f"host CPU {doc['host_cpu'][h]:.2f} s")
    lines.append(f"    controller: wall {doc['wall']:.2f} s, CPU {doc['cpu']:.2f} s (+{doc['cpu_children']:.2f} s "
                 f"local children)")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--functions", type=int, default=4000, help="C functions padding the stand-in's extension")
    ap.add_argument("--skip-opt-out", action="store_true", help="leave out the N-host --no-shared-build runs "
                                                                  "(N compiles at once: the slowest case)")
    ap.add_argument("--installer", choices=("uv", "pip"), default="uv",
                    help="what installs the built wheel (uv: as after the recipe's tools-uv; the compile is pip's)")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ocrdeploy-bench-shared-"))
    lab = SSHLab(root / "lab")
    try:
        marker = root / "compiles.log"
        template = make_source(root, marker, functions=args.functions)
        bin_, buildtools = make_tools(root)
        uv = uv_binary(root) if args.installer == "uv" else None
        names, entries, vars_ = [], {}, {}
        for i in range(1, args.hosts + 1):
            name = f"gpu{i}"
            h = lab.start(name, f"127.0.0.{60 + i}", path_prefix=str(bin_))
            vars_[name] = make_host(root, name, template, buildtools, uv=None if args.installer == "pip" else uv)
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
        docs = {c: [] for c in cases}
        for rep in range(args.repeat):
            for case, (hosts, more) in cases.items():
                clean({n: vars_[n] for n in hosts})
                before = compiles(marker)
                loads.append(os.getloadavg()[0])
                took, doc = install(inv, hosts, lab, *more)
                times[case].append(took)
                docs[case].append(doc)
                counts[case].append(compiles(marker) - before)
                print(f"  run {rep + 1} {case}: {times[case][-1]:.2f} s, {counts[case][-1]} compile(s)", flush=True)
        one = statistics.median(times["1 host"])
        print(f"\nmedians of {args.repeat} (SSH lab hosts on 127.0.0.x, user {os.environ.get('USER') or os.getuid()}, "
              f"stand-in with {args.functions} C functions, wheel installed with {args.installer}; load average 1 min at the runs: "
              f"{min(loads):.1f}-{max(loads):.1f}):")
        for case in cases:
            med = statistics.median(times[case])
            print(f"  {case:34s} {med:7.2f} s  {med / one:5.2f}x one host  compiles per run: "
                  f"{sorted(set(counts[case]))}")
        for case, (hosts, _) in cases.items():
            mid = sorted(range(len(times[case])), key=times[case].__getitem__)[len(times[case]) // 2]
            print(f"\n  {case}, its median run ({times[case][mid]:.2f} s): seconds per phase\n"
                  f"{phases(docs[case][mid], hosts)}")
    finally:
        lab.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
