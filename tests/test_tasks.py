"""The commands as a user runs them: `inv`/`ocrdeploy` in a subprocess, locally."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
SMI = Path(__file__).parent / "fixtures" / "nvidia-smi"


def run(args, *, box=None, cwd=None, env=None):
    e = dict(os.environ, OCRDEPLOY_PROBE_NO_NVML="1", COLUMNS="200")
    e.pop("OCRDEPLOY_INVENTORY", None)
    if box:
        e["PATH"] = f"{SMI / box}{os.pathsep}{e['PATH']}"
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "ocrdeploy", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=e, timeout=60)


def test_inv_list_from_repo_root():
    out = subprocess.run([sys.executable, "-m", "invoke", "--list"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and "preflight" in out.stdout and "facts" in out.stdout


def test_local_preflight_json_on_a_good_box(tmp_path):
    inv = tmp_path / "inv.yml"
    inv.write_text(f"all:\n  vars:\n    workdir: {tmp_path}/wd\n")
    p = run(["preflight", "--json", "--inventory", str(inv), "--network-timeout", "0"], box="rtx5090-590")
    doc = json.loads(p.stdout)
    checks = {c["name"]: c for c in doc["hosts"]["localhost"]["checks"]}
    assert checks["driver"]["status"] == "pass" and checks["free_gpu"]["value"] == "0"
    assert doc["hosts"]["localhost"]["summary"]["workdir"] == f"{tmp_path}/wd"
    # exit code follows the checks: 0 only when none failed
    assert p.returncode == (1 if doc["hosts"]["localhost"]["counts"]["fail"] else 0)
    assert doc["ok"] == (p.returncode == 0)


def test_local_preflight_table_and_exit_1_on_old_driver():
    p = run(["preflight", "--network-timeout", "0"], box="a100-535")
    assert p.returncode == 1
    assert "535-579" in p.stdout and "RECAP" in p.stdout and "fail=" in p.stdout


@pytest.mark.parametrize("args,needle", [
    (["preflight", "--inventory", "/nonexistent/inv.yml"], "/nonexistent/inv.yml: inventory file not found"),
    (["preflight", "--host", "ghost"], "unknown host 'ghost'"),
    (["preflight", "--recipe", "nope"], "unknown recipe 'nope'"),
    (["preflight", "--connect-timeout", "-1"], "--connect-timeout must be > 0"),
])
def test_usage_errors_exit_2_with_one_line(args, needle, tmp_path):
    p = run(args, env={"OCRDEPLOY_SSH_CONFIG": str(tmp_path / "none")})
    assert p.returncode == 2
    assert needle in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_malformed_inventory_names_file_and_line(tmp_path):
    inv = tmp_path / "inventory.yml"
    inv.write_text("all:\n  hosts:\n    gpu1:\n      ansible_port: 99999\n")
    p = run(["facts", "--host", "gpu1"], cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.strip().startswith("error: inventory.yml:4: host 'gpu1': ansible_port")


def test_facts_json_raw(tmp_path):
    p = run(["facts", "--json", "--raw"], box="3gpu-busy0")
    assert p.returncode == 0
    facts = json.loads(p.stdout)["hosts"]["localhost"]["facts"]
    assert facts["gpu"]["gpus"][0]["processes"][0]["pid"] == 48213


def test_every_short_flag_is_a_letter_and_install_help_names_every_recipe():
    from ocrdeploy.recipes import recipe_names
    from ocrdeploy.tasks import ns

    args = {name: ns[name].get_arguments() for name in ns.task_names}  # (invoke hands out each help once)
    for name, task_args in args.items():
        for arg in task_args:
            shorts = [n for n in arg.names if len(n) == 1]
            assert all(s.isalpha() for s in shorts), (name, arg.names)
    recipe_help = next(a.help for a in args["install"] if a.name == "recipe")
    assert all(r in recipe_help for r in recipe_names())
    p = run(["install", "--help"])
    assert "--docker-dir=STRING" in p.stdout and "--=" not in p.stdout


@pytest.mark.parametrize("args, line", [
    (["preflight", "--network-timeout", "abc"], "error: --network-timeout must be a number, got 'abc'"),
    (["preflight", "--connect-timeout", "0"], "error: --connect-timeout must be > 0, got '0'"),
    (["facts", "--connect-timeout", "nan"], "error: --connect-timeout must be a finite number, got 'nan'"),
    (["stop", "--grace", "abc"], "error: --grace must be a number, got 'abc'"),
    (["serve", "--timeout", "nan"], "error: --timeout must be a finite number, got 'nan'"),
    (["serve", "--timeout", "-1"], "error: --timeout must be > 0, got '-1'"),
    (["serve", "--instances", "1.5"], "error: --instances must be a whole number, got '1.5'"),
    (["serve", "--port", "70000"], "error: --port must be between 1 and 65535, got '70000'"),
    (["diagnose", "--log", "x.log", "--context", "2.5"], "error: --context must be a whole number, got '2.5'"),
])
def test_numeric_options_are_one_clear_line(tmp_path, args, line):
    inv = tmp_path / "inv.yml"
    inv.write_text(f"all:\n  vars:\n    workdir: {tmp_path}/wd\n")
    p = run([*args, "--inventory", str(inv)])
    assert (p.returncode, p.stderr) == (2, line + "\n")


def test_fractional_timeouts_are_accepted(tmp_path):
    inv = tmp_path / "inv.yml"
    inv.write_text(f"all:\n  vars:\n    workdir: {tmp_path}/wd\n")
    p = run(["preflight", "--json", "--connect-timeout", "2.5", "--network-timeout", "0.5", "--inventory", str(inv)],
            box="rtx5090-590")
    assert "Traceback" not in p.stderr and json.loads(p.stdout)["hosts"]["localhost"]["reachable"] is True
    p = run(["stop", "--grace", "0.5", "--inventory", str(inv)])
    assert (p.returncode, p.stdout.strip()) == (0, "localhost: nothing to stop")


CORRUPT_STATES = {"a list": "[1, 2]", "truncated": '{"models": {"MiniCPM-OCR-1.0": {"pa',
                  "binary": "\x00\x01garbage\xff", "a model entry that is a string": '{"models": {"MiniCPM-OCR-1.0": "x"}}',
                  "checks a list": '{"checks": []}'}


@pytest.mark.parametrize("command", [["install", "--check", "--recipe", "sdk-only", "--set", "sdk_repo=/nowhere"],
                                     ["models", "--check"], ["serve"], ["parse", "--input", "/a.pdf", "--output", "/a.md"],
                                     ["deepseek-config", "--check"]])
@pytest.mark.parametrize("damage", sorted(CORRUPT_STATES))
def test_a_corrupt_state_file_is_one_line_that_names_it(tmp_path, command, damage):
    wd = tmp_path / "wd"
    (wd / ".ocrdeploy").mkdir(parents=True)
    state = wd / ".ocrdeploy" / "state.json"
    state.write_bytes(CORRUPT_STATES[damage].encode("latin-1"))
    (wd / "DeepSeek-OCR" / "DeepSeek-OCR-master" / "DeepSeek-OCR-vllm").mkdir(parents=True)
    (wd / "DeepSeek-OCR" / "DeepSeek-OCR-master" / "DeepSeek-OCR-vllm" / "config.py").write_text("BASE_SIZE = 1024\n")
    inv = tmp_path / "inv.yml"
    inv.write_text(f"all:\n  vars:\n    workdir: {wd}\n")
    p = run([*command, "--inventory", str(inv)], box="rtx5090-590")
    assert "Traceback" not in p.stdout + p.stderr, p.stdout + p.stderr
    assert p.returncode == 1, p.stdout + p.stderr
    assert f"{state} is corrupt" in " ".join((p.stdout + p.stderr).split()), p.stdout + p.stderr
