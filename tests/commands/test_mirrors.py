"""A host that reaches nothing but a local package index and a local ModelScope stand-in installs
the sdk-only recipe and downloads its models, with no other change than the inventory vars.

Real: pip (from the host's venvs) against a PEP 503 index over HTTP with basic auth
(tests/pipindex.py), the git clone, the editable install, the step engine, and the real
modelscope client against tests/hubserver.py.  Everything else is closed: proxies that go
nowhere, no pip configuration (PIP_CONFIG_FILE=/dev/null).  The wheels are small ones the test
builds under the recipe's names and pins (paddlepaddle 3.2.1 alone is 189 MB on PyPI, and no
test may download it); the SDK is a local repository whose `minicpmvocr list-backends` prints
what the real one does, built by a backend that needs nothing from the index.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parents[1]))
from hubserver import HubServer, Repo  # noqa: E402
from pipindex import PipIndex, build_wheel, sdk_repo  # noqa: E402

ROOT = Path(__file__).parents[2]
LAYOUT = "PP-DocLayoutV3_infer"
PASSWORD = "idx-s3cret"


def closed_network_env(tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k.lower() not in (
        "http_proxy", "https_proxy", "no_proxy", "all_proxy")}
    dead = "http://127.0.0.1:9"              # discard port: nothing answers, so every other source is closed
    env.update(PIP_CONFIG_FILE=os.devnull, http_proxy=dead, https_proxy=dead, HTTP_PROXY=dead, HTTPS_PROXY=dead,
               no_proxy="127.0.0.1,localhost", NO_PROXY="127.0.0.1,localhost", COLUMNS="200",
               MODELSCOPE_CACHE=str(tmp_path / "ms-cache"), HOME=str(tmp_path / "home"))
    env.pop("OCRDEPLOY_INVENTORY", None)
    return env


@pytest.fixture
def sources(tmp_path):
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "paddlepaddle", "3.2.1", {"paddle/__init__.py": "__version__ = '3.2.1'\n"})
    build_wheel(wheels, "paddlex", "3.4.2", {"paddlex/__init__.py": "__version__ = '3.4.2'\n"})
    build_wheel(wheels, "pypdfium2", "5.15.2", {"pypdfium2/__init__.py": ""})
    layout = Repo({"inference.json": b"{}", "inference.pdiparams": os.urandom(400_000), "inference.yml": b"a: 1\n",
                   "README.md": b"# PP-DocLayoutV3\n"}, lfs={"inference.pdiparams"})
    with PipIndex(wheels, auth=("ci", PASSWORD)) as index, \
            HubServer({"PaddlePaddle/PP-DocLayoutV3": layout}, apis=("modelscope",)) as ms:
        yield index, ms


def test_sdk_only_from_a_local_index_and_modelscope(tmp_path, sources):
    index, ms = sources
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {
        "workdir": str(tmp_path / "wd"), "sdk_repo": str(sdk_repo(tmp_path / "MiniCPM-OCR")),
        "pip_index_url": index.url_with_auth(), "model_source": "modelscope", "modelscope_endpoint": ms.url,
        "hub_python": sys.executable}}}))
    env = closed_network_env(tmp_path)
    args = [sys.executable, "-m", "ocrdeploy", "install", "--inventory", str(inv), "--recipe", "sdk-only", "--json"]
    p = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    doc = json.loads(p.stdout)["hosts"]["localhost"]
    status = {s["step"]: s["status"] for s in doc["steps"]}
    # this mirror has no uv: installer auto tries it (the tools venv, then uv), and the installs run with pip
    assert status == {"tools-venv": "changed", "tools-uv": "skipped",
                      "sdk-venv": "changed", "sdk-venv-guard": "ok", "sdk-paddle": "changed", "sdk-clone": "changed",
                      "sdk-install": "changed", "sdk-paddlex": "changed", "sdk-pypdfium2": "changed",
                      "sdk-backends": "changed", f"model:{LAYOUT}": "changed"}
    uv = next(s for s in doc["steps"] if s["step"] == "tools-uv")
    assert "uv could not be installed: the installs it serves run with pip instead" in uv["reason"]
    asked = {path for _, path in index.requests}
    assert {"/simple/paddlepaddle/", "/simple/paddlex/", "/simple/pypdfium2/"} <= asked
    assert any(p_.endswith("/PaddlePaddle/PP-DocLayoutV3/repo/files") for _, p_, _ in ms.requests)
    st = json.loads((tmp_path / "wd" / ".ocrdeploy" / "state.json").read_text())
    assert st["models"][LAYOUT]["source"] == f"modelscope {ms.url}"
    assert st["models"][LAYOUT]["checked_against"]["inference.pdiparams"] == ["ModelScope listing"]
    paddle = next(s for s in doc["steps"] if s["step"] == "sdk-paddle")
    assert f"env PIP_INDEX_URL='http://***@127.0.0.1:{index.httpd.server_address[1]}/simple/' " in \
        " ".join(paddle["commands"]) and "pip install paddlepaddle==3.2.1" in " ".join(paddle["commands"])
    logs = "".join(f.read_text() for f in (tmp_path / "wd" / ".ocrdeploy" / "logs").rglob("*.log"))
    assert PASSWORD not in p.stdout + p.stderr + logs and "***@127.0.0.1" in logs

    before = (len(index.requests), len(ms.requests))
    p = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    doc = json.loads(p.stdout)["hosts"]["localhost"]
    assert p.returncode == 0 and {s["status"] for s in doc["steps"]} == {"ok"} and doc["commands_run"] == 0
    assert (len(index.requests), len(ms.requests)) == before


def test_preflight_shows_which_sources_answer(tmp_path, sources):
    index, ms = sources
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {
        "workdir": str(tmp_path / "wd"), "pip_index_url": index.url_with_auth(), "model_source": "modelscope",
        "modelscope_endpoint": ms.url, "sdk_repo": "https://github.com/OpenBMB/MiniCPM-OCR.git"}}}))
    env = closed_network_env(tmp_path)
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "preflight", "--inventory", str(inv), "--recipe",
                        "sdk-only", "--json"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    doc = json.loads(p.stdout)["hosts"]["localhost"]
    check = next(c for c in doc["checks"] if c["name"] == "sources")
    rows = {r["name"]: r for r in check["value"]}
    assert rows["pip index"]["reachable"] and rows["pip index"]["proxy"] is None
    assert rows["pip index"]["url"] == f"http://***@127.0.0.1:{index.httpd.server_address[1]}/simple/"
    assert rows["ModelScope"]["reachable"] and rows["ModelScope"]["verdict"] == "ok"
    assert not rows["SDK repo"]["reachable"] and rows["SDK repo"]["proxy"] == "http://127.0.0.1:9"
    assert check["status"] == "warn" and "set sdk_repo" in check["fix"]
    assert PASSWORD not in p.stdout + p.stderr
    asked = len(index.requests)
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "preflight", "--inventory", str(inv), "--recipe",
                        "sdk-only", "--network-timeout", "0", "--json"], capture_output=True, text=True, cwd=ROOT,
                       env=env, timeout=120)
    check = next(c for c in json.loads(p.stdout)["hosts"]["localhost"]["checks"] if c["name"] == "sources")
    assert check["status"] == "skip" and check["message"] == "not tested (--network-timeout 0)"
    assert len(index.requests) == asked
