"""(stop 57, the lead) Two families, each by its key tokens.

bf16-unsupported-gpu p4: torch's memory-efficient attention (scaled_dot_product_attention's
CUTLASS kernels, torch 2.0-2.2 and xformers) has bfloat16 kernels only for compute capability 8.0 and newer, and says
"cutlassF: no kernel found to launch!" when a bfloat16 model's attention runs on a V100, T4 or RTX 20xx (batch 204
labelled three runs so; Qwen3#189's V100 and CatVTON#33's T4 say the card). The check in torch's source and a code
comment that works around the error are no run.

torch-cpu-only p6: the CPU onnxruntime package asked for CUDA, as the tools that wrap onnxruntime say it: RapidOCR
1.x-2.x's OrtInferSession ("CUDAExecutionProvider is not in available providers (['AzureExecutionProvider',
'CPUExecutionProvider'])", batch 205's docling-serve run), onnxruntime's warning retyped without its head (a title), and
the roop / Deep-Live-Cam family's --execution-provider choices (onnxruntime's available providers: 'azure', 'cpu'). A
provider list that holds CUDA (a GPU build missing DirectML or TensorRT) is not this."""

import corpus

CASES = [
    ("bf16-unsupported-gpu", 4, "QwenLM/Qwen3/issues/189"),
    ("bf16-unsupported-gpu", 4, "Zheng-Chong/CatVTON/issues/33"),
    ("bf16-unsupported-gpu", 4, "CY-CHENYUE/ComfyUI-Janus-Pro/issues/13"),
    ("torch-cpu-only", 6, "ASLP-lab/DiffRhythm/issues/84"),
    ("torch-cpu-only", 6, "hacksider/Deep-Live-Cam/issues/975"),
]
WORDINGS = [
    ("bf16-unsupported-gpu", 4, "RuntimeError: cutlassF: no kernel found to launch!"),
    ("bf16-unsupported-gpu", 4, "[rank0]: RuntimeError: cutlassF: no kernel found to launch!"),
    ("bf16-unsupported-gpu", 4, "!!! Exception during processing !!! cutlassF: no kernel found to launch!"),
    ("torch-cpu-only", 6, "2025-04-18 10:30:24,815 - OrtInferSession - WARNING: CUDAExecutionProvider is not in available "
     "providers (['AzureExecutionProvider', 'CPUExecutionProvider']). Use AzureExecutionProvider inference by default."),
    ("torch-cpu-only", 6, "WARNING:OrtInferSession:CUDAExecutionProvider is not in available providers "
     "(['CPUExecutionProvider']). Use CPUExecutionProvider inference by default."),
    ("torch-cpu-only", 6, "facefusion.py: error: argument --execution-provider: invalid choice: 'cuda' (choose from 'cpu')"),
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
    # a GPU build missing another provider, and a choice that CUDA is among
    ("torch-cpu-only", "WARNING:OrtInferSession:DmlExecutionProvider is not in available providers "
     "(['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider']). Use TensorrtExecutionProvider "
     "inference by default."),
    ("torch-cpu-only", "WARNING:OrtInferSession:TensorrtExecutionProvider is not in available providers "
     "(['CUDAExecutionProvider', 'CPUExecutionProvider']). Use CUDAExecutionProvider inference by default."),
    ("torch-cpu-only", "run.py: error: argument --execution-provider: invalid choice: 'coreml' (choose from 'cpu', 'cuda')"),
    # CUDA asked of another GPU build (ROCm's, DirectML's): not the CPU package
    ("torch-cpu-only", "WARNING:OrtInferSession:CUDAExecutionProvider is not in available providers "
     "(['ROCMExecutionProvider', 'CPUExecutionProvider']). Use ROCMExecutionProvider inference by default."),
    ("torch-cpu-only", "WARNING:OrtInferSession:CUDAExecutionProvider is not in available providers "
     "(['DmlExecutionProvider', 'CPUExecutionProvider']). Use DmlExecutionProvider inference by default."),
    ("torch-cpu-only", "run.py: error: argument --execution-provider: invalid choice: 'cuda' (choose from 'dml', 'cpu')"),
]
NEAR = [
    ("bf16-unsupported-gpu", "pytorch/pytorch/blob/main/aten/src/ATen/native/transformers/cuda/attention.cu"),
    ("torch-cpu-only", "mlcommons/inference/pull/1106"),
]


(test_each_new_case_is_named_through_its_new_pattern, test_each_wording_is_named_through_its_pattern,
 test_lines_left_to_others_stay_out_of_the_entry, test_the_near_misses_stay_quiet) = corpus.family_tests(CASES, WORDINGS,
                                                                                                   QUIET, NEAR)
