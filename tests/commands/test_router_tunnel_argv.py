"""The router's SSH tunnel command (commands/router.tunnel_argv) run for real against the SSH lab: from this
machine it reaches a worker's loopback with the inventory's key and known_hosts, and it gives up, rather than
run on without a forward, when the local port it should listen on is taken."""

import os
import socket
import subprocess
import threading
import time

import pytest
import yaml

from ocrdeploy.commands.router import tunnel_argv
from ocrdeploy.inventory import load_inventory


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def worker(lab, tmp_path, monkeypatch):
    """A lab host as the inventory names it, and a one-line TCP answerer on its loopback (the worker port)."""
    h = lab.start("worker", "127.0.0.8")
    monkeypatch.setenv("OCRDEPLOY_KNOWN_HOSTS", str(lab.known_hosts))
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"w1": lab.inventory_entry(h)}}}))
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(30)

    def answer():
        try:
            c, _ = srv.accept()
            c.sendall(b"worker here\n")
            c.close()
        except OSError:
            pass

    threading.Thread(target=answer, daemon=True).start()
    yield load_inventory(inv).hosts["w1"], srv.getsockname()[1]
    srv.close()


def test_the_tunnel_reaches_the_workers_loopback_with_the_inventorys_key_and_known_hosts(worker, tmp_path):
    host, wport = worker
    lport = free_port()
    # HOME elsewhere: no ~/.ssh key or known_hosts of the user's can stand in for the inventory's
    env = dict(os.environ, HOME=str(tmp_path / "home"))
    proc = subprocess.Popen(tunnel_argv(host, lport, wport, True), env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline, got = time.monotonic() + 20, b""
        while not got and proc.poll() is None and time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", lport), timeout=2) as c:
                    got = c.recv(100)
            except OSError:
                time.sleep(0.1)
        assert got == b"worker here\n", proc.poll() is not None and proc.stderr.read().decode()
        time.sleep(1.0)
        assert proc.poll() is None          # a tunnel, not a login whose shell reads no input and ends
    finally:
        proc.kill()
        proc.wait()


def test_a_taken_local_port_ends_the_tunnel_instead_of_running_without_it(worker, tmp_path):
    host, wport = worker
    with socket.create_server(("127.0.0.1", 0)) as taken:
        lport = taken.getsockname()[1]
        proc = subprocess.Popen(tunnel_argv(host, lport, wport, True), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            rc = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail("ssh kept running without its forward")
    assert rc != 0 and b"forward" in proc.stderr.read().lower()
