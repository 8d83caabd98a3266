"""The network sources a recipe downloads from, and the var that points each one at a mirror.

`inv preflight` sends one HEAD-sized request to each from the host (provision/probe.py) so a
user sees which answer before a long install stalls; a slow or closed one is a warning that
names the var to set.  The list follows what the plans really fetch: the pip index (and a
step's own index: paddle's GPU builds, DeepSeek-OCR's cu118 torch), the git clones, the hub
or mirror or ModelScope the models come from, the layout tarball, GitHub for the vLLM compile.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..models.catalog import LAYOUT_URL
from ..models.plan import HF_DEFAULT, HF_MIRROR, MS_DEFAULT, model_source
from ..provision.pip_index import PYPI, check_url, index_urls, own_index
from .deepseek import CU118_INDEX, REPO as DEEPSEEK_REPO, VLLM_WHEEL
from .minicpm import MODELS_FOR, PADDLE_GPU_INDEX
from .registry import get_recipe

TSINGHUA = "https://pypi.tuna.tsinghua.edu.cn/simple"      # the DeepSeek-OCR notes' mirror (seed 003 1.2)
PYTHON_BUILDS = "https://github.com/astral-sh/python-build-standalone/releases/download"   # where uv gets Python


@dataclass(frozen=True)
class Source:
    name: str
    url: str
    var: str                 # the inventory var to set when it is slow or closed
    advice: str              # what to set it to
    when: str | None = None  # used only on some hosts: "gpu" (paddlepaddle-gpu), "no-python3.12" (uv's build)

    def to_dict(self) -> dict:
        return asdict(self)


def _http(url) -> bool:
    return isinstance(url, str) and url.startswith(("http://", "https://"))


def _var(v: dict, var: str, default: str) -> str:
    """The var's URL, checked as the install and models plans check it (one line naming the var), else
    the default: a mistyped endpoint is an input error here too, not a source the host cannot reach."""
    return check_url(var, v[var]) if v.get(var) else default


def _clone(v: dict, var: str, default=None):
    """A var that is a URL or a local path: its URL checked when it is one, None when it is a path."""
    value = v.get(var) or default
    return check_url(var, value) if _http(value) else None


def sources_for(recipe: str, v: dict) -> list[Source]:
    index, extras, _ = index_urls(v)
    out = [Source("pip index", index or PYPI, "pip_index_url", f"a nearby mirror, e.g. {TSINGHUA}")]
    out += [Source(f"pip extra index {i + 1}", u, "pip_extra_index_url", "a reachable index, or drop it")
            for i, u in enumerate(extras)]
    deepseek = recipe.startswith("deepseek-ocr")
    if recipe == "deepseek-ocr-vllm085":
        out.append(Source("torch index (cu118)", own_index(v, "torch_index_url", CU118_INDEX), "torch_index_url",
                          "a mirror of download.pytorch.org/whl/cu118"))
        wheel = _clone(v, "vllm_wheel", VLLM_WHEEL)
        if wheel:
            out.append(Source("vLLM 0.8.5 wheel", wheel, "vllm_wheel", "a local copy of the wheel (a path)"))
        out.append(Source("Python builds (uv)", _var(v, "python_install_mirror", PYTHON_BUILDS),
                          "python_install_mirror", "a mirror of python-build-standalone's releases/download",
                          when="no-python3.12"))
        repo = _clone(v, "deepseek_repo", DEEPSEEK_REPO)
        if repo:
            out.append(Source("DeepSeek-OCR repo", repo, "deepseek_repo", "a reachable clone URL or a local path"))
    if not deepseek:
        out.append(Source("paddle GPU index", own_index(v, "paddle_index_url", PADDLE_GPU_INDEX), "paddle_index_url",
                          "a mirror of paddle's cu129 index", when="gpu"))
        sdk = _clone(v, "sdk_repo")
        if sdk:
            out.append(Source("SDK repo", sdk, "sdk_repo", "a reachable clone URL or a local path"))
    names = ("DeepSeek-OCR",) if deepseek else MODELS_FOR.get(recipe, ())
    source = model_source(v)
    if names and source in ("hf", "auto") and any(n != "PP-DocLayoutV3_infer" for n in names):
        out.append(Source("model hub", _var(v, "hf_endpoint", HF_DEFAULT), "hf_endpoint",
                          f"a mirror ({HF_MIRROR}), or model_source: modelscope / auto"))
    if source == "auto":
        out.append(Source("model hub mirror", _var(v, "hf_mirror", HF_MIRROR), "hf_mirror", "a reachable mirror"))
    if source in ("modelscope", "auto") and names:
        out.append(Source("ModelScope", _var(v, "modelscope_endpoint", MS_DEFAULT), "modelscope_endpoint",
                          "a reachable ModelScope endpoint, or model_source: hf with hf_endpoint"))
    if "PP-DocLayoutV3_infer" in names and source in ("hf", "auto"):
        out.append(Source("layout model", _var(v, "layout_url", LAYOUT_URL), "layout_url",
                          "a reachable copy of PP-DocLayoutV3_infer.tar, or model_source: modelscope"))
    if get_recipe(recipe).requirements.needs_github:
        out.append(Source("GitHub (vLLM compile deps)", "https://github.com", "deps_dir",
                          "an existing vLLM source's .deps for the offline *_SRC_DIR build"))
    return out
