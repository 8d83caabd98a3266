"""Ctrl-C during a local command (provision.connection): the command ends with everything it started,
and the run ends even when a process slipped away holding the command's output pipes.  Real processes:
a Python run of LocalConnection gets a real SIGINT, as from a terminal's Ctrl-C."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from terminal import sigint_as_from_a_terminal

from ocrdeploy.services.hostside import group_left

ROOT = Path(__file__).resolve().parents[2]

RUNNER = """import sys
sys.path.insert(0, {root!r})
from ocrdeploy.inventory import Host
from ocrdeploy.provision.connection import LocalConnection
try:
    LocalConnection(Host("localhost")).run(["sh", "-c", sys.argv[1]], timeout=300)
except KeyboardInterrupt:
    sys.exit(130)
sys.exit(0)
"""

# a shell that answers SIGTERM by starting a new child (which inherits the output pipe), as a shell's
# trap or git starting its remote helper while it is being ended would
FORKS_WHEN_ENDED = "trap 'sleep 300 & echo $! > {late}' TERM; echo $$ > {ready}; while :; do sleep 0.1; done"
# a daemon that left the tree before Ctrl-C (double fork), still holding the command's stdout
ESCAPED = "(sleep 300 & echo $! > {late}) ; echo $$ > {ready}; while :; do sleep 0.1; done"


def _running(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("script, late_survives", [(FORKS_WHEN_ENDED, False), (ESCAPED, True)],
                         ids=["forks-when-ended", "escaped-daemon"])
def test_ctrl_c_ends_the_command_and_the_run(tmp_path, script, late_survives):
    ready, late = tmp_path / "ready", tmp_path / "late"
    runner = tmp_path / "runner.py"
    runner.write_text(RUNNER.format(root=str(ROOT)))
    proc = subprocess.Popen([sys.executable, str(runner), script.format(ready=ready, late=late)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=sigint_as_from_a_terminal)
    late_pid = None
    try:
        deadline = time.monotonic() + 30
        while not (ready.exists() and ready.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        shell = int(ready.read_text())
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
        took = time.monotonic() - t0
        assert late.exists() and late.read_text().strip(), "the trap never ran: nothing forked while ending"
        late_pid = int(late.read_text())
        assert proc.returncode == 130
        assert took < 10                 # 2 s of grace for SIGTERM, 2 s at most for the output readers
        assert not _running(shell)                    # the command's own shell, trap or not, reparented or not
        assert _running(late_pid) is late_survives   # a child seen in time is ended; an escaped one cannot be
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for f in (late, ready):
            pid = int(f.read_text()) if f.exists() and f.read_text().strip() else None
            if pid and _running(pid):
                os.kill(pid, signal.SIGKILL)


# Ctrl-C in the moment between the command's fork and its registration (the window that made the test above
# fail under load): the runner's Local.start is wrapped so that the SIGINT arrives right there, every time
RACE_RUNNER = """import os, signal, sys, time
sys.path.insert(0, {root!r})
import invoke.runners
from ocrdeploy.inventory import Host
from ocrdeploy.provision.connection import LocalConnection
start = invoke.runners.Local.start
def started_then_interrupted(self, command, shell, env):
    start(self, command, shell, env)
    with open(sys.argv[1], "w") as fh:
        fh.write(str(self.process.pid))
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)
invoke.runners.Local.start = started_then_interrupted
try:
    LocalConnection(Host("localhost")).run(["sleep", "300"], timeout=300)
except KeyboardInterrupt:
    sys.exit(130)
sys.exit(0)
"""


def test_ctrl_c_as_the_command_starts_still_ends_it(tmp_path):
    runner, pid_file = tmp_path / "runner.py", tmp_path / "pid"
    runner.write_text(RACE_RUNNER.format(root=str(ROOT)))
    proc = subprocess.run([sys.executable, str(runner), str(pid_file)], capture_output=True, text=True, timeout=60,
                          start_new_session=True, preexec_fn=sigint_as_from_a_terminal)
    pid = int(pid_file.read_text())
    try:
        assert proc.returncode == 130, proc.stderr
        deadline = time.monotonic() + 5
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(pid)
    finally:
        if _running(pid):
            os.kill(pid, signal.SIGKILL)


SSH_RUNNER = """import sys
sys.path.insert(0, {root!r})
from pathlib import Path
from ocrdeploy.inventory import load_inventory, select_hosts
from ocrdeploy.provision.session import Session
hosts = select_hosts(load_inventory(Path(sys.argv[1])), group="all")
try:
    with Session(hosts, connect_timeout=10) as session:
        session.map(lambda conn, h: conn.run(["sh", "-c", sys.argv[2].replace("NAME", h.name)], timeout=300))
except KeyboardInterrupt:
    sys.exit(130)
sys.exit(0)
"""


@pytest.mark.ssh
@pytest.mark.parametrize("n_hosts", [1, 2])
def test_ctrl_c_ends_the_remote_commands_process_group(lab, tmp_path, n_hosts):
    """Closing an SSH channel leaves a command without a terminal running on the host; Ctrl-C asks sshd to
    signal its process group (TERM, then KILL after the grace period: this command ignores TERM).  One
    host runs in the main thread, several in the session's pool."""
    import yaml

    hosts = {f"h{i}": lab.inventory_entry(lab.start(f"cc{n_hosts}{i}", f"127.0.0.{40 + 2 * n_hosts + i}"))
             for i in range(n_hosts)}
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"known_hosts_file": str(lab.known_hosts)}, "hosts": hosts}}))
    runner = tmp_path / "runner.py"
    runner.write_text(SSH_RUNNER.format(root=str(ROOT)))
    script = f"echo $$ > {tmp_path}/NAME.pid; trap '' TERM; sleep 300; sleep 300"
    proc = subprocess.Popen([sys.executable, str(runner), str(inv), script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=sigint_as_from_a_terminal)
    pids = {}
    try:
        deadline = time.monotonic() + 60
        while len(pids) < n_hosts and time.monotonic() < deadline:
            for name in hosts:
                f = tmp_path / f"{name}.pid"
                if f.exists() and f.read_text().strip():
                    pids[name] = int(f.read_text())
            time.sleep(0.05)
        assert len(pids) == n_hosts and all(group_left(p) for p in pids.values())
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        deadline = time.monotonic() + 5            # sshd delivers the signal a moment after the request
        while any(group_left(p) for p in pids.values()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert {n: group_left(p) for n, p in pids.items()} == {n: [] for n in pids}, err
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for p in pids.values():
            for q in group_left(p):
                os.kill(q, signal.SIGKILL)


def test_stdout_and_stderr_lines_stay_whole_on_one_stream():
    """A command writing long lines to both streams at once: invoke reads each in its own thread, in chunks,
    into the one stream a caller passes (deepseek-run showed `... set to '0')CUDA_VISIBLE_DEVICES=0`)."""
    from ocrdeploy.inventory import Host
    from ocrdeploy.provision.connection import LineStream, LocalConnection

    writer = ("import os, threading\n"
              "def w(fd, c):\n"
              "    for _ in range(300):\n"
              "        os.write(fd, (c * 3000 + '\\n').encode())\n"
              "ts = [threading.Thread(target=w, args=a) for a in ((1, 'o'), (2, 'e'))]\n"
              "[t.start() for t in ts]; [t.join() for t in ts]\n"
              "os.write(1, b'last line without a break')\n")
    lines = []
    LocalConnection(Host("localhost")).run([sys.executable, "-c", writer], out_stream=LineStream(lines.append))
    assert lines[-1] == "last line without a break"
    body = lines[:-1]
    assert sorted(body) == sorted(["o" * 3000] * 300 + ["e" * 3000] * 300)


@pytest.mark.parametrize("address", ["127.0.0.1:22", "127.0.0.1:ssh", "ubuntu@127.0.0.1", "ubuntu@127.0.0.1:22"])
def test_an_address_carrying_a_user_or_port_is_refused_naming_the_vars(address):
    """fabric reads user@host:port out of the address: beside ansible_port it raised a ValueError traceback
    ('port via both shorthand and kwarg'), with a non-numeric port another one, and alone it took a port
    or user from where nothing shows it.  Refused before any socket, as the shell-character rule is."""
    from ocrdeploy.inventory import Host
    from ocrdeploy.provision.connection import SSHConnection
    from ocrdeploy.errors import HostError

    conn = SSHConnection(Host("h1", {"ansible_host": address, "ansible_port": 1}), connect_timeout=1)
    with pytest.raises(HostError) as exc:
        conn.open()
    assert f"address {address!r} is not a host name or IP address: give the user as ansible_user and the port " \
           f"as ansible_port" in str(exc.value)
