"""Time `ocrdeploy preflight` against 1 and N SSH lab hosts, locally, and `inv --list`.

Usage: python bench/preflight_hosts.py [--hosts 16] [--repeat 3] [--network-timeout 1] [--hanging-resolver]

Starts real sshd processes on 127.0.0.x (tests/sshlab.py) with the recorded RTX 5090
nvidia-smi on their PATH, then times whole CLI runs (process start included).
Measured both ways: as root, whose ~/.bashrc runs `pyenv init` on every SSH
command, and as a plain user `ocrbench` without shell hooks (created if missing).
Each N-host figure stands beside the N-way OpenSSH floor of the same run (N concurrent
`ssh host python3 -c pass`), with the network checks off (--network-timeout 0) and on
(--network-timeout S: github S, each source 3 x S, side by side): on, it should be within
the floor + 3 x S plus scheduling.  --hanging-resolver gives the hosts' processes a
getaddrinfo that sleeps 120 s (tests/fixtures/hanging-resolver), as a dead nameserver does.
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

BOX = ROOT / "tests" / "fixtures" / "nvidia-smi" / "rtx5090-590"


def timed(argv, env, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        p = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=ROOT)
        times.append(time.perf_counter() - t)
        if p.returncode not in (0, 1):
            raise SystemExit(f"{argv} failed ({p.returncode}): {p.stderr}")
        if "--json" in argv and "preflight" in argv:
            hosts = json.loads(p.stdout)["hosts"]
            down = {n: h["error"] for n, h in hosts.items() if not h["reachable"]}
            if down:  # a figure of failed connections would be a lie
                raise SystemExit(f"unreachable hosts: {down}")
    return statistics.median(times), min(times)


def floor(lab, hosts, user, repeat):
    """Median wall time of one `ssh host python3 -c pass` to every host at once."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        procs = [subprocess.Popen(["ssh", "-q", "-i", str(lab.client_key), "-o", "BatchMode=yes", "-o",
                                   f"UserKnownHostsFile={lab.known_hosts}", "-p", str(h.port), f"{user}@{h.ip}",
                                   "python3 -c pass"]) for h in hosts]
        if any(p.wait() for p in procs):
            raise SystemExit("the OpenSSH floor failed: a host did not answer")
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def ensure_user(name):
    if subprocess.run(["id", name], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "-m", "-s", "/bin/bash", name], check=True)
    # useradd leaves the account locked ('!'), and sshd without PAM refuses locked accounts
    subprocess.run(["usermod", "-p", "*", name], check=True)
    home = Path(f"/home/{name}")
    for rc in (".bashrc", ".profile"):
        (home / rc).write_text("")  # no shell hooks at all
    return name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--network-timeout", type=float, default=1.0)
    ap.add_argument("--hanging-resolver", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ocrbench-"))
    os.chmod(tmp, 0o755)
    lab = SSHLab(tmp)
    os.chmod(lab.client_key, 0o600)
    plain = ensure_user("ocrbench")
    try:
        hang = {"PYTHONPATH": str(ROOT / "tests" / "fixtures" / "hanging-resolver"),
                "OCRDEPLOY_TEST_RESOLVER_HANG": "120"} if args.hanging_resolver else None
        hosts = [lab.start(f"h{i}", f"127.0.1.{i + 1}", path_prefix=str(BOX), env=hang) for i in range(args.hosts)]
        print(f"load average at start: {os.getloadavg()[0]:.2f}")
        cli = [sys.executable, "-m", "ocrdeploy", "preflight", "--json", "--network-timeout", "0"]
        env = dict(os.environ, OCRDEPLOY_KNOWN_HOSTS=str(lab.known_hosts), OCRDEPLOY_PROBE_NO_NVML="1")
        print(f"machine: {os.cpu_count()} CPUs; sshd hosts share them with the controller")
        for user, label in (("root", "root (~/.bashrc runs pyenv init)"), (plain, "ocrbench (no shell hooks)")):
            inv = tmp / f"inv-{user}.yml"
            inv.write_text(yaml.safe_dump({"all": {"hosts": {
                h.name: {**lab.inventory_entry(h, workdir="/tmp/ocrbench-wd"), "ansible_user": user}
                for h in hosts}}}))
            e = dict(env, OCRDEPLOY_INVENTORY=str(inv))
            one, one_min = timed(cli + ["--host", "h0"], e, args.repeat)
            many, many_min = timed(cli + ["--host", "all"], e, args.repeat)
            print(f"{label}: 1 host {one:.2f} s (min {one_min:.2f}); {args.hosts} hosts {many:.2f} s "
                  f"(min {many_min:.2f}); ratio {many / one:.2f}x")
            net = [a if a != "0" else str(args.network_timeout) for a in cli]
            many_net, _ = timed(net + ["--host", "all"], e, args.repeat)
            base = floor(lab, hosts, user, args.repeat)
            print(f"{label}: {args.hosts}-way OpenSSH floor {base:.2f} s; {args.hosts} hosts, network checks off "
                  f"{many:.2f} s = {many / base:.2f}x the floor; on (--network-timeout {args.network_timeout:g}"
                  f"{', resolver hanging' if hang else ''}) {many_net:.2f} s = floor + {many_net - base:.2f} s "
                  f"(target floor + 4 s; load {os.getloadavg()[0]:.2f})")
        e = dict(env, PATH=f"{BOX}:{os.environ['PATH']}")
        local, local_min = timed(cli, e, args.repeat)
        print(f"local preflight (in-process probe): {local:.3f} s (min {local_min:.3f})")
        inv_list, inv_min = timed([sys.executable, "-m", "invoke", "--list"], env, args.repeat + 2)
        print(f"inv --list: {inv_list:.3f} s (min {inv_min:.3f})")
    finally:
        lab.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
