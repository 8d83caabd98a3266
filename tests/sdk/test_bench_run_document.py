"""The --json document's figures that no other test pins: the default request count per level, where GPU
readings come from, which published figures stand beside a run, the warm-up's errors, which pages are
scored, the server-side peak of running requests, the first answer kept per page, the rates per second,
and a reasoning chunk counted as output.  Levels run through bench.run's --through sdk hook (a call per
page, no server: /metrics then points at a closed loopback port) or against tests/sdk's Hostile server."""

import asyncio
import socket
import time

import httpx
import pytest

from ocrdeploy.sdk import bench
from ocrdeploy.sdk.pages import Page

from test_bench_hostile import SSE, Hostile

TRUTH = "alpha beta gamma delta"


def closed_url(host="127.0.0.2"):
    """A server URL nothing answers on (its /metrics read fails at once): not this machine's name."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://{host}:{port}"


class Calls:
    """--through sdk's call(page) -> Outcome: answers each page with `text`; the first `fail` calls fail."""

    def __init__(self, text=TRUTH, fail=0):
        self.text, self.fail, self.n = text, fail, 0

    def __call__(self, page):
        self.n += 1
        now = time.perf_counter()
        if self.n <= self.fail:
            return bench.Outcome(page.name, False, now, now, error_kind="exit 1", error="failed")
        return bench.Outcome(page.name, True, now, now + 0.01, text=self.text)


def user(name="a.png", truth=TRUTH):
    return Page(name, b"png", "image/png", "user", truth)


def test_a_level_sends_four_requests_per_concurrency_unless_told_how_many():
    calls = Calls()
    doc = bench.run(closed_url(), [user()], levels=(3,), warmup=0, sdk_call=calls)
    assert doc["levels"][0]["requests"] == 12 and calls.n == 12


def test_gpu_readings_are_this_machines_only_when_the_server_is_here():
    remote = bench.run(closed_url("127.0.0.2"), [user()], levels=(1,), requests=1, warmup=0, sdk_call=Calls())
    assert remote["levels"][0]["gpu_note"] == "not sampled: the server is not on this machine"
    local = bench.run(closed_url("127.0.0.1"), [user()], levels=(1,), requests=1, warmup=0, sdk_call=Calls())
    assert local["levels"][0]["gpu_note"] != "not sampled: the server is not on this machine"


def test_published_figures_stand_only_beside_minicpm_ocr():
    run = dict(levels=(1,), requests=1, warmup=0, sdk_call=Calls())
    assert bench.run(closed_url(), [user()], model="minicpm-ocr", **run)["references"] == bench.REFERENCES
    assert bench.run(closed_url(), [user()], model="qwen2-vl", **run)["references"] == []


def test_the_warm_ups_failures_are_counted_and_not_in_the_levels():
    doc = bench.run(closed_url(), [user()], levels=(1,), requests=2, warmup=3, sdk_call=Calls(fail=2))
    assert doc["warmup"] == {"requests": 3, "errors": 2}
    assert doc["levels"][0]["errors"] == 0 and doc["levels"][0]["pages"] == 2


def test_the_projects_pages_are_scored_and_a_user_page_only_with_its_truth():
    pages = [Page("text", b"png", "image/png", "text"), user("mine.png", None), user("known.png")]
    doc = bench.run(closed_url(), pages, levels=(1,), requests=3, warmup=0, sdk_call=Calls())
    assert [p["scored"] for p in doc["pages"]] == [True, False, True]


def test_the_first_answer_of_a_page_is_the_one_kept_and_rates_are_per_second():
    outcomes = [bench.Outcome("a.png", True, 0.0, 1.0, 0.1, 10, "usage", TRUTH),
                bench.Outcome("a.png", True, 1.0, 2.0, 0.1, 30, "usage", "alpha")]

    def load():                                # the controller busy for 0.3 s of CPU over a 4 s level
        end = time.process_time() + 0.3
        while time.process_time() < end:
            pass
        return outcomes, 4.0, 1

    lv = bench.run_level("http://127.0.0.1:9", [user()], [], 1, load=load)
    assert lv["answers"]["a.png"]["answer"] == TRUTH and lv["answers"]["a.png"]["accuracy"] == 1.0
    assert lv["controller_cpu_s"] >= 0.3
    assert lv["controller_cpu_share"] == pytest.approx(lv["controller_cpu_s"] / 4.0, abs=0.002)


def test_the_server_side_peak_is_the_most_requests_it_ran_at_once():
    readings = iter([0, 3, 1] + [0] * 1000)

    def metrics():
        return f"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{{engine=\"0\"}} {next(readings)}\n"

    def load():
        time.sleep(1.2)                       # the sampler reads every 0.2 s meanwhile
        return [], 1.2, 1

    lv = bench.run_level("http://127.0.0.1:9", [user()], [], 1, metrics=metrics, load=load)
    assert lv["server_running_max"] == 3


def send(body: bytes):
    with Hostile(200, SSE, body) as srv:
        async def go():
            async with httpx.AsyncClient(base_url=srv.url, trust_env=False, timeout=10) as client:
                return await bench.send(client, {"model": "m"}, "p")

        return asyncio.run(go())


def test_a_reasoning_chunk_is_output_and_starts_the_first_token_clock():
    o = send(b'data: {"choices": [{"delta": {"reasoning_content": "let me look"}}]}\n\n'
             b'data: {"choices": [{"delta": {"content": "alpha"}}]}\n\ndata: [DONE]\n\n')
    assert o.ok and o.text == "alpha" and o.output_tokens == 2 and o.tokens_from == "chunks"
    assert o.ttft is not None


def test_output_tokens_per_second_over_a_real_level():
    body = (b'data: {"choices": [{"delta": {"content": "a"}}]}\n\n'
            b'data: {"usage": {"completion_tokens": 600}}\n\ndata: [DONE]\n\n')
    page = [Page("p", b"png", "image/png", "user", None)]
    with Hostile(200, SSE, body) as srv:
        lv = bench.run(srv.url, page, levels=(1,), requests=2, warmup=0)["levels"][0]
    assert lv["output_tokens"] == 1200
    # the rate is of the unrounded wall time; wall_s is shown to the millisecond
    assert 1200 / (lv["wall_s"] + 0.0005) <= lv["output_tokens_per_s"] + 0.001
    assert lv["output_tokens_per_s"] - 0.001 <= 1200 / (lv["wall_s"] - 0.0005)
