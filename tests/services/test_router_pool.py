"""services.router against the real vLLM router (the pinned vllm-router from the cached venv, see
tests/engines.py) and real local HTTP workers (tests/workerstandin.py: vLLM's /metrics gauge names, held
requests) where the engine is not the point: the argv its own --help accepts, the idempotent add, the
drain that waits for the engine's counters (and its bound), the rolling order, the readiness gate."""

import json
import os
import signal
import subprocess
import threading
import time

import httpx
import pytest

from engines import engine_env, free_port, router_port
from workerstandin import Worker
from ocrdeploy.inventory import Host as InvHost
from ocrdeploy.provision.connection import LocalConnection
from ocrdeploy.services import router as rt


@pytest.fixture(scope="module")
def router_exe():
    return str(engine_env("router") / "bin" / "vllm-router")


@pytest.fixture
def host():
    return rt.Host(LocalConnection(InvHost("localhost")))


@pytest.fixture
def running_router(router_exe, tmp_path):
    """The real router started with our argv, on a free port (and its metrics port free too)."""
    started = []

    def start(workers=()):
        port = router_port()
        log = open(tmp_path / f"router-{port}.log", "wb")
        p = subprocess.Popen(rt.argv(router_exe, port, workers=workers), stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
        started.append(p)
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/liveness", trust_env=False, timeout=2).status_code == 200:
                    return port, p
            except httpx.HTTPError:
                pass
            assert p.poll() is None, (tmp_path / f"router-{port}.log").read_text()[-2000:]
            assert time.monotonic() < deadline
            time.sleep(0.1)

    yield start
    for p in started:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=10)


def chat(port, text="hi"):
    return httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", trust_env=False, timeout=30,
                      json={"model": "minicpm-ocr", "messages": [{"role": "user", "content": text}]})


def test_every_flag_of_our_argv_is_one_the_real_router_takes(router_exe):
    """Never a guessed flag: each option we pass appears in the pinned router's own --help."""
    helptext = subprocess.run([router_exe, "--help"], capture_output=True, text=True, timeout=60).stdout
    flags = [a for a in rt.argv(router_exe, 18490, workers=["http://127.0.0.1:1"]) if a.startswith("--")]
    assert len(flags) >= 8
    for flag in flags:
        assert f"{flag} " in helptext or f"{flag}\n" in helptext, flag
    assert f"{{{','.join(['random', 'round_robin'])}" in helptext.replace(" ", "")    # our policies exist
    for policy in rt.POLICIES:
        assert policy in helptext


def test_add_is_idempotent_remove_takes_it_out_and_requests_reach_both(running_router, host):
    with Worker() as w1, Worker() as w2:
        port, _ = running_router()
        router = rt.Router(host, port)
        assert router.alive() and router.urls() == []
        assert router.add(w1.url) == "added" and router.add(w2.url) == "added"
        assert router.add(w1.url) == "kept"                 # a worker already in the pool is left alone
        assert sorted(router.urls()) == sorted([w1.url, w2.url])
        answers = {chat(port).json()["choices"][0]["message"]["content"] for _ in range(4)}
        assert answers == {f"answer from {w1.port}", f"answer from {w2.port}"}      # round robin
        assert {w["url"]: w["is_healthy"] for w in router.workers()} == {w1.url: True, w2.url: True}
        router.remove(w1.url)
        assert router.urls() == [w2.url]
        before = w1.served
        for _ in range(3):
            assert chat(port).status_code == 200
        assert w1.served == before                           # out of the pool: nothing reaches it


def test_in_flight_reads_the_engines_own_gauges():
    with Worker() as w:
        assert rt.in_flight(w.metrics()) == {"running": 0, "waiting": 0}
        w.running = 2
        assert rt.in_flight(w.metrics()) == {"running": 2, "waiting": 0}
    assert rt.in_flight("# no vllm here\nprocess_cpu_seconds_total 1.0\n") is None
    assert rt.in_flight(None) is None


def test_the_drain_waits_for_the_request_in_flight(host):
    with Worker() as w:
        t = threading.Thread(target=chat, args=(w.port, "hold 1.5"))
        t.start()
        while not w.running:
            time.sleep(0.02)
        t0 = time.monotonic()
        res = rt.wait_drained(lambda: rt.worker_load(host, w.port), timeout=30, interval=0.1)
        took = time.monotonic() - t0
        t.join()
        assert res["drained"] and res["running"] == 0 and w.served == 1
        assert took >= 0.8          # it waited for the held request, not just one look at the counters


def test_the_drain_is_bounded_and_says_what_it_cut_off(host):
    with Worker() as w:
        t = threading.Thread(target=chat, args=(w.port, "hold 4"))
        t.start()
        while not w.running:
            time.sleep(0.02)
        res = rt.wait_drained(lambda: rt.worker_load(host, w.port), timeout=0.5, interval=0.1)
        assert res["drained"] is False and res["running"] == 1
        assert res["cut_off"] == "1 running and 0 waiting request(s) cut off after the 0.5 s drain timeout"
        assert res["waited"] < 3
        t.join()


def test_a_worker_that_answers_no_metrics_holds_nothing(host):
    res = rt.wait_drained(lambda: rt.worker_load(host, free_port()), timeout=5)
    assert res["drained"] and "no /metrics answer" in res["note"]


def test_smoke_uses_the_image_request_and_falls_back_to_text_only_for_a_text_only_model(host):
    bodies = rt.smoke_bodies("minicpm-ocr", b"\x89PNG fake", {"downsample_mode": "4x"})
    assert bodies["image"]["mm_processor_kwargs"] == {"downsample_mode": "4x"}
    with Worker(multimodal=True) as mm, Worker(multimodal=False) as text:
        a = rt.smoke(host, mm.port, bodies)
        b = rt.smoke(host, text.port, bodies)
        assert a == {"ok": True, "kind": "image", "detail": f"answer from {mm.port}"}
        assert b["ok"] and b["kind"] == "text (the model takes no image)"
        assert isinstance(text.chats[-1]["messages"][-1]["content"], str)
    down = rt.smoke(host, free_port(), bodies)
    assert down["ok"] is False


def test_rolling_refuses_a_pool_of_one_and_a_batch_of_everyone():
    assert "a rolling restart of one instance is a restart" in rt.check_rollable(1, 1, False)
    assert "--allow-downtime" in rt.check_rollable(0, 1, False)
    assert "takes all 2 instances out at once" in rt.check_rollable(2, 2, False)
    assert rt.check_rollable(2, 1, False) is None and rt.check_rollable(3, 2, False) is None
    assert rt.check_rollable(1, 1, True) is None


def _roll_over(router, port, workers, fail=None, batch=1):
    """A roll over stand-in workers behind the real router: at each restart the pool still answers through
    the router, the worker restarted is out of it and holds nothing."""
    by_url = {w.url: w for w in workers}
    seen = []

    def restart(url):
        pool = router.urls()
        assert url not in pool                                # out before it stops
        assert by_url[url].running == 0                       # and drained
        assert pool, "the pool is empty during the roll"
        r = chat(port)
        assert r.status_code == 200                           # the URL still answers
        seen.append((url, list(pool)))
        if url == fail:
            return {"ready": False, "reason": "exited"}
        by_url[url].max_model_len = 8192                      # "started with the new option"
        return {"ready": True}

    roll = rt.Roll(out=router.remove, drain=lambda u: rt.wait_drained(
        lambda: rt.in_flight(by_url[u].metrics()), 10, interval=0.05), restart=restart, back=router.add)
    held = threading.Thread(target=chat, args=(workers[0].port, "hold 5"))     # in flight when the roll begins
    held.start()
    while not workers[0].running:
        time.sleep(0.02)
    try:
        return roll.run([w.url for w in workers], batch), roll.log, seen
    finally:
        held.join()


def test_the_roll_takes_one_out_at_a_time_and_puts_each_back(running_router, host):
    with Worker() as w1, Worker() as w2, Worker() as w3:
        port, _ = running_router()
        router = rt.Router(host, port)
        for w in (w1, w2, w3):
            router.add(w.url)
        res, log, seen = _roll_over(router, port, [w1, w2, w3])
        assert res["ok"] and res["done"] == [w1.url, w2.url, w3.url]
        assert [s for s, _ in log] == ["out", "drained", "restarted", "back"] * 3
        assert all(len(pool) == 2 for _, pool in seen)       # never more than one out
        assert sorted(router.urls()) == sorted(w.url for w in (w1, w2, w3))       # every one put back
        assert all(w.max_model_len == 8192 for w in (w1, w2, w3))


def test_a_failed_start_stops_the_roll_the_failed_one_stays_out_the_rest_keep_serving(running_router, host):
    with Worker() as w1, Worker() as w2:
        port, _ = running_router()
        router = rt.Router(host, port)
        router.add(w1.url)
        router.add(w2.url)
        res, log, _ = _roll_over(router, port, [w1, w2], fail=w1.url)
        assert res["ok"] is False and res["failed"] == w1.url and res["untouched"] == [w2.url]
        assert router.urls() == [w2.url]                      # the failed one stays out
        assert w2.max_model_len == 4096                       # the other keeps its old version
        assert chat(port).json()["choices"][0]["message"]["content"] == f"answer from {w2.port}"


def test_a_batch_fails_and_its_untouched_members_go_back(running_router, host):
    with Worker() as w1, Worker() as w2, Worker() as w3:
        port, _ = running_router()
        router = rt.Router(host, port)
        for w in (w1, w2, w3):
            router.add(w.url)
        res, log, _ = _roll_over(router, port, [w1, w2, w3], fail=w1.url, batch=2)
        assert res["ok"] is False
        assert sorted(router.urls()) == sorted([w2.url, w3.url])   # w2 (old, never stopped) is back in
