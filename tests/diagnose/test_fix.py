"""`inv diagnose --fix` at its prompt and on the default workdir: Ctrl-D, --json on a terminal, `~/ocrdeploy`."""

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).parents[2]
# a real case of tests/fixtures/diagnose/corpus/start.yaml (vllm#48395): remedy uninstall-torchcodec
TORCHCODEC = ("OSError: Could not load this library: /ssd/Projects/opensource/vllm/.venv/lib/python3.10/"
              "site-packages/torchcodec/libtorchcodec_core7.so\n")


def env_for(tmp_path, **extra):
    e = dict(os.environ, COLUMNS="200")
    e.pop("OCRDEPLOY_INVENTORY", None)
    e.update(extra)
    return e


def on_a_terminal(args, tmp_path, keys: bytes, **extra):
    """diagnose with its stdin a real pseudo-terminal (the line discipline turns ^D into end of input);
    stdout and stderr are pipes, as when a --json document is captured."""
    master, slave = os.openpty()
    try:
        p = subprocess.Popen([sys.executable, "-m", "ocrdeploy", "diagnose", *args], stdin=slave,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env_for(tmp_path, **extra))
        os.close(slave)
        os.write(master, keys)
        out, err = p.communicate(timeout=120)
    finally:
        os.close(master)
    return p.returncode, out.decode(), err.decode()


def fake_pip(venv: Path) -> Path:
    """A pip that records its arguments: the remedy must reach it by an absolute path."""
    (venv / "bin").mkdir(parents=True)
    pip = venv / "bin" / "pip"
    record = venv / "called"
    pip.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > '{record}'\n")
    pip.chmod(0o755)
    return record


def test_ctrl_d_at_the_prompt_is_a_no(tmp_path):
    log = tmp_path / "start.log"
    log.write_text(TORCHCODEC)
    home = tmp_path / "home"
    record = fake_pip(home / "ocrdeploy" / "vllm-ocr-env")
    code, out, err = on_a_terminal(["--log", str(log), "--fix"], tmp_path, b"\x04", HOME=str(home))
    assert "Traceback" not in err and "EOFError" not in err, err
    assert "Run these commands? [y/N]" in out and "--fix: nothing run" in out
    assert code == 1 and not record.exists()


def test_fix_json_on_a_terminal_keeps_stdout_one_document(tmp_path):
    log = tmp_path / "start.log"
    log.write_text(TORCHCODEC)
    home = tmp_path / "home"
    record = fake_pip(home / "ocrdeploy" / "vllm-ocr-env")
    code, out, err = on_a_terminal(["--log", str(log), "--fix", "--json"], tmp_path, b"n\n", HOME=str(home))
    doc = json.loads(out)        # nothing after the JSON document
    assert doc["exit_code"] == 1 and "Run these commands? [y/N]" in err and "nothing run" in err
    assert not record.exists()


def test_fix_on_the_default_workdir_reaches_the_tools_under_home(tmp_path):
    """The README's default workdir `~/ocrdeploy`: the remedy runs $HOME/ocrdeploy/vllm-ocr-env/bin/pip, not a
    quoted '~/...' that no shell expands (exit 127)."""
    log = tmp_path / "start.log"
    log.write_text(TORCHCODEC)
    home = tmp_path / "home"
    record = fake_pip(home / "ocrdeploy" / "vllm-ocr-env")
    e = env_for(tmp_path, HOME=str(home))
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "diagnose", "--log", str(log), "--fix", "--yes"],
                       capture_output=True, text=True, cwd=ROOT, env=e, timeout=120)
    assert f"ok: {home}/ocrdeploy/vllm-ocr-env/bin/pip uninstall -y torchcodec" in p.stdout, p.stdout + p.stderr
    assert record.read_text().split() == ["uninstall", "-y", "torchcodec"]
    # a `workdir: ~/...` in an inventory the same way
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": "~/elsewhere"}}}))
    record2 = fake_pip(home / "elsewhere" / "vllm-ocr-env")
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "diagnose", "--log", str(log), "--inventory", str(inv),
                        "--fix", "--yes"], capture_output=True, text=True, cwd=ROOT, env=e, timeout=120)
    assert record2.read_text().split() == ["uninstall", "-y", "torchcodec"], p.stdout + p.stderr
