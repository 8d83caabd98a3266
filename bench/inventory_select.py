"""What reading an inventory and selecting hosts costs, and what --forks changes over SSH.

Usage: python bench/inventory_select.py [--hosts 2000] [--ssh-hosts 8] [--repeat 3]

1. load_inventory for the same inventory written as YAML and as INI (hosts from ranges, group
   vars), then select_hosts with a glob, an exclusion and an intersection (in-process).
2. `ocrdeploy facts --list-hosts` on it (a whole CLI run: nothing is connected to).
3. `ocrdeploy facts` over N real sshd lab hosts (tests/sshlab.py) as root, whose ~/.bashrc runs
   `pyenv init` on every SSH command, with --forks 1 and --forks N.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from ocrdeploy.inventory import load_inventory, select_hosts  # noqa: E402
from sshlab import SSHLab  # noqa: E402

BOX = ROOT / "tests" / "fixtures" / "nvidia-smi" / "rtx5090-590"


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times)


def cli(args, env):
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", *args], capture_output=True, text=True, cwd=ROOT,
                       env=env)
    if p.returncode != 0:
        raise SystemExit(f"{args} failed ({p.returncode}): {p.stderr[-500:]}")
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=2000)
    ap.add_argument("--ssh-hosts", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ocrbench-inv-"))
    half = args.hosts // 2
    ini = tmp / "hosts.ini"
    ini.write_text(f"[a100]\ngpu[0001:{half:04d}] ansible_user=ops\n[h100]\ngpu[{half + 1:04d}:{args.hosts:04d}]\n"
                   f"[ubuntu]\ngpu[0001:{args.hosts:04d}:2]\n[a100:vars]\nworkdir=/data/ocr\ngpu=auto\n"
                   f"[all:vars]\nhf_endpoint=https://hf-mirror.example\n")
    inv = load_inventory(ini)
    doc = {"all": {"vars": {"hf_endpoint": "https://hf-mirror.example"}, "children": {
        "a100": {"vars": {"workdir": "/data/ocr", "gpu": "auto"},
                 "hosts": {n: {"ansible_user": "ops"} for n in inv.groups["a100"]}},
        "h100": {"hosts": {n: None for n in inv.groups["h100"]}},
        "ubuntu": {"hosts": {n: None for n in inv.groups["ubuntu"]}}}}}
    yml = tmp / "hosts.yml"
    yml.write_text(yaml.safe_dump(doc))
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    for path in (yml, ini):
        med, low = best(lambda: load_inventory(path), args.repeat)
        print(f"load {path.suffix} ({args.hosts} hosts, 3 groups): {med * 1000:.0f} ms (min {low * 1000:.0f})")
    for pattern in ("gpu00*", "all:!gpu0001", "a100:&ubuntu"):
        med, low = best(lambda: select_hosts(inv, host=pattern), args.repeat)
        n = len(select_hosts(inv, host=pattern))
        print(f"select {pattern!r} -> {n} hosts: {med * 1000:.1f} ms (min {low * 1000:.1f})")
    env = dict(os.environ, OCRDEPLOY_PROBE_NO_NVML="1")
    med, low = best(lambda: cli(["facts", "-i", str(ini), "-H", "a100:&ubuntu", "--list-hosts"], env), args.repeat)
    print(f"ocrdeploy facts --list-hosts ({half // 2} of {args.hosts} hosts): {med:.2f} s (min {low:.2f})")

    lab = SSHLab(tmp / "lab")
    try:
        hosts = [lab.start(f"h{i}", f"127.0.2.{i + 1}", path_prefix=str(BOX)) for i in range(args.ssh_hosts)]
        lines = ["[lab]"] + [f"h{i} ansible_host={h.ip} ansible_port={h.port}" for i, h in enumerate(hosts)]
        lines += ["[lab:vars]", "ansible_user=root", f"ansible_ssh_private_key_file={lab.client_key}",
                  f"known_hosts_file={lab.known_hosts}", "workdir=/tmp/ocrbench-wd"]
        labinv = tmp / "lab.ini"
        labinv.write_text("\n".join(lines) + "\n")
        for forks in (1, args.ssh_hosts):
            med, low = best(lambda: cli(["facts", "-i", str(labinv), "-H", "lab", "--forks", str(forks),
                                         "--json"], env), args.repeat)
            print(f"facts over {args.ssh_hosts} SSH hosts as root (pyenv hook), --forks {forks}: "
                  f"{med:.2f} s (min {low:.2f})")
    finally:
        lab.stop()


if __name__ == "__main__":
    main()
