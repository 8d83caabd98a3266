"""`ocrdeploy bench`'s options as a user gives them (a subprocess, the OpenAI-compatible stand-in): the
concurrency levels' default and order, each impossible combination a one-line exit 2, and what a run without
options uses (warmup, accuracy floor, backend, the model the server lists, the baseline's figure)."""

import json

import pytest

from loopback import LoopbackServer
from ocrdeploy.commands.bench import _model_for, levels_option
from ocrdeploy.sdk.bench import SERVED_NAME
from ocrserver import OcrServer
from test_bench_cli import _answers, bench


def test_levels_default_to_1_2_4_8_and_keep_the_order_given_once_each():
    assert levels_option(None) == [1, 2, 4, 8]
    assert levels_option("4,1,4,2, 1") == [4, 1, 2]


@pytest.mark.parametrize("args, message", [
    (["--duration", "0"], "--duration must be > 0"),
    (["--requests", "0"], "--requests must be at least 1"),
    (["--router"], "--router benches the router"),
    (["--backend", "tgi"], "--backend 'tgi': choose"),
    (["--name", "minicpm-ocr-18499"], "--name picks a service"),
    (["--router-port", "18491"], "--router-port goes with --router"),
    (["--host", "localhost"], "--server-url with --through api benches from this machine: --host is not used"),
])
def test_options_that_cannot_go_together_are_one_line_and_exit_2(args, message):
    p = bench("--server-url", "http://127.0.0.1:9", *args)
    assert p.returncode == 2, p.stdout + p.stderr
    assert message in p.stderr and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def pages():
    from ocrdeploy.sdk import pages as pages_mod

    return pages_mod.sample_pages()


def test_a_run_without_options_uses_the_documented_defaults_and_the_listed_model(pages, tmp_path):
    """A server that lists one model under another name: that name is sent; one warmup request, the 0.85
    floor, 1024 tokens at most, the OpenAI body; with a baseline, its figure is reported beside today's."""
    (tmp_path / "base.json").write_text(json.dumps({"verdict": {"pages_per_min": 1e-6}}))
    with OcrServer(_answers(pages), model="served-elsewhere") as srv:
        p = bench("--server-url", srv.url, "--concurrency", "1", "--requests", "1", "--json",
                  "--baseline", tmp_path / "base.json")
        sent = [b.get("max_tokens") for b in srv.bodies]
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert doc["model"] == "served-elsewhere" and doc["backend"] == "openai"
    assert doc["warmup"]["requests"] == 1 and doc["verdict"]["min_accuracy"] == 0.85
    assert sent == [1024, 1024]                                          # the warmup and the one request
    assert doc["baseline"]["pages_per_min"] == 1e-6 and doc["baseline"]["tolerance"] == 0.10


def test_through_sdk_a_server_url_that_is_no_url_is_refused_before_any_host_is_reached():
    p = bench("--through", "sdk", "--server-url", "localhost:8000")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "give the server's base URL" in p.stderr and len(p.stderr.strip().splitlines()) == 1


class Models(LoopbackServer):
    """A server whose /v1/models lists the given ids (or answers 500, as transformers serve does)."""

    def __init__(self, ids):
        super().__init__()
        self.ids = ids

    def handle(self, h, head):
        body = json.dumps({"object": "list", "data": [{"id": i} for i in self.ids or []]}).encode()
        h.send_response(200 if self.ids is not None else 500)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)


@pytest.mark.parametrize("ids,sent", [
    (["other-ocr"], "other-ocr"),                         # the one model listed
    (["other-ocr", "third-ocr"], SERVED_NAME),            # several, none ours: our name, not a guess
    (["other-ocr", SERVED_NAME], SERVED_NAME),
    (None, SERVED_NAME),                                  # /v1/models fails
])
def test_the_model_name_sent_is_the_one_listed_or_ours(ids, sent):
    with Models(ids) as srv:
        assert _model_for(srv.url, None, None) == sent
        assert _model_for(srv.url, None, "given") == "given"


def test_on_the_host_backend_and_model_given_win_over_the_services_own(tmp_path):
    """--host with the serve stand-in running: --backend and --model are what is sent, not the record's kind
    and served name; an inventory that selects two hosts is refused (one host at a time)."""
    import yaml
    from test_services import cli as host_cli, free_port, provision

    wd = tmp_path / "wd"
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd)}}}))
    provision(wd)
    assert host_cli("serve", ["--port", str(free_port())], inv).returncode == 0
    try:
        p = host_cli("bench", ["--backend", "openai", "--model", "asked-for", "--concurrency", "1", "--requests",
                               "1", "--warmup", "0", "--json"], inv)
        doc = json.loads(p.stdout)
        assert (doc["backend"], doc["model"]) == ("openai", "asked-for"), p.stderr[-2000:]
        assert doc["extra_body"] is None or "mm_processor_kwargs" not in doc["extra_body"]
    finally:
        host_cli("stop", [], inv)
    two = tmp_path / "two.yml"
    two.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd)}, "hosts": {
        "a": {"ansible_connection": "local"}, "b": {"ansible_connection": "local"}}}}))
    p = host_cli("bench", ["--host", "all", "--requests", "1"], two)
    assert p.returncode == 2 and "--host selects 2 hosts: bench one host at a time" in p.stderr, p.stderr


def test_through_sdk_the_target_shown_hides_the_urls_password(tmp_path):
    """The SDK on the host gets the URL as given; the document and the table name it with the password masked."""
    import yaml
    from test_bench_sdk import standin_sdk
    from test_services import cli as host_cli, provision

    wd = tmp_path / "wd"
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd)}}}))
    provision(wd)
    standin_sdk(wd)
    from ocrdeploy.sdk import pages as pages_mod

    with OcrServer(_answers(pages_mod.sample_pages())) as srv:
        url = srv.url.replace("http://", "http://ocr:hunter2secret@")
        p = host_cli("bench", ["--through", "sdk", "--server-url", url, "--concurrency", "1", "--requests", "1",
                               "--warmup", "0", "--json"], inv, timeout=300)
    doc = json.loads(p.stdout)
    assert doc["target"].startswith("localhost: ") and "127.0.0.1" in doc["target"], p.stderr[-2000:]
    assert "hunter2secret" not in doc["target"]
