"""The vLLM compile step against a small source tree whose build records its environment and can be
made to fail the way an OOM-killed compile does (compilers killed, as the kernel's OOM killer leaves it)."""

import json
import sys
from pathlib import Path

from ocrdeploy.diagnose.engine import log_findings
from ocrdeploy.inventory.model import Host
from ocrdeploy.provision.apply import Applier
from ocrdeploy.provision.connection import LocalConnection
from ocrdeploy.provision.kinds import PipInstall, Venv
from ocrdeploy.recipes.cuda_steps import VllmCompile, max_jobs
from ocrdeploy.provision.plan import Plan

PY = f"{sys.version_info.major}.{sys.version_info.minor}"

SETUP = '''
import json, os, sys, time
from setuptools import setup
from setuptools.command.build_py import build_py

class Build(build_py):
    def run(self):
        here = os.path.dirname(os.path.abspath(__file__))
        keys = ["MAX_JOBS", "CC", "CXX", "CUDAHOSTCXX", "CUDA_HOME", "PATH", "CMAKE_ARGS",
                "VLLM_CUTLASS_SRC_DIR", "TRITON_KERNELS_SRC_DIR", "DEEPGEMM_SRC_DIR"]
        with open(os.path.join(here, "builds.jsonl"), "a") as fh:
            fh.write(json.dumps({k: os.environ.get(k) for k in keys}) + "\\n")
        jobs = int(os.environ.get("MAX_JOBS", "1"))
        for i in range(1, 5):
            print("[%d/4] Building CUDA object CMakeFiles/_C.dir/csrc/kernel_%d.cu.o" % (i, i), flush=True)
            time.sleep(0.6)
        if jobs > int(os.environ.get("FAKE_OOM_ABOVE", "4")):
            print("c++: fatal error: Killed signal terminated program cc1plus", flush=True)
            print("nvcc error   : 'cicc' died due to signal 9 (Kill signal)", flush=True)
            sys.exit(1)
        super().run()

setup(name="vllm", version="0.31.0.dev0+feat.ocr", packages=["vllm"], cmdclass={"build_py": Build})
'''


def make_source(root: Path) -> Path:
    src = root / "vllm-src"
    (src / "vllm").mkdir(parents=True)
    (src / "vllm" / "__init__.py").write_text("class LLM: pass\n")
    (src / "setup.py").write_text(SETUP)
    return src


class Recorder:
    def __init__(self):
        self.progress_calls, self.retries = [], []

    def __getattr__(self, name):
        return lambda *a, **k: None

    def progress(self, host, step, done, total):
        self.progress_calls.append((done, total))

    def retrying(self, host, step, findings, commands):
        self.retries.append(([f["id"] for f in findings], commands))


def test_compile_env_offline_vars_and_retry_with_half_the_jobs(tmp_path):
    src = make_source(tmp_path)
    deps = tmp_path / "deps"
    deps.mkdir()
    plan = Plan("compile", [
        Venv("venv", "vllm-ocr-env", f">={PY}"),
        PipInstall("build-tools", "vllm-ocr-env", ["setuptools>=64", "wheel"], after=("venv",)),
        VllmCompile("vllm-compile", "vllm-ocr-env", str(src), python_minor=PY, deps_dir=str(deps), jobs=8,
                    after=("build-tools",)),
    ])
    host = Host("localhost", vars={"workdir": str(tmp_path / "wd")})
    rec = Recorder()
    run = Applier(LocalConnection(host), host, plan.steps, host.vars, reporter=rec, diagnose=log_findings).apply()
    results = {r.step: r for r in run.results}
    assert results["vllm-compile"].status == "changed", results["vllm-compile"]

    builds = [json.loads(line) for line in (src / "builds.jsonl").read_text().splitlines()]
    assert [b["MAX_JOBS"] for b in builds] == ["8", "4"]          # OOM-killed at 8, retried once with 4
    b = builds[-1]
    cu13 = f"{tmp_path}/wd/vllm-ocr-env/lib/python{PY}/site-packages/nvidia/cu13"
    assert (b["CC"], b["CXX"], b["CUDAHOSTCXX"]) == ("gcc-13", "g++-13", "g++-13")
    assert b["CUDA_HOME"] == cu13
    assert f"{tmp_path}/wd/vllm-ocr-env/bin:{cu13}/bin:" in b["PATH"]  # (setuptools may prepend its own)
    assert b["CMAKE_ARGS"] == "-DCUTLASS_ENABLE_TESTS=OFF"
    assert b["VLLM_CUTLASS_SRC_DIR"] == f"{deps}/cutlass-src"
    assert b["TRITON_KERNELS_SRC_DIR"] == f"{deps}/triton_kernels-src/python/triton_kernels/triton_kernels"
    assert rec.retries and rec.retries[0][0] == ["compile-oom-killed"] and "MAX_JOBS=4" in rec.retries[0][1][0]
    assert rec.progress_calls and all(total == 4 for _, total in rec.progress_calls)  # ninja [N/M] lines read

    # the second run: already built, editable from the source; nothing runs
    run = Applier(LocalConnection(host), host, plan.steps, host.vars).apply()
    assert {r.status for r in run.results} == {"ok"} and run.commands_run == 0
    assert "editable from" in run.results[-1].reason


def test_compile_fails_before_running_without_github_or_deps(tmp_path):
    src = make_source(tmp_path)
    step = VllmCompile("vllm-compile", "vllm-ocr-env", str(src))
    facts = {"workdir": {"path": str(tmp_path)}, "host": {"home": "/root"}, "files": {str(src): {"exists": True}},
             "network": {"github": "unreachable"}, "cpu": {"count": 8}, "memory": {"available": 64 * 2**30},
             "venvs": {}}
    try:
        step.commands(facts, {})
    except Exception as exc:  # noqa: BLE001
        assert "--deps-dir" in str(exc)
    else:
        raise AssertionError("expected a StepError")
    facts["network"]["github"] = "reachable"
    (cmd,) = step.commands(facts, {})
    assert "CMAKE_ARGS" not in cmd.env and cmd.env["MAX_JOBS"] == str(max_jobs(8, 64 * 2**30))
    assert cmd.cwd == str(src) and list(cmd.argv[-5:]) == ["-e", ".", "--no-build-isolation", "--progress-bar", "off"]


def test_max_jobs_matches_the_seed_data_points():
    assert max_jobs(96, 512 * 2**30) == 64          # seed: MAX_JOBS=64 on 96 cores
    assert 8 <= max_jobs(192, 147 * 2**30) <= 32     # seed: 8-32 with 147 GB
    assert max_jobs(96, 147 * 2**30, nvcc_threads=4) == 8
    assert max_jobs(2, 1 * 2**30) == 1 and max_jobs(16, None) == 11
