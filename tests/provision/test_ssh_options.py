"""The inventory's Ansible connection vars against real sshd hosts: become, the Python interpreter,
and ansible_ssh_common_args (a jump host, a proxy command, what is ignored and said so)."""

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ocrdeploy.inventory import load_inventory, select_hosts
from ocrdeploy.provision.command import Command
from ocrdeploy.provision.session import Session

ROOT = Path(__file__).parents[2]
SMI = Path(__file__).parents[1] / "fixtures" / "nvidia-smi" / "rtx5090-590"

pytestmark = pytest.mark.ssh


def cli(args, inv):
    env = dict(os.environ, COLUMNS="200")
    env.pop("OCRDEPLOY_INVENTORY", None)
    return subprocess.run([sys.executable, "-m", "ocrdeploy", *args, "--inventory", str(inv)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=120)


def ini_host(lab, name, h, **vars_):
    base = {"ansible_host": h.ip, "ansible_port": h.port, "ansible_user": os.environ.get("USER") or "root",
            "ansible_ssh_private_key_file": str(lab.client_key), **vars_}
    return name + "".join(f" {k}={v}" for k, v in base.items())


@pytest.fixture
def pair(lab):
    return lab.start("jump", "127.0.0.41"), lab.start("inner", "127.0.0.42", path_prefix=str(SMI))


def write(tmp_path, lab, *lines):
    inv = tmp_path / "hosts.ini"
    inv.write_text("\n".join(["[lab]", *lines, "[lab:vars]", f"known_hosts_file={lab.known_hosts}",
                              f"workdir={tmp_path / 'wd'}", ""]))
    return inv


@pytest.mark.skipif(shutil.which("sudo") is None, reason="needs sudo (.ci/run installs it)")
def test_become_runs_every_command_as_the_become_user_and_sudo_steps_as_root(lab, pair, tmp_path):
    _, inner = pair
    inv = write(tmp_path, lab, ini_host(lab, "b", inner, ansible_become="yes", ansible_become_user="nobody"),
                ini_host(lab, "plain", inner))
    p = cli(["facts", "--json", "--raw", "-H", "lab", "-v"], inv)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)["hosts"]
    assert doc["b"]["facts"]["host"]["uid"] == 65534 and doc["b"]["facts"]["host"]["user"] == "nobody"
    assert doc["plain"]["facts"]["host"]["uid"] == os.getuid()
    assert "[b] $ sudo -n -H -u nobody env FALLBACK=" in p.stderr      # -v shows the command as it ran
    assert "[plain] $ env FALLBACK=" in p.stderr
    assert "[b] | " not in p.stderr                                   # output streams from -vv on
    (host,) = select_hosts(load_inventory(inv), host="b")
    with Session([host]) as session:
        conn = session.connection(host)
        assert conn.run(["id", "-un"]).stdout.strip() == "nobody"
        assert conn.run(Command(["id", "-un"], sudo=True)).stdout.strip() == "root"


@pytest.mark.skipif(shutil.which("sudo") is None or shutil.which("runuser") is None, reason="needs sudo, runuser")
def test_sudo_asking_for_a_password_is_reported_never_answered():
    from ocrdeploy.provision.connection import _sudo_wants_password

    real = subprocess.run(["runuser", "-u", "nobody", "--", "sudo", "-n", "true"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    assert real.returncode == 1 and _sudo_wants_password(real.stderr), real.stderr  # sudo 1.9: "a password is required"
    assert not _sudo_wants_password("sudo: unable to resolve host x\n")


def test_python_interpreter_is_what_the_probe_and_the_helpers_run_with(lab, pair, tmp_path):
    _, inner = pair
    venv_python = sys.executable   # a real interpreter, not the /usr/bin/python3 the probe would pick
    inv = write(tmp_path, lab, ini_host(lab, "named", inner, ansible_python_interpreter=venv_python),
                ini_host(lab, "missing", inner, ansible_python_interpreter="/nonexistent/bin/python3"),
                ini_host(lab, "envpy", inner, ansible_python_interpreter='"/usr/bin/env python3"'),
                ini_host(lab, "envmissing", inner, ansible_python_interpreter='"/usr/bin/env python3.0"'))
    p = cli(["facts", "--json", "--raw", "-H", "lab"], inv)
    doc = json.loads(p.stdout)["hosts"]
    assert doc["named"]["facts"]["probe"]["python"] == venv_python
    assert doc["envpy"]["facts"]["probe"]["kind"] == "python"          # Ansible's `/usr/bin/env python3` form
    assert "ansible_python_interpreter /nonexistent/bin/python3: not found on this host" in doc["missing"]["error"]
    assert "ansible_python_interpreter /usr/bin/env python3.0: not found" in doc["envmissing"]["error"]
    # the host answered: it lacks the interpreter, it is not unreachable
    assert doc["missing"]["reachable"] is True and doc["envmissing"]["reachable"] is True
    assert p.returncode == 1
    p = cli(["status", "--json", "-H", "missing"], inv)      # the service helper goes through it too
    assert p.returncode == 1 and "/nonexistent/bin/python3: not found" in p.stdout + p.stderr


def test_proxy_jump_and_proxy_command_reach_the_host_and_the_rest_is_named(lab, pair, tmp_path):
    jump, inner = pair
    user = os.environ.get("USER") or "root"
    with socket.socket() as s:
        s.bind(("127.0.0.43", 0))
        closed = s.getsockname()[1]
    proxy = (f"ssh -q -i {lab.client_key} -o UserKnownHostsFile={lab.known_hosts} -o BatchMode=yes "
             f"-p {jump.port} -W %h:%p {user}@{jump.ip}")
    inv = write(
        tmp_path, lab,
        ini_host(lab, "viajump", inner,
                 ansible_ssh_common_args=f"'-o ProxyJump={user}@{jump.ip}:{jump.port} -o ControlMaster=auto "
                                         f"-o StrictHostKeyChecking=no'"),
        ini_host(lab, "viacmd", inner, ansible_ssh_common_args=f"\"-o 'ProxyCommand={proxy}'\""),
        ini_host(lab, "badjump", inner, ansible_ssh_common_args=f"'-J {user}@127.0.0.43:{closed}'"))
    p = cli(["facts", "--json", "-H", "lab", "-vvv"], inv)
    doc = json.loads(p.stdout)["hosts"]
    assert doc["viajump"]["reachable"] and doc["viacmd"]["reachable"], p.stderr[-3000:]
    assert f"via {user}@{jump.ip}:{jump.port}" in p.stderr and "via ssh -q -i" in p.stderr
    assert "[paramiko] DEBUG" in p.stderr                 # -vvv: the connection's own debug log
    assert "[viajump] | @@OCRDEPLOY-FACTS@@\n" in p.stderr      # and -vv's streamed output, line by line
    # the jump is really used: through a closed one the host is unreachable, and the error says so
    assert not doc["badjump"]["reachable"] and f"127.0.0.43:{closed} (jump host)" in doc["badjump"]["error"]
    assert ("warning: viajump: ignored ssh option -o ControlMaster=auto (one connection per host is opened "
            "and reused for the whole run anyway)") in p.stderr
    assert "ignored ssh option -o StrictHostKeyChecking=no (host keys are always verified" in p.stderr
    listed = cli(["facts", "-H", "viajump", "--list-hosts"], inv)
    assert "ignored: ssh option -o ControlMaster=auto" in listed.stdout


@pytest.mark.skipif(shutil.which("sudo") is None, reason="needs sudo (.ci/run installs it)")
@pytest.mark.parametrize("become", [True, False])
def test_become_and_the_interpreter_apply_to_a_local_host_too(tmp_path, become):
    python = next((p for p in ("/usr/bin/python3.11", "/usr/bin/python3.12", "/usr/bin/python3.13")
                   if os.path.exists(p)), None)   # one nobody may run, named otherwise than /usr/bin/python3
    if python is None:
        pytest.skip("no /usr/bin/python3.1x")
    setting = "ansible_become=true ansible_become_user=nobody" if become else f"ansible_python_interpreter={python}"
    inv = tmp_path / "hosts.ini"
    inv.write_text(f"[here]\nlocalhost ansible_connection=local {setting} workdir=/tmp\n")
    p = cli(["facts", "--json", "--raw"], inv)
    assert p.returncode == 0, p.stderr
    probe = json.loads(p.stdout)["hosts"]["localhost"]["facts"]
    assert probe["host"]["uid"] == (65534 if become else os.getuid())
    assert (probe["probe"]["python"] == python) is not become


def test_become_prefix_always_has_sudo_never_prompt():
    """Connection.prefix() for a become host, without any sudo on the machine: -n is what keeps a password
    prompt from ever being answered over the wire (the become test above needs a real sudo)."""
    from ocrdeploy.inventory import Host
    from ocrdeploy.provision.connection import Connection

    conn = Connection(Host("gpu1", vars={"ansible_host": "10.0.0.1", "ansible_become": True,
                                         "ansible_become_user": "ocr"}))
    assert conn.prefix(Command(["id"])) == ("sudo", "-n", "-H", "-u", "ocr")
    assert conn.prefix(Command(["id"], sudo=True)) == ("sudo", "-n")
    root = Connection(Host("gpu2", vars={"ansible_host": "10.0.0.2", "ansible_become": True}))
    assert root.prefix(Command(["id"])) == root.prefix(Command(["id"], sudo=True)) == ("sudo", "-n", "-H", "-u", "root")
    plain = Connection(Host("gpu3", vars={"ansible_host": "10.0.0.3"}))
    assert plain.prefix(Command(["id"], sudo=True)) == ("sudo", "-n") and plain.prefix(Command(["id"])) == ()
    plain.set_uid(0)
    assert plain.prefix(Command(["id"], sudo=True)) == ()       # root needs no sudo for root's commands
