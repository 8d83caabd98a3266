"""A lab of real sshd processes on 127.0.0.x, started and stopped by the tests.

Each host is Debian's /usr/sbin/sshd in the foreground (-D) with its own config,
host key and port, accepting the lab's client key for the current user.  Hosts
can put a directory first on PATH (sshd's SetEnv) so recorded tools such as the
fake nvidia-smi are what the remote shell finds.  Processes are stopped by pid.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def sshd_available() -> bool:
    return os.path.exists(SSHD) and shutil.which("ssh-keygen") is not None


def _free_port(ip: str) -> int:
    with socket.socket() as s:
        s.bind((ip, 0))
        return s.getsockname()[1]


@dataclass
class LabHost:
    name: str
    ip: str
    port: int
    proc: subprocess.Popen
    host_pub: str          # "ssh-ed25519 AAAA..."

    @property
    def known_hosts_line(self) -> str:
        return f"[{self.ip}]:{self.port} {self.host_pub}\n"


class SSHLab:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.client_key = self.root / "client_ed25519"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.client_key)], check=True)
        (self.root / "authorized_keys").write_text(self.client_key.with_suffix(".pub").read_text())
        self.known_hosts = self.root / "known_hosts"
        self.known_hosts.write_text("")
        self.hosts: list[LabHost] = []
        Path("/run/sshd").mkdir(parents=True, exist_ok=True)

    def start(self, name: str, ip: str, *, path_prefix: str | None = None, known: bool = True,
              env: dict | None = None, port: int | None = None) -> LabHost:
        d = self.root / name
        d.mkdir(exist_ok=True)
        key = d / "host_ed25519"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        port = port or _free_port(ip)
        setenv = dict(env or {})
        if path_prefix:
            setenv["PATH"] = f"{path_prefix}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        lines = [
            f"ListenAddress {ip}:{port}",
            f"HostKey {key}",
            f"PidFile {d / 'sshd.pid'}",
            f"AuthorizedKeysFile {self.root / 'authorized_keys'}",
            "StrictModes no", "UsePAM no", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "PubkeyAuthentication yes",
            "PermitRootLogin prohibit-password", "LogLevel ERROR", "MaxStartups 100:30:200",
            "MaxSessions 50", "Subsystem sftp internal-sftp",
        ]
        if setenv:
            lines.append("SetEnv " + " ".join(f"{k}={v}" for k, v in setenv.items()))
        cfg = d / "sshd_config"
        cfg.write_text("\n".join(lines) + "\n")
        log = open(d / "sshd.log", "wb")
        proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(cfg)], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection((ip, port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"sshd for {name} did not start: {(d / 'sshd.log').read_text()}")
                time.sleep(0.02)
        pub = " ".join(key.with_suffix(".pub").read_text().split()[:2])
        host = LabHost(name, ip, port, proc, pub)
        self.hosts.append(host)
        if known:
            with open(self.known_hosts, "a") as fh:
                fh.write(host.known_hosts_line)
        return host

    def inventory_entry(self, host: LabHost, **vars_) -> dict:
        return {"ansible_host": host.ip, "ansible_port": host.port, "ansible_user": os.environ.get("USER") or "root",
                "ansible_ssh_private_key_file": str(self.client_key), **vars_}

    def stop(self):
        for h in self.hosts:
            if h.proc.poll() is None:
                os.kill(h.proc.pid, signal.SIGTERM)
        for h in self.hosts:
            try:
                h.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(h.proc.pid, signal.SIGKILL)
                h.proc.wait()
        self.hosts.clear()
