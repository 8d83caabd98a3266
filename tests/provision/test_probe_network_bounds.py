"""The probe's network readings in-process, against real loopback servers (tests/loopback.py): the bound
around a call (provision/probe.py _bounded), one source's HEAD (any HTTP answer is an answer; credentials go
as basic auth, never in the URL urllib is given), and the sources' give-up time, 3x --network-timeout.
test_probe_resolver.py proves the bound end to end with a hanging resolver; these are its parts' edges."""

import errno
import os
import socket
import time

import pytest

from loopback import LoopbackServer
from ocrdeploy.provision import probe


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


class Index(LoopbackServer):
    """Answers every HEAD with `code`, and remembers the Authorization header it was sent."""

    def __init__(self, code):
        super().__init__()
        self.code, self.auth = code, []

    def handle(self, h, head):
        self.auth.append(h.headers.get("Authorization"))
        self.send(h, self.code, b"", "text/html", head)


def test_the_bound_gives_up_on_a_call_that_runs_past_it_and_hands_back_its_value_or_error():
    start = time.monotonic()
    with pytest.raises(probe._Late):
        probe._bounded(0.2, time.sleep, 30)
    assert time.monotonic() - start < 5
    assert probe._bounded(5, lambda a: a * 2, 21) == 42
    with pytest.raises(socket.gaierror):
        probe._bounded(5, lambda: (_ for _ in ()).throw(socket.gaierror(-2, "Name or service not known")))


@pytest.mark.parametrize("code", [200, 404, 405])
def test_any_http_answer_is_an_answer(code):
    with Index(code) as index:
        got = probe._source(index.url + "/simple/", 5)
    assert got["reachable"] is True and got["status"] == code and got["proxy"] is None


def test_credentials_go_as_basic_auth_not_in_the_url():
    with Index(200) as index:
        url = index.url.replace("http://", "http://ci:t0ken@") + "/simple/"
        got = probe._source(url, 5)
    assert got["reachable"] is True and got["status"] == 200
    assert index.auth == ["Basic Y2k6dDBrZW4="]                       # base64 of ci:t0ken


def test_a_closed_port_is_not_reachable():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    got = probe._source(f"http://127.0.0.1:{port}/", 2)
    assert got["reachable"] is False and "refused" in got["error"].lower()
    # the reason urllib wraps, not urllib's "<urlopen error ...>" around it
    assert got["error"] == str(ConnectionRefusedError(errno.ECONNREFUSED, os.strerror(errno.ECONNREFUSED)))


@pytest.mark.parametrize("timeout, slow_ms, give_up_s", [(1.0, 1000, 3.0), (2.5, 2500, 7.5)])
def test_a_source_is_slow_past_the_network_timeout_in_ms(timeout, slow_ms, give_up_s):
    out = {}
    probe._sources(out, [], timeout)
    assert out["sources"] == {"slow_ms": slow_ms, "give_up_s": give_up_s, "results": []}


def test_a_source_no_proxy_names_goes_direct_and_the_others_through_the_proxy(monkeypatch):
    monkeypatch.setenv("https_proxy", "http://proxy.corp:3128")
    monkeypatch.setenv("no_proxy", "mirror.corp,.internal")
    assert probe._proxy_for("https://mirror.corp/simple/") is None
    assert probe._proxy_for("https://pypi.internal/simple/") is None
    assert probe._proxy_for("https://pypi.org/simple/") == "http://proxy.corp:3128"
    assert probe._proxy_for("http://pypi.org/simple/") is None          # no http_proxy: direct


def test_a_source_that_never_answers_is_given_up_after_three_times_the_network_timeout():
    silent = socket.socket()                   # listens, never answers: a firewall that drops, a hung proxy
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    url = f"http://ci:t0ken@127.0.0.1:{silent.getsockname()[1]}/simple/"
    out = {}
    start = time.monotonic()
    try:
        probe._sources(out, [{"name": "pip index", "var": "pip_index_url", "url": url}], 0.3)
    finally:
        silent.close()
    took = time.monotonic() - start
    assert out["sources"]["give_up_s"] == pytest.approx(0.9) and out["sources"]["slow_ms"] == 300
    [r] = out["sources"]["results"]
    assert r["reachable"] is False and r["error"].startswith("no answer within 0.9 s")
    assert "t0ken" not in r["url"] and r["name"] == "pip index"
    assert 0.8 <= took < 6


def test_a_network_timeout_of_zero_tests_nothing():
    out = {}
    probe._sources(out, [{"name": "x", "url": "http://127.0.0.1:9/"}], 0)
    assert out["sources"] == {"skipped": "not tested (--network-timeout 0)", "results": []}
    probe._network(out, 0, False)
    assert out["network"]["github"] == "unknown"


def test_a_source_url_urllib_cannot_read_is_a_reading_not_a_hole():
    out = {}
    probe._sources(out, [{"name": "SDK repo", "var": "sdk_repo", "url": "http://[::1"}], 0.5)
    (row,) = out["sources"]["results"]
    assert row["reachable"] is False and "Invalid IPv6 URL" in row["error"] and row["var"] == "sdk_repo"
