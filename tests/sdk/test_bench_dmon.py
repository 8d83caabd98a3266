"""The host's GPU readings of `inv bench`: recorded `nvidia-smi dmon -s um` output (tests/fixtures/nvidia-smi,
each recording names its source) parsed by the columns its header names, and aggregated per level."""

import os
import time
from pathlib import Path

from ocrdeploy.sdk.bench import gpu_figures, parse_dmon

SMI = Path(__file__).parents[1] / "fixtures" / "nvidia-smi"


def test_the_r525_layout_of_an_a100():
    rows = parse_dmon((SMI / "a100-535" / "dmon.txt").read_text())
    assert list(rows) == [0] and len(rows[0]) == 17
    assert rows[0][0] == (100.0, 14813.0) and rows[0][4] == (71.0, 14813.0)
    f = gpu_figures(rows)
    assert f["util_mean_pct"] == 90.9 and f["util_max_pct"] == 100 and f["memory_max_mib"] == 14813


def test_the_older_six_column_layout():
    """fb is the 6th column here and the 8th in the R525 layout: found by name, not by place."""
    f = gpu_figures(parse_dmon((SMI / "dmon" / "um-6col.txt").read_text()))
    assert f["util_mean_pct"] == 0 and f["memory_max_mib"] == 60 and f["per_gpu"]["0"]["samples"] == 5


def test_two_gpus_repeated_headers_dashes_and_noise():
    """Built from the A100 recording's lines: a second GPU's rows, dmon's header printed again mid-run, a `-`
    where dmon could not read a value, and a line that is not a sample."""
    text = (SMI / "a100-535" / "dmon.txt").read_text().splitlines()
    header, rows = [line for line in text if line.startswith("# ")][-2:], [line for line in text if line[:1] == " "]
    lines = header + rows[:2] + ["    1    40     3     0     0     0     0  2000     4     0"] + header + [
        "    1     -     -     -     -     -     -     -     -     -", "Terminated", rows[2]]
    per = parse_dmon("\n".join(lines))
    assert per[0] == [(100.0, 14813.0), (100.0, 14813.0), (100.0, 14813.0)]
    assert per[1] == [(40.0, 2000.0), (None, None)]
    f = gpu_figures(per)
    assert f["util_mean_pct"] == round((300 + 40) / 4, 1) and f["memory_max_mib"] == 14813
    assert f["per_gpu"]["1"] == {"util_mean_pct": 40.0, "memory_max_mib": 2000, "samples": 2}


def test_nothing_read_is_none():
    assert gpu_figures(parse_dmon("Failed to initialize NVML: Driver/library version mismatch\n")) is None
    assert gpu_figures({}) is None


def test_a_row_cut_short_or_run_long_is_not_a_sample():
    """A line dmon was killed in the middle of (the last one, when the level ends) has fewer columns than the
    header names: it is not read as a sample with its values shifted."""
    text = ("# gpu    sm   mem   enc   dec    fb  bar1\n# Idx     %     %     %     %    MB    MB\n"
            "    0    55    20     0     0  9000     5\n    0    60\n    0    70    20     0     0  9100     5  7\n")
    assert parse_dmon(text) == {0: [(55.0, 9000.0)]}


def test_a_dmon_that_fails_on_the_host_gives_no_figures_and_says_what_it_printed(monkeypatch):
    """nvidia-smi is there but the driver is not loaded (the recorded no-driver message, exit 9): dmon starts in
    the background, prints its failure and ends; the level has no GPU figures and its note quotes the failure."""
    from ocrdeploy.inventory.model import Host
    from ocrdeploy.provision.connection import LocalConnection
    from ocrdeploy.sdk.bench import HostGpu

    monkeypatch.setenv("PATH", f"{SMI / 'no-driver'}:{os.environ['PATH']}")
    gpu = HostGpu(LocalConnection(Host("localhost")), "gpu0")
    gpu.start()
    assert gpu.pid and gpu.note is None
    deadline = time.monotonic() + 10          # dmon runs in the background: its message is written, then read
    while not Path(gpu.file).read_text().strip() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gpu.stop() is None
    assert gpu.note == ("nvidia-smi dmon on gpu0 gave no readings: NVIDIA-SMI has failed because it couldn't "
                        "communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed "
                        "and running.")
