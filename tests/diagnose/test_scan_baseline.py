"""The scan's speed is reported against `grep -E -f` with the table's patterns as ERE (bench/diagnose_scan.py): a
pattern that grep refuses makes the whole baseline fail in a blink and the ratio meaningless (stop 54's remote-code
pattern, `[^\\s'"{}]`, did that), so every pattern the bench converts must be one grep takes, and mean the same."""

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

from ocrdeploy.diagnose.table import load_table

pytestmark = pytest.mark.skipif(shutil.which("grep") is None, reason="needs GNU grep")
ENV = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}


def bench():
    path = Path(__file__).parents[2] / "bench" / "diagnose_scan.py"
    spec = importlib.util.spec_from_file_location("diagnose_scan_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def grep(ere, text, tmp_path):
    f = tmp_path / "in.txt"
    f.write_text(text)
    return subprocess.run(["grep", "-c", "-E", "-i", "-e", ere, str(f)], capture_output=True, text=True, env=ENV)


def test_grep_takes_every_pattern_the_bench_converts(tmp_path):
    to_ere = bench().to_ere
    pats = [(r.id, n, to_ere(p)) for r in load_table() for n, p in enumerate(r.patterns, 1)]
    kept = [t for t in pats if t[2]]
    assert len(kept) >= 0.95 * len(pats)
    patfile = tmp_path / "p.pat"
    patfile.write_text("\n".join(e for _, _, e in kept) + "\n")
    res = subprocess.run(["grep", "-c", "-E", "-i", "-f", str(patfile), "/dev/null"], capture_output=True, text=True,
                         env=ENV)
    if res.returncode == 2 or res.stderr:
        bad = [f"{rid} p{n}: {grep(e, '', tmp_path).stderr.strip()}" for rid, n, e in kept
               if grep(e, "", tmp_path).returncode == 2]
        pytest.fail(f"grep refuses the baseline: {res.stderr.strip()}; {bad}")


@pytest.mark.parametrize("pattern,hits,quiet", [
    # Python's class escapes inside brackets become the class names there, not a nested bracket
    (r"Loading [^\s'\"{}]{1,30} requires", "Loading org/model requires", "Loading org model requires"),
    # an escaped "]" inside a class goes first (ERE has no escapes there); "\n" in it is dropped
    (r"\[[^\]\n]{0,20}\] Error 137", "make[2]: *** [a.o] Error 137", "[a] b] Error 137"),
    (r"requires [\w.\[\]-]{1,20} x", "requires vllm[all]-0.5 x", "requires vllm all x"),
    (r"\bmodel \d+\s\S+ gone\b", "model 12 abc gone", "model x abc gone"),
    (r"a[^\n]b", "a-b", "ab"),
])
def test_a_converted_pattern_matches_what_python_matches(pattern, hits, quiet, tmp_path):
    import re

    ere = bench().to_ere(pattern)
    assert ere is not None
    assert re.search(pattern, hits) and not re.search(pattern, quiet)
    assert grep(ere, hits + "\n", tmp_path).stdout.strip() == "1"
    assert grep(ere, quiet + "\n", tmp_path).stdout.strip() == "0"


@pytest.mark.parametrize("pattern", [r"(?=CUDA)error", r"x[^\S\n]y", r"[\W]"])
def test_what_ere_cannot_say_is_left_out(pattern):
    assert bench().to_ere(pattern) is None


def test_a_baseline_grep_cannot_finish_is_stopped_and_the_ratios_become_bounds(tmp_path):
    import sys

    log = tmp_path / "v.log"
    log.write_text("INFO 01-01 00:00:00 engine started\n" * 2000 + "torch.OutOfMemoryError: CUDA out of memory.\n")
    root = Path(__file__).parents[2]
    res = subprocess.run([sys.executable, str(root / "bench" / "diagnose_scan.py"), str(log), "--repeat", "1",
                          "--naive-mib", "0", "--grep-timeout", "0.001"], capture_output=True, text=True, cwd=root,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert "grep -c -E -i -f patterns (LC_ALL=C): over 0 s (stopped; the ratios below are upper bounds)" in res.stdout
    assert "x grep" in res.stdout and all("= <" in line for line in res.stdout.splitlines() if "x grep" in line)
