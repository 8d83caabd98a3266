"""The probe's in-process NVML read through ctypes (no nvidia-ml-py on the host).

Stand-in for the GPU driver: a tiny real shared library this test compiles with gcc, named libnvidia-ml.so.1
and found through LD_LIBRARY_PATH, that implements the NVML calls the probe and pynvml make for the GPU facts
(this machine has no GPU).  The same library read through pynvml (installed in the test's venv) is the
reference: both paths must give the same facts.  On any NVML error the probe asks nvidia-smi (the recorded
RTX 5090 box here), as before."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ocrdeploy.provision import probe

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to build the NVML stand-in")

FIX = Path(__file__).resolve().parents[1] / "fixtures"

NVML_C = r"""
#include <stdio.h>
#include <string.h>
typedef struct { unsigned long long total, free, used; } mem_t;
typedef struct { unsigned int pid; unsigned long long used; unsigned int gi, ci; } proc_t;
static int live;
int nvmlInit_v2(void) { live++; return INIT_RC; }
int nvmlInitWithFlags(unsigned int flags) { live++; return INIT_RC; }
int nvmlShutdown(void) { live--; return 0; }
int nvmlSystemGetDriverVersion(char *b, unsigned int n) { snprintf(b, n, "590.44.01"); return 0; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = 13010; return 0; }
int nvmlDeviceGetCount_v2(unsigned int *c) { *c = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h) { if (i > 1) return 2; *h = (void *)(long)(i + 1); return 0; }
int nvmlDeviceGetName(void *h, char *b, unsigned int n) { snprintf(b, n, "NVIDIA GeForce RTX 5090"); return 0; }
int nvmlDeviceGetUUID(void *h, char *b, unsigned int n) { snprintf(b, n, "GPU-5090-%ld", (long)h); return 0; }
int nvmlDeviceGetMemoryInfo(void *h, mem_t *m) {
    m->total = 32607ULL << 20; m->used = (long)h == 1 ? (1500ULL << 20) : (3ULL << 20); m->free = m->total - m->used;
    return 0;
}
#ifndef NO_PROCS
int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned int *count, proc_t *p) {
    if ((long)h != 1) { *count = 0; return 0; }
    if (PROCS_RC) return PROCS_RC;
    if (*count < 2 || !p) { *count = 2; return 7; }
    p[0].pid = PID; p[0].used = 1400ULL << 20; p[0].gi = p[0].ci = 0xFFFFFFFF;
    p[1].pid = PID; p[1].used = ~0ULL; p[1].gi = p[1].ci = 0xFFFFFFFF;     /* NVML_VALUE_NOT_AVAILABLE */
    *count = 2; return 0;
}
#endif
"""


def build(tmp_path, name="lib", init_rc=0, procs_rc=0, no_procs=False) -> Path:
    d = tmp_path / name
    d.mkdir()
    (d / "nvml.c").write_text(NVML_C)
    flags = [f"-DINIT_RC={init_rc}", f"-DPROCS_RC={procs_rc}", f"-DPID={os.getpid()}"] + (["-DNO_PROCS"] if no_procs else [])
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(d / "libnvidia-ml.so.1"), *flags, str(d / "nvml.c")],
                   check=True)
    return d


def gpu_facts(tmp_path, libdir: Path, with_pynvml: bool) -> dict:
    """The probe run as on a host: a python3 process reading the request on stdin."""
    env = dict(os.environ, LD_LIBRARY_PATH=str(libdir),
               PATH=f"{FIX}/nvidia-smi/rtx5090-590:{os.environ['PATH']}", XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("OCRDEPLOY_PROBE_NO_NVML", None)
    if not with_pynvml:            # a host's system python3: no nvidia-ml-py
        hide = tmp_path / "no-pynvml"
        hide.mkdir(exist_ok=True)
        (hide / "pynvml.py").write_text("raise ImportError('nvidia-ml-py is not installed on this host')\n")
        env["PYTHONPATH"] = str(hide)
    p = subprocess.run([sys.executable, probe.__file__, "-"], input=json.dumps({"workdir": str(tmp_path)}),
                       capture_output=True, text=True, env=env, timeout=60, check=True)
    return json.loads(p.stdout.split(probe.MARKER, 1)[1])["gpu"]


def test_ctypes_reads_what_pynvml_reads(tmp_path):
    lib = build(tmp_path)
    mine, reference = gpu_facts(tmp_path, lib, with_pynvml=False), gpu_facts(tmp_path, lib, with_pynvml=True)
    assert mine == reference
    assert mine["source"] == "nvml" and (mine["driver"], mine["cuda"]) == ("590.44.01", "13.1")
    first, second = mine["gpus"]
    assert (first["index"], first["name"], first["uuid"]) == (0, "NVIDIA GeForce RTX 5090", "GPU-5090-1")
    assert (first["memory_total_mib"], first["memory_used_mib"], first["memory_free_mib"]) == (32607, 1500, 31107)
    assert [(p["pid"], p["used_mib"]) for p in first["processes"]] == [(os.getpid(), 1400), (os.getpid(), None)]
    assert first["processes"][0]["name"] == Path(f"/proc/{os.getpid()}/comm").read_text().strip()
    assert second["uuid"] == "GPU-5090-2" and second["processes"] == []


@pytest.mark.parametrize("variant", [{"init_rc": 9}, {"procs_rc": 999}, {"no_procs": True}])
def test_any_nvml_error_asks_nvidia_smi(tmp_path, variant):
    """A driver NVML cannot start (9: NVML_ERROR_DRIVER_NOT_LOADED), a call that fails, an older library
    without the call: the facts come from nvidia-smi, whole."""
    facts = gpu_facts(tmp_path, build(tmp_path, **variant), with_pynvml=False)
    assert facts["source"] == "nvidia-smi" and set(facts["raw"]) == {"query_gpu", "compute_apps", "header"}


def test_no_library_asks_nvidia_smi(tmp_path):
    (tmp_path / "empty").mkdir()
    if subprocess.run(["sh", "-c", "ldconfig -p 2>/dev/null | grep -q libnvidia-ml.so.1"]).returncode == 0:
        pytest.skip("this machine has a real libnvidia-ml")
    assert gpu_facts(tmp_path, tmp_path / "empty", with_pynvml=False)["source"] == "nvidia-smi"
