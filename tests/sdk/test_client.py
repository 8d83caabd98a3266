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
