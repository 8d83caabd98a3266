"""(round st57) Four families widened by their key tokens, read in the tools' source:

- llama-flash-attention2-removed p1: every name transformers 4.48.0's attention refactor took out of a model module (the
  4.47.1 and 4.48.0 wheels diffed): <Model>FlashAttention2, <Model>SdpaAttention and <MODEL>_ATTENTION_CLASSES of llama,
  mistral, mixtral, qwen2, gemma, gemma2 (GEMMA2_ATTENTION_FUNCTION), cohere, glm, gpt2, granite, olmo, olmo2, phi, phi3,
  starcoder2 and zamba, refused by Python's import ("cannot import name 'X' from 'transformers.models.m.modeling_m'") or
  attribute access ("module '...modeling_m' has no attribute 'X'"); later removals (Qwen2_5_VLFlashAttention2) are p2's
  since stop 59 (tests/diagnose/test_stop59_families.py);
- context-length-exceeded p27-p30: Xinference's "Max tokens exceeds model's max length" and its router's "Request token
  budget N exceeds context limit M", vLLM V0's scheduler "Input prompt (N tokens) is too long and exceeds limit of M",
  SiliconFlow's "length of prompt_tokens (N) must be less than max_seq_len (M)", SambaNova's "The maximum context length
  of <model> is N. However, answering your request will take M tokens", LM Studio's "Trying to keep the first N tokens
  when context the overflows", TGI's "`max_new_tokens` must be <= N" and transformers' generate() "Input length of
  input_ids is N, but `max_length` is set to M";
- vllm-arch-unsupported p14: vLLM's "Model architecture X was supported in vLLM until vN, and is not supported anymore",
  its Transformers fallback's "There is no module or parameter named 'w' in TransformersForCausalLM", TGI's "sharded is
  not supported for AutoModel" and "ValueError: Unsupported model type t ...", MLC-LLM's "Unknown model type: t.
  Available ones: [", llama.cpp's "error loading model architecture: 'a'" and clip.cpp's "Unknown minicpmv version".
"""

import corpus

CASES = [
    ("llama-flash-attention2-removed", 1, "hiyouga/LlamaFactory/issues/8212"),
    ("llama-flash-attention2-removed", 1, "AnswerDotAI/fsdp_qlora/pull/77"),
    ("context-length-exceeded", 27, "xorbitsai/inference/issues/2355"),
    ("context-length-exceeded", 28, "langgenius/dify/issues/19394"),
    ("context-length-exceeded", 29, "huggingface/transformers/issues/28523"),
    ("context-length-exceeded", 30, "THUDM/WebGLM/issues/50"),
    ("context-length-exceeded", 30, "tensorchord/modelz-llm/issues/35"),
    ("vllm-arch-unsupported", 14, "huggingface/text-generation-inference/issues/758"),
    ("vllm-arch-unsupported", 14, "mlc-ai/mlc-llm/issues/3213"),
    ("vllm-arch-unsupported", 14, "huggingface/text-generation-inference/issues/486"),
]
# each wording one line (the training batches' shapes and the tools' format strings filled in)
WORDINGS = [
    ("llama-flash-attention2-removed", 1, "[Bug] ImportError: cannot import name 'LLAMA_ATTENTION_CLASSES' from "
     "'transformers.models.llama.modeling_llama'"),
    ("llama-flash-attention2-removed", 1, "ImportError: cannot import name 'Qwen2FlashAttention2' from "
     "'transformers.models.qwen2.modeling_qwen2' (/opt/conda/lib/python3.10/site-packages/transformers/models/qwen2/"
     "modeling_qwen2.py)"),
    ("llama-flash-attention2-removed", 1, "ImportError: cannot import name 'MistralSdpaAttention' from "
     "'transformers.models.mistral.modeling_mistral'"),
    ("llama-flash-attention2-removed", 1, "AttributeError: module 'transformers.models.gemma2.modeling_gemma2' has no "
     "attribute 'GEMMA2_ATTENTION_FUNCTION'"),
    ("context-length-exceeded", 27, "Exception: [address=0.0.0.0:33147, pid=11088] Max tokens exceeds model's max length"),
    ("context-length-exceeded", 27, "WARNING 03-14 10:02:11 scheduler.py:1085] Input prompt (120511 tokens) is too long "
     "and exceeds limit of 4096"),
    ("context-length-exceeded", 27, "Request token budget 140000 exceeds context limit 131072 for backend long"),
    ("context-length-exceeded", 28, 'API Error: Status Code 400,{"code":20015,"message":"length of prompt_tokens (65878) '
     'must be less than max_seq_len (65536).","data":null}'),
    ("context-length-exceeded", 28, "23:39:39 - openhands:ERROR: session.py:332 - Agent status error: BadRequestError: "
     "litellm.BadRequestError: SambanovaException - The maximum context length of DeepSeek-V3-0324 is 32768. However, "
     "answering your request will take 39732 tokens. Please reduce the length of the messages or the specified "
     "max_completion_tokens value."),
    ("context-length-exceeded", 29, "BadRequestError 400--<LM Studio error> Trying to keep the first 15857 tokens when "
     "context the overflows."),
    ("context-length-exceeded", 29, "`max_new_tokens` must be <= 1"),
    ("context-length-exceeded", 30, "Input length of input_ids is 2061, but `max_length` is set to 2048"),
    ("context-length-exceeded", 30, "ValueError: Input length of decoder_input_ids is 512, but `max_length` is set to "
     "512. This can lead to unexpected behavior. You should consider increasing `max_length` or, better yet, setting "
     "`max_new_tokens`."),
    ("vllm-arch-unsupported", 14, "[Bug]: Baichuan-7B拉起服务失败报错：Model architecture BaiChuanForCausalLM was supported "
     "in vLLM until v0.23.0, and is not supported anymore"),
    ("vllm-arch-unsupported", 14, "[Bug]: ValueError: There is no module or parameter named 'mlp_AR' in "
     "TransformersForCausalLM"),
    ("vllm-arch-unsupported", 14, 'Deploy error for Llama-3.2-vision-11B: "Sharded is not supported for AutoModel"'),
    ("vllm-arch-unsupported", 14, "ValueError: Unsupported model type falcon when I try falcon-40b-instruct without "
     "trust_remote_code"),
    ("vllm-arch-unsupported", 14, "ValueError: Unknown model type: jiutian. Available ones: ['llama', 'mistral']"),
    ("vllm-arch-unsupported", 14, "The application displays the error message: `error loading model: error loading "
     "model architecture: 'exaone4'`."),
    ("vllm-arch-unsupported", 14, "Aug 28 11:07:42 ly3 ollama[2607954]: clip.cpp:4169: Unknown minicpmv version"),
]
# lines the new patterns leave to others or to nobody
QUIET = [
    ("llama-flash-attention2-removed", "from transformers.models.llama.modeling_llama import LlamaAttention as "
     "LlamaFlashAttention2"),
    ("llama-flash-attention2-removed", "ImportError: cannot import name 'LlamaAttention' from "
     "'transformers.models.llama.modeling_llama'"),
    ("context-length-exceeded", "if max_src_len < 0: raise ValueError(\"Max tokens exceed limit\")"),
    ("context-length-exceeded", "#[error(\"`max_new_tokens` must be strictly positive\")]"),
    ("vllm-arch-unsupported", '    raise ValueError(f"Unknown model type: {model_type}. Available ones: '
     '{list(MODELS.keys())}")'),
    ("vllm-arch-unsupported", "ValueError: Unknown model type , exiting!"),
    ("vllm-arch-unsupported", "ValueError: Model architectures ['Qwen2_5_VLForConditionalGeneration'] failed to be "
     "inspected. Please check the logs for more details."),
    ("vllm-arch-unsupported", "error loading model: error loading model architecture: unknown model architecture: ''"),
]
NEAR = [
    ("llama-flash-attention2-removed", "AnswerDotAI/fsdp_qlora/pull/77"),
    ("context-length-exceeded", "xorbitsai/inference/issues/3066"),
    ("context-length-exceeded", "router/src/validation.rs ValidationError, 2.x"),
    ("context-length-exceeded", "generation/utils.py _validate_generated_length, 4.48"),
    ("vllm-arch-unsupported", "round st57: MLC-LLM's model registry check"),
]


(test_each_new_case_is_named_through_its_new_pattern, test_each_wording_is_named_through_its_pattern,
 test_lines_left_to_others_stay_out_of_the_entry, test_the_near_misses_stay_quiet) = corpus.family_tests(CASES, WORDINGS,
                                                                                                   QUIET, NEAR)
