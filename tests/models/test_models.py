"""`inv models` against a local Hub stand-in (tests/hubserver.py): no test reaches a real hub."""

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parents[1]))
from hubserver import HubServer, Repo, sha256, wait_for_partial_file  # noqa: E402

ROOT = Path(__file__).parents[2]
MAIN, DRAFT, LAYOUT = "MiniCPM-OCR-1.0", "MiniCPM-OCR-1.0-DSpark", "PP-DocLayoutV3_infer"


def main_repo(release="2026-10-19", weight=None, drop=(), **kw):
    weight = weight or os.urandom(2_500_000)
    files = {"config.json": b'{"model_type": "minicpm_ocr"}', "model.safetensors": weight,
             "tokenizer.json": b'{"version": "1.0"}', "preprocessor_config.json": b"{}",
             "chat_template.jinja": b"{{ messages }}"}
    for d in drop:
        files.pop(d)
    files["release_manifest.json"] = json.dumps({"release": release, "weight_sha256": sha256(weight)}).encode()
    return Repo(files, **kw)


def draft_repo(release="2026-10-19", **kw):
    weight = os.urandom(1_200_000)
    return Repo({"config.json": b'{"model_type": "dspark"}', "model.safetensors": weight,
                 "release_manifest.json": json.dumps({"release": release, "weight_sha256": sha256(weight)}).encode()},
                **kw)


def layout_tar(safetensors=False) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        names = {"model.safetensors": b"x" * 100, "config.json": b"{}"} if safetensors else {
            "inference.pdiparams": os.urandom(300_000), "inference.json": b"{}", "inference.yml": b"a: 1\n"}
        for n, data in names.items():
            info = tarfile.TarInfo(f"PP-DocLayoutV3_infer/{n}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def hub():
    repos = {"openbmb/MiniCPM-OCR-1.0": main_repo(), "openbmb/MiniCPM-OCR-1.0-DSpark": draft_repo()}
    with HubServer(repos, static={"/files/PP-DocLayoutV3_infer.tar": layout_tar()}) as server:
        yield server


def inventory(tmp_path, hub, **extra):
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {
        "workdir": str(tmp_path / "wd"), "hub_python": sys.executable, "hf_endpoint": hub.url,
        "layout_url": f"{hub.url}/files/PP-DocLayoutV3_infer.tar", **extra}}}))
    return inv


def models(args, inv=None, cwd=ROOT, env=None):
    env = dict(os.environ, COLUMNS="200", **(env or {}))
    env.pop("OCRDEPLOY_INVENTORY", None)
    env.pop("HF_ENDPOINT", None)
    base = ["--inventory", str(inv)] if inv else []
    return subprocess.run([sys.executable, "-m", "ocrdeploy", "models", *base, *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=300)


def steps(p):
    return {s["step"]: s for s in json.loads(p.stdout)["hosts"]["localhost"]["steps"]}


def state(tmp_path):
    return json.loads((tmp_path / "wd" / ".ocrdeploy" / "state.json").read_text())


def test_good_download_verified_recorded_and_rerun_is_a_no_op(tmp_path, hub):
    inv = inventory(tmp_path, hub)
    p = models(["--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    st = steps(p)
    assert {k: v["status"] for k, v in st.items()} == {
        f"model:{MAIN}": "changed", f"model:{DRAFT}": "changed", f"model:{LAYOUT}": "changed", "same-release": "ok"}
    assert st["same-release"]["reason"] == "same release (compared release='2026-10-19')"
    models_state = state(tmp_path)["models"]
    assert set(models_state) == {MAIN, DRAFT, LAYOUT}
    assert models_state[MAIN]["checked_against"]["model.safetensors"] == [
        "release_manifest.json weight_sha256", "hub LFS metadata"]
    assert models_state[LAYOUT]["path"] == f"{tmp_path}/wd/models/{LAYOUT}"
    assert (tmp_path / "wd" / "models" / LAYOUT / "inference.pdiparams").exists()
    log = Path(st[f"model:{MAIN}"]["log"]).read_text()
    assert "@@progress download:MiniCPM-OCR-1.0" in log and "@@progress sha256:MiniCPM-OCR-1.0" in log

    before = len(hub.requests)
    p = models(["--json"], inv)
    assert p.returncode == 0 and {s["status"] for s in steps(p).values()} == {"ok"}
    assert len(hub.requests) == before          # nothing fetched, nothing hashed: the state says all is in place
    assert "sha256 checked against release_manifest.json weight_sha256, hub LFS metadata" in \
        steps(p)[f"model:{MAIN}"]["reason"]


def test_corrupted_file_fails_names_both_digests_and_is_moved_aside(tmp_path, hub):
    repo = hub.repos["openbmb/MiniCPM-OCR-1.0"]
    good = sha256(repo.files["model.safetensors"])
    repo.advertise_sha["model.safetensors"] = "0" * 64          # the hub says one thing, the bytes another
    inv = inventory(tmp_path, hub)
    p = models(["--json", "--model", MAIN], inv)
    assert p.returncode == 1
    r = steps(p)[f"model:{MAIN}"]
    assert r["status"] == "failed"
    tail = r["tail"]
    assert f"model.safetensors: sha256 {good} does not match hub LFS metadata ({'0' * 64})" in tail
    assert "moved aside, never served" in tail
    target = tmp_path / "wd" / "models" / MAIN
    assert not (target / "model.safetensors").exists()
    assert list((target / ".ocrdeploy-quarantine").iterdir())
    assert MAIN not in state(tmp_path).get("models", {})
    del repo.advertise_sha["model.safetensors"]                  # the hub is fixed: the next run downloads again
    p = models(["--json", "--model", MAIN], inv)
    assert p.returncode == 0 and steps(p)[f"model:{MAIN}"]["status"] == "changed"
    assert (target / "model.safetensors").exists()


def test_truncated_download_is_a_clear_error(tmp_path, hub):
    hub.repos["openbmb/MiniCPM-OCR-1.0"].truncate.add("model.safetensors")
    p = models(["--json", "--model", MAIN], inventory(tmp_path, hub))
    assert p.returncode == 1
    r = steps(p)[f"model:{MAIN}"]
    assert "model.safetensors: truncated download (1250000 of 2500000 bytes); run again to resume" in r["tail"]
    dest = tmp_path / "wd" / "models" / MAIN
    assert not (dest / "model.safetensors").exists()            # never moved into place short
    assert (dest / ".cache" / "ocrdeploy" / "model.safetensors.part").stat().st_size == 1250000   # kept to resume
    assert state(tmp_path)["models"] == {}


def test_missing_required_file(tmp_path):
    repos = {"openbmb/MiniCPM-OCR-1.0": main_repo(drop=("tokenizer.json",))}
    with HubServer(repos) as hub:
        p = models(["--json", "--model", MAIN], inventory(tmp_path, hub))
    assert p.returncode == 1
    assert "missing required file tokenizer.json" in steps(p)[f"model:{MAIN}"]["tail"]


def test_draft_from_another_release_is_refused(tmp_path):
    repos = {"openbmb/MiniCPM-OCR-1.0": main_repo("2026-10-19"),
             "openbmb/MiniCPM-OCR-1.0-DSpark": draft_repo("2026-08-01")}
    with HubServer(repos) as hub:
        p = models(["--json", "--model", MAIN, "--model", DRAFT], inventory(tmp_path, hub))
    assert p.returncode == 1
    r = steps(p)["same-release"]
    assert r["status"] == "failed"
    assert "draft from another release: release main='2026-10-19' draft='2026-08-01'" in r["reason"]


def test_a_draft_copied_alone_is_held_to_the_main_models_release(tmp_path, hub):
    """--model DSpark --from DIR: compared with the main model already verified on the host; and --from onto a
    verified model copies and verifies again instead of reporting it already verified."""
    inv = inventory(tmp_path, hub)
    assert models(["--json", "--model", MAIN], inv).returncode == 0           # release 2026-10-19 from the hub

    def draft_dir(name, release):
        d = tmp_path / name
        d.mkdir()
        weight = os.urandom(50_000)
        (d / "config.json").write_bytes(b'{"model_type": "dspark"}')
        (d / "model.safetensors").write_bytes(weight)
        (d / "release_manifest.json").write_text(json.dumps({"release": release, "weight_sha256": sha256(weight)}))
        return d

    p = models(["--json", "--model", DRAFT, "--from", str(draft_dir("old-draft", "2026-08-01")), "--rehash"], inv)
    assert p.returncode == 1
    r = steps(p)["same-release"]
    assert r["status"] == "failed" and "release main='2026-10-19' draft='2026-08-01'" in r["reason"], steps(p)
    p = models(["--json", "--model", DRAFT, "--from", str(draft_dir("good-draft", "2026-10-19"))], inv)
    assert p.returncode == 0, p.stdout
    s = steps(p)
    assert s[f"model:{DRAFT}"]["status"] == "changed" and s["same-release"]["status"] == "ok"
    again = draft_dir("good-draft-2", "2026-10-19")
    p = models(["--json", "--model", DRAFT, "--from", str(again)], inv)
    assert steps(p)[f"model:{DRAFT}"]["status"] == "changed"                 # copied and verified again
    assert (tmp_path / "wd" / "models" / DRAFT / "model.safetensors").read_bytes() == \
        (again / "model.safetensors").read_bytes()


def test_unknown_release_is_refused_unless_allowed_and_a_mismatch_always(tmp_path, hub):
    inv = inventory(tmp_path, hub)
    assert models(["--json", "--model", MAIN], inv).returncode == 0
    d = tmp_path / "draft-no-manifest-id"
    d.mkdir()
    weight = os.urandom(10_000)
    (d / "config.json").write_bytes(b"{}")
    (d / "model.safetensors").write_bytes(weight)
    (d / "release_manifest.json").write_text(json.dumps({"weight_sha256": sha256(weight)}))   # no release field
    p = models(["--json", "--model", DRAFT, "--from", str(d)], inv)
    assert p.returncode == 1 and "cannot tell" in steps(p)["same-release"]["reason"]
    p = models(["--json", "--model", DRAFT, "--from", str(d)], inventory(tmp_path, hub, allow_unknown_release=True))
    assert p.returncode == 0 and "accepted because allow_unknown_release" in steps(p)["same-release"]["reason"]


def test_layout_dir_that_is_a_safetensors_dir(tmp_path, hub):
    st_dir = tmp_path / "not-paddle"
    st_dir.mkdir()
    (st_dir / "model.safetensors").write_bytes(b"x" * 10)
    (st_dir / "config.json").write_text("{}")
    p = models(["--json", "--model", LAYOUT, "--from", str(st_dir)], inventory(tmp_path, hub))
    assert p.returncode == 1
    assert "is a safetensors model directory, not a Paddle inference directory" in steps(p)[f"model:{LAYOUT}"]["tail"]


def test_interrupted_download_resumes_on_the_next_run(tmp_path, hub):
    """SIGKILL the whole run in the middle of the weight download; the next run resumes it (Range)."""
    import signal
    import time

    repo = hub.repos["openbmb/MiniCPM-OCR-1.0"]
    repo.slow.add("model.safetensors")
    inv = inventory(tmp_path, hub)
    env = dict(os.environ)
    env.pop("OCRDEPLOY_INVENTORY", None)
    proc = subprocess.Popen([sys.executable, "-m", "ocrdeploy", "models", "--inventory", str(inv), "--model", MAIN],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    part = tmp_path / "wd" / "models" / MAIN / ".cache" / "ocrdeploy" / "model.safetensors.part"
    wait_for_partial_file(part, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (tmp_path / "wd" / "models" / MAIN / "model.safetensors").exists()
    repo.slow.discard("model.safetensors")
    p = models(["--json", "--model", MAIN], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    gets = [r for r in hub.requests if r[0] == "GET" and r[1].endswith("/model.safetensors")]
    resumed = [r[2] for r in gets if r[2] and r[2] != "bytes=0-"]
    assert resumed and int(resumed[-1][len("bytes="):-1]) > 300_000, gets
    assert state(tmp_path)["models"][MAIN]["sha256"]["model.safetensors"] == sha256(repo.files["model.safetensors"])


def test_full_disk_is_a_clear_error(tmp_path, hub):
    hub.repos["openbmb/MiniCPM-OCR-1.0"].advertise_size["model.safetensors"] = 1 << 60   # an exabyte
    p = models(["--json", "--model", MAIN], inventory(tmp_path, hub))
    assert p.returncode == 1
    assert "not enough disk space" in steps(p)[f"model:{MAIN}"]["tail"]
    # errno ENOSPC, so the failure is said as a full disk, not a plain OSError
    log = Path(steps(p)[f"model:{MAIN}"]["log"]).read_text()
    assert "FAILED: OSError: no space left: [Errno 28] not enough disk space at" in log


def make_dir(tmp_path, name="MiniCPM-OCR-1.0", manifest=True):
    d = tmp_path / name
    d.mkdir()
    weight = os.urandom(100_000)
    for n, data in {"config.json": b'{"model_type": "minicpm_ocr"}', "model.safetensors": weight,
                    "tokenizer.json": b"{}",
                    "preprocessor_config.json": b"{}", "chat_template.jinja": b"x"}.items():
        (d / n).write_bytes(data)
    if manifest:
        (d / "release_manifest.json").write_text(json.dumps({"release": "r1", "weight_sha256": sha256(weight)}))
    return d


def test_verify_only_exit_codes(tmp_path):
    d = make_dir(tmp_path)
    p = models(["--verify-only", "--path", str(d)])
    assert p.returncode == 0 and "verified" in p.stdout
    with open(d / "model.safetensors", "r+b") as fh:
        fh.write(b"\0")
    p = models(["--verify-only", "--path", str(d), "--json"])
    assert p.returncode == 1
    doc = json.loads(p.stdout)
    assert any("does not match release_manifest.json weight_sha256" in x for x in doc["problems"])
    assert (d / "model.safetensors").exists()      # --verify-only reports, it moves nothing
    (d / "tokenizer.json").unlink()
    p = models(["--verify-only", "--path", str(d), "--rehash", "--json"])
    assert p.returncode == 1 and "missing required file tokenizer.json" in json.loads(p.stdout)["problems"]
    bare = make_dir(tmp_path, "bare", manifest=False)
    p = models(["--verify-only", "--path", str(bare), "--kind", "main", "--json"])
    assert p.returncode == 1 and "nothing to verify the weights against" in p.stdout
    m = tmp_path / "manifest.json"
    m.write_text(json.dumps({"files": {"model.safetensors": sha256((bare / "model.safetensors").read_bytes())}}))
    assert models(["--verify-only", "--path", str(bare), "--kind", "main", "--manifest", str(m)]).returncode == 0
    assert models(["--verify-only", "--path", str(tmp_path / "nope")]).returncode == 2
    assert models(["--verify-only", "--path", str(bare), "--manifest", str(tmp_path / "no.json")]).returncode == 2
    assert models(["--verify-only"]).returncode == 2


def test_hash_cache_and_parallel_hashing(tmp_path):
    from ocrdeploy.models import hostside

    files = []
    for i in range(3):
        f = tmp_path / f"w{i}.bin"
        f.write_bytes(os.urandom(3_000_000))
        files.append(str(f))
    cache = str(tmp_path / "cache.json")
    first = hostside.hash_files(files, cache, workers=2)
    assert all(not v["cached"] for v in first.values())
    assert {v["sha256"] for v in first.values()} == {sha256(Path(f).read_bytes()) for f in files}
    second = hostside.hash_files(files, cache)
    assert all(v["cached"] for v in second.values())
    Path(files[0]).write_bytes(b"changed")                # new size and mtime: hashed again
    third = hostside.hash_files(files, cache)
    assert not third[files[0]]["cached"] and third[files[0]]["sha256"] == sha256(b"changed")
    assert all(v["cached"] is False for v in hostside.hash_files(files, cache, rehash=True).values())


@pytest.mark.ssh
def test_models_on_a_remote_host_with_its_own_hub_client_venv(lab, tmp_path, hub):
    """Over SSH the download runs on the host: a tools venv with huggingface_hub is made there first."""
    h = lab.start("models", "127.0.0.10")
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"gpu": lab.inventory_entry(
        h, workdir=str(tmp_path / "rwd"), hf_endpoint=hub.url)}}}))
    env = dict(os.environ, OCRDEPLOY_KNOWN_HOSTS=str(lab.known_hosts))
    env.pop("OCRDEPLOY_INVENTORY", None)
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "models", "--inventory", str(inv), "--host", "gpu",
                        "--model", DRAFT, "--json"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    st = {s["step"]: s["status"] for s in json.loads(p.stdout)["hosts"]["gpu"]["steps"]}
    assert st == {"tools-venv": "changed", "tools-hub-clients": "changed", f"model:{DRAFT}": "changed",
                  "same-release": "ok"}      # the main model is not on that host: checked when both are
    recorded = json.loads((tmp_path / "rwd" / ".ocrdeploy" / "state.json").read_text())["models"][DRAFT]
    assert recorded["path"] == f"{tmp_path}/rwd/models/{DRAFT}"


@pytest.mark.ssh
def test_via_controller_downloads_here_and_verifies_there(lab, tmp_path, hub, monkeypatch):
    h = lab.start("offline", "127.0.0.11")
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"gpu": lab.inventory_entry(
        h, workdir=str(tmp_path / "owd"), hf_endpoint=hub.url)}}}))
    env = dict(os.environ, OCRDEPLOY_KNOWN_HOSTS=str(lab.known_hosts), HOME=str(tmp_path / "home"))
    env.pop("OCRDEPLOY_INVENTORY", None)
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "models", "--inventory", str(inv), "--host", "gpu",
                        "--model", MAIN, "--via-controller", "--json"], capture_output=True, text=True, cwd=ROOT,
                       env=env, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    st = {s["step"]: s for s in json.loads(p.stdout)["hosts"]["gpu"]["steps"]}
    assert list(st) == [f"model:{MAIN}"]          # no hub client on the host: nothing to download there
    recorded = json.loads((tmp_path / "owd" / ".ocrdeploy" / "state.json").read_text())["models"][MAIN]
    assert recorded["checked_against"]["model.safetensors"] == ["release_manifest.json weight_sha256",
                                                                "hub LFS metadata"]
    assert (tmp_path / "home" / ".cache" / "ocrdeploy" / "models" / MAIN / "model.safetensors").exists()


def hostile_repo(tmp_path, name):
    repo = main_repo()
    repo.files[name] = b"planted by the hub"
    repo.lfs.add(name)
    return repo


@pytest.mark.parametrize("bad", ["../../../../escaped.safetensors", "{tmp}/absolute.safetensors",
                                 "link/through-a-link.safetensors", "./model.safetensors"])
def test_a_hub_cannot_write_outside_the_model_directory(tmp_path, bad):
    """A hostile hub (or mirror) names files outside the destination, with their own sha256 advertised so
    the hash check would pass: the model fails, nothing is downloaded, nothing lands outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    name = bad.format(tmp=outside)
    dest = tmp_path / "wd" / "models" / MAIN
    if name.startswith("link/"):
        dest.mkdir(parents=True)
        os.symlink(outside, dest / "link")
    with HubServer({"openbmb/MiniCPM-OCR-1.0": hostile_repo(tmp_path, name)}) as hub:
        p = models(["--json", "--model", MAIN], inventory(tmp_path, hub))
        downloads = [r for r in hub.requests if "/resolve/" in r[1]]
    assert p.returncode == 1
    r = steps(p)[f"model:{MAIN}"]
    assert r["status"] == "failed" and f"refusing the file name {name!r}" in r["tail"]
    assert downloads == []                              # refused before the first byte
    planted = [p for p in tmp_path.rglob("*") if p.is_file() and p.read_bytes() == b"planted by the hub"]
    assert planted == [] and list(outside.iterdir()) == []
    assert MAIN not in state(tmp_path).get("models", {})


def test_a_part_file_that_would_land_outside_is_refused(tmp_path, hub):
    """The resumable .part files are checked too: a .cache/ocrdeploy that links elsewhere is refused."""
    outside = tmp_path / "outside"
    outside.mkdir()
    cache = tmp_path / "wd" / "models" / MAIN / ".cache"
    cache.mkdir(parents=True)
    os.symlink(outside, cache / "ocrdeploy")
    p = models(["--json", "--model", MAIN], inventory(tmp_path, hub))
    assert p.returncode == 1
    assert "refusing the file name '.cache/ocrdeploy/model.safetensors.part': it resolves outside" in steps(p)[f"model:{MAIN}"]["tail"]
    assert list(outside.iterdir()) == [] and not [r for r in hub.requests if "/resolve/" in r[1]]


def test_via_controller_refuses_a_hostile_hub_on_the_controller(tmp_path, monkeypatch):
    home = tmp_path / "home"
    with HubServer({"openbmb/MiniCPM-OCR-1.0": hostile_repo(tmp_path, "../../../evil.safetensors")}) as hub:
        inv = inventory(tmp_path, hub)
        env = dict(os.environ, COLUMNS="200", HOME=str(home))
        env.pop("OCRDEPLOY_INVENTORY", None)
        p = subprocess.run([sys.executable, "-m", "ocrdeploy", "models", "--inventory", str(inv), "--model", MAIN,
                            "--via-controller"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
        downloads = [r for r in hub.requests if "/resolve/" in r[1]]
    assert p.returncode == 2, p.stdout + p.stderr
    assert "refusing the file name '../../../evil.safetensors'" in p.stderr
    assert downloads == [] and not list(home.rglob("evil.safetensors"))
    assert not (tmp_path / "wd" / "models" / MAIN).exists()      # nothing copied to the host either


@pytest.mark.parametrize("case", ["weight_sha256 number", "files list", "files bad digest", "broken link",
                                  "fifo manifest", "fifo weight"])
def test_verify_only_odd_inputs_are_one_clear_line(tmp_path, case):
    d = make_dir(tmp_path)
    manifest = json.loads((d / "release_manifest.json").read_text())
    expect = {"weight_sha256 number": "weight_sha256 must be a sha256 (64 hex digits), got 12345",
              "files list": "files must map file names to sha256, got a list",
              "files bad digest": "files['config.json'] must be a sha256 (64 hex digits), got 7",
              "broken link": "required file tokenizer.json is a broken link or not a regular file",
              "fifo manifest": "release_manifest.json: not a regular file",
              "fifo weight": "missing model.safetensors (listed with a sha256)"}[case]
    if case == "weight_sha256 number":
        manifest["weight_sha256"] = 12345
    elif case == "files list":
        manifest["files"] = ["config.json"]
    elif case == "files bad digest":
        manifest["files"] = {"config.json": 7}
    elif case == "broken link":
        (d / "tokenizer.json").unlink()
        os.symlink(tmp_path / "gone", d / "tokenizer.json")
    elif case == "fifo manifest":
        (d / "release_manifest.json").unlink()
        os.mkfifo(d / "release_manifest.json")
    elif case == "fifo weight":
        (d / "model.safetensors").unlink()
        os.mkfifo(d / "model.safetensors")
    if not case.startswith("fifo manifest"):
        (d / "release_manifest.json").write_text(json.dumps(manifest))
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "models", "--verify-only", "--path", str(d), "--json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=30)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert any(expect in problem for problem in json.loads(p.stdout)["problems"]), p.stdout


@pytest.mark.parametrize("member", ["../escaped.txt", "/tmp/absolute.txt", "link", "hard"])
def test_a_layout_tar_cannot_leave_its_directory(tmp_path, member):
    """The layout model comes as a tar from a URL: members that climb out, absolute ones and links are
    refused before anything is extracted."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        ok = tarfile.TarInfo("PP-DocLayoutV3_infer/inference.yml")
        ok.size = 5
        tf.addfile(ok, io.BytesIO(b"a: 1\n"))
        bad = tarfile.TarInfo(member if member not in ("link", "hard") else f"PP-DocLayoutV3_infer/{member}")
        if member == "link":
            bad.type, bad.linkname = tarfile.SYMTYPE, "/etc/passwd"
        elif member == "hard":
            bad.type, bad.linkname = tarfile.LNKTYPE, "/etc/passwd"
        else:
            bad.size = 4
        tf.addfile(bad, io.BytesIO(b"evil") if bad.isfile() else None)
    tar = tmp_path / "layout.tar"
    tar.write_bytes(buf.getvalue())
    with HubServer({}, static={"/files/layout.tar": buf.getvalue()}) as hub:
        p = models(["--json", "--model", LAYOUT], inventory(tmp_path, hub, layout_url=f"{hub.url}/files/layout.tar"))
    assert p.returncode == 1
    assert "refusing unsafe member" in steps(p)[f"model:{LAYOUT}"]["tail"]
    dest = tmp_path / "wd" / "models"
    assert not (dest / LAYOUT).exists() and not list(dest.rglob("inference.yml"))   # nothing extracted at all
    assert not (tmp_path / "wd" / "escaped.txt").exists() and not (tmp_path / "wd" / "models" / "escaped.txt").exists()


def test_verify_catches_a_short_file_the_hub_sized(tmp_path):
    """The size check of verify: a file shorter than the hub says fails as truncated, without hashing it."""
    from ocrdeploy.models import hostside

    d = make_dir(tmp_path)
    size = (d / "model.safetensors").stat().st_size
    res = hostside.verify({"name": MAIN, "kind": "main", "required": [], "weight": "model.safetensors"}, str(d),
                          sizes={"model.safetensors": size + 10}, move_bad=False)
    assert not res["ok"]
    assert f"model.safetensors is truncated or wrong: {size} bytes, the hub says {size + 10}" in res["problems"]
    assert "model.safetensors" not in res["compared"]


@pytest.mark.parametrize("where", ["same host", "other port", "other host"])
def test_the_hub_token_goes_to_the_hub_alone(tmp_path, where):
    """H4: a weight download the hub redirects elsewhere (as the real hub does to its CDN) carries the
    host's HF token only while scheme, host and port stay the hub's; the bytes arrive and verify either way."""
    repo = main_repo()
    weight = repo.files["model.safetensors"]
    with HubServer({"openbmb/MiniCPM-OCR-1.0": repo}) as hub, \
            HubServer({}, static={"/cdn/model.safetensors": weight}, apis=(),
                      host="127.0.0.2" if where == "other host" else "127.0.0.1") as cdn:
        if where == "same host":
            hub.static["/cdn/model.safetensors"] = weight
        repo.redirect["model.safetensors"] = f"{hub.url if where == 'same host' else cdn.url}/cdn/model.safetensors"
        p = models(["--json", "--model", MAIN], inventory(tmp_path, hub), env={"HF_TOKEN": "hf_SECRETtoken123"})
        seen = [a for path, a in (hub.authorization + cdn.authorization) if path == "/cdn/model.safetensors"]
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert seen == (["Bearer hf_SECRETtoken123"] if where == "same host" else [None])
    assert state(tmp_path)["models"][MAIN]["sha256"]["model.safetensors"] == sha256(weight)


def tar_of(entries) -> bytes:
    """A real tar: entries are (TarInfo fields, bytes or None for a directory)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        for fields, data in entries:
            info = tarfile.TarInfo(fields.pop("name"))
            for k, v in fields.items():
                setattr(info, k, v)
            if data is None:
                info.type = tarfile.DIRTYPE
            else:
                info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def test_a_layout_tar_brings_no_modes_or_owners_of_its_own(tmp_path):
    """H3: the tar's setuid and setgid bits, world-writable modes and foreign owners are not applied (as
    root tarfile applies them all): our owner, the umask's modes."""
    d = "PP-DocLayoutV3_infer"
    tar = tar_of([({"name": d, "mode": 0o777}, None),
                  ({"name": f"{d}/inference.pdiparams", "mode": 0o644}, os.urandom(1000)),
                  ({"name": f"{d}/inference.json", "mode": 0o644}, b"{}"),
                  ({"name": f"{d}/inference.yml", "mode": 0o6777}, b"a: 1\n"),
                  ({"name": f"{d}/evil-suid", "mode": 0o4755, "uid": 0, "gid": 0}, b"#!/bin/sh\n"),
                  ({"name": f"{d}/owned-by-1234", "mode": 0o666, "uid": 1234, "gid": 1234, "uname": "",
                    "gname": ""}, b"x"),
                  ({"name": f"{d}/worldwritable", "mode": 0o777, "uid": 1234, "gid": 1234}, None)])
    with HubServer({}, static={"/files/layout.tar": tar}) as hub:
        p = models(["--json", "--model", LAYOUT], inventory(tmp_path, hub, layout_url=f"{hub.url}/files/layout.tar"))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    umask = os.umask(0o022)
    os.umask(umask)
    dest = tmp_path / "wd" / "models" / LAYOUT
    got = {p.name: (oct(p.stat().st_mode & 0o7777), p.stat().st_uid, p.stat().st_gid)
           for p in [dest, *dest.iterdir()]}
    me = (os.getuid(), os.getgid())
    assert got == {LAYOUT: (oct(0o777 & ~umask), *me), "worldwritable": (oct(0o777 & ~umask), *me),
                   "inference.pdiparams": (oct(0o666 & ~umask), *me), "inference.json": (oct(0o666 & ~umask), *me),
                   "inference.yml": (oct(0o777 & ~umask), *me), "evil-suid": (oct(0o777 & ~umask), *me),
                   "owned-by-1234": (oct(0o666 & ~umask), *me)}


def test_a_layout_tar_that_unpacks_past_its_bound_is_refused_whole(tmp_path, monkeypatch):
    """M21: a gzip bomb (a few KB that unpack to far more than a layout model may be) is refused from its
    headers before a byte is written; nothing stays behind, `.extracting` included."""
    from ocrdeploy.models import hostside

    monkeypatch.setattr(hostside, "LAYOUT_MAX", 8 << 20)
    bomb = tmp_path / "bomb.tar.gz"
    with tarfile.open(bomb, "w:gz") as tf:
        info = tarfile.TarInfo("PP-DocLayoutV3_infer/inference.pdiparams")
        info.size = 64 << 20
        tf.addfile(info, io.BytesIO(bytes(info.size)))
    assert bomb.stat().st_size < 200_000
    dest = tmp_path / "models" / LAYOUT
    with pytest.raises(OSError, match=r"bomb.tar.gz unpacks to more than 8.0 MiB, the most a layout model may be"):
        hostside.fetch_layout({"name": LAYOUT}, str(dest), None, from_path=str(bomb))
    assert list((tmp_path / "models").iterdir()) == []


@pytest.fixture
def small_disk(tmp_path):
    """A real 8 MiB filesystem (tmpfs) for what a full disk does; skipped where this test may not mount."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)],
                                           capture_output=True).returncode != 0:
        pytest.skip("needs root that may mount a tmpfs")
    try:
        yield disk
    finally:
        if subprocess.run(["umount", str(disk)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(disk)], check=True)     # still busy: detach it anyway
            raise AssertionError(f"{disk} was still in use at the end of the test (a file left open?)")


def test_a_layout_tar_larger_than_the_free_disk_is_refused_whole(tmp_path, small_disk):
    """M21 on a real small disk: 16 MiB of zeros in a 16 KB tar.gz, under the bound but more than the disk
    holds, is refused from its headers, in MiB, and leaves nothing (no `.extracting` filling the disk)."""
    from ocrdeploy.models import hostside

    bomb = tmp_path / "bomb.tar.gz"
    with tarfile.open(bomb, "w:gz") as tf:
        info = tarfile.TarInfo("PP-DocLayoutV3_infer/inference.pdiparams")
        info.size = 16 << 20
        tf.addfile(info, io.BytesIO(bytes(info.size)))
    with pytest.raises(OSError, match=r"not enough disk space at .*: unpacking bomb.tar.gz needs 16.0 MiB more, "
                                      r"[78]\.\d MiB free"):
        hostside.fetch_layout({"name": LAYOUT}, str(small_disk / LAYOUT), None, from_path=str(bomb))
    assert list(small_disk.iterdir()) == []


def test_a_failed_extraction_leaves_nothing_behind(tmp_path):
    from ocrdeploy.models import hostside

    whole = tar_of([({"name": "PP-DocLayoutV3_infer/inference.pdiparams"}, os.urandom(300_000))])
    tar = tmp_path / "cut.tar"
    tar.write_bytes(whole[:100_000])                  # cut short: the data ends inside the member
    with pytest.raises(Exception):
        hostside.fetch_layout({"name": LAYOUT}, str(tmp_path / "models" / LAYOUT), None, from_path=str(tar))
    assert list((tmp_path / "models").iterdir()) == []


class Endless(__import__("loopback").LoopbackServer):
    """Zeros with no Content-Length, until the client hangs up (a broken or hostile mirror)."""

    def handle(self, h, head):
        h.send_response(200)
        h.send_header("Content-Type", "application/octet-stream")
        h.send_header("Connection", "close")
        h.end_headers()
        try:
            while True:
                h.wfile.write(bytes(1 << 16))
        except OSError:
            return


@pytest.mark.parametrize("what", ["endless body", "/dev/zero", "announced too large"])
def test_a_layout_download_stops_at_its_bound(tmp_path, monkeypatch, what):
    """M24: the layout download writes no more than the bound (the size announced, else LAYOUT_MAX) and
    removes what it wrote; file:///dev/zero announces 0 bytes and is cut off at once."""
    from ocrdeploy.models import hostside

    monkeypatch.setattr(hostside, "LAYOUT_MAX", 4 << 20)
    dest = tmp_path / "models" / LAYOUT
    if what == "endless body":
        with Endless() as server:
            with pytest.raises(OSError, match="the server sent more than the 4.0 MiB a download may be; stopped"):
                hostside.fetch_layout({"name": LAYOUT}, str(dest), server.url + "/layout.tar")
    elif what == "/dev/zero":
        with pytest.raises(OSError, match="the server sent more than the 0 bytes expected; stopped"):
            hostside.fetch_layout({"name": LAYOUT}, str(dest), "file:///dev/zero")
    else:
        with HubServer({}, static={"/l.tar": bytes(5 << 20)}) as hub:
            with pytest.raises(OSError, match="the download is 5.0 MiB, more than the 4.0 MiB it may be"):
                hostside.fetch_layout({"name": LAYOUT}, str(dest), hub.url + "/l.tar")
    assert list((tmp_path / "models").iterdir()) == []


def deep_json(depth=100_000) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


def test_a_deeply_nested_or_huge_manifest_is_one_line(tmp_path):
    """M20: --verify-only reads a manifest within a depth and a size bound: the one in the directory is a
    failed check (exit 1), one given with --manifest an input error (exit 2), never a traceback."""
    d = make_dir(tmp_path)
    (d / "release_manifest.json").write_text(deep_json())
    p = models(["--verify-only", "--path", str(d), "--json"])
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert f"{d}/release_manifest.json: unreadable manifest (nested too deeply)" in json.loads(p.stdout)["problems"]
    deep = tmp_path / "deep.json"
    deep.write_text(deep_json())
    p = models(["--verify-only", "--path", str(d), "--manifest", str(deep)])
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"--manifest {deep}: unreadable manifest (nested too deeply)" in p.stderr
    huge = tmp_path / "huge.json"
    huge.write_text("{" + " " * (5 << 20) + "}")
    p = models(["--verify-only", "--path", str(d), "--manifest", str(huge)])
    assert p.returncode == 2 and f"--manifest {huge}: 5.0 MiB, more than the 4.0 MiB a manifest may be" in p.stderr


def test_verify_only_takes_the_kind_from_the_content_or_model_not_the_name(tmp_path):
    """Audit 15: a draft copied into `draftcopy/` is checked as a draft (its config.json says so), and the
    output says which kind it checked and why; --model names it outright; a directory whose content tells
    nothing is refused rather than guessed."""
    d = tmp_path / "draftcopy"
    d.mkdir()
    weight = os.urandom(50_000)
    (d / "config.json").write_text(json.dumps({"model_type": "dspark"}))
    (d / "model.safetensors").write_bytes(weight)
    (d / "release_manifest.json").write_text(json.dumps({"release": "r1", "weight_sha256": sha256(weight)}))
    p = models(["--verify-only", "--path", str(d), "--json"])
    assert p.returncode == 0, p.stdout + p.stderr           # as a main model it would miss tokenizer.json & co
    doc = json.loads(p.stdout)
    assert doc["kind"] == "draft" and doc["kind_from"] == "config.json model_type 'dspark'"
    p = models(["--verify-only", "--path", str(d)])
    assert "(checked as draft, from config.json model_type 'dspark')" in p.stdout
    (d / "config.json").write_text("{}")
    p = models(["--verify-only", "--path", str(d)])
    assert p.returncode == 2 and "cannot tell which model this is (config.json model_type None names none of them)" \
        in p.stderr
    p = models(["--verify-only", "--path", str(d), "--model", DRAFT, "--json"])
    assert p.returncode == 0 and json.loads(p.stdout)["kind_from"] == f"--model {DRAFT}"
    p = models(["--verify-only", "--path", str(d), "--model", DRAFT, "--kind", "main"])
    assert p.returncode == 2 and f"--model {DRAFT} is a draft model, not --kind main" in p.stderr


def test_via_controller_without_model_brings_every_model_through_the_controller(tmp_path, hub):
    """M22: --via-controller alone means the default set, the layout tarball included, all downloaded
    here and copied; the host's plan has no hub client and no download of its own."""
    home = tmp_path / "home"
    env = dict(os.environ, COLUMNS="200", HOME=str(home))
    env.pop("OCRDEPLOY_INVENTORY", None)
    inv = inventory(tmp_path, hub)
    vars_ = yaml.safe_load(inv.read_text())
    del vars_["all"]["vars"]["hub_python"]       # a host without hub clients: nothing may need them
    inv.write_text(yaml.safe_dump(vars_))
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "models", "--inventory", str(inv), "--via-controller",
                        "--json"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert list(steps(p)) == [f"model:{MAIN}", f"model:{DRAFT}", f"model:{LAYOUT}", "same-release"]
    for n in (MAIN, DRAFT, LAYOUT):
        assert state(tmp_path)["models"][n]["source"] is None        # verified there, served by no hub there
        assert (home / ".cache" / "ocrdeploy" / "models" / n).is_dir()
    assert (tmp_path / "wd" / "models" / LAYOUT / "inference.pdiparams").read_bytes() == \
        (home / ".cache" / "ocrdeploy" / "models" / LAYOUT / "inference.pdiparams").read_bytes()


def test_two_runs_of_one_model_take_turns(tmp_path, hub):
    """L9: a second `inv models` of the model the first is still downloading waits for it (and says for
    whom) instead of both writing one .part: both end verified, the weight crossed the network once."""
    import threading
    import time

    repo = hub.repos["openbmb/MiniCPM-OCR-1.0"]
    gate = repo.hold["model.safetensors"] = threading.Event()     # the first download stops half way
    inv = inventory(tmp_path, hub)
    env = dict(os.environ, COLUMNS="200")
    env.pop("OCRDEPLOY_INVENTORY", None)
    cmd = [sys.executable, "-m", "ocrdeploy", "models", "--inventory", str(inv), "--model", MAIN, "--json"]
    first = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        wait_for_partial_file(tmp_path / "wd" / "models" / MAIN / ".cache" / "ocrdeploy" / "model.safetensors.part",
                              first, size=100_000)
        second = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(
                "waiting for" in f.read_text() for f in (tmp_path / "wd" / ".ocrdeploy" / "logs").rglob("*.log")):
            time.sleep(0.05)
    finally:
        gate.set()
    out, err = first.communicate(timeout=300)
    out2, err2 = second.communicate(timeout=300)
    assert first.returncode == 0, out[-2000:] + err[-2000:]
    assert second.returncode == 0, out2[-2000:] + err2[-2000:]
    st = {s["step"]: s for s in json.loads(out2)["hosts"]["localhost"]["steps"]}
    log = Path(st[f"model:{MAIN}"]["log"]).read_text()
    import re

    assert re.search(rf"{MAIN}: waiting for pid \d+ \(inv models, since [\d:]+\), which is fetching it into "
                     rf"{tmp_path}/wd/models/{MAIN}\n", log), log[-2000:]
    gets = [r for r in hub.requests if r[0] == "GET" and r[1].endswith("/model.safetensors")]
    assert len(gets) == 1, gets
    assert state(tmp_path)["models"][MAIN]["sha256"]["model.safetensors"] == sha256(repo.files["model.safetensors"])


def test_small_sizes_are_said_in_mib_or_bytes(small_disk):
    """L10: never 'needs 0.0 GiB more, 0.0 GiB free' on a small disk."""
    from ocrdeploy.models import hostside

    with pytest.raises(OSError, match=r"the download needs 9.0 MiB more, [78]\.\d MiB free"):
        hostside.check_space(str(small_disk), 9 << 20)
    assert hostside.human_bytes(512) == "512 bytes" and hostside.human_bytes(3 << 30) == "3.0 GiB"


def test_a_resume_is_credited_with_its_part_file(tmp_path, small_disk):
    """L10: after a disk-full interruption, the bytes already in the .part count: a resume that fits on
    the disk is not refused for the whole size."""
    weight = os.urandom(5 << 20)
    part = small_disk / "wd" / "models" / MAIN / ".cache" / "ocrdeploy" / "model.safetensors.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(weight[: (9 << 19)])               # 4.5 MiB of 5 already here, 3.5 MiB free
    with HubServer({"openbmb/MiniCPM-OCR-1.0": main_repo(weight=weight)}) as hub:
        inv = inventory(tmp_path, hub, workdir=str(small_disk / "wd"))
        p = models(["--json", "--model", MAIN], inv)
        ranges = [r[2] for r in hub.requests if r[1].endswith("/model.safetensors") and r[0] == "GET"]
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert ranges == [f"bytes={9 << 19}-"]


def test_a_full_disk_leaves_no_temporary_state_file(small_disk):
    """L10: the state written on a full disk fails whole: no 0-byte state.json.PID.tmp stays."""
    from ocrdeploy.models import hostside

    filler = small_disk / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(bytes(1 << 16))
                fh.flush()
        except OSError:
            pass
    d = small_disk / "m"
    d.mkdir()
    with pytest.raises(OSError):
        hostside.record(str(small_disk / ".ocrdeploy" / "state.json"),
                        [{"ok": True, "name": MAIN, "path": str(d), "files": {}} for _ in range(200)])
    assert not [p.name for p in small_disk.rglob("*.tmp")]


def test_a_verified_weight_changed_in_place_is_checked_again(tmp_path, hub):
    """A verified file counts as untouched only while its size, mtime and inode are those recorded: the
    same size with other bytes (written in place, so the inode stays) is not "verified" but fetched and
    checked again (the hub's bytes replace it)."""
    inv = inventory(tmp_path, hub)
    assert models(["--json", "--model", MAIN], inv).returncode == 0
    weight = tmp_path / "wd" / "models" / MAIN / "model.safetensors"
    size, ino = weight.stat().st_size, weight.stat().st_ino
    with open(weight, "r+b") as fh:
        fh.write(b"\xff" * 16)
    assert weight.stat().st_size == size and weight.stat().st_ino == ino
    p = models(["--json", "--model", MAIN], inv)
    st = steps(p)[f"model:{MAIN}"]
    assert st["status"] == "changed" and st["reason"] == "changed since verified: model.safetensors"
    assert p.returncode == 0, p.stdout[-3000:]          # fetched and checked again: the hub's bytes are back
    assert sha256(weight.read_bytes()) == sha256(hub.repos["openbmb/MiniCPM-OCR-1.0"].files["model.safetensors"])


@pytest.mark.parametrize("kind, files", [
    ("main", {"config.json": b"{}", "model.safetensors": b"w" * 100}),
    ("draft", {"config.json": b"{}", "model.safetensors": b"w" * 100}),
    ("deepseek", {"config.json": b"{}", "model-00001-of-000001.safetensors": b"w" * 100}),
    ("draft", {"config.json": b"{}"}),
    ("deepseek", {"config.json": b"{}"}),
])
def test_weights_with_nothing_to_check_them_against_are_not_verified(tmp_path, kind, files):
    """hostside.verify's contract: a main, draft or DeepSeek model is verified only when a sha256 (the
    release manifest or the hub's) covers one of its weights; present files alone are not enough."""
    from ocrdeploy.models import hostside

    for n, data in files.items():
        (tmp_path / n).write_bytes(data)
    res = hostside.verify({"name": "m", "kind": kind, "required": ["config.json"], "weight": "model.safetensors"},
                          str(tmp_path), move_bad=False)
    assert not res["ok"] and res["status"] == "failed"
    weights = ", ".join(n for n in files if n != "config.json") or "the weight files"
    assert res["problems"] == ["nothing to verify the weights against: no release_manifest.json sha256 and no "
                               f"hub metadata for {weights}"]


def test_a_deeply_nested_hash_cache_is_a_cold_cache(tmp_path):
    """The hash cache is a file on disk like any other: nested too deeply, it is read as empty."""
    d = make_dir(tmp_path)
    cache = tmp_path / "xdg" / "ocrdeploy" / "hash-cache.json"
    cache.parent.mkdir(parents=True)
    cache.write_text(deep_json())
    p = models(["--verify-only", "--path", str(d), "--json"], env={"XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert json.loads(p.stdout)["files"]["model.safetensors"]["cached"] is False


class Drip(__import__("loopback").LoopbackServer):
    """Announces a megabyte and sends ten bytes every 0.05 s (a slow-drip server)."""

    def handle(self, h, head):
        import time

        h.send_response(200)
        h.send_header("Content-Length", str(1 << 20))
        h.end_headers()
        try:
            for _ in range(2000):
                h.wfile.write(b"0123456789")
                h.wfile.flush()
                time.sleep(0.05)
        except OSError:
            return


@pytest.mark.parametrize("what", ["download", "listing"])
def test_a_slow_drip_is_stopped_at_the_speed_floor(tmp_path, monkeypatch, what):
    """Socket timeouts never fire while a byte arrives now and then: a transfer under the speed floor
    for the window is stopped (the download keeps its .part for a resume)."""
    import time

    from ocrdeploy.models import hostside

    monkeypatch.setattr(hostside, "LOW_SPEED_WINDOW", 0.5)
    started = time.monotonic()
    with Drip() as server:
        if what == "download":
            part = tmp_path / "w.part"
            with pytest.raises(OSError, match=r"\(run again to resume\): less than 1.0 KiB a second for 0.5 s; "
                                              r"stopped"):
                hostside.download_resumable(server.url + "/w", str(part), str(tmp_path / "w"))
            assert part.stat().st_size > 0 and not (tmp_path / "w").exists()
        else:
            with pytest.raises(OSError, match=r"listing of x/y: less than 1.0 KiB a second for 0.5 s; stopped"):
                hostside.modelscope_listing(server.url, "x/y", "master", 5)
    assert time.monotonic() - started < 10
