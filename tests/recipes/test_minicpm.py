"""The MiniCPM recipes' own rules, as `inv install --check` shows them on a recorded host.

The golden plans (test_golden_plans.py) pin the commands of a bare host; these pin the two decisions the
guide makes that a bare host never exercises: the SDK's venv must not hold torch or vLLM (seed 000
section 1, numpy/opencv conflicts), and which source checkouts a recipe may go without when the user
brings an env of their own.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
FACTS = ROOT / "tests" / "fixtures" / "facts" / "ubuntu2204-rtx5090-bare.json"


def run_check(args, facts=FACTS):
    env = dict(os.environ)
    env.pop("OCRDEPLOY_INVENTORY", None)
    return subprocess.run([sys.executable, "-m", "ocrdeploy", "install", "--check", "--facts", str(facts), *args],
                          capture_output=True, text=True, cwd=ROOT / "tests", env=env)


def facts_with_sdk_env(tmp_path, dists):
    """The recorded host with a healthy sdk-env (Python 3.12, bin/python, a complete pip) holding `dists`."""
    facts = json.loads(FACTS.read_text())
    work = facts["workdir"]["path"]
    facts.setdefault("venvs", {})["@/sdk-env"] = {
        "path": f"{work}/sdk-env", "python": "3.12.3", "site_packages": f"{work}/sdk-env/lib/python3.12/site-packages",
        "dists": {d: {"version": "2.14.0", "editable": False, "complete": True} for d in ["pip", *dists]}}
    facts.setdefault("files", {})["@/sdk-env/bin/python"] = {"exists": True, "kind": "file"}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(facts))
    return path


def steps_of(p):
    assert p.returncode in (0, 1), p.stderr
    return {s["step"]: s for s in json.loads(p.stdout)["hosts"]["localhost"]["steps"]}


@pytest.mark.parametrize("dists,held", [(["torch", "numpy"], "torch"), (["vllm"], "vllm"),
                                        (["torch", "vllm"], "torch, vllm")])
def test_sdk_env_holding_torch_or_vllm_is_refused_and_the_sdk_steps_wait(tmp_path, dists, held):
    facts = facts_with_sdk_env(tmp_path, dists)
    p = run_check(["--json", "--recipe", "sdk-only", "--set", "sdk_repo=https://github.com/OpenBMB/MiniCPM-OCR.git"],
                  facts)
    steps = steps_of(p)
    assert p.returncode == 1
    assert steps["sdk-venv"]["status"] == "ok", steps["sdk-venv"]
    guard = steps["sdk-venv-guard"]
    assert guard["status"] == "failed" and guard["commands"] == []
    assert f"refusing to install the SDK into sdk-env: it holds {held}" in guard["reason"]
    assert steps["sdk-install"]["status"] == "skipped" and "sdk-venv-guard" in steps["sdk-install"]["reason"]


def test_a_clean_sdk_env_passes_the_guard(tmp_path):
    facts = facts_with_sdk_env(tmp_path, ["numpy", "opencv-python"])
    steps = steps_of(run_check(["--json", "--recipe", "sdk-only", "--set",
                                "sdk_repo=https://github.com/OpenBMB/MiniCPM-OCR.git"], facts))
    guard = steps["sdk-venv-guard"]
    assert guard["status"] == "ok" and guard["reason"] == "sdk-env holds neither torch nor vLLM"
    assert steps["sdk-install"]["status"] != "skipped"


@pytest.mark.parametrize("args,missing", [
    # the transformers recipe builds tf-ocr-env from the feat-ocr checkout unless the user brings tf_env
    (["--recipe", "transformers"], "transformers_src"),
    # a user's tf_env spares the transformers recipe's checkout only: dspark still builds vllm-ocr-env from both
    (["--recipe", "dspark", "--set", "tf_env=/home/ubuntu/my-tf", "--set", "vllm_src=/home/ubuntu/src/vllm"],
     "transformers_src"),
    (["--recipe", "standard", "--set", "tf_env=/home/ubuntu/my-tf"], "vllm_src, transformers_src"),
])
def test_required_sources_a_users_env_does_not_excuse(args, missing):
    p = run_check([*args, "--set", "sdk_repo=x"])
    recipe = args[1]
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert f"recipe {recipe} needs {missing}" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("args", [
    ["--recipe", "transformers", "--set", "tf_env=/home/ubuntu/my-tf"],
    ["--recipe", "standard", "--set", "vllm_env=/home/ubuntu/my-vllm"],
])
def test_a_users_env_needs_no_source_checkout_and_a_wrong_one_fails_its_step(args):
    """The recorded host has no such venv: the env's step fails with why (exit 1), never a traceback."""
    p = run_check([*args, "--set", "sdk_repo=x", "--json"])
    var, path = args[3].split("=")
    assert "recipe" not in p.stderr and "Traceback" not in p.stderr, p.stderr
    step = steps_of(p)["vllm-env" if var == "vllm_env" else "tf-env"]
    assert p.returncode == 1
    assert step["status"] == "failed"
    assert step["reason"] == f"inventory var {var}: {path} is not a venv on this host (no pyvenv.cfg)"


@pytest.mark.parametrize("version,status,reason", [
    ("5.19.0.dev0", "ok", "already 5.19.0.dev0 (editable from /home/ubuntu/src/transformers)"),
    # a later pip pulled another transformers over the feat-ocr build: re-applied, never accepted
    ("5.18.0", "changed", "reads 5.18.0, want 5.19.0.dev0"),
])
def test_feat_ocr_transformers_must_read_the_guides_version(tmp_path, version, status, reason):
    facts = json.loads(FACTS.read_text())
    work = facts["workdir"]["path"]
    facts.setdefault("venvs", {})["@/tf-ocr-env"] = {
        "path": f"{work}/tf-ocr-env", "python": "3.12.3", "site_packages": f"{work}/tf-ocr-env/lib/python3.12/site-packages",
        "dists": {"pip": {"version": "25.0", "editable": False, "complete": True},
                  "transformers": {"version": version, "editable": True, "complete": True,
                                   "source": "file:///home/ubuntu/src/transformers"}}}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(facts))
    steps = steps_of(run_check(["--json", "--recipe", "transformers", "--set", "sdk_repo=x", "--set",
                                "transformers_src=/home/ubuntu/src/transformers"], path))
    step = steps["tf-transformers"]
    assert step["status"] == status and step["reason"] == reason, step
