"""OcrClient's deadline holds whatever the resolver does (issue 21, item 2): `inv verify --server-url` with a
host name whose lookup hangs ends within the request's deadline, not when the resolver gives up."""

import socket
import threading
import time

import httpx
import pytest

from ocrdeploy.sdk.client import OcrClient


def test_a_hanging_name_lookup_ends_within_the_deadline(monkeypatch):
    real = socket.getaddrinfo
    released = threading.Event()

    def hanging(host, *args, **kwargs):
        if host == "hang.invalid":
            released.wait(60)            # a dead nameserver: 5 s per attempt, several attempts
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    with OcrClient("http://hang.invalid:9", timeout=30) as client:
        start = time.monotonic()
        with pytest.raises(httpx.TimeoutException, match=r"GET /v1/models: no whole answer within 1 s \(name lookup"):
            client.request("GET", "/v1/models", deadline=1)
        took = time.monotonic() - start
    released.set()
    assert took < 3, took


def test_an_ip_literal_asks_in_the_callers_thread(monkeypatch):
    """No thread for a loopback URL (every tunnel's): its errors come as they are, at once."""
    seen = []
    monkeypatch.setattr(threading.Thread, "start", lambda self: seen.append(self) or pytest.fail("a thread"))
    with OcrClient("http://127.0.0.1:9", timeout=5) as client:
        with pytest.raises(httpx.ConnectError):
            client.request("GET", "/v1/models")
    assert seen == []


LEFT_BEHIND = """
import socket, sys, threading, time
import httpx
from ocrdeploy.sdk.client import OcrClient
real = socket.getaddrinfo
def hanging(host, *args, **kwargs):
    if host == "hang.invalid":
        time.sleep(60)                   # a dead nameserver
    return real(host, *args, **kwargs)
socket.getaddrinfo = hanging
try:
    OcrClient("http://hang.invalid:9", timeout=30).request("GET", "/v1/models", deadline=1)
except httpx.TimeoutException as exc:
    print("timed out:", exc, flush=True)
"""


def test_the_thread_left_in_a_hanging_lookup_does_not_hold_the_process_at_exit():
    """The lookup thread the deadline leaves behind is a daemon: `inv verify` ends when its checks are done, not
    when the resolver gives up."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-c", LEFT_BEHIND], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, PYTHONPATH=str(root)))
    took = time.monotonic() - start
    assert p.returncode == 0 and "timed out: GET /v1/models: no whole answer within 1 s" in p.stdout, p.stderr[-2000:]
    assert took < 15, took
