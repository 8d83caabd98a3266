"""`inv verify --router` and `inv parse --router`: the router's URL, and only it, reaches the checks and the
SDK.  The real pinned vllm-router in front of test_services' stand-in MiniCPM-OCR server (a multimodal
model on a GPU, which nothing here can serve) started by `inv serve --router`; the SDK is test_verify's
stand-in minicpmvocr, which records the argv it was given."""

import json
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from engines import engine_env, router_port  # noqa: E402
from test_services import cli, free_port, provision, site  # noqa: E402,F401 - `site` is a shared fixture
from test_verify import checks_of, sdk_env  # noqa: E402

from ocrdeploy.sdk import samples  # noqa: E402


def test_verify_and_parse_through_the_router_give_its_one_url(site, tmp_path):
    wd, inv = site
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd), "router_env": str(engine_env("router"))}}}))
    provision(wd)
    calls = sdk_env(wd)
    port, rport = free_port(), router_port()
    p = cli("serve", ["--port", str(port), "--router", "--router-port", str(rport), "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads(p.stdout)["hosts"]["localhost"]["router"]["workers"] == [f"http://127.0.0.1:{port}"]
    router = f"http://127.0.0.1:{rport}"

    p = cli("verify", ["--router", "--router-port", str(rport), "--json"], inv)
    c = checks_of(p)
    assert c["readiness"]["status"] == "passed" and c["smoke request"]["status"] == "passed", c
    for page in ("text", "table", "formula"):
        assert c[f"parse: {page} page"]["status"] == "passed", c[f"parse: {page} page"]
    verify_argvs = [json.loads(line)["argv"] for line in calls.read_text().splitlines()]
    assert verify_argvs
    for argv in verify_argvs:       # one --server-url, the router's, never the worker's own
        assert [argv[i + 1] for i, a in enumerate(argv) if a == "--server-url"] == [router]

    doc = tmp_path / "text.pdf"
    doc.write_bytes(samples.text_page())
    p = cli("parse", ["--input", str(doc), "--output", str(tmp_path / "text.md"), "--router", "--router-port",
                      str(rport)], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    argvs = [json.loads(line)["argv"] for line in calls.read_text().splitlines()][len(verify_argvs):]
    assert argvs
    for argv in argvs:
        assert [argv[i + 1] for i, a in enumerate(argv) if a == "--server-url"] == [router]


def test_verify_router_with_no_router_there_fails_its_readiness(site):
    """--router-port where no router listens: the checks say so (not a check against some other server)."""
    wd, inv = site
    provision(wd)
    sdk_env(wd)
    port = free_port()
    assert cli("serve", ["--port", str(port)], inv).returncode == 0
    p = cli("verify", ["--router", "--router-port", str(free_port()), "--json"], inv)
    c = checks_of(p)
    assert p.returncode == 1 and c["readiness"]["status"] == "failed", c
