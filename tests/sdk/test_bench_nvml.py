"""The bench's GPU readings on this machine (a server here: `Sampler` reads NVML through pynvml while a level runs).

Stand-in for the GPU driver, as in tests/provision/test_probe_nvml.py: a tiny real shared library compiled with gcc,
named libnvidia-ml.so.1 and found through LD_LIBRARY_PATH (this machine has no GPU), read by the real pynvml in a
child process (the library path is read when the process starts).  Two cards: 30 % busy with 1500 MiB used, 70 %
busy with 3000 MiB used."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pynvml")
pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to build the NVML stand-in")

ROOT = Path(__file__).resolve().parents[2]

NVML_C = r"""
typedef struct { unsigned long long total, free, used; } mem_t;
typedef struct { unsigned int gpu, memory; } util_t;
int nvmlInit_v2(void) { return 0; }
int nvmlInitWithFlags(unsigned int flags) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned int *c) { *c = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h) { if (i > 1) return 2; *h = (void *)(long)(i + 1); return 0; }
int nvmlDeviceGetUtilizationRates(void *h, util_t *u) { u->gpu = (long)h == 1 ? 30 : 70; u->memory = 5; return 0; }
int nvmlDeviceGetMemoryInfo(void *h, mem_t *m) {
    m->total = 24576ULL << 20; m->used = (long)h == 1 ? (1500ULL << 20) : (3000ULL << 20); m->free = m->total - m->used;
    return 0;
}
"""

LEVEL = """
import json, time
from ocrdeploy.sdk import bench
lv = bench.run_level("http://127.0.0.1:9", [], [], 1, nvml=True, load=lambda: (time.sleep(0.5), ([], 0.5, 0))[1])
print(json.dumps({"gpu": lv["gpu"], "gpu_note": lv["gpu_note"]}))
"""


def test_the_gpus_of_this_machine_are_read_through_nvml_in_percent_and_mib(tmp_path):
    (tmp_path / "nvml.c").write_text(NVML_C)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(tmp_path / "libnvidia-ml.so.1"), str(tmp_path / "nvml.c")],
                   check=True)
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path), PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-c", LEVEL], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout)
    # every card's samples together: the mean of 30 and 70, the busiest reading, the most memory one card held
    assert out == {"gpu": {"util_mean_pct": 50.0, "util_max_pct": 70.0, "memory_max_mib": 3000,
                           "source": "NVML on this machine"}, "gpu_note": None}
