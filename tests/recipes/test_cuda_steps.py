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
from ocrdeploy.provision.step import StepError

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


# ------------------------------------------------------------------ shared builds: the inputs and the wheel's key
def _build_facts(**over):
    facts = {"workdir": {"path": "/w"}, "host": {"home": "/root"},
             "git": {"/src/vllm": {"commit": "abc123", "ref": "refs/heads/feat"}},
             "git_status": {"/src/vllm": {"dirty": False, "digest": None}},
             "venvs": {"vllm-ocr-env": {"python": "3.13.1", "dists": {"torch": {"version": "2.14.0"}}}},
             "compilers": {"gcc-13": {"version": "13.1.0"}, "g++-13": {"version": "13.1.0"}},
             "gpu": {"gpus": [{"name": "NVIDIA H200"}]}, "network": {"github": "reachable"}}
    facts.update(over)
    return facts


def _key(step, facts):
    from ocrdeploy.provision.fleet import inputs_key

    inputs = step.build_inputs(facts, {})
    return None if inputs is None else inputs_key(inputs)


def test_build_inputs_name_what_makes_two_builds_the_same():
    step = VllmCompile("vllm-compile", "vllm-ocr-env", "/src/vllm", pins=["torch==2.14.0", "nvidia-cuda-nvcc==13.0.48"])
    base = _key(step, _build_facts())
    assert base == _key(step, _build_facts(host={"home": "/home/other"}))        # who and where does not matter
    assert step.build_inputs(_build_facts(), {})["pins"] == {"torch": "2.14.0", "nvidia-cuda-nvcc": "13.0.48"}
    changed = [
        _build_facts(git={"/src/vllm": {"commit": "def456"}}),
        _build_facts(git_status={"/src/vllm": {"dirty": True, "digest": "0123"}}),
        _build_facts(compilers={"gcc-13": {"version": "13.2.0"}, "g++-13": {"version": "13.1.0"}}),
        _build_facts(gpu={"gpus": [{"name": "NVIDIA A100-SXM4-80GB"}]}),
        _build_facts(venvs={"vllm-ocr-env": {"python": "3.12.3", "dists": {"torch": {"version": "2.14.0"}}}}),
        _build_facts(venvs={"vllm-ocr-env": {"python": "3.13.1", "dists": {"torch": {"version": "2.14.0+cpu"}}}}),
        _build_facts(network={"github": "unreachable"}),
    ]
    assert all(_key(step, f) != base for f in changed)
    # the arch list, when given, replaces the GPU models (and goes to the build)
    arch = VllmCompile("vllm-compile", "vllm-ocr-env", "/src/vllm", arch_list="9.0")
    assert _key(arch, _build_facts()) == _key(arch, _build_facts(gpu={"gpus": [{"name": "NVIDIA A100"}]}))
    assert arch.env(_build_facts(), 8)["TORCH_CUDA_ARCH_LIST"] == "9.0"
    assert "TORCH_CUDA_ARCH_LIST" not in step.env(_build_facts(), 8)
    # a source that is not a git checkout: nothing says two such trees are the same
    assert step.build_inputs(_build_facts(git={"/src/vllm": None}), {}) is None


def test_a_vllm_from_a_shared_wheel_is_ok_only_for_the_inputs_it_was_built_from():
    step = VllmCompile("vllm-compile", "vllm-ocr-env", "/src/vllm")
    facts = _build_facts()
    key = _key(step, facts)

    def with_vllm(url):
        f = _build_facts()
        f["venvs"]["vllm-ocr-env"]["dists"]["vllm"] = {"version": "0.31.0", "editable": False, "complete": True,
                                                        "source": url}
        return f

    ok = step.needs(with_vllm(f"file:///w/.ocrdeploy/wheels/{key}/vllm-0.31.0-cp313-cp313-linux_x86_64.whl"), {})
    assert not ok.needed and key in ok.reason
    stale = step.needs(with_vllm("file:///w/.ocrdeploy/wheels/0000000000000000/vllm-0.31.0-cp313-cp313-linux_x86_64.whl"), {})
    assert stale.needed and "other build inputs" in stale.reason
    assert step.needs(with_vllm("file:///tmp/vllm-0.31.0-cp313-cp313-linux_x86_64.whl"), {}).needed


def test_the_shared_build_is_a_pip_wheel_with_the_guides_environment_and_installs_with_dependencies(tmp_path):
    src = tmp_path / "vllm"
    src.mkdir()
    facts = _build_facts(files={str(src): {"exists": True}}, cpu={"count": 8}, memory={"available": 64 * 2**30})
    step = VllmCompile("vllm-compile", "vllm-ocr-env", str(src), jobs=4)
    [build] = step.wheel_commands(facts, {}, "/w/.ocrdeploy/wheels/k")         # pip wheel makes the dir
    assert list(build.argv[1:]) == ["-m", "pip", "wheel", "--no-deps", "--wheel-dir", "/w/.ocrdeploy/wheels/k", ".",
                              "--no-build-isolation", "--progress-bar", "off"]
    assert build.env == step._command(facts, {}, 4).env and build.env["MAX_JOBS"] == "4" and build.cwd == str(src)
    [install] = step.wheel_install_commands(facts, {}, "/w/x.whl")
    assert list(install.argv[1:4]) == ["-m", "pip", "install"] and "--no-deps" not in install.argv
    facts["venvs"]["vllm-ocr-env"]["dists"]["vllm"] = {"version": "0.31.0", "editable": True}
    drop, install = step.wheel_install_commands(facts, {}, "/w/x.whl")
    assert list(drop.argv[1:]) == ["-m", "pip", "uninstall", "-y", "vllm"]
    # the OOM retry of the shared build halves the jobs of the same `pip wheel`
    [again] = step.retry(1, ["compile-oom-killed"], facts, {}, wheel_dir="/w/.ocrdeploy/wheels/k")
    assert list(again.argv) == list(build.argv) and again.env["MAX_JOBS"] == "2"
    assert step.retry(2, ["compile-oom-killed"], facts, {}, wheel_dir="/w/.ocrdeploy/wheels/k") is None


def test_the_built_wheel_installs_with_uv_where_the_installer_var_allows(tmp_path):
    """Installing a wheel already built is what uv does as pip does: one command, the equal version already
    there replaced (--reinstall-package), no uninstall round trip; the compile itself stays pip's."""
    from ocrdeploy.provision import installer

    src = tmp_path / "vllm"
    src.mkdir()
    facts = _build_facts(files={str(src): {"exists": True}, installer.UV: {"exists": True}}, cpu={"count": 8},
                         memory={"available": 64 * 2**30})
    facts["venvs"]["vllm-ocr-env"]["dists"]["vllm"] = {"version": "0.31.0", "editable": True}
    step = VllmCompile("vllm-compile", "vllm-ocr-env", str(src), jobs=4)
    assert installer.UV in step.request({}).paths         # the choice's facts are gathered with the step's
    [install] = step.wheel_install_commands(facts, {"installer": "uv"}, "/w/x.whl")
    assert list(install.argv[:3]) == ["/w/.ocrdeploy/tools-env/bin/uv", "pip", "install"]
    assert list(install.argv[-3:]) == ["--reinstall-package", "vllm", "/w/x.whl"]
    assert [c.argv[2:4] for c in step.wheel_install_commands(facts, {"installer": "pip"}, "/w/x.whl")] == \
        [("pip", "uninstall"), ("pip", "install")]
    assert " -m pip wheel " in " ".join(step.wheel_commands(facts, {"installer": "uv"}, "/w/k")[-1].argv)


def test_a_host_probed_by_the_posix_sh_fallback_is_told_why_its_build_is_neither_planned_nor_shared():
    """The fallback (no python3 on the host) gathers no git state: no build inputs, so no shared build, and
    the step says why instead of "vllm_src not found"."""
    from ocrdeploy.provision.facts import parse_sh_output

    facts = parse_sh_output("hostname=gpu9\nuid=0\nhome=/root\ncpus=8\nworkdir=/w\nworkdir_exists=1\n")
    step = VllmCompile("vllm-compile", "vllm-ocr-env", "/src/vllm")
    assert step.build_inputs(facts, {}) is None
    for make in (lambda: step.commands(facts, {}), lambda: step.wheel_commands(facts, {}, "/w/k")):
        try:
            make()
        except StepError as exc:
            assert "POSIX-sh fallback" in str(exc) and "shared" in str(exc) and "install python3" in str(exc)
        else:
            raise AssertionError("no StepError")


# Mutation sample 52: the compile's MAX_JOBS is held to the host's memory, and a vllm is "already built" only
# when it is the editable build of this very source.
def test_the_compile_jobs_are_held_to_the_hosts_memory(tmp_path):
    src = make_source(tmp_path)
    step = VllmCompile("vllm-compile", "vllm-ocr-env", str(src))
    facts = {"workdir": {"path": str(tmp_path)}, "host": {"home": "/root"}, "files": {str(src): {"exists": True}},
             "network": {"github": "reachable"}, "cpu": {"count": 96}, "memory": {"available": 16 * 2**30},
             "venvs": {}}
    (cmd,) = step.commands(facts, {})
    assert cmd.env["MAX_JOBS"] == "3"                     # 16 GiB at 4.5 GiB a job, not 64 for 96 cores
    facts["memory"]["available"] = 512 * 2**30
    assert step.commands(facts, {})[0].env["MAX_JOBS"] == "64"     # the seed's 96 cores with ample memory
    facts["cpu"]["count"] = None                                  # cores not read: one job
    assert step.commands(facts, {})[0].env["MAX_JOBS"] == "1"


def test_an_editable_vllm_of_another_source_is_not_this_build():
    step = VllmCompile("vllm-compile", "vllm-ocr-env", "/src/vllm")

    def needs(**vllm):
        f = _build_facts()
        f["venvs"]["vllm-ocr-env"]["dists"]["vllm"] = {"version": "0.31.0", "complete": True, **vllm}
        return step.needs(f, {})

    assert step.needs(_build_facts(), {}).reason == "vllm not built in this env yet"
    assert step.needs(_build_facts(), {}).needed
    assert not needs(editable=True, source="file:///src/vllm/").needed
    other = needs(editable=True, source="file:///home/u/vllm")
    assert other.needed and other.reason == "vllm 0.31.0 is not the editable build of /src/vllm"
    assert needs(editable=False, source=None).needed                 # a wheel from an index: rebuilt
    assert needs(editable=True, source="file:///src/vllm", complete=False).needed
