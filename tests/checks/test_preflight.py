"""Each preflight check against recorded boxes (tests/fixtures/nvidia-smi) and crafted facts."""

from pathlib import Path

import pytest

from ocrdeploy.checks import preflight as pf
from ocrdeploy.provision import facts as facts_mod
from ocrdeploy.provision import probe
from ocrdeploy.recipes import get_recipe

DSPARK = get_recipe("dspark").requirements
FIX = Path(__file__).parents[1] / "fixtures"


@pytest.fixture
def box(smi_box, tmp_path):
    def facts_for(name):
        smi_box(name)
        return facts_mod.normalise(probe.collect(facts_mod.probe_request(str(tmp_path), net_timeout=0)))
    return facts_for


def by_name(results):
    return {r.name: r for r in results}


def test_rtx5090_passes_gpu_checks(box):
    r = by_name(pf.run_preflight_checks(box("rtx5090-590"), DSPARK))
    assert r["driver"].status == "pass" and "590.48.01" in r["driver"].message
    assert r["vram"].status == "pass"
    assert r["free_gpu"].status == "pass" and r["free_gpu"].value == "0"
    assert r["free_gpu"].message.startswith("CUDA_VISIBLE_DEVICES=0")


def test_a100_on_535_is_told_to_upgrade_or_build(box):
    r = by_name(pf.run_preflight_checks(box("a100-535"), DSPARK))
    assert r["driver"].status == "fail"
    assert "535-579" in r["driver"].message
    assert "upgrade the driver to >= 580" in r["driver"].fix and "cu126" in r["driver"].fix
    assert r["vram"].status == "pass"  # 40 GiB is plenty; only the driver blocks


def test_busy_gpu0_picks_the_idle_card(box):
    r = by_name(pf.run_preflight_checks(box("3gpu-busy0"), DSPARK))
    assert r["free_gpu"].status == "pass"
    assert r["free_gpu"].value == "1"   # GPU 1: no process and the most free memory
    assert "busy: GPU 0 (pid 48213)" in r["free_gpu"].message


def test_no_driver(box):
    r = by_name(pf.run_preflight_checks(box("no-driver"), DSPARK))
    assert r["driver"].status == "fail" and "couldn't communicate" in r["driver"].message
    assert r["vram"].status == "fail" and r["free_gpu"].status == "fail"


def test_sdk_only_recipe_skips_gpu_checks(box):
    r = by_name(pf.run_preflight_checks(box("no-driver"), get_recipe("sdk-only").requirements))
    assert {r[n].status for n in ("driver", "vram", "free_gpu", "gcc-13", "github")} == {"skip"}


def base_facts(**over):
    facts = {
        "host": {"uid": 1000, "os": {"id": "ubuntu"}},
        "gpu": {"driver": "590.48.01", "cuda": "13.1", "error": None, "gpus": [
            {"index": 0, "name": "NVIDIA L4", "memory_total_mib": 23034, "memory_free_mib": 22000, "processes": []}]},
        "workdir": {"path": "/w", "exists": True, "free": 50 * 2**30},
        "pythons": [{"path": "/usr/bin/python3.10", "version": "3.10.12"}],
        "compilers": {"gcc-13": None, "g++-13": None},
        "tools": {"apt-get": "/usr/bin/apt-get"},
        "sudo_nopasswd": True,
        "network": {"github": "unreachable", "detail": "no answer within 1.0 s"},
        "proxy": {"http_proxy": "http://p:3128", "https_proxy": None,
                  "loopback_bypassed": {"127.0.0.1": False, "localhost": True}},
        "probe": {"kind": "python"},
    }
    facts.update(over)
    return facts


def test_small_gpu_fails_vram_and_free_gpu():
    f = base_facts()
    assert pf.check_vram(f, DSPARK).status == "fail"
    assert pf.check_free_gpu(f, DSPARK).status == "fail"


def test_disk_threshold_comes_from_the_recipe():
    f = base_facts(workdir={"path": "/w", "exists": True, "free": 12 * 2**30})
    assert pf.check_disk(f, DSPARK).status == "fail"
    assert pf.check_disk(f, get_recipe("sdk-only").requirements).status == "pass"


def test_python_versions_per_env():
    r = by_name(pf.check_pythons(base_facts(), DSPARK))
    # no 3.13: inv install gets a managed one with uv, so preflight says so instead of passing or failing
    assert r["python:vllm-ocr-env"].status == "warn" and "3.10.12" in r["python:vllm-ocr-env"].message
    assert "managed CPython 3.13 with uv" in r["python:vllm-ocr-env"].message
    assert r["python:sdk-env"].status == "pass"
    r = by_name(pf.check_pythons(base_facts(pythons=[{"path": "/usr/bin/python3.8", "version": "3.8.10"}]), DSPARK))
    assert r["python:vllm-ocr-env"].status == "fail" and "uv" in r["python:vllm-ocr-env"].message
    assert r["python:sdk-env"].status == "fail" and r["python:sdk-env"].fix.startswith("install python3 (>=3.10)")


def _plan(tmp_path, pythons, *extra, venvs=None, files=None):
    """`inv install --check` (preflight included) on the bare box's facts with these interpreters."""
    import json
    import subprocess
    import sys

    facts = json.loads((FIX / "facts" / "ubuntu2204-rtx5090-bare.json").read_text())
    facts["pythons"] = pythons
    facts.setdefault("venvs", {}).update(venvs or {})
    facts.setdefault("files", {}).update(files or {})
    path = tmp_path / f"facts-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(facts))
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "install", "--check", "--json", "--facts", str(path),
                        "--set", "sdk_repo=https://example.invalid/sdk.git", "--set", "vllm_src=/src/vllm",
                        "--set", "transformers_src=/src/transformers", *extra],
                       capture_output=True, text=True, cwd=tmp_path)
    host = json.loads(p.stdout)["hosts"]["localhost"]
    return ({c["name"]: c for c in host["preflight"]}, {s["step"]: s for s in host["steps"]})


def test_preflight_and_the_plan_follow_one_python_rule(tmp_path):
    """The audit's host: Python 3.12.3 and no 3.13.  Preflight may not pass while the plan has no way to 3.13."""
    py312 = [{"path": "/usr/bin/python3.12", "version": "3.12.3", "default": True}]
    checks, steps = _plan(tmp_path, py312)
    assert checks["python:vllm-ocr-env"]["status"] == "warn"
    assert steps["tools-uv"]["status"] == "changed"
    assert steps["python313"]["commands"][0].endswith("/.ocrdeploy/tools-env/bin/uv python install 3.13")
    assert "commands decided after python313" in steps["vllm-venv"]["reason"]
    assert steps["sdk-venv"]["commands"][0].startswith("/usr/bin/python3.12 -m venv")   # the host's python3
    both = [{"path": "/usr/bin/python3.10", "version": "3.10.12", "default": True},
            {"path": "/usr/bin/python3.13", "version": "3.13.9"}]
    checks, steps = _plan(tmp_path, both)
    assert checks["python:vllm-ocr-env"]["status"] == "pass" and steps["python313"]["status"] == "ok"
    assert steps["tools-uv"]["status"] == "ok" and steps["vllm-venv"]["commands"][0].startswith("/usr/bin/python3.13 ")
    assert steps["sdk-venv"]["commands"][0].startswith("/usr/bin/python3.10 -m venv")   # python3 -m venv sdk-env
    # vllm-ocr-env made before with a 3.13 this login cannot see (another user's pyenv): nothing to install
    standing = [{"path": "/usr/bin/python3.10", "version": "3.10.12", "default": True}]
    checks, steps = _plan(tmp_path, standing, venvs={"vllm-ocr-env": {"python": "3.13.9", "dists": {
        "pip": {"version": "25.2", "editable": False, "complete": True}}}},
        files={"@/vllm-ocr-env/bin/python": {"exists": True, "type": "file"}})
    assert checks["python:vllm-ocr-env"]["status"] == "pass" and "already runs Python 3.13.9" in (
        checks["python:vllm-ocr-env"]["message"])
    assert (steps["tools-uv"]["status"], steps["python313"]["status"], steps["vllm-venv"]["status"]) == ("ok",) * 3
    assert "vllm-ocr-env stands with Python 3.13.9" in steps["python313"]["reason"]
    old = [{"path": "/usr/bin/python3.8", "version": "3.8.10", "default": True}]
    checks, steps = _plan(tmp_path, old, "--skip-preflight")
    assert checks["python:vllm-ocr-env"]["status"] == "fail"
    assert steps["tools-venv"]["status"] == "failed" and steps["vllm-venv"]["status"] == "skipped"


def test_gcc13_installable_with_sudo_on_ubuntu():
    r = pf.check_gcc13(base_facts(), DSPARK)
    assert r.status == "warn" and "ppa:ubuntu-toolchain-r/test" in r.message
    r = pf.check_gcc13(base_facts(sudo_nopasswd=False), DSPARK)
    assert r.status == "fail" and "passwordless sudo" in r.fix
    ok = base_facts(compilers={"gcc-13": {"version": "13.1.0"}, "g++-13": {"version": "13.1.0"}})
    assert pf.check_gcc13(ok, DSPARK).status == "pass"


def test_github_and_proxy():
    f = base_facts()
    g = pf.check_github(f, DSPARK)
    assert g.status == "warn" and "CUTLASS_ENABLE_TESTS=OFF" in g.fix
    p = pf.check_no_proxy(f, DSPARK)
    assert p.status == "warn" and "127.0.0.1" in p.message and "no_proxy=127.0.0.1,localhost,::1" in p.fix
    f["proxy"]["loopback_bypassed"]["127.0.0.1"] = True
    assert pf.check_no_proxy(f, DSPARK).status == "pass"


# DeepSeek-OCR runs in a smaller mode on a smaller card: the VRAM check names the mode (seed 003 2.4) and
# warns below 32 GB, where Gundam (the default mode) is tight or does not fit (seed 003 1.1).
CARDS = Path(__file__).parents[1] / "fixtures" / "nvidia-smi" / "cards.csv"
CARD_ROWS = {int(line.split(",")[3]): line for line in CARDS.read_text().splitlines() if not line.startswith("#")}


@pytest.mark.parametrize("mib,gb,mode,status", [
    (6144, 6, "small", "warn"), (8188, 8, "base", "warn"), (15360, 15, "base", "warn"),
    (16376, 16, "base", "warn"), (23028, 23, "large", "warn"), (24564, 24, "large", "warn"),
    (32607, 32, "gundam", "pass"), (40960, 40, "gundam", "pass"), (81559, 80, "gundam", "pass"),
    (81920, 80, "gundam", "pass")])
def test_deepseek_vram_names_the_mode_for_recorded_cards(mib, gb, mode, status):
    facts = {"gpu": {"gpus": facts_mod.parse_query_gpu(CARD_ROWS[mib])}}
    assert pf.sold_gb(mib) == gb
    for recipe in ("deepseek-ocr-vllm085", "deepseek-ocr"):
        r = pf.check_vram(facts, get_recipe(recipe).requirements)
        assert (r.status, r.value) == (status, mode), r.message
        assert r.message.startswith(f"{mode.capitalize()} mode") and f"a {gb} GB card" in r.message
        assert ("Gundam mode wants 32 GB+" in r.message) == (status == "warn")
        assert pf.check_free_gpu(facts, get_recipe(recipe).requirements).status == "pass"


def test_minicpm_thresholds_use_the_sold_size():
    def facts(mib):
        return {"gpu": {"gpus": facts_mod.parse_query_gpu(CARD_ROWS[mib])}}
    assert pf.check_vram(facts(24564), DSPARK).status == "pass"       # a 24 GB card is >= 24 GB
    r = pf.check_vram(facts(23028), DSPARK)
    assert r.status == "fail" and "a 23 GB card; >= 24 GB needed" in r.message
    assert pf.free_gpu(facts(24564), 24)["index"] == 0 and pf.free_gpu(facts(23028), 24) is None


def test_messages_name_the_guide_not_the_seed():
    """Users never saw the 'seed' files: messages say "the MiniCPM-OCR guide" or name the step."""
    results = pf.run_preflight_checks(base_facts(), DSPARK)
    texts = [t for r in results for t in (r.message, r.fix or "")]
    assert any("offline" in t for t in texts)              # the github warning and its fix are among them
    assert not [t for t in texts if "seed" in t.lower()]

def test_a_users_own_vllm_env_is_left_alone_and_said_so(box):
    """vllm_env names a venv the user already has: no Python, gcc-13 or GitHub check for building one."""
    facts = box("rtx5090-590")
    facts["pythons"] = [{"version": "3.10.12", "path": "/usr/bin/python3.10"}]      # too old to build vllm-ocr-env
    plain = by_name(pf.run_preflight_checks(facts, DSPARK))
    assert plain["python:vllm-ocr-env"].status in ("warn", "fail")   # would need a managed Python
    own = by_name(pf.run_preflight_checks(facts, DSPARK, {"vllm_env": "/opt/my-vllm"}))
    assert own["python:vllm-ocr-env"].status == "skip"
    assert "/opt/my-vllm is your own env" in own["python:vllm-ocr-env"].message
    assert own["python:sdk-env"].status == "pass"              # the SDK env is still ours to build
    assert plain["gcc-13"].status != "skip" and own["gcc-13"].status == "skip"   # nothing of vLLM is compiled
