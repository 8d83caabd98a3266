"""`inv models --source modelscope|auto` with the real modelscope client (1.40, on the package
index) against the local ModelScope stand-in of tests/hubserver.py; no test reaches a real hub.

The client's endpoint is pointed at the stand-in with its own variable (MODELSCOPE_ENDPOINT,
modelscope_hub/config.py), which ocrdeploy sets from the inventory var modelscope_endpoint.
"""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parents[1]))
from hubserver import HubServer, Repo, sha256, wait_for_partial_file  # noqa: E402
from loopback import LoopbackServer  # noqa: E402
from models.test_models import MAIN, ROOT, main_repo, models, state, steps  # noqa: E402


DEEPSEEK = "DeepSeek-OCR"
MS_MAIN = "OpenBMB/MiniCPM-OCR-1.0"


def deepseek_repo(**kw):
    weight = os.urandom(2_000_000)
    return Repo({"config.json": b'{"model_type": "deepseek_vl_v2"}', "model-00001-of-000001.safetensors": weight,
                 "release_manifest.json": json.dumps({"release": "2025-10-20",
                                                      "files": {"model-00001-of-000001.safetensors": sha256(weight)}}
                                                     ).encode()},
                lfs={"model-00001-of-000001.safetensors"}, **kw)


@pytest.fixture
def ms():
    repos = {"deepseek-ai/DeepSeek-OCR": deepseek_repo(), MS_MAIN: main_repo()}
    with HubServer(repos, apis=("modelscope",)) as server:
        yield server


def inventory(tmp_path, ms, **extra):
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {
        "workdir": str(tmp_path / "wd"), "hub_python": sys.executable, "modelscope_endpoint": ms.url,
        "ms_main": MS_MAIN, **extra}}}))
    return inv


def env_for(tmp_path):
    # the client keeps its lock files and session under its cache and config dirs: keep them in the test's tmp
    return {"MODELSCOPE_CACHE": str(tmp_path / "ms-cache"), "HOME": str(tmp_path / "home")}


def test_good_download_is_the_clients_requests_verified_and_a_rerun_asks_nothing(tmp_path, ms):
    inv = inventory(tmp_path, ms)
    p = models(["--json", "--model", DEEPSEEK, "--source", "modelscope"], inv, env=env_for(tmp_path))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    st = steps(p)[f"model:{DEEPSEEK}"]
    assert st["status"] == "changed"
    assert st["outcome"].startswith("verified") and f"from modelscope {ms.url}" in st["outcome"]
    # the seed's id (git clone https://www.modelscope.cn/deepseek-ai/DeepSeek-OCR.git) with no ms_deepseek set
    paths = {p_ for _, p_, _ in ms.requests}
    assert "/api/v1/models/deepseek-ai/DeepSeek-OCR/repo/files" in paths         # the listing
    assert "/api/v1/repos/internalAccelerationInfo" in paths                       # the client's region probe
    assert "/oss/deepseek-ai/DeepSeek-OCR/0123456789abcdef0123456789abcdef01234567/model-00001-of-000001.safetensors" \
        in paths                                                                   # the LFS file, after the 302
    rec = state(tmp_path)["models"][DEEPSEEK]
    assert rec["checked_against"]["model-00001-of-000001.safetensors"] == [
        "release_manifest.json files", "ModelScope listing"]
    assert rec["source"] == f"modelscope {ms.url}"
    before = len(ms.requests)
    p = models(["--json", "--model", DEEPSEEK, "--source", "modelscope"], inv, env=env_for(tmp_path))
    assert p.returncode == 0 and steps(p)[f"model:{DEEPSEEK}"]["status"] == "ok"
    assert len(ms.requests) == before                 # the state says it is verified: not one request
    assert f"from modelscope {ms.url}" in steps(p)[f"model:{DEEPSEEK}"]["reason"]


def test_listing_sha256_other_than_the_bytes_is_refused_by_the_client(tmp_path, ms):
    repo = ms.repos["deepseek-ai/DeepSeek-OCR"]
    repo.advertise_sha["model-00001-of-000001.safetensors"] = "0" * 64
    p = models(["--json", "--model", DEEPSEEK, "--source", "modelscope"], inventory(tmp_path, ms),
               env=env_for(tmp_path))
    assert p.returncode == 1
    tail = steps(p)[f"model:{DEEPSEEK}"]["tail"]
    assert "Hash mismatch for model-00001-of-000001.safetensors" in tail
    assert not (tmp_path / "wd" / "models" / DEEPSEEK / "model-00001-of-000001.safetensors").exists()
    assert DEEPSEEK not in state(tmp_path).get("models", {})


def test_bytes_the_manifest_disowns_are_moved_aside(tmp_path, ms):
    """The listing agrees with the bytes (a corrupted upload): release_manifest.json catches it."""
    repo = ms.repos["deepseek-ai/DeepSeek-OCR"]
    repo.files["release_manifest.json"] = json.dumps({"files": {"model-00001-of-000001.safetensors": "1" * 64}}).encode()
    p = models(["--json", "--model", DEEPSEEK, "--source", "modelscope"], inventory(tmp_path, ms),
               env=env_for(tmp_path))
    assert p.returncode == 1
    tail = steps(p)[f"model:{DEEPSEEK}"]["tail"]
    good = sha256(repo.files["model-00001-of-000001.safetensors"])
    assert f"sha256 {good} does not match release_manifest.json files ({'1' * 64})" in tail
    assert "moved aside, never served" in tail
    assert list((tmp_path / "wd" / "models" / DEEPSEEK / ".ocrdeploy-quarantine").iterdir())


def test_truncated_file_is_a_clear_error(tmp_path, ms):
    ms.repos["deepseek-ai/DeepSeek-OCR"].truncate.add("model-00001-of-000001.safetensors")
    p = models(["--json", "--model", DEEPSEEK, "--source", "modelscope"], inventory(tmp_path, ms),
               env=env_for(tmp_path))
    assert p.returncode == 1
    tail = steps(p)[f"model:{DEEPSEEK}"]["tail"]
    assert "Server announced 1000000 bytes for model-00001-of-000001.safetensors but the repository lists " \
           "2000000 bytes" in tail
    assert DEEPSEEK not in state(tmp_path).get("models", {})


def test_interrupted_download_resumes_with_a_range_request(tmp_path, ms):
    repo = ms.repos["deepseek-ai/DeepSeek-OCR"]
    repo.slow.add("model-00001-of-000001.safetensors")
    inv = inventory(tmp_path, ms)
    env = dict(os.environ, **env_for(tmp_path))
    env.pop("OCRDEPLOY_INVENTORY", None)
    proc = subprocess.Popen([sys.executable, "-m", "ocrdeploy", "models", "--inventory", str(inv), "--model",
                             DEEPSEEK, "--source", "modelscope"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    part = tmp_path / "wd" / "models" / DEEPSEEK / "model-00001-of-000001.safetensors.incomplete"
    wait_for_partial_file(part, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    repo.slow.discard("model-00001-of-000001.safetensors")
    p = models(["--json", "--model", DEEPSEEK, "--source", "modelscope"], inv, env=env_for(tmp_path))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    ranges = [r[2] for r in ms.requests if r[1].endswith("safetensors") and r[2]]
    assert ranges and int(ranges[-1][len("bytes="):-1]) > 300_000, ms.requests
    rec = state(tmp_path)["models"][DEEPSEEK]
    assert rec["sha256"]["model-00001-of-000001.safetensors"] == sha256(repo.files["model-00001-of-000001.safetensors"])


def test_auto_probes_the_hub_then_the_mirror_then_modelscope(tmp_path, ms):
    import socket

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))               # a port nothing answers on: connection refused
    dead = f"http://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    with HubServer({}, apis=("hf",)) as mirror:   # answers, but has no such model: 404
        inv = inventory(tmp_path, ms, hf_endpoint=dead, hf_mirror=mirror.url)
        p = models(["--json", "--model", MAIN, "--source", "auto"], inv, env=env_for(tmp_path))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    st = steps(p)[f"model:{MAIN}"]
    assert f"from modelscope {ms.url}" in st["outcome"]
    assert state(tmp_path)["models"][MAIN]["source"] == f"modelscope {ms.url}"
    log = Path(st["log"]).read_text()
    assert f"MiniCPM-OCR-1.0: probe hf {dead}: " in log and "Connection refused" in log
    assert f"MiniCPM-OCR-1.0: probe hf {mirror.url}: HTTP 404" in log


def test_auto_takes_the_configured_hub_when_it_answers(tmp_path, ms):
    with HubServer({"openbmb/MiniCPM-OCR-1.0": main_repo()}, apis=("hf",)) as hub:
        inv = inventory(tmp_path, ms, hf_endpoint=hub.url)
        p = models(["--json", "--model", MAIN, "--source", "auto"], inv, env=env_for(tmp_path))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert f"from hf {hub.url}" in steps(p)[f"model:{MAIN}"]["outcome"]
    assert not [r for r in ms.requests if "MiniCPM" in r[1]]       # ModelScope was never asked


def test_no_source_answers_names_every_probe(tmp_path):
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {
        "workdir": str(tmp_path / "wd"), "hub_python": sys.executable, "hf_endpoint": "http://127.0.0.1:9",
        "hf_mirror": "http://127.0.0.1:9/mirror", "modelscope_endpoint": "http://127.0.0.1:9/ms"}}}))
    p = models(["--json", "--model", DEEPSEEK, "--source", "auto"], inv, env=env_for(tmp_path))
    assert p.returncode == 1
    tail = steps(p)[f"model:{DEEPSEEK}"]["tail"]
    assert "no source answered for DeepSeek-OCR (hf http://127.0.0.1:9: " in tail      # the error names them too
    for where in ("hf http://127.0.0.1:9", "hf http://127.0.0.1:9/mirror", "modelscope http://127.0.0.1:9/ms"):
        assert f"probe {where}: " in tail


@pytest.mark.parametrize("bad", ["../../../../escaped.safetensors", "{tmp}/absolute.safetensors", "./config.json"])
def test_a_modelscope_listing_cannot_write_outside_the_model_directory(tmp_path, bad):
    """The same refusal as for a Hugging Face hub: the client writes the names the listing gives, so a
    hostile name fails the model before the client downloads anything."""
    outside = tmp_path / "outside"
    outside.mkdir()
    name = bad.format(tmp=outside)
    repo = deepseek_repo()
    repo.files[name] = b"planted by the hub"
    repo.lfs.add(name)
    with HubServer({"deepseek-ai/DeepSeek-OCR": repo}, apis=("modelscope",)) as server:
        p = models(["--json", "--model", DEEPSEEK, "--source", "modelscope"], inventory(tmp_path, server),
                   env=env_for(tmp_path))
        downloads = [r for r in server.requests if r[1].endswith("/repo") or r[1].startswith("/oss/")]
    assert p.returncode == 1
    r = steps(p)[f"model:{DEEPSEEK}"]
    assert r["status"] == "failed" and f"refusing the file name {name!r}" in r["tail"]
    assert downloads == []                              # one file is GET .../repo?FilePath=..., LFS via /oss/
    planted = [f for f in tmp_path.rglob("*") if f.is_file() and f.read_bytes() == b"planted by the hub"]
    assert planted == [] and list(outside.iterdir()) == []


@pytest.mark.parametrize("source", ["modelscope", "auto"])
def test_the_names_written_are_the_names_checked(tmp_path, source):
    """H1: a server that answers the first listing (ocrdeploy's name check) cleanly and every later one with
    names outside the model directory: only the checked names are downloaded, one by one, nothing lands
    outside, and the model is verified from what was checked."""
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = deepseek_repo()
    for name in ("../../../../escaped.safetensors", f"{outside}/absolute.safetensors"):
        repo.listed_later[name] = b"planted by the hub"
    extra = {"hf_endpoint": "http://127.0.0.1:9", "hf_mirror": "http://127.0.0.1:9/mirror"} if source == "auto" else {}
    with HubServer({"deepseek-ai/DeepSeek-OCR": repo}, apis=("modelscope",)) as server:
        p = models(["--json", "--model", DEEPSEEK, "--source", source], inventory(tmp_path, server, **extra),
                   env=env_for(tmp_path))
        fetched = sorted({parse_qs(urlparse(q).query)["FilePath"][0] for q in server.raw_paths if "FilePath=" in q})
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert fetched == sorted(repo.files)
    planted = [f for f in tmp_path.rglob("*") if f.is_file() and f.read_bytes() == b"planted by the hub"]
    assert planted == [] and list(outside.iterdir()) == []
    assert sorted(state(tmp_path)["models"][DEEPSEEK]["files"]) == sorted(repo.files)


class FixedAnswer(LoopbackServer):
    """Answers every GET with one JSON body (a listing of a shape no real ModelScope sends)."""

    def __init__(self, body):
        self.body = body
        super().__init__()

    def handle(self, h, head):
        self.send(h, 200, self.body, "application/json", head)


@pytest.mark.parametrize("files, expect", [
    (["config.json"], "entry 0 is a str, not an object with Path, Size and Sha256"),
    ([{"Path": "a.bin", "Size": "12"}], "entry 0 has Size '12', not a number of bytes"),
    ([{"Path": "a.bin", "Size": -1}], "entry 0 has Size -1, not a number of bytes"),
    ([{"Path": ["a"], "Size": 1}], "entry 0 has Path ['a'], not a file name"),
    ([{"Path": "a.bin", "Size": 1, "Sha256": 5}], "entry 0 has Sha256 5, not a sha256"),
    ([{"Path": "a.bin", "Size": 1, "Sha256": "abc"}], "entry 0 has Sha256 'abc', not 64 hex digits"),
])
def test_a_listing_of_the_wrong_shape_is_said_in_words(files, expect):
    """L22: a hostile listing's shape is named, never a raw AttributeError or TypeError."""
    from ocrdeploy.models import hostside

    with FixedAnswer(json.dumps({"Code": 200, "Data": {"Files": files}}).encode()) as server:
        with pytest.raises(OSError) as exc:
            hostside.modelscope_listing(server.url, "deepseek-ai/DeepSeek-OCR", "master", 5)
    assert str(exc.value) == (f"deepseek-ai/DeepSeek-OCR: ModelScope at {server.url} sent an unusable file list: "
                              f"{expect}")


def test_an_empty_file_in_a_listing_is_usable():
    """Size 0 is a number of bytes (an empty file in the repository), not a malformed entry."""
    from ocrdeploy.models import hostside

    empty = hashlib.sha256(b"").hexdigest()
    files = [{"Path": "empty.txt", "Size": 0, "Sha256": empty, "Revision": "abc123"},
             {"Path": "config.json", "Size": 2, "Sha256": hashlib.sha256(b"{}").hexdigest()}]
    with FixedAnswer(json.dumps({"Code": 200, "Data": {"Files": files}}).encode()) as server:
        listing, commit = hostside.modelscope_listing(server.url, "deepseek-ai/DeepSeek-OCR", "master", 5)
    assert listing["empty.txt"] == (0, empty) and commit == "abc123"


def test_a_listing_larger_than_its_bound_is_refused_unread():
    from ocrdeploy.models import hostside

    with FixedAnswer(b" " * (hostside.LISTING_MAX + 1)) as server:
        with pytest.raises(OSError, match="the ModelScope listing of x/y announces 32.0 MiB, more than the 32.0 MiB"):
            hostside.modelscope_listing(server.url, "x/y", "master", 5)


@pytest.mark.parametrize("hang_from", [1, 2])
def test_auto_probes_are_bounded_when_the_name_lookup_hangs(tmp_path, ms, hang_from):
    """Issue 21 item 2: getaddrinfo is not bounded by socket timeouts; a resolver that hangs (here a
    hook in the host-side process that sleeps for one name) costs each probe its 5 s bound, no more.
    hang_from 2: the first lookup of the name answers (it fails at once), a later one hangs: a probe that
    bounded a lookup of its own and then let the request look the name up again would wait for it."""
    import time

    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import socket, time\n"
        "_real = socket.getaddrinfo\n"
        "_seen = []\n"
        "def getaddrinfo(host, *a, **kw):\n"
        "    if host == 'hang.invalid':\n"
        "        _seen.append(host)\n"
        f"        if len(_seen) >= {hang_from}:\n"
        "            time.sleep(120)\n"
        "        return _real('127.0.0.1', *a, **kw)\n"
        "    return _real(host, *a, **kw)\n"
        "socket.getaddrinfo = getaddrinfo\n")
    inv = inventory(tmp_path, ms, hf_endpoint="http://hang.invalid:9", hf_mirror="http://hang.invalid:9/mirror")
    started = time.monotonic()
    p = models(["--json", "--model", DEEPSEEK, "--source", "auto"], inv,
               env=dict(env_for(tmp_path), PYTHONPATH=str(hook)))
    took = time.monotonic() - started
    assert took < 60, took                 # two 5 s probes and the download; unbounded, 120 s of sleeping each
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    st = steps(p)[f"model:{DEEPSEEK}"]
    assert f"from modelscope {ms.url}" in st["outcome"]
    log = Path(st["log"]).read_text()
    for where in ("hf http://hang.invalid:9", "hf http://hang.invalid:9/mirror")[hang_from - 1:]:
        assert f"probe {where}: no answer within 5 s (the probe of {where}, name lookup included, did not end)" in log
