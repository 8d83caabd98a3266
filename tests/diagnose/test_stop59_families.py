"""(stop 59) Three failures that recurred unnamed in the held-out batches get entries, and four entries read their
failure as other tools print it.

- engine-arg-unrecognized: an argument parser refusing the command line (argparse's "unrecognized arguments", clap's
  "unexpected argument" / "invalid value", llama.cpp's "invalid argument: -flag"): unnamed in eleven batches.
- cuda-toolkit-torch-mismatch: an extension build's CUDA release check (torch.utils.cpp_extension, DeepSpeed's op
  builder, apex): unnamed in eight batches.
- spec-draft-vocab-mismatch: a speculative draft whose vocabulary is not the target's (vLLM V0, llama.cpp).
- torch-cuda-init-warning p6 (cuInit's CUDA_ERROR_UNKNOWN from TensorFlow, XLA, numba) and p7 (TensorFlow's "kernel
  driver does not appear to be running": it goes on on the CPU), cuda-driver-missing p16 (nvidia-installer's refusal
  to load nvidia.ko), model-arch-unknown p7 (a wrapper's retyped remote-code refusal); thinking-not-disabled no longer
  reads a --reasoning-config value's "<think>" as a reply.
- after batches 221-224 and the review: llama-flash-attention2-removed p2 (any model's removed attention class),
  nvcc-host-compiler-unsupported p8 (NVHPC, ICC, pgc++, xlC), engine-arg-unrecognized p3 (argparse's invalid choice,
  ambiguous option, missing value; clap 2), spec-draft-vocab-mismatch p2 (vLLM V1's check) and its retried_by (a newer
  llama-server translates tokens after the check); shm-too-small (PyTorch's "insufficient shared memory (shm)").
"""

import corpus

CASES = [
    ("engine-arg-unrecognized", 0, "containers/ramalama/issues/758"),
    ("engine-arg-unrecognized", 0, "abetlen/llama-cpp-python/issues/1164"),
    ("engine-arg-unrecognized", 0, "vllm-project/vllm/issues/27389"),
    ("engine-arg-unrecognized", 1, "text-generation-inference/issues/1456"),
    ("engine-arg-unrecognized", 1, "text-generation-inference/issues/1451"),
    ("engine-arg-unrecognized", 1, "LlamaEdge/Example-LlamaEdge-RAG/issues/1"),
    ("engine-arg-unrecognized", 2, "ggml-org/llama.vim/issues/36"),
    ("engine-arg-unrecognized", 2, "ggml-org/llama.vscode/issues/37"),
    ("spec-draft-vocab-mismatch", 0, "vllm-project/vllm/issues/14939"),
    ("spec-draft-vocab-mismatch", 1, "QwenLM/Qwen3/issues/326"),
    ("cuda-toolkit-torch-mismatch", 0, "state-spaces/mamba/issues/772"),
    ("cuda-toolkit-torch-mismatch", 0, "Dao-AILab/flash-attention/issues/2783"),
    ("cuda-toolkit-torch-mismatch", 0, "mit-han-lab/torchsparse/issues/135"),
    ("cuda-toolkit-torch-mismatch", 0, "oobabooga/one-click-installers/issues/38"),
    ("cuda-toolkit-torch-mismatch", 0, "pytorch/pytorch/issues/136845"),
    ("cuda-toolkit-torch-mismatch", 0, "vllm-project/vllm/issues/129"),
    ("cuda-toolkit-torch-mismatch", 1, "JIA-Lab-research/MGM/issues/91"),
    ("cuda-toolkit-torch-mismatch", 1, "bytedance/lightseq/issues/526"),
    ("cuda-toolkit-torch-mismatch", 2, "NVIDIA/apex/issues/1171"),
    ("torch-cuda-init-warning", 6, "tensorflow/tensorflow/issues/7653"),
    ("torch-cuda-init-warning", 6, "tensorflow/tensorflow/issues/5473"),
    ("torch-cuda-init-warning", 6, "tensorflow/tensorflow/issues/41937"),
    ("torch-cuda-init-warning", 7, "ertis-research/kafka-ml/issues/99"),
    ("torch-cuda-init-warning", 7, "GoogleCloudPlatform/community/issues/2227"),
    ("cuda-driver-missing", 16, "shelmangroup/coreos-gpu-installer/issues/2"),
    ("cuda-driver-missing", 16, "Bumblebee-Project/Bumblebee/issues/932"),
    ("cuda-driver-missing", 16, "NVIDIA/gpu-operator/issues/8"),
    ("model-arch-unknown", 7, "chatchat-space/Langchain-Chatchat/issues/1376"),
    # after batches 221-224
    ("llama-flash-attention2-removed", 2, "Visual-Agent/DeepEyes/issues/119"),
    ("llama-flash-attention2-removed", 2, "TIGER-AI-Lab/Pixel-Reasoner/issues/35"),
    ("nvcc-host-compiler-unsupported", 8, "QMCPACK/qmcpack/issues/2320"),
    ("nvcc-host-compiler-unsupported", 8, "spack/spack/issues/30043"),
    ("nvcc-host-compiler-unsupported", 8, "spcl/dace/issues/1424"),
    # shm-too-small (PyTorch's bus error in a worker), unnamed in seven batches before
    ("shm-too-small", 0, "yufengm/Adaptive/issues/9"),
    ("shm-too-small", 0, "nianticlabs/simplerecon/issues/3"),
    ("shm-too-small", 0, "DengpanFu/LUPerson/issues/20"),
    ("shm-too-small", 0, "ultralytics/yolov3/issues/283"),
]

# each line alone, named through the pattern given (the engines' wordings as their sources print them)
WORDINGS = [
    ("engine-arg-unrecognized", 0, "vllm: error: unrecognized arguments: --reasoning-config {}"),
    ("engine-arg-unrecognized", 0, "vllm serve: error: unrecognized arguments: --speculative-config {\"method\": \"x\"}"),
    ("engine-arg-unrecognized", 0, "api_server.py: error: unrecognized arguments: --api-key"),
    ("engine-arg-unrecognized", 0, "(APIServer pid=1) vllm: error: unrecognized arguments: serve /models/x"),
    ("engine-arg-unrecognized", 1, "error: unexpected argument '--tokenizer-config-path' found"),
    ("engine-arg-unrecognized", 1, "error: invalid value 'True' for '--disable-custom-kernels <DISABLE_CUSTOM_KERNELS>'"),
    ("engine-arg-unrecognized", 1, "(setup pid=1293) error: unexpected argument '--torch-backend' found"),
    ("engine-arg-unrecognized", 2, "error: invalid argument: -hf"),
    ("engine-arg-unrecognized", 2, "error: unknown argument: --spec-draft-n-max"),
    ("cuda-toolkit-torch-mismatch", 0, "RuntimeError: The detected CUDA version (12.8) mismatches the version that was "
                                       "used to compile PyTorch (13.0). Please make sure to use the same CUDA versions."),
    ("cuda-toolkit-torch-mismatch", 0, "RuntimeError: ('The detected CUDA version (%s) mismatches the version that was "
                                       "used to compilePyTorch (%s). Please make sure to use the same CUDA versions.', "
                                       "'12.6', '13.0')"),
    ("cuda-toolkit-torch-mismatch", 0, "      The detected CUDA version (11.8) mismatches the version that was used to compile"),
    ("cuda-toolkit-torch-mismatch", 1, "Exception: Installed CUDA version 12.3 does not match the version torch was "
                                       "compiled with 12.1, unable to compile cuda/cpp extensions without a matching cuda "
                                       "version."),
    ("cuda-toolkit-torch-mismatch", 2, "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does "
                                       "not match the version used to compile Pytorch binaries.  Pytorch binaries were "
                                       "compiled with Cuda 10.2."),
    ("spec-draft-vocab-mismatch", 0, "    assert all(vocab_sizes[0] == vocab_size for vocab_size in vocab_sizes)"),
    ("spec-draft-vocab-mismatch", 1, "main: error: draft model vocab must closely match target model to use speculation "
                                     "but target vocab size 152064 does not match draft vocab size 151936 - difference "
                                     "128, max allowed 100"),
    ("spec-draft-vocab-mismatch", 1, "Drafting does not work since v1.115 – \"draft model vocab type must match target "
                                     "model to use speculation (speculative implementation 'draft-simple')\""),
    ("torch-cuda-init-warning", 6, "2023-10-04 12:33:47.594219: E external/xla/xla/stream_executor/cuda/cuda_driver.cc:268]"
                                   " failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error"),
    ("torch-cuda-init-warning", 6, "W external/xla/xla/service/platform_util.cc:198] unable to create StreamExecutor for "
                                   "CUDA:0: failed initializing StreamExecutor for CUDA device ordinal 0: INTERNAL: failed "
                                   "call to cuDevicePrimaryCtxRetain: CUDA_ERROR_UNKNOWN: unknown error"),
    ("torch-cuda-init-warning", 6, "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit "
                                   "results in CUDA_ERROR_UNKNOWN (999)"),
    ("torch-cuda-init-warning", 6, "W0000 00:00:1714000000.1 1 cuda_executor.cc:1015] failed call to cuInit: INTERNAL: "
                                   "CUDA error: Failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error"),
    ("torch-cuda-init-warning", 7, "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:156] kernel driver does not "
                                   "appear to be running on this host (16c54693e7f2): /proc/driver/nvidia/version does not "
                                   "exist"),
    ("cuda-driver-missing", 16, "ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when "
                                "this kernel module was built against the wrong or improperly configured kernel sources"),
    ("cuda-driver-missing", 16, "ERROR: Unable to load the kernel module 'nvidia-drm.ko'."),
    ("engine-arg-unrecognized", 3, "api_server.py: error: argument --tool-call-parser: invalid choice: 'llama3_json' "
                                   "(choose from 'mistral', 'hermes')"),
    ("engine-arg-unrecognized", 3, "vllm: error: argument --dtype: invalid choice: 'fp8' (choose from 'auto', 'half', "
                                   "'float16', 'bfloat16', 'float', 'float32')"),
    ("engine-arg-unrecognized", 3, "vllm serve: error: argument --speculative-config: expected one argument"),
    ("engine-arg-unrecognized", 3, "vllm: error: ambiguous option: --max could match --max-model-len, --max-num-seqs"),
    ("engine-arg-unrecognized", 3, "error: Found argument '--x' which wasn't expected, or isn't valid in this context"),
    ("spec-draft-vocab-mismatch", 2, "pydantic_core._pydantic_core.ValidationError: 1 validation error for "
                                     "SpeculativeConfig\n  Value error, Target and draft model should have the same "
                                     "vocabulary size. Target model vocab_size=152064. Draft model vocab_size=151936."),
    ("spec-draft-vocab-mismatch", 1, "main: error: draft model vocab must match target model to use speculation but target "
                                     "vocab size 152064 does not match draft vocab size 32002"),
    ("spec-draft-vocab-mismatch", 1, "common_speculative_are_compatible: draft vocab vocab must match target vocab to use "
                                     "speculation but token 11 content differs - target '!', draft '\"'"),
    ("model-arch-unknown", 7, "ValueError: Loading this model requires you to execute execute some code in that repo on "
                              "your local machine. Make sure you have read the code at https://hf.co/... to avoid "
                              "malicious use, then set the option `trust_remote_code=True` to remove this error."),
    ("llama-flash-attention2-removed", 2, "ImportError: cannot import name 'Qwen2VLFlashAttention2' from "
                                          "'transformers.models.qwen2_vl.modeling_qwen2_vl'"),
    ("llama-flash-attention2-removed", 2, "AttributeError: module 'transformers.models.qwen2_5_vl.modeling_qwen2_5_vl' "
                                          "has no attribute 'Qwen2_5_VLFlashAttention2'"),
    ("llama-flash-attention2-removed", 2, "ImportError: cannot import name 'QWEN2_5_VL_ATTENTION_CLASSES' from "
                                          "'transformers.models.qwen2_5_vl.modeling_qwen2_5_vl'"),
    ("nvcc-host-compiler-unsupported", 8, "host_config.h(120): error: #error directive: -- unsupported xlC version! only "
                                          "xlC 13.1 and 16.1 are supported"),
    ("shm-too-small", 0, "2024-05-01T10:00:00.000Z stdout F ERROR: Unexpected bus error encountered in worker. This "
                         "might be caused by insufficient shared memory (shm)."),
    ("llama-flash-attention2-removed", 2, "ImportError: cannot import name 'SiglipSdpaAttention' from "
                                          "'transformers.models.siglip.modeling_siglip' (/x/site-packages/transformers/"
                                          "models/siglip/modeling_siglip.py)"),
    ("nvcc-host-compiler-unsupported", 8, "nvcc fatal   : Unsupported NVHPC compiler found. nvc++ is the only NVHPC "
                                          "compiler that is supported."),
    ("nvcc-host-compiler-unsupported", 8, "/usr/local/cuda/include/crt/host_config.h(110): error: #error directive: -- "
                                          "unsupported ICC configuration! Only ICC 15.0 on Linux x86_64 is supported!"),
]

# lines each entry leaves to others (or to nobody)
QUIET = [
    ("engine-arg-unrecognized", "OSError: [Errno 22] Invalid argument"),
    ("engine-arg-unrecognized", "\"./mistral-7b-instruct-v0.2.Q4_K_M.llamafile: Invalid argument\""),
    ("engine-arg-unrecognized", "error: invalid argument: '0.95'"),
    ("engine-arg-unrecognized", "error: invalid argument: -5 is out of range"),
    ("engine-arg-unrecognized", "--max-model-len: invalid choice: use a number"),
    ("engine-arg-unrecognized", "usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch} ..."),
    ("cuda-toolkit-torch-mismatch", "UserWarning: The detected CUDA version (12.0) has a minor version mismatch with the "
                                    "version that was used to compile PyTorch (12.8). Most likely this shouldn't be a "
                                    "problem."),
    ("cuda-toolkit-torch-mismatch", "Installed CUDA version {VERSION} does not match the version torch was compiled "
                                    "with {VERSION}, unable to compile cuda/cpp extensions without a matching cuda "
                                    "version."),
    ("cuda-toolkit-torch-mismatch", "[WARNING]  DeepSpeed Op Builder: Installed CUDA version 12.1 does not match the "
                                    "version torch was compiled with 11.8.Detected `DS_SKIP_CUDA_CHECK=1`: Allowing this "
                                    "combination of CUDA, but it may result in unexpected behavior."),
    ("torch-cuda-init-warning", "2020-11-11 10:46:37.467224: E tensorflow/stream_executor/cuda/cuda_driver.cc:314] failed "
                                "call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"),
    ("torch-cuda-init-warning", "numba.cuda.cudadrv.driver.CudaAPIError: [999] Call to cuLaunchKernel results in "
                                "CUDA_ERROR_UNKNOWN"),
    ("torch-cuda-init-warning", "failed call to cuMemAlloc: CUDA_ERROR_UNKNOWN: unknown error"),
    ("cuda-driver-missing", "modprobe: ERROR: could not insert 'nvidia_uvm': Unknown symbol in module"),
    ("cuda-driver-missing", "Unable to load the kernel module 'vboxdrv.ko'"),
    # a newer llama-server with -v: the check at DEBUG, then the translation between the two vocabularies
    ("spec-draft-vocab-mismatch", "common_speculative_are_compatible: draft model vocab must closely match target model to "
                                  "use speculation but target vocab size 152064 does not match draft vocab size 151936 - "
                                  "difference 128, max allowed 100\nsrv    load_model: the draft model "
                                  "'Qwen2.5-0.5B-Instruct-Q8_0.gguf' is not compatible with the target model "
                                  "'Qwen2.5-7B-Instruct-Q8_0.gguf'. tokens will be translated between the draft and "
                                  "target models."),
    ("spec-draft-vocab-mismatch", "The vLLM V0 check `assert all(vocab_sizes[0] == vocab_size for vocab_size in "
                                  "vocab_sizes)` rejects Qwen pairs."),
    ("llama-flash-attention2-removed", "ImportError: cannot import name '_flash_attention_forward' from "
                                       "'transformers.models.qwen2_5_vl.modeling_qwen2_5_vl'"),
    ("llama-flash-attention2-removed", "ImportError: cannot import name 'Qwen2_5_VLFlashAttention2' from "
                                       "'verl.models.qwen2_5_vl'"),
    ("nvcc-host-compiler-unsupported", "ICC configuration: unsupported options were dropped"),
    ("nvcc-host-compiler-unsupported", "warning: unsupported ICC config value ignored"),
    ("shm-too-small", "worker-0:12:34 [0] include/shm.h:28 NCCL WARN Error while creating shared memory segment "
                      "/dev/shm/nccl-8Lx9Fz (size 9637888)"),
    ("shm-too-small", "The default is too small for this job: insufficient shared memory, raise --shm-size"),
    ("thinking-not-disabled", "    --reasoning-config '{\"reasoning_start_str\":\"<think>\",\"reasoning_end_str\": "
                              "\"</think>\"}'"),
]

NEAR = [
    ("engine-arg-unrecognized", "mozilla-ai/llamafile/issues/202"),
    ("engine-arg-unrecognized", "unslothai/unsloth/pull/8800"),
    ("engine-arg-unrecognized", "oobabooga/textgen/issues/2010"),
    ("spec-draft-vocab-mismatch", "sgl-project/sglang/pull/23838"),
    ("spec-draft-vocab-mismatch", "vllm-project/vllm/pull/43369"),
    ("spec-draft-vocab-mismatch", "NVIDIA/TensorRT-LLM/pull/3615"),
    ("cuda-toolkit-torch-mismatch", "open-mmlab/mmcv/issues/2949"),
    ("cuda-toolkit-torch-mismatch", "Dao-AILab/flash-attention/issues/1563"),
    ("cuda-toolkit-torch-mismatch", "deepspeedai/DeepSpeed/pull/3706"),
    ("torch-cuda-init-warning", "tensorflow/tensorflow/issues/57764"),
    ("torch-cuda-init-warning", "mljar/mljar-supervised/issues/107"),
    ("cuda-driver-missing", "tensorflow/tensorflow/issues/62494"),
    ("model-arch-unknown", "hiyouga/LlamaFactory/issues/4027"),
    ("nvml-library-missing", "Syllo/nvtop/issues/1"),
    ("llama-flash-attention2-removed", "verl-project/verl/issues/2213"),
]

(test_each_new_case_is_named_through_its_new_pattern, test_each_wording_is_named_through_its_pattern,
 test_lines_left_to_others_stay_out_of_the_entry, test_the_near_misses_stay_quiet) = \
    corpus.family_tests(CASES, WORDINGS, QUIET, NEAR)
