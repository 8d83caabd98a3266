"""The models the stacks need, where they come from and what a complete copy holds (seed 000 3.4,
seed 003 1.1)."""

from __future__ import annotations

from dataclasses import dataclass, field

LAYOUT_URL = ("https://paddle-model-ecology.bj.bcebos.com/paddlex/official_inference_model/paddle3.0.0/"
              "PP-DocLayoutV3_infer.tar")
MAIN_FILES = ("config.json", "model.safetensors", "tokenizer.json", "preprocessor_config.json", "chat_template.jinja")
LAYOUT_FILES = ("inference.pdiparams", "inference.json", "inference.yml")
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pdiparams", ".pt", ".pth", ".gguf")


@dataclass(frozen=True)
class ModelSpec:
    name: str                  # the directory under <workdir>/models and the state key
    kind: str                  # main | draft | layout | deepseek
    hf_repo: str | None = None
    ms_var: str | None = None  # inventory var holding the ModelScope id
    required: tuple = ()
    weight: str | None = None  # the file release_manifest.json's weight_sha256 is about
    url: str | None = None
    stacks: tuple = field(default_factory=tuple)
    ms_repo: str | None = None  # the ModelScope id when the var is unset, where a source names it


MODELS = {m.name: m for m in (
    ModelSpec("MiniCPM-OCR-1.0", "main", "openbmb/MiniCPM-OCR-1.0", "ms_main", MAIN_FILES, "model.safetensors",
              stacks=("minicpm",)),
    ModelSpec("MiniCPM-OCR-1.0-DSpark", "draft", "openbmb/MiniCPM-OCR-1.0-DSpark", "ms_draft", ("config.json",),
              "model.safetensors", stacks=("minicpm",)),
    # the repos PaddleX 3.4.2 itself downloads PP-DocLayoutV3 from (paddlex/inference/utils/official_models.py)
    ModelSpec("PP-DocLayoutV3_infer", "layout", "PaddlePaddle/PP-DocLayoutV3", "ms_layout", LAYOUT_FILES,
              ms_repo="PaddlePaddle/PP-DocLayoutV3", url=LAYOUT_URL, stacks=("minicpm",)),
    # seed 003 1.1 clones https://www.modelscope.cn/deepseek-ai/DeepSeek-OCR.git
    ModelSpec("DeepSeek-OCR", "deepseek", "deepseek-ai/DeepSeek-OCR", "ms_deepseek", ("config.json",),
              ms_repo="deepseek-ai/DeepSeek-OCR", stacks=("deepseek",)),
)}

DEFAULT_SET = ("MiniCPM-OCR-1.0", "MiniCPM-OCR-1.0-DSpark", "PP-DocLayoutV3_infer")
