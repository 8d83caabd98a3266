"""Preflight's network checks keep their stated bound when the name lookup hangs (issue 21, item 2).

The probe's processes get tests/fixtures/hanging-resolver/sitecustomize.py on PYTHONPATH: a getaddrinfo
that sleeps far past the bound for every name, as a dead nameserver in resolv.conf does.  The github
test's bound is --network-timeout, the sources' 3x it, run side by side: the whole preflight of a host
ends within that plus the facts round trip (the same preflight with --network-timeout 0)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parents[2]
HOOK = ROOT / "tests" / "fixtures" / "hanging-resolver"
BOX = ROOT / "tests" / "fixtures" / "nvidia-smi" / "rtx5090-590"
HANG = 120          # the lookup's sleep: a probe that waits for it fails the test by its timeout
NET = 0.5           # --network-timeout: github 0.5 s, each source 1.5 s
SLACK = 4.0         # this machine is shared and busy: scheduling, not a missing bound


def preflight(args, env):
    e = dict(os.environ, COLUMNS="200", OCRDEPLOY_PROBE_NO_NVML="1", PATH=f"{BOX}:{os.environ['PATH']}")
    e.pop("OCRDEPLOY_INVENTORY", None)
    e.update(env)
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "preflight", "--json", *args], capture_output=True,
                       text=True, env=e, cwd=ROOT, timeout=HANG / 2)
    return time.monotonic() - start, p


def network_checks(doc):
    checks = {c["name"]: c for c in doc["checks"]}
    return checks["github"], checks["sources"]


def assert_bounded(floor, took, p):
    assert p.returncode in (0, 1), p.stderr
    (doc,) = json.loads(p.stdout)["hosts"].values()
    github, sources = network_checks(doc)
    assert github["status"] == "warn" and f"no answer within {NET} s" in github["message"], github
    assert sources["status"] == "warn" and sources["message"].count(
        f"closed (no answer within {3 * NET} s (name lookup included))") >= 3, sources
    assert took <= floor + 3 * NET + SLACK, (took, floor)


def test_a_local_preflight_ends_within_its_bound_when_the_resolver_hangs():
    hang = {"PYTHONPATH": str(HOOK), "OCRDEPLOY_TEST_RESOLVER_HANG": str(HANG)}
    floor, p0 = preflight(["--network-timeout", "0"], hang)
    assert p0.returncode in (0, 1), p0.stderr
    took, p = preflight(["--network-timeout", str(NET)], hang)
    assert_bounded(floor, took, p)


@pytest.mark.ssh
def test_a_preflight_over_ssh_ends_within_its_bound_when_the_hosts_resolver_hangs(lab, tmp_path):
    h = lab.start("dns", "127.0.0.31", path_prefix=str(BOX),
                  env={"PYTHONPATH": str(HOOK), "OCRDEPLOY_TEST_RESOLVER_HANG": str(HANG)})
    # the probe starts its interpreter with -S (no site module, so no sitecustomize): this host's python3 keeps
    # the site module, and with it the hook on PYTHONPATH
    python = tmp_path / "python3"
    python.write_text('#!/bin/sh\n[ "$1" = -S ] && shift\nexec /usr/bin/python3 "$@"\n')
    python.chmod(0o755)
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"dns": lab.inventory_entry(
        h, workdir=str(tmp_path / "wd"), ansible_python_interpreter=str(python))}}}))
    env = {"OCRDEPLOY_KNOWN_HOSTS": str(lab.known_hosts), "OCRDEPLOY_INVENTORY": str(inv)}
    floor, p0 = preflight(["--host", "dns", "--network-timeout", "0"], env)
    assert p0.returncode in (0, 1), p0.stderr
    took, p = preflight(["--host", "dns", "--network-timeout", str(NET)], env)
    assert_bounded(floor, took, p)
