"""Secrets never on a command line (red team H2): a command line is readable by every local user in
/proc/PID/cmdline for as long as the command runs (hours for a compile), a process's environment only by
its owner.  The pip index password and the proxy password reach pip and the facts probe through the
environment, handed over on stdin, locally and over a real sshd; pip still authenticates with them.

The spy below is a real process in the command's place: it reads /proc/<pid>/cmdline of itself and of
every process above it (the connection's shell, the login shell sshd started, ...) while the command
runs, records what reached its environment, then becomes the command that was asked for."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ocrdeploy.inventory import Host, load_inventory, select_hosts
from ocrdeploy.provision import facts as facts_mod
from ocrdeploy.provision.command import Command, Secret
from ocrdeploy.provision.connection import LocalConnection
from ocrdeploy.provision.pip_index import pip_options, url_arg
from ocrdeploy.provision.session import Session
from background import Background
from pipindex import PipIndex, build_wheel

PASSWORD = "IDXs3cretPW"
PROXY_PASSWORD = "PROXYs3cret"
PROXY = f"http://pxuser:{PROXY_PASSWORD}@127.0.0.1:9"

SPY = r'''import json, os, sys
out, names, argv = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
chain, pid = [], os.getpid()
while pid > 1:
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            chain.append(fh.read().replace(b"\0", b" ").decode("utf-8", "replace"))
        with open("/proc/%d/stat" % pid, "rb") as fh:
            pid = int(fh.read().rsplit(b")", 1)[1].split()[1])
    except OSError:
        break
with open(out, "a") as fh:
    fh.write(json.dumps({"chain": chain, "env": {n: os.environ.get(n) for n in names},
                         "stdin_is_tty": os.isatty(0)}) + "\n")
os.execvp(argv[0], argv)
'''


def spy(tmp_path, names, argv) -> tuple[list, Path]:
    script = tmp_path / "spy.py"
    script.write_text(SPY)
    out = tmp_path / "spy.jsonl"
    return [sys.executable, str(script), str(out), ",".join(names), *argv], out


def spied(out: Path) -> list:
    return [json.loads(line) for line in out.read_text().splitlines()]


class ProcScan(Background):
    """Every /proc/*/cmdline read over and over while a command runs: what any local user could see."""
    pause = 0.01

    def __init__(self, *needles):
        super().__init__()
        self.needles, self.seen = needles, []

    def step(self):
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                text = Path(f"/proc/{entry}/cmdline").read_bytes().decode("utf-8", "replace")
            except OSError:
                continue
            if any(n in text for n in self.needles):
                self.seen.append(text.replace("\0", " "))


@pytest.fixture
def index(tmp_path):
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "authpkg", "1.0", {"authpkg/__init__.py": "VALUE = 'from the authenticated index'\n"})
    with PipIndex(wheels, auth=("ci", PASSWORD)) as server:
        yield server


def pip_command(tmp_path, index, target, spy_names=("PIP_INDEX_URL", "http_proxy")):
    opts = pip_options({"pip_index_url": index.url_with_auth(), "no_proxy": "127.0.0.1"})
    argv = [sys.executable, "-m", "pip", "install", *opts.args, "--no-cache-dir", "--no-deps",
            "--disable-pip-version-check", "--target", str(target), "authpkg==1.0"]
    argv, out = spy(tmp_path, spy_names, argv)
    env = {**opts.env, "PIP_CONFIG_FILE": os.devnull, "no_proxy": "127.0.0.1,localhost"}
    return Command(argv, env=env), out


def test_credentialed_index_urls_are_pip_environment_secrets():
    """The type, not only the text: an index URL with credentials is a Secret in the environment (which the
    connection hands over on stdin); a plain str there would be pasted as K=V onto the command line."""
    cred = "https://ci:tok@mirror.example/simple/"
    opts = pip_options({"pip_index_url": cred, "pip_extra_index_url": [cred, "https://open.example/simple/"],
                        "pip_trusted_host": "mirror.example"})
    assert isinstance(opts.env["PIP_INDEX_URL"], Secret) and isinstance(opts.env["PIP_EXTRA_INDEX_URL"], Secret)
    assert opts.args == ["--extra-index-url", "https://open.example/simple/", "--trusted-host", "mirror.example"]
    assert isinstance(url_arg(cred), Secret) and type(url_arg("https://open.example/")) is str
    text = Command(["pip", "install", "x"], env=opts.env).shell()
    assert "tok" not in text and "PIP_INDEX_URL" in text


def test_pip_authenticates_and_no_local_command_line_holds_a_secret(tmp_path, index):
    host = Host("localhost", vars={"http_proxy": PROXY, "https_proxy": PROXY, "no_proxy": "127.0.0.1,localhost"})
    conn = LocalConnection(host)
    cmd, out = pip_command(tmp_path, index, tmp_path / "site")
    with ProcScan(PASSWORD, PROXY_PASSWORD) as scan:
        result = conn.run(Command(cmd.argv, env=cmd.env, cwd=str(tmp_path)), timeout=120)
    assert (tmp_path / "site" / "authpkg" / "__init__.py").is_file(), result.stderr
    assert ("GET", "/simple/authpkg/") in index.requests     # pip asked the index, with the password
    (record,) = spied(out)
    assert record["env"] == {"PIP_INDEX_URL": index.url_with_auth(), "http_proxy": PROXY}
    assert [c for c in record["chain"] if PASSWORD in c or PROXY_PASSWORD in c] == []
    assert scan.seen == []
    shown = str(result.command)
    assert "***" in shown and PASSWORD not in shown and PROXY_PASSWORD not in shown


def test_a_command_with_its_own_stdin_still_gets_it_after_the_secrets(tmp_path):
    host = Host("localhost", vars={"http_proxy": PROXY})
    r = LocalConnection(host).run(Command(["sh", "-c", 'read -r line; echo "$line|$http_proxy"'],
                                          env={"TOKEN": Secret("t0k")}, stdin="own input\n"))
    assert r.stdout.strip() == f"own input|{PROXY}"


@pytest.mark.ssh
def test_over_ssh_neither_pip_nor_the_probe_shows_a_secret_on_the_host(lab, tmp_path, index, monkeypatch):
    h = lab.start("sec1", "127.0.0.61")
    inv = tmp_path / "inv.yml"
    entry = lab.inventory_entry(h, workdir=str(tmp_path / "wd"), http_proxy=PROXY, https_proxy=PROXY,
                                no_proxy="127.0.0.1,localhost")
    inv.write_text(yaml.safe_dump({"all": {"vars": {"known_hosts_file": str(lab.known_hosts)},
                                           "hosts": {"sec1": entry}}}))
    (host,) = select_hosts(load_inventory(inv), host="sec1")
    with Session([host], connect_timeout=10) as session:
        conn = session.connection(host)
        cmd, out = pip_command(tmp_path, index, tmp_path / "site-ssh")
        with ProcScan(PASSWORD, PROXY_PASSWORD) as scan:
            conn.run(cmd, timeout=120)
            # the facts probe: its request (with the proxy vars) and its environment
            probe = facts_mod.probe_command(facts_mod.probe_request(str(tmp_path / "wd"), net_timeout=0))
            assert PROXY_PASSWORD not in conn.shell(conn.prepare(probe))
            facts = facts_mod.gather(conn, facts_mod.probe_request(str(tmp_path / "wd"), net_timeout=0))
        assert facts["proxy"]["http_proxy"] == "http://***@127.0.0.1:9"
    assert (tmp_path / "site-ssh" / "authpkg" / "__init__.py").is_file()
    (record,) = spied(out)
    assert record["env"] == {"PIP_INDEX_URL": index.url_with_auth(), "http_proxy": PROXY}
    assert any("sshd" in c for c in record["chain"])          # the chain went through the real sshd
    assert [c for c in record["chain"] if PASSWORD in c or PROXY_PASSWORD in c] == []
    assert scan.seen == []


def test_the_scan_sees_a_secret_on_a_command_line():
    """The scan's own control: were it blind, every 'not seen' above would pass for nothing."""
    with ProcScan("scan-control-needle") as scan:
        subprocess.run([sys.executable, "-c", "import time; time.sleep(0.3)", "scan-control-needle"], check=True)
    assert any("scan-control-needle" in line for line in scan.seen)
