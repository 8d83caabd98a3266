"""The options every host command shares: -h, -H/--host patterns, --limit, --list-hosts, --forks, -v."""

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ocrdeploy.commands.hosts import open_session, run_options
from ocrdeploy.errors import UsageError
from ocrdeploy.tasks import ns

ROOT = Path(__file__).parents[2]


def cli(*args, env=None):
    e = dict(os.environ, COLUMNS="200")
    e.pop("OCRDEPLOY_INVENTORY", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "ocrdeploy", *args], capture_output=True, text=True,
                          cwd=ROOT, env=e, timeout=60)


@pytest.mark.parametrize("task", sorted(ns.task_names))
def test_dash_h_is_help_for_every_task(task):
    p = cli(task, "-h")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"Usage: ocrdeploy [--core-opts] {task}")
    assert "-H STRING, --host=STRING" in p.stdout and "-l STRING, --limit=STRING" in p.stdout
    assert "-v INT, --verbose=INT" in p.stdout and "--list-hosts" in p.stdout and "--forks" in p.stdout


def test_list_hosts_prints_the_selection_and_connects_nowhere(tmp_path):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        server.settimeout(0.5)
        port = server.getsockname()[1]
        inv = tmp_path / "hosts.ini"
        inv.write_text(f"[a100]\nnode[01:03] ansible_host=127.0.0.1 ansible_port={port}\n"
                       f"[ubuntu]\nnode02\nbox ansible_host=127.0.0.1 ansible_port={port} ansible_user=ops\n")
        p = cli("serve", "-i", str(inv), "-H", "all:!node03", "--limit", "~node0[12]|box", "--list-hosts")
        assert p.returncode == 0, p.stderr
        lines = p.stdout.splitlines()
        assert lines[0].strip() == "hosts (3):"
        assert [ln.split()[0] for ln in lines[1:]] == ["node01", "node02", "box"]
        assert f"(ops@127.0.0.1:{port})" in p.stdout and "[a100, ubuntu]" in p.stdout
        p = cli("facts", "-i", str(inv), "-H", "a100:&ubuntu", "--list-hosts", "--json")
        assert p.returncode == 0 and [h["name"] for h in __import__("json").loads(p.stdout)["hosts"]] == ["node02"]
        with pytest.raises(socket.timeout):   # neither run opened a connection to the hosts
            server.accept()


@pytest.mark.parametrize("args,needle", [
    (["--forks", "0"], "--forks must be at least 1, got '0'"),
    (["--forks", "many"], "--forks must be a whole number, got 'many'"),
    (["-H", "gpu*"], "pattern 'gpu*' matches no host or group"),
    (["-H", "all:!nope"], "unknown host 'nope'"),
])
def test_bad_selection_options_are_one_line_exit_2(tmp_path, args, needle):
    inv = tmp_path / "hosts.ini"
    inv.write_text("[cpu]\nbox[1:2] ansible_connection=local\n")
    p = cli("facts", "-i", str(inv), *args, env={"OCRDEPLOY_SSH_CONFIG": str(tmp_path / "none")})
    assert p.returncode == 2 and needle in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("forks", [1, 2, 4])
def test_forks_is_how_many_hosts_are_worked_on_at_once(tmp_path, forks):
    inv = tmp_path / "hosts.ini"
    inv.write_text("[cpu]\nbox[1:4] ansible_connection=local\n")
    lock, now, peak = threading.Lock(), [0], [0]

    def one(conn, host):
        with lock:
            now[0] += 1
            peak[0] = max(peak[0], now[0])
        time.sleep(0.3)
        with lock:
            now[0] -= 1

    with run_options(forks=forks):
        with open_session("cpu", None, str(inv), False, 10) as session:
            outcomes = session.map(one)
    assert sorted(outcomes) == ["box1", "box2", "box3", "box4"]
    assert peak[0] == forks


def test_limit_goes_through_open_session(tmp_path):
    inv = tmp_path / "hosts.ini"
    inv.write_text("[cpu]\nbox[1:4] ansible_connection=local\n")
    with run_options(limit="box[2:3]"):
        assert [h.name for h in open_session("cpu", None, str(inv), False, 10).hosts] == ["box2", "box3"]
    with run_options(limit="box9"), pytest.raises(UsageError, match="unknown host 'box9'"):
        open_session("cpu", None, str(inv), False, 10)
