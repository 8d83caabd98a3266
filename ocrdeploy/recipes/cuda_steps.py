"""The step kinds of the CUDA 13 build (MiniCPM-OCR guide section 3.2): the nvidia/cu13 layout
links, the crt files copied from a 13.4.92 env, and the vLLM compile with its job count.

They are recipe knowledge on top of the engine's step contract, so they live with the recipes.
"""

from __future__ import annotations

import math
import posixpath

from ..provision.command import Command
from ..provision import installer
from ..provision.installer import install_command
from ..provision.kinds import editable_source, venv_python
from ..provision.pip_index import pip_options
from ..provision.step import Decision, NotYet, Request, Step, StepError, absolute, dist, file_fact, venv, wd
from .cuda_layout import LINKS, link_commands, link_target


CU13_LINKS = tuple(rel for rel, _ in LINKS)
CRT_FILES = ("bin/crt/link.stub", "bin/crt/prelink.stub", "bin/nvdisasm")


def cu13_dir(venv_name: str, python_minor: str) -> str:
    return wd(f"{venv_name}/lib/python{python_minor}/site-packages/nvidia/cu13")


class CudaLayout(Step):
    """The links of the MiniCPM-OCR guide's section 3.2 under nvidia/cu13: made where missing, re-pointed
    where they point elsewhere (the guide's `ln -sf`); a real file is kept."""

    def __init__(self, name, venv_name, python_minor="3.13", after=()):
        self.name, self.venv_name, self.minor, self.after = name, venv_name, python_minor, after
        self.cu = cu13_dir(venv_name, python_minor)

    def request(self, v):
        return Request(paths={self.cu} | {f"{self.cu}/{p}" for p in CU13_LINKS})

    def problems(self, facts) -> dict:
        """{path under cu13: why} for each link to (re)make: missing, dangling, or pointing elsewhere (the guide
        always runs `ln -sf`, so a libcudart.so left pointing at .so.12 is re-pointed).  A real file or
        directory is kept (nvvm/bin/cicc ships in the nvvm wheel)."""
        cu = absolute(facts, self.cu)
        out = {}
        for rel, target in LINKS:
            f = file_fact(facts, f"{self.cu}/{rel}")
            want = link_target(target, cu, facts.get("libcuda"))
            if not f["exists"]:
                out[rel] = "missing"
            elif f.get("type") != "link":
                continue
            elif f.get("target") != want:
                out[rel] = f"points to {f.get('target')}, not {want}"
            elif not f.get("resolves", True) and rel != "lib64/stubs/libcuda.so":
                out[rel] = "dangling"
        return out

    def missing(self, facts):
        return list(self.problems(facts))

    def needs(self, facts, v):
        if not file_fact(facts, self.cu)["exists"]:
            return Decision(True, "nvidia/cu13 not installed yet (the CUDA pip packages come first)")
        problems = self.problems(facts)
        if problems:
            gone = [p for p, why in problems.items() if why == "missing"]
            other = [f"{p} {why}" for p, why in problems.items() if why != "missing"]
            return Decision(True, "; ".join((["missing: " + ", ".join(gone)] if gone else []) + other))
        return Decision(False, "cu13 layout complete")

    def commands(self, facts, v):
        missing = self.missing(facts) if file_fact(facts, self.cu)["exists"] else list(CU13_LINKS)
        return link_commands(absolute(facts, self.cu), missing, facts.get("libcuda"))


class CudaCrtFiles(Step):
    """bin/crt/link.stub, prelink.stub and bin/nvdisasm, copied from a 13.4.92 install on the same host."""

    SOURCE_VERSION = "13.4.92"

    def __init__(self, name, venv_name, python_minor="3.13", after=(), extra_prefix=None):
        self.name, self.venv_name, self.after = name, venv_name, after
        self.cu = cu13_dir(venv_name, python_minor)
        self.extra_prefix = extra_prefix

    def request(self, v):
        req = Request(paths={f"{self.cu}/{f}" for f in CRT_FILES},
                      globs={wd(f"*/lib/python3.*/site-packages/nvidia/cu13/{f}") for f in CRT_FILES})
        if self.extra_prefix:
            req.paths |= {f"{self.extra_prefix}/{f}" for f in CRT_FILES}
        return req

    def missing(self, facts):
        return [f for f in CRT_FILES if not file_fact(facts, f"{self.cu}/{f}")["exists"]]

    def needs(self, facts, v):
        missing = self.missing(facts)
        if missing:
            return Decision(True, "missing in cu13: " + ", ".join(missing))
        return Decision(False, "link.stub, prelink.stub and nvdisasm present")

    def sources(self, facts, fname):
        found = []
        if self.extra_prefix and file_fact(facts, f"{self.extra_prefix}/{fname}")["exists"]:
            found.append(absolute(facts, f"{self.extra_prefix}/{fname}"))
        wdir = facts["workdir"]["path"].rstrip("/") + "/"
        for path in (facts.get("globs") or {}).get(wd(f"*/lib/python3.*/site-packages/nvidia/cu13/{fname}"), []):
            env_name = path[len(wdir):].split("/", 1)[0] if path.startswith(wdir) else None
            if env_name == self.venv_name or env_name is None:
                continue
            nvcc = dist(facts, env_name, "nvidia-cuda-nvcc") or dist(facts, env_name, "nvidia-cuda-crt")
            if nvcc and nvcc["version"] == self.SOURCE_VERSION:
                found.append(path)
        return found

    def commands(self, facts, v):
        cu = absolute(facts, self.cu)
        cmds, none = [], []
        for fname in self.missing(facts):
            src = self.sources(facts, fname)
            if not src:
                none.append(fname)
                continue
            cmds.append(Command(["mkdir", "-p", posixpath.dirname(f"{cu}/{fname}")]))
            cmds.append(Command(["cp", "-p", src[0], f"{cu}/{fname}"]))
        if none:
            raise NotYet(f"{', '.join(none)} missing in {cu} and no {self.SOURCE_VERSION} install on this host "
                            f"to copy from (looked in the venvs under the work dir"
                            f"{' and ' + self.extra_prefix if self.extra_prefix else ''}; set cuda_13_4_dir "
                            f"to a CUDA {self.SOURCE_VERSION} prefix)")
        return cmds


# ------------------------------------------------------------------ build from source
GIB = 1024 ** 3
NVCC_JOB_GIB = 4.5


def max_jobs(cpus: int, mem_available_bytes: int | None, nvcc_threads: int = 1, job_gib: float = NVCC_JOB_GIB,
             cpu_share: float = 2 / 3) -> int:
    """Parallel compile jobs for a CUDA build (MAX_JOBS), the fewer of what memory and cores allow.

    Memory: one nvcc job on vLLM's kernels peaks at about 4.5 GiB (and vLLM runs NVCC_THREADS
    threads inside each job); flash-attn's at 8-9 GiB with its 4 threads (its own setup.py's
    estimate).  Cores: two thirds keep the machine responsive.  The seed's data points: 96 cores with
    ample memory -> 64; 147 GB -> 32 (the top of its 8-32 advice).
    """
    by_cpu = max(1, math.ceil(cpus * cpu_share)) if cpus else 1
    if not mem_available_bytes:
        return by_cpu
    by_mem = int(mem_available_bytes / GIB // (job_gib * max(1, nvcc_threads)))
    return max(1, min(by_cpu, by_mem))


OFFLINE_DIRS = {
    "VLLM_CUTLASS_SRC_DIR": "cutlass-src",
    "VLLM_FLASH_ATTN_SRC_DIR": "vllm-flash-attn-src",
    "FLASH_KDA_SRC_DIR": "flashkda-src",
    "DEEPSELECT_SRC_DIR": "deepselect-src",
    "FLASH_MLA_SRC_DIR": "flashmla-src",
    "TRITON_KERNELS_SRC_DIR": "triton_kernels-src/python/triton_kernels/triton_kernels",
    "TML_FA4_SRC_DIR": "tml_fa4-src",
    "FMHA_SM100_SRC_DIR": "fmha_sm100-src",
    "QUTLASS_SRC_DIR": "qutlass-src",
    "DEEPGEMM_SRC_DIR": "deepgemm-src",
}


# the compile's 20 minutes are nvcc's, not the installer's; the diagnose table reads pip's build output
PIP_ONLY = "the vLLM compile stays with pip (as the guide runs it)"


class VllmCompile(Step):
    """pip install -e <vllm_src> --no-build-isolation with the CUDA 13 prefix, gcc-13 and tuned MAX_JOBS."""

    progress = "ninja"

    def __init__(self, name, venv_name, src, python_minor="3.13", deps_dir=None, jobs=None, after=(), pins=(),
                 arch_list=None):
        self.name, self.venv_name, self.src, self.after = name, venv_name, src, after
        self.cu = cu13_dir(venv_name, python_minor)
        self.deps_dir, self.jobs = deps_dir, jobs
        self.minor, self.pins, self.arch_list = python_minor, tuple(pins), arch_list

    def request(self, v):
        req = Request(paths={self.src, f"{self.src}/setup.py"}, git={self.src}, git_status={self.src})
        req.merge(installer.request())          # the shared build's wheel install may go through uv
        if self.deps_dir:
            req.paths.add(self.deps_dir)
        return req

    def needs(self, facts, v):
        d = dist(facts, self.venv_name, "vllm")
        want = absolute(facts, self.src).rstrip("/")
        if d is None:
            return Decision(True, "vllm not built in this env yet")
        if not d.get("complete", True):
            return Decision(True, "vllm install incomplete (interrupted build?)")
        wheel = _shared_wheel_key(d)
        if wheel is not None:
            from ..provision.fleet import inputs_key

            inputs = self.build_inputs(facts, v)
            if inputs is not None and inputs_key(inputs) == wheel:
                return Decision(False, f"already built: vllm {d['version']} from the shared wheel of these inputs "
                                       f"({wheel})")
            return Decision(True, f"vllm {d['version']} is a shared wheel of other build inputs ({wheel}): the "
                                  f"source or the toolchain changed")
        if not d.get("editable") or (editable_source(d) or "").rstrip("/") != want:
            return Decision(True, f"vllm {d['version']} is not the editable build of {want}")
        return Decision(False, f"already built: vllm {d['version']} editable from {want}")

    def offline(self, facts) -> bool:
        return bool(self.deps_dir) or (facts.get("network") or {}).get("github") != "reachable"

    def env(self, facts, jobs: int) -> dict:
        cu = absolute(facts, self.cu)
        venv_bin = absolute(facts, wd(f"{self.venv_name}/bin"))
        path = f"{venv_bin}:{cu}/bin:" + (facts.get("env_path") or "/usr/local/bin:/usr/bin:/bin")
        env = {"CUDA_HOME": cu, "PATH": path, "CC": "gcc-13", "CXX": "g++-13", "CUDAHOSTCXX": "g++-13",
               "MAX_JOBS": str(jobs)}
        if (facts.get("tools") or {}).get("ccache"):
            for lang in ("C", "CXX", "CUDA"):
                env[f"CMAKE_{lang}_COMPILER_LAUNCHER"] = "ccache"
        if self.offline(facts):
            deps = absolute(facts, self.deps_dir)
            for var, sub in OFFLINE_DIRS.items():
                env[var] = f"{deps}/{sub}"
            env["CMAKE_ARGS"] = "-DCUTLASS_ENABLE_TESTS=OFF"
        if self.arch_list:
            env["TORCH_CUDA_ARCH_LIST"] = str(self.arch_list)
        return env

    def jobs_for(self, facts) -> int:
        if self.jobs:
            text = str(self.jobs).strip()
            if not (text.isascii() and text.isdigit() and int(text) >= 1):
                raise StepError(f"max_jobs must be a whole number of compile jobs (1 or more), got {self.jobs!r}")
            return int(text)
        return max_jobs(facts["cpu"].get("count") or 1, (facts.get("memory") or {}).get("available"))

    def _command(self, facts, v, jobs, wheel_dir=None):
        if (facts.get("probe") or {}).get("kind") == "sh":
            # the POSIX-sh probe reads no files, venvs or git state: "vllm_src not found" would mislead
            raise StepError("the host has no python3, so the facts probe ran its POSIX-sh fallback, which reads "
                            "no files, venvs or git state: the vLLM build can be neither planned, checked nor shared "
                            "with identical hosts; install python3 on the host (or name ansible_python_interpreter)")
        if not file_fact(facts, self.src)["exists"]:
            raise StepError(f"vllm_src {self.src} not found on the host")
        if self.offline(facts) and not self.deps_dir:
            raise StepError("github.com is not reachable from the host and no deps dir is given: pass "
                            "--deps-dir (an existing vLLM source's .deps) for the offline *_SRC_DIR variables")
        if self.deps_dir and not file_fact(facts, self.deps_dir)["exists"]:
            raise StepError(f"deps dir {self.deps_dir} not found on the host")
        if wheel_dir is None:
            return install_command(facts, v, venv_python(facts, self.venv_name), ["-e", ".", "--no-build-isolation"],
                                   env=self.env(facts, jobs), cwd=absolute(facts, self.src), pip_only=PIP_ONLY,
                                   pip_flags=["--progress-bar", "off"])
        # a shared build (provision/fleet.py): the same compile as a wheel; `pip wheel` has no uv equivalent
        # that keeps pip's build environment, and the compile is pip-only anyway (PIP_ONLY)
        opts = pip_options(v)
        return Command([venv_python(facts, self.venv_name), "-m", "pip", "wheel", *opts.args, "--no-deps",
                        "--wheel-dir", wheel_dir, ".", "--no-build-isolation", "--progress-bar", "off"],
                       env={**self.env(facts, jobs), **opts.env}, cwd=absolute(facts, self.src))

    def commands(self, facts, v):
        return [self._command(facts, v, self.jobs_for(facts))]

    # -------------------------------------------------------------- shared builds (provision/fleet.py)
    def build_inputs(self, facts, v) -> dict | None:
        """What makes two hosts' builds the same: the source commit and its uncommitted changes, the env's
        Python minor, the torch and CUDA pins (as installed, else as pinned), gcc-13/g++-13, and the target
        architectures (TORCH_CUDA_ARCH_LIST, else the GPU models, which fix their compute capabilities).
        None when the source is not a git checkout: nothing says two such trees are the same."""
        head = (facts.get("git") or {}).get(self.src) or {}
        if not head.get("commit"):
            return None
        ve = venv(facts, self.venv_name)
        python = ".".join(str((ve or {}).get("python") or self.minor).split(".")[:2])
        pins = {}
        for pin in self.pins:
            name, _, version = pin.partition("==")
            d = dist(facts, self.venv_name, name)
            pins[name] = d["version"] if d else version
        compilers = facts.get("compilers") or {}
        gpus = sorted({g.get("name") or "" for g in (facts.get("gpu") or {}).get("gpus") or []})
        return {"vllm_src": head["commit"], "dirty": (facts.get("git_status") or {}).get(self.src),
                "python": python, "pins": pins,
                "compilers": {c: (compilers.get(c) or {}).get("version") for c in ("gcc-13", "g++-13")},
                "arch": {"TORCH_CUDA_ARCH_LIST": str(self.arch_list)} if self.arch_list else {"gpus": gpus},
                "offline": self.offline(facts)}

    def wheel_commands(self, facts, v, wheel_dir):
        """pip wheel makes the --wheel-dir; the applier empties it first, in the same command."""
        return [self._command(facts, v, self.jobs_for(facts), wheel_dir)]

    def wheel_install_commands(self, facts, v, wheel):
        """The wheel with its dependencies, as the editable install pulls them (feat-ocr transformers comes
        after, as on the builder).  Installing a built wheel is what uv does as pip does (the compile is done),
        so the installer var decides, with `--reinstall-package vllm` for an equal version already there;
        pip keeps an equal version, so a vllm already there is removed first."""
        python = venv_python(facts, self.venv_name)
        if installer.choose(facts, v).name == "uv":
            return [install_command(facts, v, python, ["--reinstall-package", "vllm", wheel])]
        drop = [Command([python, "-m", "pip", "uninstall", "-y", "vllm"])] if dist(facts, self.venv_name, "vllm") else []
        return drop + [install_command(facts, v, python, [wheel], pip_flags=["--progress-bar", "off"])]

    def retry(self, attempt, findings, facts, v, wheel_dir=None):
        """One more try with half the jobs when compilers were killed for memory (the shared build's `pip
        wheel` into wheel_dir as the editable install)."""
        if attempt == 1 and "compile-oom-killed" in findings:
            jobs = max(1, self.jobs_for(facts) // 2)
            return [self._command(facts, v, jobs, wheel_dir)]
        return None


def _shared_wheel_key(d: dict) -> str | None:
    """The build-inputs key of a vllm installed from a shared build's wheel (…/.ocrdeploy/wheels/KEY/x.whl)."""
    src = editable_source(d) or ""
    parts = src.rsplit("/", 3)
    if len(parts) == 4 and src.endswith(".whl") and parts[0].endswith("/.ocrdeploy") and parts[1] == "wheels":
        return parts[2]
    return None
