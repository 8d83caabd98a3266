"""ocrdeploy's inventories and host patterns against ansible-core's own answers: the 46 inventories and
240 pattern cases of ../shared/reports/ansible-conformance-2026-12-01.md where the two once differed
(fixtures/ansible/inventories, patterns.json).  Ansible's answers are fixtures/ansible/recorded.json
(tests/ansible_oracle.py run by ansible-core 2.19.14); with OCRDEPLOY_TEST_ANSIBLE_ENV pointing at a venv
holding ansible-core (.ci/engines.sh makes one) the oracle runs live instead, so the two stay in step.

Every difference left is in KNOWN with the report's cause: (b) ones the README documents, (c) ones not
worth Ansible's behaviour.  A difference not listed fails, and so does a listed one that no longer differs."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from ansible_oracle import plain
from ocrdeploy.errors import UsageError
from ocrdeploy.inventory import load_inventory, select_hosts

FIX = Path(__file__).parents[1] / "fixtures" / "ansible"
ORACLE = Path(__file__).parents[1] / "ansible_oracle.py"

KNOWN = {
    # (b) documented in the README
    ("15-multigroup.ini", "web,db:&prod", None): "B1 a term that matches nothing is an error",
    ("15-multigroup.ini", "prod", "h1,h9"): "B1",
    ("15-multigroup.ini", "web,h9", None): "B1",
    ("72-playground.ini", "frontend,backend:&canary", None): "B1",
    ("26-ipv6.yml", "2001:*", None): "B1 (Ansible: the terms 2001, which matches nothing, and *)",
    ("03-zero-pad.ini", "node[01:03]", None): "B2 [i:j] names the inventory's range",
    ("04-alpha.ini", "db-[a:c].example.com", None): "B2",
    ("05-step.ini", "web[1:10:2]", None): "B2",
    ("08-inline-quotes.ini", "app[1:2]", None): "B2",
    ("35-local.ini", "local", None): "B3 local is this machine",
    ("76-yaml-localhost.yml", "local", None): "B3",
    ("33-become.ini", "load"): "B4 only sudo",
    ("79-bad-port.ini", "load"): "B5 a port must be a number",
    # (c) not followed
    ("15-multigroup.ini", "all", "@/tmp/x/limit.txt"): "C2 --limit @file",
    ("15-multigroup.ini", "web db", None): "C3 whitespace between terms",
    ("15-multigroup.ini", None, "web db"): "C3",
    ("39-all-children.ini", "~(?i)^all$", None): "C4 a glob or regex never matches 'all'",
    ("39-all-children.ini", "a*", None): "C4",
    ("39-all-children.ini", "~^a", None): "C4",
    ("35-local.ini", "::1", None): "C5 ::1 is not localhost",
    ("43-range-backwards.ini", "load"): "C6 a backwards range is an error",
    ("55-string-hosts.yml", "load"): "C7 hosts: must be a mapping",
    ("61-unknown-key.yml", "load"): "C8 an unknown group key is an error",
    ("63-dupkey.yml", "load"): "C9 a duplicate key is an error",
    ("20-semicolon-header.ini", "load"): "C10 '; comment' after a section header is a comment",
    ("46-keyfile.ini", "k", None): "C11 a missing key file is refused before connecting",
    ("64-host-like-group.yml", "db", "conn"): "C12 a host's vars stay the host's",
    ("64-host-like-group.yml", "db1", "conn"): "C12",
    ("64-host-like-group.yml", "db2", "conn"): "C12",
    ("64-host-like-group.yml", "db", "vars"): "C12",
    ("64-host-like-group.yml", "db1", "vars"): "C12",
    ("64-host-like-group.yml", "db2", "vars"): "C12",
    ("10-literal-vars.ini", "h1", "vars"): "C14 b'bytes' and 2+3j stay text",
}


def ansible_answers():
    env_dir = os.environ.get("OCRDEPLOY_TEST_ANSIBLE_ENV")
    if not env_dir:
        return json.loads((FIX / "recorded.json").read_text(encoding="utf-8"))
    out = subprocess.run([str(Path(env_dir) / "bin" / "python"), str(ORACLE), str(FIX / "inventories"),
                          str(FIX / "patterns.json")], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, HOME=os.environ["HOME"]))
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


def differences(name, theirs) -> dict:
    """(file, what...) -> (Ansible, ocrdeploy) for each place the two differ."""
    path = FIX / "inventories" / name
    diffs = {}
    try:
        inv = load_inventory(path)
    except UsageError as exc:
        if "error" not in theirs:
            diffs[(name, "load")] = ("loads", str(exc))
        return diffs
    if "error" in theirs:
        diffs[(name, "load")] = (theirs["error"], "loads")
        return diffs
    if sorted(inv.hosts) != sorted(theirs["hosts"]):
        diffs[(name, "hosts")] = (sorted(theirs["hosts"]), sorted(inv.hosts))
    for host, want in theirs["hosts"].items():
        h = inv.hosts.get(host)
        if h is None:
            continue
        groups = h.groups or (["ungrouped"] if want["groups"] == ["ungrouped"] else [])   # C15, cosmetic
        if sorted(groups) != want["groups"]:
            diffs[(name, host, "groups")] = (want["groups"], groups)
        conn = [h.address, str(h.port), h.user]
        if conn != [want["address"], want["port"], want["user"]]:
            diffs[(name, host, "conn")] = ([want["address"], want["port"], want["user"]], conn)
        if plain(h.vars) != want["vars"]:
            diffs[(name, host, "vars")] = (want["vars"], plain(h.vars))
    for pattern, limit, picked in theirs["selections"]:
        try:
            ours = sorted(h.name for h in select_hosts(inv, host=pattern, limit=limit))
        except UsageError as exc:
            ours = {"error": str(exc)}
        if ours != picked and not (picked == [] and isinstance(ours, dict)):   # none vs an error: agree (B1)
            diffs[(name, pattern, limit)] = (picked, ours)
    return diffs


@pytest.fixture
def home(tmp_path, monkeypatch):
    """The report's machine: HOME with ~/.ssh/gpu.pem (the README example's key) and no ~/.ssh/config."""
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "gpu.pem").write_text("")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("OCRDEPLOY_SSH_CONFIG", str(tmp_path / "no-ssh-config"))
    monkeypatch.chdir(tmp_path)


def test_inventories_and_patterns_agree_with_ansible(home):
    answers = ansible_answers()
    assert set(answers["files"]) == {p.name for p in (FIX / "inventories").iterdir()}
    found = {}
    for name, theirs in answers["files"].items():
        found.update(differences(name, theirs))
    unexpected = {k: v for k, v in found.items() if k not in KNOWN}
    stale = sorted(str(k) for k in KNOWN if k not in found)
    assert not unexpected, "\n".join(f"{k}: Ansible {a!r}, ocrdeploy {b!r}" for k, (a, b) in unexpected.items())
    assert not stale, f"these no longer differ from Ansible, take them out of KNOWN: {stale}"
