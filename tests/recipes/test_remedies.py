"""The remedies `inv diagnose --fix` prints and runs, against the guide's table of symptoms (seed 000,
section 8): the exact pip commands, in the env each one belongs to, and the serve options it names."""

import pytest

from ocrdeploy.recipes import remedies

CTX = {"vllm_env": "/w/vllm-ocr-env", "sdk_env": "/w/sdk-env", "transformers_src": "/w/src/transformers",
       "cu13": "/w/cu13"}


@pytest.mark.parametrize("remedy,argv", [
    ("reinstall-transformers", ["/w/vllm-ocr-env/bin/pip", "install", "--no-deps", "-e", "/w/src/transformers"]),
    ("uninstall-torchcodec", ["/w/vllm-ocr-env/bin/pip", "uninstall", "-y", "torchcodec"]),
    ("uninstall-flashinfer-cubin", ["/w/vllm-ocr-env/bin/pip", "uninstall", "-y", "flashinfer-cubin"]),
    ("install-pypdfium2", ["/w/sdk-env/bin/pip", "install", "pypdfium2>=4"]),
    ("install-cccl", ["/w/vllm-ocr-env/bin/pip", "install", "nvidia-cuda-cccl==13.3.4.3.1"]),
])
def test_the_guides_pip_remedies_exactly(remedy, argv):
    plan = remedies.plan_remedy(remedy, "finding", CTX)
    assert [list(c.argv) for c in plan.commands] == [argv] and plan.manual is None


def test_transformers_without_its_source_is_said_not_guessed():
    plan = remedies.plan_remedy("reinstall-transformers", "f", {**CTX, "transformers_src": None})
    assert plan.commands == [] and "set transformers_src" in plan.manual


@pytest.mark.parametrize("remedy,change,says", [
    ("lower-gpu-memory-utilization", {"gpu_memory_utilization": 0.7}, "--gpu-memory-utilization 0.7"),
    ("restart-enforce-eager", {"enforce_eager": True}, "--enforce-eager"),
    ("restart-no-flashinfer-sampler", {"flashinfer_sampler": False}, "VLLM_USE_FLASHINFER_SAMPLER=0"),
])
def test_serve_remedies_restart_the_service_with_the_guides_values(remedy, change, says):
    plan = remedies.plan_remedy(remedy, "f", CTX, service="ocr")
    assert plan.restart["service"] == "ocr" and plan.restart["change"] == change and says in plan.restart["says"]
    by_hand = remedies.plan_remedy(remedy, "f", CTX)
    assert by_hand.restart is None and says.split(" (")[0] in by_hand.manual


def test_a_deepseek_oom_is_fixed_through_its_config_not_the_serve_option():
    plan = remedies.plan_remedy("lower-gpu-memory-utilization", "f", {**CTX, "stack": "deepseek", "host": "gpu1",
                                                                      "deepseek_single_image": True})
    assert plan.remedy == "deepseek-oom-downgrade" and plan.restart is None
    assert plan.manual.startswith("inv deepseek-config --host gpu1 --downgrade --single-image-oom, then run again")
    local = remedies.plan_remedy("lower-gpu-memory-utilization", "f", {**CTX, "stack": "deepseek", "host": "localhost"})
    assert local.manual.startswith("inv deepseek-config --downgrade, then run again")


def test_a_fix_keeps_the_paragraphs_of_its_own_stack_and_everyones():
    fix = "Everyone: check the GPU.\n\nMiniCPM-OCR on vLLM: lower it.\n\nDeepSeek-OCR batch runs: edit config.py."
    assert remedies.fix_for_stack(fix, "minicpm") == "Everyone: check the GPU.\n\nMiniCPM-OCR on vLLM: lower it."
    assert remedies.fix_for_stack(fix, "deepseek") == ("Everyone: check the GPU.\n\n\n"
                                                       "DeepSeek-OCR batch runs: edit config.py.")
    assert remedies.stack_of_log("/w/.ocrdeploy/deepseek-runs/r1/log.txt") == "deepseek"
    assert remedies.stack_of_log("/w/logs/ocr.log") is None
