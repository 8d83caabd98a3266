"""inv verify / inv status against hostile servers (red team M7-M10, L7, L20) and the DSpark counters that
must rise (a wrong edit the suite let through).  Real local HTTP servers (hostile_openai.py), the real CLI."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from hostile_openai import ESCAPES, HostileOpenAI  # noqa: E402
from peakmem import PEAK_KB  # noqa: E402
from test_services import cli, free_port, provision, site  # noqa: E402,F401 - `site` is a shared fixture

from ocrdeploy.commands.verify import smoke_and_counters  # noqa: E402
from ocrdeploy.sdk.client import OcrClient  # noqa: E402
from ocrdeploy.services import hostside  # noqa: E402


def checks_of(p):
    return {c["check"]: c for c in json.loads(p.stdout)["hosts"]["localhost"]["checks"]}


def test_counters_that_did_not_rise_fail_the_dspark_check():
    """A DSpark server whose spec-decode counters stay where they were did not speculate on this request."""
    with HostileOpenAI("frozen") as srv, OcrClient(srv.url) as client:
        smoke, counters = smoke_and_counters(client, "dspark", expect_dspark=True)
    assert smoke["status"] == "passed"
    assert counters["status"] == "failed" and "did not increase" in counters["detail"], counters


@pytest.mark.parametrize("json_out", [False, True])
def test_malformed_metrics_is_said_in_verify(site, json_out):
    """M7: a /metrics answer prometheus_client cannot parse is a failed or not-run check, never a traceback."""
    wd, inv = site
    provision(wd)
    with HostileOpenAI("badmetrics") as srv:
        p = cli("verify", ["--server-url", srv.url] + (["--json"] if json_out else []), inv)
    assert "Traceback" not in p.stderr and p.returncode in (0, 1), p.stderr[-2000:]
    if json_out:
        c = checks_of(p)["DSpark counters"]
        assert c["status"] == "not run" and "/metrics answer is malformed" in c["detail"], c
    else:
        assert "malformed" in p.stdout


def test_malformed_metrics_is_said_in_status_and_verify_of_a_service(site, tmp_path):
    """M7 for a service `inv serve` started: status and verify read its /metrics and say it is malformed."""
    wd, inv = site
    provision(wd)
    port = free_port()
    here = Path(__file__).parent / "hostile_openai.py"
    r = hostside.start({"workdir": str(wd), "name": f"minicpm-ocr-{port}", "port": port, "kind": "dspark",
                        "argv": [sys.executable, str(here), "badmetrics", str(port)], "served_name": "minicpm-ocr",
                        "log": str(wd / ".ocrdeploy" / "services" / f"minicpm-ocr-{port}.log")})
    assert r["ok"]
    try:
        status_and_verify_say_malformed(wd, inv, port)
    finally:                                   # the service outlives the test otherwise (found left running after CI)
        hostside.stop({"workdir": str(wd), "name": f"minicpm-ocr-{port}", "grace": 5})


def status_and_verify_say_malformed(wd, inv, port):
    assert hostside.wait({"workdir": str(wd), "name": f"minicpm-ocr-{port}", "timeout": 20, "interval": 0.1})["ready"]
    p = cli("status", ["--json"], inv)
    assert "Traceback" not in p.stderr, p.stderr[-2000:]
    s = json.loads(p.stdout)["hosts"]["localhost"]["services"][0]
    assert s["spec_decode"]["state"] == "malformed /metrics" and "could not" in s["spec_decode"]["error"].lower() \
        or s["spec_decode"]["state"] == "malformed /metrics", s
    p = cli("status", [], inv)
    assert "Traceback" not in p.stderr and "malformed /metrics" in p.stdout, p.stdout + p.stderr[-2000:]
    p = cli("verify", ["--json"], inv)
    assert "Traceback" not in p.stderr, p.stderr[-2000:]
    c = checks_of(p)["DSpark counters"]
    assert c["status"] == "failed" and "/metrics answer is malformed" in c["detail"], c


def test_a_slow_drip_server_fails_readiness_within_the_deadline(site):
    """M8: 1 byte every 0.5 s of a declared 100 KB: httpx's per-read timeout never trips; the overall
    deadline of a /v1/models request (15 s) does."""
    wd, inv = site
    provision(wd)
    with HostileOpenAI("drip") as srv:
        t0 = time.monotonic()
        p = cli("verify", ["--server-url", srv.url, "--json"], inv, timeout=120)
        took = time.monotonic() - t0
    c = checks_of(p)["readiness"]
    assert p.returncode == 1 and c["status"] == "failed" and "within 15 s" in c["detail"], c
    assert took < 60


def test_a_client_deadline_ends_a_drip_at_once():
    with HostileOpenAI("drip") as srv, OcrClient(srv.url, timeout=2) as client:
        t0 = time.monotonic()
        with pytest.raises(Exception, match="no whole answer within 2 s"):
            client.models()
        assert time.monotonic() - t0 < 5


def test_a_huge_body_is_refused_without_reading_it(site):
    """M9: a 3 GiB /v1/models: refused from its Content-Length (and while reading, without one), with the
    controller's memory where it was."""
    wd, inv = site
    provision(wd)
    with HostileOpenAI("huge") as srv:
        p = subprocess.run([sys.executable, "-c", PEAK_KB + (
            "import sys, json\n"
            "from ocrdeploy.sdk.client import OcrClient\n"
            "try:\n"
            "    OcrClient(sys.argv[1]).models()\n"
            "except Exception as exc:\n"
            "    print(json.dumps({'error': str(exc), 'rss_kb': peak_kb()}))\n"),
            srv.url], capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2])
        out = json.loads(p.stdout)
        assert "more than 8388608" in out["error"] and out["rss_kb"] < 300_000, out
        p = cli("verify", ["--server-url", srv.url, "--json"], inv)
    c = checks_of(p)["readiness"]
    assert p.returncode == 1 and c["status"] == "failed" and "8388608" in c["detail"], c


def test_a_huge_body_without_a_length_is_cut_at_the_limit():
    with HostileOpenAI("huge") as srv:
        client = OcrClient(srv.url, max_answer=1 << 20)
        with pytest.raises(Exception, match="more than 1048576|over 1048576"):
            client.models()


@pytest.mark.parametrize("state", ["{{{garbage", "[1, 2]"])
def test_a_corrupt_state_file_with_server_url_is_one_line(site, state):
    """M10: verify --server-url reads the host state through the one checked reader."""
    wd, inv = site
    provision(wd)
    (wd / ".ocrdeploy" / "state.json").write_text(state)
    with HostileOpenAI("frozen") as srv:
        p = cli("verify", ["--server-url", srv.url], inv)
    assert p.returncode == 1 and "Traceback" not in p.stdout + p.stderr, p.stderr[-2000:]
    assert "state.json is corrupt" in " ".join((p.stdout + p.stderr).split())


def test_a_password_in_the_server_url_is_masked(site):
    """L20: http://bob:PASSWORD@host: masked in the table and in --json, as everywhere else."""
    wd, inv = site
    provision(wd)
    with HostileOpenAI("frozen") as srv:
        url = srv.url.replace("http://", "http://bob:Sup3rSecretPw@")
        for extra in ([], ["--json"]):
            p = cli("verify", ["--server-url", url, *extra], inv)
            assert "Sup3rSecretPw" not in p.stdout + p.stderr, (p.stdout + p.stderr)[-3000:]
            assert "readiness" in p.stdout


@pytest.mark.parametrize("mode", ["escapes", "errescapes"])
def test_a_servers_text_reaches_the_terminal_without_its_escapes(site, mode):
    """L7: model ids and error messages with OSC 52 (clipboard), clear-screen, title and rich markup.  A model id
    with escapes is not a name a request could send: readiness fails on it, the id shown escaped."""
    wd, inv = site
    provision(wd)
    with HostileOpenAI(mode) as srv:
        p = cli("verify", ["--server-url", srv.url], inv)
    assert "\x1b" not in p.stdout + p.stderr and "\x07" not in p.stdout, repr(p.stdout[-2000:])
    assert "[red]x[/]" in " ".join(p.stdout.split()) or "x[/]" in p.stdout     # markup shown as written
    assert p.returncode == 1
    if mode == "escapes":
        assert "no model id of printable text" in " ".join(p.stdout.split())
    else:
        assert "bad request" in p.stdout


def test_a_model_list_without_a_name_to_send_fails_readiness(site):
    """/v1/models answering null, numbers or empty ids: nothing a request could name, so readiness fails (exit 1)
    and the later checks are not run, instead of passing on 'None, 7'."""
    wd, inv = site
    provision(wd)
    with HostileOpenAI("badids") as srv:
        p = cli("verify", ["--server-url", srv.url, "--json"], inv)
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    checks = checks_of(p)
    assert checks["readiness"]["status"] == "failed", checks["readiness"]
    assert "entry 1 has no model id of printable text: None" in checks["readiness"]["detail"]
    assert checks["smoke request"]["status"] == "not run"


def test_an_empty_model_list_leaves_readiness_to_the_smoke_request(site):
    """transformers serve lists its hub cache on /v1/models, [] while it serves a directory, and loads what a
    request names: the empty list passes readiness saying so, and the smoke request decides."""
    wd, inv = site
    provision(wd)
    with HostileOpenAI("nomodels") as srv:
        p = cli("verify", ["--server-url", srv.url, "--json"], inv)
    checks = checks_of(p)
    assert checks["readiness"]["status"] == "passed" and "lists no model" in checks["readiness"]["detail"], checks
    assert checks["smoke request"]["status"] == "passed", checks["smoke request"]
    assert ESCAPES


def test_a_smoke_failure_other_than_400_is_not_blamed_on_trust_request_mm_kwargs():
    """Only a 400 to the SDK's mm_processor_kwargs, answered without them, is the missing
    --trust-request-mm-kwargs; a 500 (the server failed on the image) is said as it came, and never re-asked
    and explained away as a flag to restart with.  A real HTTP server on loopback."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked = []

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            asked.append("mm_processor_kwargs" in body)
            code, doc = ((500, {"error": {"message": "EngineCore died"}}) if "mm_processor_kwargs" in body else
                         (200, {"choices": [{"message": {"content": "Hello"}}]}))
            data = json.dumps(doc).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        from ocrdeploy.commands.verify import smoke_request

        with OcrClient(f"http://127.0.0.1:{srv.server_address[1]}", timeout=30) as client:
            smoke = smoke_request(client, "vllm")
    finally:
        srv.shutdown()
        srv.server_close()
    assert smoke["status"] == "failed" and smoke["detail"].startswith("HTTP 500: EngineCore died"), smoke
    assert "--trust-request-mm-kwargs" not in smoke["detail"] and asked == [True], (smoke, asked)
