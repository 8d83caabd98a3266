"""The router code's edges without the router (services/router.py, commands/router.py): the drain condition
on both gauges and its time bound (a clock the test holds), the gauges summed over engines, the rolling order
of a batch and what goes back in when a start is refused, the API-key check against real keyed and open
stand-in workers (tests/workerstandin.py), the router port that leaves room for its metrics port, and what
`inv stop --drain` prints."""

import pytest

from engines import free_port
from workerstandin import Worker
from ocrdeploy.commands import router as router_cmd
from ocrdeploy.errors import UsageError
from ocrdeploy.inventory import Host as InvHost
from ocrdeploy.provision.connection import LocalConnection
from ocrdeploy.services import router as rt


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now

    def sleep(self, s):
        self.now += s


def drain(loads, timeout, clock=None):
    clock = clock or Clock()
    seen = iter(loads)
    return rt.wait_drained(lambda: next(seen), timeout, interval=1.0, clock=clock, sleep=clock.sleep)


def test_the_drain_waits_while_requests_are_waiting_even_with_none_running():
    res = drain([{"running": 0, "waiting": 2}, {"running": 0, "waiting": 1}, {"running": 0, "waiting": 0}], 60)
    assert res["drained"] and res["waited"] == 2.0


def test_the_drain_stops_waiting_at_its_timeout_exactly():
    res = drain([{"running": 1, "waiting": 0}] * 10, 3)
    assert res["drained"] is False and res["waited"] == 3.0
    assert res["cut_off"] == "1 running and 0 waiting request(s) cut off after the 3 s drain timeout"


def gauges(*engines, waiting=True):
    out = "# TYPE vllm:num_requests_running gauge\n"
    out += "".join(f'vllm:num_requests_running{{engine="{i}"}} {r}\n' for i, (r, _) in enumerate(engines))
    if waiting:
        out += "# TYPE vllm:num_requests_waiting gauge\n"
        out += "".join(f'vllm:num_requests_waiting{{engine="{i}"}} {w}\n' for i, (_, w) in enumerate(engines))
    return out


def test_in_flight_sums_every_engine_and_needs_both_gauges():
    assert rt.in_flight(gauges((1, 0), (2, 3))) == {"running": 3, "waiting": 3}
    assert rt.in_flight(gauges((1, 0), waiting=False)) is None


class Pool:
    """The four roll steps recorded; restart answers from `results` (url -> dict), ready by default."""

    def __init__(self, results=None):
        self.results, self.calls = results or {}, []

    def roll(self):
        def step(kind):
            def call(url):
                self.calls.append((kind, url))
                return self.results.get(url, {"ready": True}) if kind == "restart" else {"drained": True}
            return call

        return rt.Roll(out=step("out"), drain=step("drain"), restart=step("restart"), back=step("back"))


def test_a_batch_goes_out_and_drains_together_then_each_restarts_and_goes_back():
    pool = Pool()
    res = pool.roll().run(["u1", "u2", "u3"], batch=2)
    assert res["ok"] and res["done"] == ["u1", "u2", "u3"]
    assert pool.calls == [("out", "u1"), ("out", "u2"), ("drain", "u1"), ("drain", "u2"),
                          ("restart", "u1"), ("back", "u1"), ("restart", "u2"), ("back", "u2"),
                          ("out", "u3"), ("drain", "u3"), ("restart", "u3"), ("back", "u3")]


def test_a_start_refused_before_the_stop_goes_back_in_and_one_that_failed_stays_out():
    refused = Pool({"u2": {"ready": False, "still_serving": True}})
    res = refused.roll().run(["u1", "u2", "u3"], batch=1)
    assert res["ok"] is False and res["failed"] == "u2" and res["done"] == ["u1"] and res["untouched"] == ["u3"]
    assert refused.calls[-1] == ("back", "u2") and ("out", "u3") not in refused.calls
    failed = Pool({"u1": {"ready": False}})
    res = failed.roll().run(["u1", "u2", "u3"], batch=2)
    assert ("back", "u1") not in failed.calls and failed.calls[-1] == ("back", "u2")   # u2: never stopped
    assert res["untouched"] == ["u2", "u3"]


@pytest.fixture
def host():
    return rt.Host(LocalConnection(InvHost("localhost")))


def test_one_key_for_the_whole_pool(host):
    """A worker joins only where every worker in the pool asks for the same key it does (or none)."""
    with Worker(key="k1") as keyed, Worker() as open_, Worker(key="k2") as other:
        dead = free_port()
        assert rt.key_mismatch(host, [keyed.port], "k1") is None
        assert rt.key_mismatch(host, [open_.port], None) is None
        assert "requires an API key and this one none" in rt.key_mismatch(host, [keyed.port], None)
        assert "requires no API key and this one does" in rt.key_mismatch(host, [open_.port], "k1")
        assert "requires another API key" in rt.key_mismatch(host, [other.port], "k1")
        # a worker that does not answer says nothing; the ones after it are still asked
        assert "port %d requires no API key" % open_.port in rt.key_mismatch(host, [dead, open_.port], "k1")


def test_the_router_port_leaves_room_for_its_metrics_port():
    assert router_cmd.check_router_options(65534, False) == (65534, "round_robin")
    with pytest.raises(UsageError, match="router-port"):
        router_cmd.check_router_options(65535, False)
    args = rt.argv("vllm-router", 18490)
    assert args[args.index("--prometheus-port") + 1] == "18491" and args[args.index("--port") + 1] == "18490"



def test_the_router_drops_a_dead_worker_within_seconds_and_keeps_its_metrics_local():
    """The router's own defaults (a check every 60 s, 3 failures) keep a dead worker in the pool for minutes,
    each request sent to it failing meanwhile; the metrics port answers on loopback only."""
    args = rt.argv("vllm-router", 18490, bind="0.0.0.0")
    value = {a: args[i + 1] for i, a in enumerate(args[:-1]) if a.startswith("--")}
    assert value["--health-check-interval-secs"] == "5" and value["--health-failure-threshold"] == "2"
    assert value["--prometheus-host"] == "127.0.0.1" and value["--host"] == "0.0.0.0"
    assert value["--policy"] == "round_robin"


def test_uptime_counts_from_the_start_and_knows_no_start():
    import time

    assert 99 <= rt.uptime(time.time() - 100) < 110
    assert rt.uptime(None) is None and rt.uptime("yesterday") is None

def test_what_stop_drain_prints():
    assert router_cmd.drain_note({}) is None
    assert router_cmd.drain_note({"drain": {"removed_from": ["vllm-router-18490"], "drained": True, "waited": 1.26,
                                            "running": 0, "waiting": 0}}) == \
        "drained (out of vllm-router-18490; 1.3 s until 0 running, 0 waiting)"
    cut = {"removed_from": [], "drained": False, "cut_off": "1 running and 0 waiting request(s) cut off after ..."}
    assert router_cmd.drain_note({"drain": cut}) == cut["cut_off"]
    assert router_cmd.drain_note({"drain": {"error": "router on port 1 does not answer"}}) == \
        "drain: router on port 1 does not answer"


def test_a_roll_is_refused_before_anything_leaves_the_pool_for_what_restart_would_refuse():
    ok = {"name": "minicpm-dspark-8000", "options": {"backend": "dspark"}}
    assert router_cmd._unrestartable([ok, dict(ok, options={"backend": "standard"})], None) is None
    tf = {"name": "tf-8001", "options": {"backend": "transformers"}}
    assert "tf-8001 is a transformers service" in router_cmd._unrestartable([ok, tf], None)
    keyed = dict(ok, has_key=True)
    assert "requires an API key, which is never stored" in router_cmd._unrestartable([keyed], None)
    assert router_cmd._unrestartable([keyed], "k1") is None
