"""(round st56) The lead's stop-56 rulings for two start entries, written by the concept's key tokens:

- model-arch-unknown p8: code importing a model's own class by name from a transformers that predates the model
  ("cannot import name 'Qwen2VLForConditionalGeneration' from 'transformers'"): a name of a model class's shape
  (<Family>For<Task>, <Family>Config / Processor / ImageProcessor / VideoProcessor / Model) from the top-level package;
  a For<Task> name may end its line (the ImportError wrapped before "from"). Library-wide names (Auto*, PreTrained*,
  GenerationConfig, quantization configs, DataCollatorFor*, *Mixin), helpers (is_valid_list_of_images), a submodule's
  LlamaFlashAttention2 (its own entry) and SGLang's "Ignore import error when loading ..." warning stay out;
- nccl-error p8: Ascend's HCCL and ROCm's RCCL failing to create or use a communicator (torch_npu's "HCCL function
  error: <call>(...), error code is N", HCCL's and MindIE's "HcclCommInitRootInfo failed/fail", "DIST call hccl api
  failed", Paddle's "Rccl error, unhandled system error"); HCCL's timeout warning and code naming an HCCL error stay out;
- vllm-arch-unsupported p13: the engines' own refusals of an architecture, read in their source: vLLM's "<Arch> has no
  vLLM implementation and the Transformers implementation is not compatible with vLLM" (its fallback WARNING stays out),
  LMDeploy's "Can not found rewrite for architectures: [...]", Ollama's "Models based on '<Arch>' are not yet supported".
"""

import corpus

CASES = [
    ("model-arch-unknown", 8, "QwenLM/Qwen3-VL/issues/1385"),
    ("model-arch-unknown", 8, "charent/Phi2-mini-Chinese/issues/18"),
    ("model-arch-unknown", 8, "xorbitsai/inference/issues/2361"),
    ("model-arch-unknown", 8, "PKU-YuanGroup/ChatLaw/issues/39"),
    ("nccl-error", 8, "vllm-project/vllm-ascend/issues/672"),
    ("nccl-error", 8, "vllm-project/vllm-ascend/issues/11542"),
    ("nccl-error", 8, "gpustack/gpustack/issues/2021"),
    ("nccl-error", 8, "ROCm/rccl/issues/328"),
    ("vllm-arch-unsupported", 13, "vllm-project/vllm/issues/16146"),
    ("vllm-arch-unsupported", 13, "vllm-project/vllm/issues/15006"),
    ("vllm-arch-unsupported", 13, "InternLM/lmdeploy/issues/2939"),
    ("vllm-arch-unsupported", 13, "ollama/ollama/issues/5014"),
]
# each wording one line (the training batches' shapes)
WORDINGS = [
    ("model-arch-unknown", 8, "ImportError: cannot import name 'Qwen2_5_VLForConditionalGeneration' from 'transformers' "
     "(D:\\AI\\ComfyUI\\python\\Lib\\site-packages\\transformers\\__init__.py)"),
    ("model-arch-unknown", 8, "Error: Model loading error: Model initialization failed: cannot import name "
     "'Qwen3Config' from 'transformers' (E:\\ai\\ComfyUI\\python_embeded\\Lib\\site-packages\\transformers\\__init__.py)"),
    ("model-arch-unknown", 8, "Server error. 500 - [address=0.0.0.0.44775, pid=952] cannot import name "
     "'Qwen2VLForconditionalGeneration'"),
    ("model-arch-unknown", 8, "ImportError: cannot import name 'Qwen2VLImageProcessor' from 'transformers'"),
    ("nccl-error", 8, "[rank0]: RuntimeError: createHCCLComm:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:1479 HCCL "
     "function error: HcclGetRootInfo(&hcclID), error code is 11"),
    ("nccl-error", 8, "[rank0]: [ERROR] 2025-03-26-17:01:03 (PID:159, Device:0, RankID:-1) ERR02200 DIST call hccl api "
     "failed."),
    ("vllm-arch-unsupported", 13, "ValueError: InternVLForConditionalGeneration has no vLLM implementation and the "
     "Transformers implementation is not compatible with vLLM."),
    ("vllm-arch-unsupported", 13, "RuntimeError: Can not found rewrite for architectures: ['Glm4vForConditionalGeneration']"),
    ("vllm-arch-unsupported", 13, "Error: Models based on 'InternVLChatModel' are not yet supported"),
]
# lines the new patterns leave to others or to nobody
QUIET = [
    ("model-arch-unknown", "cannot import name 'AutoProcessor' from 'transformers'"),
    ("model-arch-unknown", "ImportError: cannot import name 'ProcessorMixin' from 'transformers'"),
    ("model-arch-unknown", "ImportError: cannot import name 'GenerationConfig' from 'transformers'"),
    ("model-arch-unknown", "ImportError: cannot import name 'BitsAndBytesConfig' from 'transformers'"),
    ("model-arch-unknown", "ImportError: cannot import name 'DataCollatorForSeq2Seq' from 'transformers'"),
    ("model-arch-unknown", "ImportError: cannot import name 'LlamaFlashAttention2' from "
     "'transformers.models.llama.modeling_llama'"),
    ("model-arch-unknown", "ImportError: cannot import name 'is_valid_list_of_images' from "
     "'transformers.models.mllama.image_processing_mllama'"),
    ("model-arch-unknown", "ImportError: cannot import name 'NougatModel' from 'nougat'"),
    ("model-arch-unknown", "2025-07-02 16:41:30 | WARNING | sglang.srt.models.registry | Ignore import error when loading "
     "sglang.srt.models.gemma3n_mm. cannot import name 'Gemma3nAudioConfig' from 'transformers'"),
    ("nccl-error", "(NPURayWorkerWrapper pid=44419) [rank7]:[W609 06:57:47.819535026 compiler_depend.ts:877] Warning: The "
     "HCCL execution timeout was set to never timeout, so it is bigger than watchdog timeout 1800000ms"),
    ("nccl-error", "export HCCL_NPU_SOCKET_PORT_RANGE=auto HCCL_BUFFSIZE=200"),
    ("vllm-arch-unsupported", "WARNING 06-26 15:45:02 [utils.py:79] Qwen3ForSequenceClassification has no vLLM "
     "implementation, falling back to Transformers implementation. Some features may not be supported"),
]
NEAR = [
    ("model-arch-unknown", "baichuan-inc/Baichuan-13B/issues/20"),
    ("model-arch-unknown", "MeetKai/functionary/issues/312"),
    ("nccl-error", "xLLM-AI/xllm/pull/622"),
    ("vllm-arch-unsupported", "vllm-project/vllm/issues/20116"),
]


(test_each_new_case_is_named_through_its_new_pattern, test_each_wording_is_named_through_its_pattern,
 test_lines_left_to_others_stay_out_of_the_entry, test_the_near_misses_stay_quiet) = corpus.family_tests(CASES, WORDINGS,
                                                                                                   QUIET, NEAR)
