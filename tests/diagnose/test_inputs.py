"""What `inv diagnose` is given that is not a plain text log: binary, FIFO, devices, empty, truncated .gz, huge lines."""

import gzip
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ocrdeploy.diagnose import scanner
from ocrdeploy.diagnose.engine import exit_code, wire_rules
from ocrdeploy.diagnose.table import load_table

ROOT = Path(__file__).parents[2]
WIRE = wire_rules(load_table())
ENGINES = ["grep", "python"] + (["hyperscan"] if scanner.hyperscan is not None else [])
OOM = "c++: fatal error: Killed signal terminated program cc1plus"


def diagnose(*args, timeout=60):
    env = dict(os.environ, COLUMNS="200")
    env.pop("OCRDEPLOY_INVENTORY", None)
    return subprocess.run([sys.executable, "-m", "ocrdeploy", "diagnose", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=timeout)


def one(path, engine="auto"):
    (rep,) = scanner.run_request({"paths": [str(path)], "rules": WIRE, "context": 2, "engine": engine})
    return rep


def test_binary_file_is_not_a_text_log(tmp_path):
    blob = tmp_path / "core.bin"
    blob.write_bytes(bytes(range(256)) * 64 + OOM.encode())
    p = diagnose("--log", str(blob))
    assert p.returncode == 2 and "not a text log" in p.stdout + p.stderr and "Traceback" not in p.stderr
    gz = tmp_path / "image.png.gz"
    with gzip.open(gz, "wb") as fh:
        fh.write(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 100)
    assert "not a text log" in one(gz)["error"]


def test_fifo_and_devices_are_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO"), ("/dev/zero", "a device"), ("/dev/null", "a device")):
        p = diagnose("--log", str(path), timeout=20)     # a blocking read would hit the timeout
        assert p.returncode == 2 and f"is {kind}, not a regular log file" in p.stdout + p.stderr, (path, p)


def test_fifo_as_a_service_record_is_skipped(tmp_path):
    state = tmp_path / ".ocrdeploy" / "services"
    state.mkdir(parents=True)
    os.mkfifo(state / "minicpm-ocr-18499.json")
    done = []
    t = threading.Thread(target=lambda: done.append(scanner.service_logs(str(tmp_path))))
    t.start()
    t.join(10)
    assert done and done[0][1] == []


def test_empty_log_is_clean_with_a_note(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    p = diagnose("--log", str(empty))
    assert p.returncode == 0 and "empty file" in p.stdout
    assert one(empty)["note"].startswith("empty file")


@pytest.mark.parametrize("engine", ENGINES)
def test_truncated_gz_keeps_the_findings_so_far_and_says_so(tmp_path, engine):
    whole = tmp_path / "whole.gz"
    with gzip.open(whole, "wb") as fh:
        fh.write(("INFO compiling\n" * 20000 + OOM + "\n" + "INFO more\n" * 200000).encode())
    cut = tmp_path / "build.log.gz"
    data = whole.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3])
    rep = one(cut, engine)
    assert [f["id"] for f in rep["findings"]] == ["compile-oom-killed"]
    assert rep["findings"][0]["first_line"] == 20001
    assert "to the end" in rep["error"]
    assert exit_code([rep]) == 1            # the known error still counts
    rep["findings"] = []
    assert exit_code([rep]) == 2            # without one, the incomplete read is the input error


@pytest.mark.parametrize("engine", ENGINES)
def test_a_100_mb_single_line_is_scanned(tmp_path, engine):
    log = tmp_path / "one-line.log"
    with open(log, "wb") as fh:
        fh.write(b"y" * (100 << 20))
        fh.write(b" " + OOM.encode() + b"\n")
        fh.write(OOM.encode() + b"\nINFO end\n")
    rep = one(log, engine)
    f = rep["findings"][0]
    assert (f["id"], f["first_line"], f["count"]) == ("compile-oom-killed", 2, 1)
    assert "error" not in rep


def test_every_input_kind_together_never_gives_a_traceback(tmp_path):
    fifo = tmp_path / "f.log"
    os.mkfifo(fifo)
    text = tmp_path / "ok.log"
    text.write_text(OOM + "\n")
    p = diagnose("--log", str(text), "--log", str(fifo), "--log", "/dev/zero", "--log", str(tmp_path),
                 "--log", str(tmp_path / "missing.log"), "--json")
    assert p.returncode == 2 and "Traceback" not in p.stderr
