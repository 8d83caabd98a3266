"""The facts probe's ssh started before the program's imports (commands/hosts.py start_probes_early) and taken
over by the run's own probe only when it is exactly the command that run would start (SSHConnection.start_light),
against real sshd processes on 127.0.0.x."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ocrdeploy.commands.hosts import start_probes_early
from ocrdeploy.inventory import load_inventory, select_hosts
from ocrdeploy.provision import connection as connection_mod
from ocrdeploy.provision import facts as facts_mod
from ocrdeploy.provision.session import Session

ROOT = Path(__file__).parents[2]
SMI = Path(__file__).parents[1] / "fixtures" / "nvidia-smi"

pytestmark = pytest.mark.ssh


@pytest.fixture
def one(lab, tmp_path, monkeypatch):
    h = lab.start("h1", "127.0.0.2", path_prefix=str(SMI / "rtx5090-590"))
    inv = tmp_path / "inventory.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"h1": lab.inventory_entry(h, workdir=str(tmp_path / "wd"))}}}))
    monkeypatch.setenv("OCRDEPLOY_INVENTORY", str(inv))
    monkeypatch.setenv("OCRDEPLOY_KNOWN_HOSTS", str(lab.known_hosts))
    yield inv
    connection_mod.end_early()


@pytest.fixture
def spawned(monkeypatch):
    """The ssh processes started from here on (argv lists)."""
    seen = []
    real = subprocess.Popen.__init__

    def init(self, args, *a, **k):
        if isinstance(args, list) and args and args[0].endswith("/ssh"):
            seen.append(args)
        real(self, args, *a, **k)

    monkeypatch.setattr(subprocess.Popen, "__init__", init)
    return seen


def gather(inv, workdir):
    (h,) = select_hosts(load_inventory(inv), host="h1")
    if workdir is not None:
        h.vars["workdir"] = workdir
    with Session([h], connect_timeout=5, lazy=True) as session:
        conn = session.connection(h)
        return conn, facts_mod.gather(conn, facts_mod.probe_request(h.workdir, net_timeout=0))


def test_the_runs_probe_takes_the_early_ssh_over(one, spawned, tmp_path):
    assert start_probes_early(["install", "--host", "h1", "--check", "--connect-timeout", "5"]) == 1
    assert len(spawned) == 1 and list(connection_mod._EARLY) == ["h1"]
    early = connection_mod._EARLY["h1"][1]
    conn, facts = gather(one, None)
    assert len(spawned) == 1                      # no second ssh: the early one answered
    assert early.returncode == 0 and connection_mod._EARLY == {}
    assert facts["workdir"]["path"] == str(tmp_path / "wd") and facts["host"]["user"] == os.environ.get("USER", "root")
    assert conn._conn is None                     # and no paramiko connection either


def test_an_early_ssh_of_another_command_is_ended_and_the_run_starts_its_own(one, spawned, tmp_path):
    assert start_probes_early(["install", "-H", "h1", "--connect-timeout=5"]) == 1
    early = connection_mod._EARLY["h1"][1]
    # the run's workdir differs (say a --set workdir=...): its probe command is another one
    conn, facts = gather(one, str(tmp_path / "other"))
    assert len(spawned) == 2 and spawned[1] != spawned[0]
    assert early.returncode is not None and early.returncode != 0      # killed, not taken over
    assert facts["workdir"]["path"] == str(tmp_path / "other")


def test_an_unused_early_ssh_ends_with_the_session_and_its_probe_does_nothing(one, spawned, tmp_path, lab):
    assert start_probes_early(["install", "--host=h1"]) == 1
    early = connection_mod._EARLY["h1"][1]
    (h,) = select_hosts(load_inventory(one), host="h1")
    with Session([h], connect_timeout=5, lazy=True) as session:
        session.connection(h)
    assert early.returncode is not None and connection_mod._EARLY == {}
    # what that probe does with no request: nothing, not a default probe of ~/ocrdeploy with the network check
    cmd = facts_mod.probe_command(facts_mod.probe_request(str(tmp_path / "wd")))
    p = subprocess.run(["sh", "-c", connection_mod.LocalConnection(h).shell(cmd)], input="", capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == ""


@pytest.mark.parametrize("argv", [
    ["install", "--host", "h1", "--facts", "f.json", "--check"],     # plans from a file: reaches no host
    ["install", "--host", "h1", "--list-hosts"],
    ["install", "--host", "h1", "-h"],
    ["preflight", "--host", "h1"],
    ["install"],                                                    # localhost
    ["install", "--host", "nope"],                                  # the run says what is wrong, not this
    ["install", "--host", "h1", "--connect-timeout", "zero"],
    ["install", "--host"],
])
def test_no_early_ssh_where_the_run_reaches_no_host_or_says_why_not(one, spawned, argv):
    assert start_probes_early(argv) == 0
    assert spawned == [] and connection_mod._EARLY == {}


def test_an_install_over_ssh_makes_one_ssh_and_the_plan_it_makes_without_the_early_start(lab, tmp_path):
    """`python -m ocrdeploy install` end to end: one ssh, started before invoke's import, and the same steps,
    states, reasons and commands as the program entered without the early start (cli.main)."""
    h = lab.start("h1", "127.0.0.2", path_prefix=str(SMI / "rtx5090-590"))
    inv = tmp_path / "inventory.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"h1": lab.inventory_entry(
        h, workdir=str(tmp_path / "wd"), sdk_repo=str(tmp_path / "MiniCPM-OCR"))}}}))
    env = dict(os.environ, OCRDEPLOY_KNOWN_HOSTS=str(lab.known_hosts), OCRDEPLOY_INVENTORY=str(inv))
    counter = tmp_path / "count.py"
    counter.write_text(
        "import runpy, subprocess, sys\n"
        "real = subprocess.Popen.__init__\n"
        "def init(self, args, *a, **k):\n"
        "    if isinstance(args, list) and args and args[0].endswith('/ssh'):\n"
        "        sys.stderr.write('SSH-SPAWNED invoke=%s\\n' % ('invoke' in sys.modules))\n"
        "    real(self, args, *a, **k)\n"
        "subprocess.Popen.__init__ = init\n"
        "entry, sys.argv = sys.argv[1], ['ocrdeploy', *sys.argv[2:]]\n"
        "if entry == 'main':\n"
        "    runpy.run_module('ocrdeploy', run_name='__main__')\n"
        "else:\n"
        "    from ocrdeploy.cli import main\n"
        "    main(sys.argv)\n")
    args = ["install", "--host", "h1", "--check", "--recipe", "sdk-only", "--json"]
    plans = {}
    for entry in ("main", "cli"):
        p = subprocess.run([sys.executable, str(counter), entry, *args], capture_output=True, text=True, cwd=ROOT,
                           env=env, timeout=120)
        assert p.returncode == 0 and p.stderr.count("SSH-SPAWNED") == 1, p.stderr
        # from the program's entry, before invoke is imported; from cli.main, after (as before the early start)
        assert f"SSH-SPAWNED invoke={entry == 'cli'}" in p.stderr
        doc = json.loads(p.stdout)["hosts"]["h1"]
        plans[entry] = [(s["step"], s["status"], s["reason"], s["commands"]) for s in doc["steps"]]
    assert plans["main"] == plans["cli"] and len(plans["main"]) > 3
