"""The ctypes NVML reader at its edges, against the gcc-built stand-in of test_probe_nvml (its C source, with
one call changed per case): processes that start between the two calls that list them, a list call that fails
the second time, a library without nvmlInit_v2, NVML's init/shutdown balance, and the switch that turns NVML
off."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from ocrdeploy.provision import probe
from test_probe_nvml import FIX, NVML_C, gpu_facts

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to build the NVML stand-in")

# One more process on each ask of GPU 0's list: the count from the sizing call is already short for the
# filling call, as when a worker starts in between.
GROWING = r"""
static unsigned int asked;
int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned int *count, proc_t *p) {
    if ((long)h != 1) { *count = 0; return 0; }
    unsigned int now = 2 + asked++;
    if (*count < now || !p) { *count = now; return 7; }
    for (unsigned int i = 0; i < now; i++) { p[i].pid = PID; p[i].used = 100ULL << 20; p[i].gi = p[i].ci = 0xFFFFFFFF; }
    *count = now; return 0;
}
"""
# The sizing call answers, the filling call fails (999: NVML_ERROR_UNKNOWN, a GPU fallen off the bus).
FAILS_SECOND = r"""
int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned int *count, proc_t *p) {
    if ((long)h != 1) { *count = 0; return 0; }
    if (!p) { *count = 2; return 7; }
    return 999;
}
"""
LIVE = "int live_count(void) { return live; }\n"


def build(tmp_path, extra="", flags=()) -> str:
    d = tmp_path / "lib"
    d.mkdir()
    (d / "nvml.c").write_text(NVML_C + extra)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(d / "libnvidia-ml.so.1"), "-DINIT_RC=0", "-DPROCS_RC=0",
                    f"-DPID={os.getpid()}", *flags, str(d / "nvml.c")], check=True)
    return d


def test_processes_started_between_the_two_calls_still_fit(tmp_path):
    facts = gpu_facts(tmp_path, build(tmp_path, GROWING, ["-DNO_PROCS"]), with_pynvml=False)
    assert facts["source"] == "nvml"
    assert [(p["pid"], p["used_mib"]) for p in facts["gpus"][0]["processes"]] == [(os.getpid(), 100)] * 3


def test_a_list_call_that_fails_after_sizing_asks_nvidia_smi(tmp_path):
    facts = gpu_facts(tmp_path, build(tmp_path, FAILS_SECOND, ["-DNO_PROCS"]), with_pynvml=False)
    assert facts["source"] == "nvidia-smi" and set(facts["raw"]) == {"query_gpu", "compute_apps", "header"}


def test_a_library_without_nvmlinit_v2_asks_nvidia_smi(tmp_path):
    """An old driver's library: the symbol is missing (the stand-in's is renamed), the probe still answers."""
    facts = gpu_facts(tmp_path, build(tmp_path, flags=["-DnvmlInit_v2=nvmlInit_v1"]), with_pynvml=False)
    assert facts["source"] == "nvidia-smi"


@pytest.mark.parametrize("extra,flags,read", [("", [], True), (FAILS_SECOND, ["-DNO_PROCS"], False)],
                         ids=["a read", "a failed read"])
def test_every_init_is_shut_down(tmp_path, extra, flags, read):
    """The in-process probe (a local host) runs in the controller: each read leaves NVML as it found it."""
    lib = build(tmp_path, extra + LIVE, flags)
    code = ("import ctypes; from ocrdeploy.provision import probe\n"
            "reads = [probe._gpus_nvml_ctypes() is not None for _ in range(3)]\n"
            "print(reads, ctypes.CDLL('libnvidia-ml.so.1').live_count())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
                         env=dict(os.environ, LD_LIBRARY_PATH=str(lib))).stdout
    assert out.split() == [f"[{read},", f"{read},", f"{read}]", "0"]


def test_ocrdeploy_probe_no_nvml_leaves_the_gpus_to_nvidia_smi(tmp_path):
    env = dict(os.environ, LD_LIBRARY_PATH=str(build(tmp_path)), OCRDEPLOY_PROBE_NO_NVML="1",
               PATH=f"{FIX}/nvidia-smi/rtx5090-590:{os.environ['PATH']}", XDG_CACHE_HOME=str(tmp_path / "cache"))
    p = subprocess.run([sys.executable, probe.__file__, "-"], input=json.dumps({"workdir": str(tmp_path)}),
                       capture_output=True, text=True, env=env, timeout=60, check=True)
    assert json.loads(p.stdout.split(probe.MARKER, 1)[1])["gpu"]["source"] == "nvidia-smi"
