"""Host keys and jump hosts against real sshd hosts (red team 2026-12-01: M1, M2, M3, L2): nothing in an
inventory turns host-key checking off, a malformed jump or address is that host's one line while the
other hosts carry on, and one unreadable known_hosts line is skipped as OpenSSH skips it."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parents[2]

pytestmark = pytest.mark.ssh


def cli(args, inv, known_hosts):
    """The CLI with a HOME of its own: a dropped known_hosts setting falls back to ~/.ssh/known_hosts last,
    which must never be the real one."""
    home = Path(known_hosts).parent / "home"
    home.mkdir(exist_ok=True)
    env = dict(os.environ, OCRDEPLOY_KNOWN_HOSTS=str(known_hosts), COLUMNS="200", HOME=str(home))
    env.pop("OCRDEPLOY_INVENTORY", None)
    return subprocess.run([sys.executable, "-m", "ocrdeploy", *args, "--inventory", str(inv)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=120)


@pytest.fixture
def host(lab):
    return lab.start("hk", "127.0.0.61")


def inventory(tmp_path, lab, **hosts):
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    return inv


def wrong_key_for(lab, host, tmp_path) -> Path:
    """A known_hosts that lists another key for the host: connecting must say CHANGED."""
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    kh = tmp_path / "kh_wrong"
    kh.write_text(f"[{host.ip}]:{host.port} " + " ".join(other.with_suffix(".pub").read_text().split()[:2]) + "\n")
    return kh


@pytest.mark.parametrize("setting", ["known_hosts_file=/dev//null", "known_hosts_file=symlink",
                                     "UserKnownHostsFile=/dev//null", "UserKnownHostsFile=/dev/null KH",
                                     "UserKnownHostsFile=EMPTY KH"])
def test_a_changed_key_is_refused_whatever_points_at_dev_null(lab, host, tmp_path, setting):
    kh = wrong_key_for(lab, host, tmp_path)
    link = tmp_path / "null-link"
    link.symlink_to("/dev/null")
    key, _, value = setting.partition("=")
    empty = tmp_path / "kh_empty"
    empty.write_text("")
    value = value.replace("symlink", str(link)).replace("KH", str(kh)).replace("EMPTY", str(empty))
    extra = ({"known_hosts_file": value} if key == "known_hosts_file"
             else {"ansible_ssh_common_args": f"-o '{key}={value}'"})
    inv = inventory(tmp_path, lab, h=lab.inventory_entry(host, **extra))
    for _ in range(2):          # before: "recorded" to /dev/null and accepted on every run
        p = cli(["facts", "-H", "h", "--accept-new-host-keys", "--json"], inv, kh)
        assert p.returncode == 1, p.stdout + p.stderr
        assert "CHANGED" in json.loads(p.stdout)["hosts"]["h"]["error"]
    first = value.split()[0]
    if first == str(empty):     # OpenSSH's several files: the second is read too, nothing is dropped
        return
    assert f"ignored {'known_hosts_file' if key == 'known_hosts_file' else 'ssh option -o UserKnownHostsFile='}" \
           f"{' ' if key == 'known_hosts_file' else ''}{first} (" in p.stderr, p.stderr
    listed = cli(["facts", "-H", "h", "--list-hosts"], inv, kh)
    assert f"{first} (" in listed.stdout


def test_with_no_usable_known_hosts_the_host_is_refused(lab, host, tmp_path):
    inv = inventory(tmp_path, lab, h=lab.inventory_entry(host))
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "known_hosts").symlink_to("/dev/null")
    env = dict(os.environ, OCRDEPLOY_KNOWN_HOSTS="/dev//null", HOME=str(home), COLUMNS="200")
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "facts", "-H", "h", "--accept-new-host-keys", "--json",
                        "--inventory", str(inv)], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert json.loads(p.stdout)["hosts"]["h"]["error"].startswith("no known_hosts file to check host keys against: ")
    assert (home / ".ssh" / "known_hosts").is_symlink()


def test_one_corrupt_known_hosts_line_is_skipped_and_said(lab, host, tmp_path):
    kh = tmp_path / "known_hosts"
    kh.write_text("127.0.0.9 ssh-ed25519 AAAA!!!not-base64\n" + host.known_hosts_line)
    inv = inventory(tmp_path, lab, h=lab.inventory_entry(host))
    p = cli(["facts", "-H", "h", "--json"], inv, kh)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr.count(f"known_hosts {kh}: skipped unreadable line(s) 1 (") == 1
    kh.write_text("127.0.0.9 ssh-ed25519 AAAA!!!not-base64\n")      # and the host's own key is still needed
    p = cli(["facts", "-H", "h", "--json"], inv, kh)
    assert p.returncode == 1 and "is unknown" in json.loads(p.stdout)["hosts"]["h"]["error"]


def test_a_malformed_jump_is_that_hosts_line_and_the_others_carry_on(lab, host, tmp_path):
    user = os.environ.get("USER") or "root"
    with socket.socket(socket.AF_INET6) as s:
        s.bind(("::1", 0))
        closed6 = s.getsockname()[1]
    inv = inventory(tmp_path, lab, good=lab.inventory_entry(host),
                    word=lab.inventory_entry(host, ansible_ssh_common_args=f"-J {user}@127.0.0.61:abc"),
                    v6=lab.inventory_entry(host, ansible_ssh_common_args=f"-J {user}@[::1]:{closed6}"),
                    bare6=lab.inventory_entry(host, ansible_ssh_common_args="-J ::1:22"))
    p = cli(["facts", "-H", "all", "--json"], inv, lab.known_hosts)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-3000:]
    doc = json.loads(p.stdout)["hosts"]
    assert doc["good"]["reachable"]
    assert doc["word"]["error"] == (f"ansible_ssh_common_args: jump host '{user}@127.0.0.61:abc': the port 'abc' "
                                    f"is not a number 1-65535")
    assert f"cannot connect to ::1:{closed6} (jump host)" in doc["v6"]["error"]      # parsed as OpenSSH does
    assert "an IPv6 address is written in brackets" in doc["bare6"]["error"]


def test_an_address_with_spaces_and_a_proxy_command_is_one_line(lab, host, tmp_path):
    canary = tmp_path / "CANARY"
    inv = inventory(tmp_path, lab,
                    bad=lab.inventory_entry(host, ansible_host=f"127.0.0.61; touch {canary};",
                                            ansible_ssh_common_args="-o 'ProxyCommand=sh -c \"nc %h %p\"'"),
                    good=lab.inventory_entry(host))
    p = cli(["facts", "-H", "all", "--json"], inv, lab.known_hosts)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-3000:]
    doc = json.loads(p.stdout)["hosts"]
    assert doc["good"]["reachable"] and not canary.exists()
    assert doc["bad"]["error"].startswith(f"address '127.0.0.61; touch {canary};' is not a host name or IP address")
