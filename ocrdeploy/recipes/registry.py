"""The recipes by name and the host requirements each one brings.

Thresholds are data of the recipe (the MiniCPM-OCR guide section 2; the DeepSeek-OCR guide section 1.1),
not constants inside the checks, so a recipe with other needs (DeepSeek-OCR on
CUDA 11.8, an SDK-only client) states them here and the same checks apply.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..checks.requirements import DEEPSEEK_PYTHON, TOOLS_PYTHON, PythonRule, Requirements
from ..errors import UsageError


@dataclass(frozen=True)
class Recipe:
    name: str
    description: str
    requirements: Requirements


# The MiniCPM-OCR guide, sections 2 and 3: vLLM needs Python >= 3.11 and the guide builds it with
# `python3.13 -m venv` (its verified 3.13.9; the CUDA prefix lives under lib/python3.13): exactly 3.13,
# a managed one from uv where the host has none.  The SDK and transformers envs are `python3 -m venv`:
# the host's python3 when it is >= 3.10.
VLLM_PYTHON = PythonRule("==3.13.*", managed="3.13")
SDK_PYTHON = PythonRule(">=3.10", system_first=True)
TF_PYTHON = SDK_PYTHON

# The MiniCPM-OCR guide, section 9 ("verified"): feat-ocr vLLM at 5c2b92a5dc, feat-ocr transformers at
# 69eafbc5bd, minicpmvocr 0.2.3.  The pins, flags and checks of these recipes follow that set; preflight and
# `inv install --check` say when a checkout or the SDK differs.
VLLM_COMMIT = ("vllm_src", "feat-ocr vLLM", "5c2b92a5dc")
TRANSFORMERS_COMMIT = ("transformers_src", "feat-ocr transformers", "69eafbc5bd")
SDK_VERSION = ("sdk-env", "minicpmvocr", "0.2.3")

# DeepSeek-OCR's seed 003 2.4 by the size a card is sold as (checks.preflight.sold_gb): < 8 GB Tiny or Small,
# 8-16 GB Base, > 16 GB Large or Gundam, Gundam tight at 24 GB and advised from 32 GB (seed 1.1).  Preflight
# names the same row (Requirements.vram_modes); recipes.deepseek picks the mode from it.  Here, not in
# recipes.deepseek, so that the CLI's start (the --recipe help lists these names) imports no recipe's steps.
MODE_BY_SIZE = ((5, "tiny"), (7, "small"), (16, "base"), (31, "large"), (None, "gundam"))

_MINICPM_VLLM = Requirements(
    pythons={"vllm-ocr-env": VLLM_PYTHON, "sdk-env": SDK_PYTHON},
    needs_gcc13=True, needs_github=True, verified_commits=(VLLM_COMMIT, TRANSFORMERS_COMMIT),
    verified_dists=(SDK_VERSION,))

_RECIPES = {
    r.name: r for r in (
        Recipe("dspark", "MiniCPM-OCR 1.0: sdk-env + vllm-ocr-env, DSpark speculative decoding (default)",
               _MINICPM_VLLM),
        Recipe("standard", "MiniCPM-OCR 1.0: sdk-env + vllm-ocr-env, no speculative decoding", _MINICPM_VLLM),
        Recipe("transformers", "MiniCPM-OCR 1.0: sdk-env + tf-ocr-env (transformers serve, no vLLM compile)",
               Requirements(pythons={"tf-ocr-env": TF_PYTHON, "sdk-env": SDK_PYTHON},
                            verified_commits=(TRANSFORMERS_COMMIT,), verified_dists=(SDK_VERSION,))),
        Recipe("merged", "MiniCPM-OCR 1.0: one ocr-env with vLLM and feat-ocr transformers (two-end verification)",
               Requirements(pythons={"ocr-env": VLLM_PYTHON, "sdk-env": SDK_PYTHON}, needs_gcc13=True,
                            needs_github=True, verified_commits=(VLLM_COMMIT, TRANSFORMERS_COMMIT),
                            verified_dists=(SDK_VERSION,))),
        Recipe("sdk-only", "MiniCPM-OCR 1.0: sdk-env only, against an existing llama.cpp/OpenAI-compatible server",
               Requirements(needs_gpu=False, min_disk_gib=5.0, pythons={"sdk-env": SDK_PYTHON},
                            verified_dists=(SDK_VERSION,))),
        # python: the notes' 3.12.9, which a host without it gets as a managed one (uv): >= 3.10 runs the tools
        Recipe("deepseek-ocr-vllm085", "DeepSeek-OCR: Python 3.12.9, torch 2.6.0 cu118, vLLM 0.8.5, flash-attn 2.7.3",
               Requirements(min_vram_gib=0, advised_vram_gib=32.0, min_driver=520, driver_fallback_floor=None,
                            min_disk_gib=20.0, pythons={"tools-env": TOOLS_PYTHON, "deepseek-ocr-env": DEEPSEEK_PYTHON},
                            vram_modes=MODE_BY_SIZE)),
        Recipe("deepseek-ocr", "DeepSeek-OCR on upstream vLLM (>= 0.11.1, prebuilt from the package index)",
               Requirements(min_vram_gib=0, advised_vram_gib=32.0, min_driver=580, driver_fallback_floor=None,
                            min_disk_gib=30.0, pythons={"deepseek-vllm-env": TOOLS_PYTHON}, vram_modes=MODE_BY_SIZE)),
    )
}

DEFAULT_RECIPE = "dspark"


def recipe_names() -> list[str]:
    return list(_RECIPES)


def get_recipe(name: str | None) -> Recipe:
    name = name or DEFAULT_RECIPE
    try:
        return _RECIPES[name]
    except KeyError:
        raise UsageError(f"unknown recipe {name!r}; choose one of: {', '.join(_RECIPES)}")
