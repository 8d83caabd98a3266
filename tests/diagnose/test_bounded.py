"""The scan's cost does not grow with what the log holds: memory with error-dense logs, reads with .gz windows,
and stdin that never ends (issue 19: M11, M12, M13)."""

import gzip
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ocrdeploy.diagnose import scanner
from ocrdeploy.diagnose.engine import wire_rules
from ocrdeploy.diagnose.table import load_table

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from gen_vllm_log import error_dense_lines  # noqa: E402
from peakmem import PEAK_KB  # noqa: E402

WIRE = wire_rules(load_table())

PEAK = PEAK_KB + r"""
import json, sys
from ocrdeploy.diagnose import scanner
from ocrdeploy.diagnose.engine import wire_rules
from ocrdeploy.diagnose.table import load_table
(rep,) = scanner.run_request({"paths": [sys.argv[1]], "rules": wire_rules(load_table()), "context": 2,
                              "engine": sys.argv[2]})
print(json.dumps({"kb": peak_kb(), "groups": len(rep["unrecognised"]),
                  "more": rep.get("unrecognised_more", 0), "count": sum(g["count"] for g in rep["unrecognised"])}))
"""


def peak_of_scan(path, engine):
    p = subprocess.run([sys.executable, "-c", PEAK, str(path), engine], capture_output=True, text=True, cwd=ROOT,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_memory_does_not_grow_with_an_error_dense_log(tmp_path):
    """Every line an ERROR line (the red team's 506 MB log took 680 MB, every candidate kept): a log eight
    times larger costs no more memory than the small one, beyond a few MB. (grep streams line by line;
    the in-process engines hold one 8 MiB chunk at a time, whatever the log's size.)"""
    engine = "grep"
    import random

    sizes = {"small": 1000, "large": 8000}         # lines of ~4 KB: 4 MB and 32 MB
    peaks = {}
    for name, n in sizes.items():
        log = tmp_path / f"{name}.log"
        with open(log, "w") as fh:
            for line in error_dense_lines(n, random.Random(1), width=4000):
                fh.write(line + "\n")
        peaks[name] = peak_of_scan(log, engine)
    grown_mb = (peaks["large"]["kb"] - peaks["small"]["kb"]) / 1024
    assert grown_mb < 5, peaks
    assert peaks["large"]["count"] == 1           # one block of repeats, counted, not kept


def test_distinct_unrecognised_errors_are_capped_and_counted(tmp_path, monkeypatch):
    monkeypatch.setattr(scanner, "MAX_GROUPS", 5)
    log = tmp_path / "many.log"
    log.write_text("".join(f"ERROR worker {chr(97 + i % 26) * (1 + i // 26)} died\nINFO\nINFO\nINFO\nINFO\n"
                           for i in range(40)))
    rep = scanner.scan(str(log), WIRE, engine="python")
    assert len(rep["unrecognised"]) == 5 and rep["unrecognised_more"] == 35


def test_gz_windows_decompress_the_log_once(tmp_path):
    """66 MB of INFO lines then 2100 CMake NOTFOUND lines (a preceded_by rule, within 40) in a 96 KB .gz took
    133 s when every window re-decompressed from the start; one forward pass takes about a second."""
    p = tmp_path / "cmake.log.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("INFO ok\n" * 2_500_000)
        fh.write("CMake Error: The following variables are used in this project, but they are set to NOTFOUND.\n")
        for _ in range(2100):
            fh.write("  CUDA_CUDART_LIBRARY (ADVANCED)\n")
    for engine in ("python", "grep"):
        t = time.process_time()
        rep = scanner.scan(str(p), WIRE, engine=engine)
        spent = time.process_time() - t
        f = {f["id"]: f for f in rep["findings"]}["cudart-cmake-notfound"]
        assert f["first_line"] == 2_500_002 and f["count"] == 40, (engine, f)   # within 40 of the NOTFOUND line
        assert spent < 20, (engine, spent)


def test_windows_match_a_plain_read_of_the_file(tmp_path):
    """The forward reader gives the same neighbours as the file itself, across long lines and the end."""
    lines = [f"line {i} " + "y" * (i * 37 % 5000) for i in range(3000)]
    data = ("\n".join(lines)).encode()          # no newline at the end
    for name in ("w.log", "w.log.gz"):
        p = tmp_path / name
        p.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
        w = scanner.Windows(str(p))
        offsets = [0]
        for ln in lines[:-1]:
            offsets.append(offsets[-1] + len(ln) + 1)
        try:
            for i in list(range(0, 3000, 7)) + [2995, 2999]:
                prev, nxt = w.around(offsets[i], 20, 20)
                assert [x.decode() for x in prev] == lines[max(0, i - 20):i], (name, i)
                assert [x.decode().rstrip("\n") for x in nxt] == lines[i + 1:i + 21], (name, i)
        finally:
            w.close()


def diagnose_stdin(tmp_path, source, limit_bytes=None, spool_max=None):
    """`diagnose --log -` fed by another process; TMPDIR is a directory of the test; an optional file-size limit
    (RLIMIT_FSIZE, SIGXFSZ ignored) makes writing the spool fail as a full disk does."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir), COLUMNS="200")
    env.pop("OCRDEPLOY_INVENTORY", None)
    if spool_max:
        env["OCRDEPLOY_STDIN_MAX_BYTES"] = str(spool_max)

    def limits():
        if limit_bytes:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    feeder = subprocess.Popen(source, stdout=subprocess.PIPE)
    try:
        p = subprocess.run([sys.executable, "-m", "ocrdeploy", "diagnose", "--log", "-"], stdin=feeder.stdout,
                           capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, preexec_fn=limits)
    finally:
        feeder.kill()
        feeder.wait()
    return p, sorted(os.listdir(tmpdir))


def test_endless_stdin_stops_at_the_spool_limit_and_leaves_nothing(tmp_path):
    p, left = diagnose_stdin(tmp_path, [sys.executable, "-c", "import sys\nwhile True: sys.stdout.write('INFO still "
                                                              "running\\n' * 4096)"],
                             spool_max=8 << 20, limit_bytes=64 << 20)   # the cap: a regression cannot fill the disk
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "standard input" in p.stdout + p.stderr and "save it to a file" in p.stdout + p.stderr
    assert left == []


def test_a_full_disk_while_spooling_stdin_is_an_input_error(tmp_path):
    p, left = diagnose_stdin(tmp_path, ["cat", str(ROOT / "README.md")] + [str(ROOT / "README.md")] * 40,
                             limit_bytes=64 * 1024)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "could not be saved" in p.stdout + p.stderr
    assert left == []


def test_binary_stdin_is_refused_at_once(tmp_path):
    t = time.monotonic()
    p, left = diagnose_stdin(tmp_path, ["cat", "/dev/zero"], limit_bytes=64 << 20)
    assert p.returncode == 2 and "not a text log" in p.stdout + p.stderr and left == []
    assert time.monotonic() - t < 60
