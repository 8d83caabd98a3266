"""The facts probe through the system ssh (provision/openssh.py) against real sshd hosts: one ssh process
and no paramiko connection for a run that needs only the probe, host keys checked as strictly as the
paramiko path, and every refusal still paramiko's exact one-line HostError."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ocrdeploy.inventory import load_inventory, select_hosts
from ocrdeploy.provision.connection import SSHConnection
from ocrdeploy.provision.openssh import known_hosts_readable_alike, ssh_argv

ROOT = Path(__file__).parents[2]
SMI = Path(__file__).parents[1] / "fixtures" / "nvidia-smi"

pytestmark = pytest.mark.ssh


@pytest.fixture
def counted_ssh(tmp_path):
    """A PATH whose `ssh` logs each start to a file, then is the real ssh."""
    real = shutil.which("ssh")
    if real is None:
        pytest.skip("no ssh client")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "ssh-starts.log"
    # one line per start: the options up to `--` (the remote command after it spans lines)
    (bin_dir / "ssh").write_text(f'#!/bin/sh\nline=""\nfor a in "$@"; do [ "$a" = "--" ] && break; '
                                 f'line="$line $a"; done\necho "$line" >> {log}\nexec {real} "$@"\n')
    (bin_dir / "ssh").chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}, log


def starts(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def cli(args, inv, known_hosts, env=None):
    home = Path(known_hosts).parent / "home"
    home.mkdir(exist_ok=True)
    e = dict(os.environ, OCRDEPLOY_KNOWN_HOSTS=str(known_hosts), COLUMNS="200", HOME=str(home),
             PYTHONPROFILEIMPORTTIME="1")
    e.pop("OCRDEPLOY_INVENTORY", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "ocrdeploy", *args, "--inventory", str(inv)], capture_output=True,
                          text=True, cwd=ROOT, env=e, timeout=120)


def imported(stderr: str) -> set:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def inventory(tmp_path, **hosts):
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    return inv


def other_key_line(host, tmp_path) -> str:
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    return f"[{host.ip}]:{host.port} " + " ".join(other.with_suffix(".pub").read_text().split()[:2]) + "\n"


def test_facts_take_one_ssh_process_and_no_paramiko(lab, tmp_path, counted_ssh):
    env, log = counted_ssh
    h = lab.start("os1", "127.0.0.71", path_prefix=str(SMI / "rtx5090-590"))
    inv = inventory(tmp_path, h=lab.inventory_entry(h, workdir=str(tmp_path / "wd")))
    p = cli(["facts", "-H", "h", "--json", "--raw"], inv, lab.known_hosts, env)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    facts = json.loads(p.stdout)["hosts"]["h"]["facts"]
    assert facts["probe"]["kind"] == "python" and facts["gpu"]["driver"] == "590.48.01"
    assert len(starts(log)) == 1
    assert {"paramiko", "fabric"} & imported(p.stderr) == set()      # no paramiko connection could be made
    argv = starts(log)[0]
    assert "StrictHostKeyChecking=yes" in argv and f"UserKnownHostsFile={lab.known_hosts}" in argv
    assert f"GlobalKnownHostsFile={lab.known_hosts}" in argv and "BatchMode=yes" in argv


def test_an_unknown_or_changed_key_is_refused_by_ssh_and_said_by_paramiko(lab, tmp_path, counted_ssh):
    env, log = counted_ssh
    stranger = lab.start("os2", "127.0.0.72", known=False)
    known = lab.start("os3", "127.0.0.73")
    kh = tmp_path / "known_hosts"
    kh.write_text(lab.known_hosts.read_text().replace(known.known_hosts_line, other_key_line(known, tmp_path)))
    inv = inventory(tmp_path, s=lab.inventory_entry(stranger), k=lab.inventory_entry(known))
    p = cli(["facts", "-H", "s", "--json"], inv, kh, env)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-3000:]
    error = json.loads(p.stdout)["hosts"]["s"]["error"]
    assert error.startswith(f"host key of {stranger.ip}:{stranger.port} is unknown (ssh-ed25519 SHA256:")
    assert error.endswith(f"check it, then re-run with --accept-new-host-keys to record it in {kh}")
    assert len(starts(log)) == 1 and "paramiko" in imported(p.stderr)     # ssh said no (255), paramiko said why
    p = cli(["facts", "-H", "k", "--json", "--accept-new-host-keys"], inv, kh, env)
    assert p.returncode == 1
    error = json.loads(p.stdout)["hosts"]["k"]["error"]
    assert error.startswith(f"host key of {known.ip}:{known.port} CHANGED (now SHA256:")
    assert error.endswith(f"ssh-keygen -f {kh} -R '[{known.ip}]:{known.port}'")
    assert len(starts(log)) == 2
    assert kh.read_text().count(f"[{known.ip}]:{known.port} ") == 1       # nothing recorded beside the old key


def conn_for(lab, tmp_path, host, accept_new=False, **vars_):
    inv = inventory(tmp_path, h=lab.inventory_entry(host, **vars_))
    (h,) = select_hosts(load_inventory(inv), host="h")
    return SSHConnection(h, connect_timeout=5, accept_new_host_keys=accept_new)


def test_ssh_itself_refuses_what_paramiko_refuses_and_records_as_paramiko_does(lab, tmp_path, monkeypatch):
    """The OpenSSH path alone (no paramiko fallback): exit 255 for an unknown or a changed key, even where
    the known_hosts file is empty and a user's ssh config would say otherwise."""
    stranger = lab.start("os4", "127.0.0.74", known=False)
    kh = tmp_path / "kh"
    kh.write_text("")
    monkeypatch.setenv("OCRDEPLOY_KNOWN_HOSTS", str(kh))
    cfg = tmp_path / "ssh_config"
    cfg.write_text("Host *\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  CheckHostIP yes\n"
                   f"  HashKnownHosts yes\n  UpdateHostKeys yes\n  ControlMaster auto\n  ControlPath {tmp_path}/cm-%C\n")
    monkeypatch.setenv("OCRDEPLOY_SSH_CONFIG", str(cfg))
    run = dict(timeout=30, stdin=None, echo=False, out_stream=None)
    conn = conn_for(lab, tmp_path, stranger)
    assert conn._run_openssh("echo hi", "echo hi", **run) is None           # unknown: refused
    assert kh.read_text() == ""
    conn = conn_for(lab, tmp_path, stranger, accept_new=True)
    assert conn._run_openssh("echo hi", "echo hi", **run).stdout == "hi\n"
    assert kh.read_text() == stranger.known_hosts_line                    # the line paramiko's RecordNew writes
    kh.write_text(other_key_line(stranger, tmp_path))
    conn = conn_for(lab, tmp_path, stranger, accept_new=True)
    assert conn._run_openssh("echo hi", "echo hi", **run) is None           # changed: refused, accept-new or not
    assert conn._conn is None
    assert not list(tmp_path.glob("cm-*"))                                 # no shared master connection


def test_what_openssh_cannot_be_told_alike_keeps_paramiko(lab, tmp_path, monkeypatch):
    h = lab.start("os5", "127.0.0.75")
    monkeypatch.setenv("OCRDEPLOY_KNOWN_HOSTS", str(lab.known_hosts))
    assert ssh_argv(conn_for(lab, tmp_path, h)) is not None
    shell_proxy = "-o 'ProxyCommand=sh -c \"nc %h %p\"'"
    assert ssh_argv(conn_for(lab, tmp_path, h, ansible_ssh_common_args=shell_proxy)) is None
    assert ssh_argv(conn_for(lab, tmp_path, h, ansible_ssh_common_args="-o 'ProxyCommand=nc %h %p'")) is not None
    assert ssh_argv(conn_for(lab, tmp_path, h, ansible_ssh_common_args="-o 'ProxyCommand=nc %n %p'")) is None
    conn = conn_for(lab, tmp_path, h)
    conn.verbosity = 3                                        # -vvv: paramiko's own log of the connection
    assert ssh_argv(conn) is None
    spaced = tmp_path / "a b"
    spaced.write_text(lab.known_hosts.read_text())
    monkeypatch.setenv("OCRDEPLOY_KNOWN_HOSTS", str(spaced))
    assert ssh_argv(conn_for(lab, tmp_path, h)) is None
    bad = tmp_path / "kh_bad"
    bad.write_text("127.0.0.9 ssh-ed25519 AAAA!!!not-base64\n" + lab.known_hosts.read_text())
    assert not known_hosts_readable_alike([bad]) and known_hosts_readable_alike([lab.known_hosts])
    monkeypatch.setenv("OCRDEPLOY_KNOWN_HOSTS", str(bad))
    assert ssh_argv(conn_for(lab, tmp_path, h)) is None       # paramiko skips the line and says so
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setenv("OCRDEPLOY_KNOWN_HOSTS", str(lab.known_hosts))
    assert ssh_argv(conn_for(lab, tmp_path, h)) is None       # no ssh client: paramiko


def test_a_jump_host_goes_through_ssh_with_its_key_checked_the_same_way(lab, tmp_path, counted_ssh):
    env, log = counted_ssh
    jump = lab.start("osj", "127.0.0.76")
    inner = lab.start("osi", "127.0.0.77", path_prefix=str(SMI / "rtx5090-590"))
    user = os.environ.get("USER") or "root"
    via = f"-J {user}@{jump.ip}:{jump.port}"
    inv = inventory(tmp_path, h=lab.inventory_entry(inner, ansible_ssh_common_args=via))
    p = cli(["facts", "-H", "h", "--json"], inv, lab.known_hosts, env)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    assert "paramiko" not in imported(p.stderr)
    assert len(starts(log)) == 2 and "-W [" in starts(log)[1] and "StrictHostKeyChecking=yes" in starts(log)[1]
    # the jump host's key unknown: refused by ssh, said by paramiko naming the jump host
    kh = tmp_path / "kh_nojump"
    kh.write_text(inner.known_hosts_line)
    p = cli(["facts", "-H", "h", "--json"], inv, kh, env)
    assert p.returncode == 1
    error = json.loads(p.stdout)["hosts"]["h"]["error"]
    assert error.startswith(f"host key of jump host [{jump.ip}]:{jump.port} is unknown"), error
