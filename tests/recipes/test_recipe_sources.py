"""Which sources each recipe downloads from, and the var that points each at a mirror."""

import pytest

from ocrdeploy.errors import UsageError
from ocrdeploy.recipes.sources import sources_for


def names(recipe, **v):
    return {s.name: (s.url, s.var) for s in sources_for(recipe, v)}


def test_sdk_only_defaults():
    got = names("sdk-only", sdk_repo="https://github.com/OpenBMB/MiniCPM-OCR.git")
    assert got == {"pip index": ("https://pypi.org/simple/", "pip_index_url"),
                   "paddle GPU index": ("https://www.paddlepaddle.org.cn/packages/stable/cu129/", "paddle_index_url"),
                   "SDK repo": ("https://github.com/OpenBMB/MiniCPM-OCR.git", "sdk_repo"),
                   "layout model": ("https://paddle-model-ecology.bj.bcebos.com/paddlex/official_inference_model/"
                                    "paddle3.0.0/PP-DocLayoutV3_infer.tar", "layout_url")}


def test_mirrors_replace_the_defaults_and_auto_adds_the_mirror_and_modelscope():
    got = names("dspark", pip_index_url="https://m.example/simple", paddle_index_url="https://m.example/paddle/",
                model_source="auto", hf_endpoint="https://hub.example", sdk_repo="/src/MiniCPM-OCR")
    assert got["pip index"] == ("https://m.example/simple", "pip_index_url")
    assert got["paddle GPU index"][0] == "https://m.example/paddle/"
    assert got["model hub"] == ("https://hub.example", "hf_endpoint")
    assert got["model hub mirror"] == ("https://hf-mirror.com", "hf_mirror")
    assert got["ModelScope"] == ("https://www.modelscope.cn", "modelscope_endpoint")
    assert got["GitHub (vLLM compile deps)"] == ("https://github.com", "deps_dir")
    assert "SDK repo" not in got                      # a local path is no network source


def test_deepseek_vllm085_sources():
    got = names("deepseek-ocr-vllm085", model_source="modelscope")
    assert got["torch index (cu118)"] == ("https://download.pytorch.org/whl/cu118", "torch_index_url")
    assert got["vLLM 0.8.5 wheel"][1] == "vllm_wheel" and got["DeepSeek-OCR repo"][1] == "deepseek_repo"
    assert got["Python builds (uv)"] == ("https://github.com/astral-sh/python-build-standalone/releases/download",
                                         "python_install_mirror")
    assert got["ModelScope"][1] == "modelscope_endpoint"
    assert "model hub" not in got and "paddle GPU index" not in got and "layout model" not in got


def test_a_bad_mirror_url_is_an_input_error():
    with pytest.raises(UsageError, match="inventory var pip_index_url: 'mirror' is not an http"):
        sources_for("sdk-only", {"pip_index_url": "mirror"})


@pytest.mark.parametrize("recipe,var,value", [
    ("sdk-only", "sdk_repo", "http://[::1"),
    ("dspark", "hf_endpoint", "hf-mirror.com"),
    ("dspark", "hf_mirror", "mirror.example"),
    ("sdk-only", "layout_url", "ftp://x/l.tar"),
    ("deepseek-ocr-vllm085", "python_install_mirror", "mirror.example/python"),
    ("deepseek-ocr-vllm085", "deepseek_repo", "https://[bad"),
])
def test_a_source_var_that_is_no_url_is_one_line_naming_the_var(recipe, var, value):
    v = {"sdk_repo": "https://github.com/OpenBMB/MiniCPM-OCR.git", "model_source": "auto", var: value}
    with pytest.raises(UsageError) as exc:
        sources_for(recipe, v)
    assert str(exc.value).startswith(f"inventory var {var}: {value!r} is not an http(s):// or file:// URL")


def test_a_clone_var_that_is_a_path_is_no_source():
    got = names("deepseek-ocr-vllm085", deepseek_repo="/src/DeepSeek-OCR", vllm_wheel="/w/vllm.whl")
    assert "DeepSeek-OCR repo" not in got and "vLLM 0.8.5 wheel" not in got
    assert "SDK repo" not in names("sdk-only", sdk_repo="/src/MiniCPM-OCR")
