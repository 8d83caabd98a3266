"""(stop 57, the lead) bf16-unsupported-gpu p4: torch's memory-efficient attention (scaled_dot_product_attention's
CUTLASS kernels, torch 2.0-2.2 and xformers) has bfloat16 kernels only for compute capability 8.0 and newer, and says
"cutlassF: no kernel found to launch!" when a bfloat16 model's attention runs on a V100, T4 or RTX 20xx (batch 204
labelled three runs so; Qwen3#189's V100 and CatVTON#33's T4 say the card). The check in torch's source and a code
comment that works around the error are no run."""

import corpus

CASES = [
    ("bf16-unsupported-gpu", 4, "QwenLM/Qwen3/issues/189"),
    ("bf16-unsupported-gpu", 4, "Zheng-Chong/CatVTON/issues/33"),
    ("bf16-unsupported-gpu", 4, "CY-CHENYUE/ComfyUI-Janus-Pro/issues/13"),
]
WORDINGS = [
    ("bf16-unsupported-gpu", 4, "RuntimeError: cutlassF: no kernel found to launch!"),
    ("bf16-unsupported-gpu", 4, "[rank0]: RuntimeError: cutlassF: no kernel found to launch!"),
    ("bf16-unsupported-gpu", 4, "!!! Exception during processing !!! cutlassF: no kernel found to launch!"),
]
QUIET = [
    # the check itself and comments that work around it
    ("bf16-unsupported-gpu", '  TORCH_CHECK(kernel_launched, "cutlassF: no kernel found to launch!");'),
    ("bf16-unsupported-gpu", '  PPL_CHECK(kernel_launched, "cutlassF: no kernel found to launch!");'),
    ("bf16-unsupported-gpu", '    # To prevent "cutlassF: no kernel found to launch!" erorr'),
    ("bf16-unsupported-gpu", "# Added to solve: cutlassF: no kernel found to launch!"),
    ("bf16-unsupported-gpu", '# On older cards these crash with "cutlassF: no kernel found to launch!".'),
    # xformers' kernel refusing a GPU newer than it was built for is cuda-arch-mismatch's
    ("bf16-unsupported-gpu", "FATAL: kernel `fmha_cutlassF_f32_aligned_64x64_rf_sm80` is for sm80-sm100, but was built "
     "for sm121"),
]
NEAR = [
    ("bf16-unsupported-gpu", "pytorch/pytorch/blob/main/aten/src/ATen/native/transformers/cuda/attention.cu"),
]


(test_each_new_case_is_named_through_its_new_pattern, test_each_wording_is_named_through_its_pattern,
 test_lines_left_to_others_stay_out_of_the_entry, test_the_near_misses_stay_quiet) = corpus.family_tests(CASES, WORDINGS,
                                                                                                   QUIET, NEAR)
