"""(stop 61) A failure that recurred unnamed gets an entry, eight entries read another tool's or layer's words for their
failure, and the safety net reads five shapes that reported real failures as clean.

- request-too-large: a request refused for its size (HTTP 413 in its status texts, nginx's "client intended to send too
  large body", axum's "length limit exceeded", Anthropic's "request_too_large" and per-image limit): unnamed in eleven
  batches; a page image in base64 is the usual body. OpenAI's "Request too large ... on tokens per min" stays
  rate-limited, and an error-reference table's row stays out.
- engine-arg-unrecognized reads click's ("Error: No such option: -p", typer's box, "Got unexpected extra argument") and
  Go pflag's ("unknown flag: --gpus", "unknown shorthand flag") refusals; python-module-missing transformers' "requires
  Accelerate: `pip install accelerate`" and MinerU's "Required dependency not installed"; hub-gated-repo the hub's
  restricted line alone; cuda-oom a memory summary that counted an OOM; no-space-left the kubelet's DiskPressure;
  cuda-headers-missing CMake's "Couldn't find CUDA library root"; context-length-exceeded Dify's own check;
  service-unreachable nginx's upstream unix socket that is not there.
- the safety net: Go's "panic: ...", a shell's refusal (dash's "Bad substitution", bash's syntax errors, zsh's "no matches
  found"), SELinux's AVC denial that blocked (permissive=0), a device node the process may not open, a file that is
  not a library ("invalid ELF header").
"""

import pytest

import corpus
from ocrdeploy.diagnose import scanner

CASES = [
    ("engine-arg-unrecognized", 4, "datalab-to/marker/issues/414"),
    ("engine-arg-unrecognized", 4, "intercreate/smpmgr/issues/85"),
    ("engine-arg-unrecognized", 5, "palark/ovpn-admin/issues/275"),
    ("engine-arg-unrecognized", 5, "K2/olol/issues/7"),
    # moved from generic.yaml's unnamed failures (the safety net's cli-flag and http-status): the entries name them now
    ("engine-arg-unrecognized", 5, "NVIDIA/gpu-monitoring-tools/issues/112"),
    ("request-too-large", 0, "CoderDojo/community-platform/issues/346"),
    ("python-module-missing", 11, "miaoshouai/ComfyUI-Miaoshouai-Tagger/issues/47"),
    ("python-module-missing", 11, "huchenlei/ComfyUI_omost/issues/30"),
    ("hub-gated-repo", 1, "NVIDIA/Isaac-GR00T/issues/637"),
    ("cuda-oom", 36, "pytorch/pytorch/issues/35901"),
    ("no-space-left", 10, "gitpod-io/gitpod/issues/935"),
    ("cuda-headers-missing", 7, "NVIDIA-AI-IOT/deepstream_tao_apps/issues/65"),
    ("cuda-headers-missing", 7, "negativo17/cuda/issues/36"),
    ("request-too-large", 0, "awslabs/multi-model-server/issues/9"),
    ("request-too-large", 0, "hiroi-sora/Umi-OCR_v2/issues/49"),
    ("service-unreachable", 38, "whatwedo/docker-base-images/issues/38"),
    ("context-length-exceeded", 31, "langgenius/dify/issues/15788"),
    ("context-length-exceeded", 31, "langgenius/dify/issues/1435"),
    # (after blind batches 241-248) proofs of the widenings their misses asked for
    ("flash-attn-undefined-symbol", 8, "fudan-generative-vision/hallo/issues/98"),
    ("flash-attn-undefined-symbol", 8, "RaymondJiangkw/COGS/issues/24"),
    ("engine-arg-unrecognized", 6, "zai-org/GLM-4/issues/712"),
    ("engine-arg-unrecognized", 6, "vllm-project/vllm/issues/9398"),
    ("host-oom-killed", 30, "pycaret/pycaret/issues/295"),
    ("path-not-writable", 5, "conda/conda/issues/9753"),
    ("path-not-writable", 5, "ContinuumIO/anaconda-issues/issues/8149"),
]

# each line alone, named through the pattern given (the tools' wordings as their sources print them)
WORDINGS = [
    ("engine-arg-unrecognized", 4, "Error: No such option: --model-path Did you mean --model?"),
    ("engine-arg-unrecognized", 4, "执行指令：magic-pdf 报错 Error: No such option: -p"),
    ("engine-arg-unrecognized", 4, "│ No such option: --gpu-memory-utilization                                     │"),
    ("engine-arg-unrecognized", 4, "Error: Got unexpected extra arguments (serve /models/x)"),
    ("engine-arg-unrecognized", 5, "Error: unknown shorthand flag: 'p' in -p"),
    ("engine-arg-unrecognized", 5, "unknown flag: --gpus"),
    ("python-module-missing", 11, "ImportError: Using `low_cpu_mem_usage=True` or a `device_map` requires Accelerate: "
                                  "`pip install 'accelerate>=0.26.0'`"),
    ("python-module-missing", 11, "ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.26.0`: Please "
                                  "run `pip install transformers[torch]` or `pip install 'accelerate>=0.26.0'`"),
    ("python-module-missing", 11, "ValueError: Using a `device_map`, `tp_plan`, `torch.device` context manager or setting "
                                  "`torch.set_default_device(device)` requires `accelerate`. You can install it with `pip "
                                  "install accelerate`"),
    ("python-module-missing", 12, "ValueError: Fast download using 'hf_transfer' is enabled (HF_HUB_ENABLE_HF_TRANSFER=1) "
                                  "but 'hf_transfer' package is not available in your environment. Try `pip install "
                                  "hf_transfer`."),
    ("python-module-missing", 12, "  FAILED: ValueError: Fast download using 'hf_transfer' is enabled"),
    ("cuda-oom", 36, "|            CUDA OOMs: 2            |        cudaMalloc retries: 3         |"),
    ("no-space-left", 10, "  Warning  Evicted  3m  kubelet  The node had condition: [DiskPressure]."),
    ("no-space-left", 10, "Message: Pod The node had condition: [MemoryPressure DiskPressure]. "),
    ("cuda-headers-missing", 7, "  Couldn't find CUDA library root."),
    ("context-length-exceeded", 31, "Query or prefix prompt is too long, you can reduce the prefix prompt, or shrink the "
                                    "max token, or switch to a llm with a larger token limit size."),
    ("service-unreachable", 38, "2024/05/02 13:58:22 [error] 7#7: *3 connect() failed (111: Connection refused) while "
                                "connecting to upstream, client: 172.20.0.1, server: , request: \"POST /v1/chat/completions "
                                "HTTP/1.1\", upstream: \"http://vllm:8000/v1/chat/completions\""),
    ("service-unreachable", 38, "2024/05/02 13:58:22 [crit] 11#11: *1 connect() to unix:/tmp/gunicorn.sock failed (111: "
                                "Connection refused) while connecting to upstream, client: 172.17.0.1, server: , request: "
                                "\"POST /invocations HTTP/1.1\", upstream: \"http://unix:/tmp/gunicorn.sock:/invocations\""),
    ("request-too-large", 0, "httpx.HTTPStatusError: Client error '413 Payload Too Large' for url "
                             "'http://127.0.0.1:8000/v1/chat/completions'"),
    ("request-too-large", 0, "HTTP Request: POST http://gpu1:8000/v1/chat/completions \"HTTP/1.1 413 Request Entity Too "
                             "Large\""),
    ("request-too-large", 0, "openai.APIStatusError: Error code: 413 - {'error': {'message': 'Request body too large'}}"),
    ("request-too-large", 0, "Vision API request failed: status code: 413"),
    ("request-too-large", 0, "requests.exceptions.HTTPError: 413 Client Error: Request Entity Too Large for url: "
                             "http://gpu1:8080/v1/chat/completions"),
    ("request-too-large", 0, "urllib.error.HTTPError: HTTP Error 413: Request Entity Too Large"),
    ("request-too-large", 0, "aiohttp.client_exceptions.ClientResponseError: 413, message='Request Entity Too Large', "
                             "url='http://127.0.0.1:8000/v1/chat/completions'"),
    ("request-too-large", 0, "\"API returned unexpected status code: 413\" on OpenAI compatible OCR endpoint"),
    ("request-too-large", 0, "Payload Too Large (Cloudflare 413 HTML)"),
    ("request-too-large", 0, "[GIN] 2024/02/18 - 23:17:35 | 202402182317334062916694Mt5vuQ9 | 413 |  2.109733043s |    "
                             "192.168.65.1 |    POST /v1/chat/completions  "),
    ("request-too-large", 1, "2024/11/05 09:12:44 [error] 29#29: *1 client intended to send too large body: 1598012 "
                             "bytes, client: 172.18.0.1, server: ocr.local, request: \"POST /v1/chat/completions "
                             "HTTP/1.1\", host: \"ocr.local:8080\""),
    ("request-too-large", 1, "Error \"Failed to buffer the request body: length limit exceeded\" when supplying base64 "
                             "encoded images greater than 1MB in prompt"),
    ("request-too-large", 1, "PayloadTooLargeError: request entity too large"),
    ("request-too-large", 1, "2024/11/05 09:12:44 http: request body too large"),
    ("request-too-large", 1, "{\"detail\":\"Part exceeded maximum size of 1024KB.\"}"),
    ("request-too-large", 1, "{\"error\":{\"type\":\"request_too_large\",\"message\":\"Request exceeds the maximum "
                             "size\"}}"),
    ("request-too-large", 1, "error=\"400 {\"error\":{\"type\":\"invalid_params\",\"message\":\"messages.1.content.1."
                             "image.source.base64: image exceeds 5 MB maximum: 5272940 bytes > 5242880 bytes\"}}\""),
]

# (after blind batches 241-248, their scored misses: other tools' words for the same failures)
WORDINGS += [
    ("path-not-writable", 2, "Error: could not create directory mkdir /.ollama:permission denied."),
    ("path-not-writable", 5, "NotWritableError: The current user does not have write permissions to a required path."),
    ("host-oom-killed", 30, "Your notebook tried to allocate more memory than is available. It has restarted."),
    ("endpoint-not-ready", 4, "RuntimeError: The model is currently loading, please re-run the query"),
    ("flash-attn-undefined-symbol", 8, "RuntimeError: operator torchvision::nms does not exist"),
    ("engine-arg-unrecognized", 6, "TypeError: AsyncEngineArgs.__init__() got an unexpected keyword argument "
                                   "'disable_log_requests'"),
    ("engine-arg-unrecognized", 6, "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'use_v2_block_manager'"),
    ("cuda-headers-missing", 3, "[Bug]: Latest vllm docker can not serve nvfp4 models. `curand_kernel.h: No such file or "
                                "directory`"),
]

# lines left to other entries, or to none
QUIET = [
    ("request-too-large", "  File \"/usr/lib/python3.10/subprocess.py\", line 413, in check_call"),
    ("request-too-large", "| 413 Payload Too Large | 载荷过大 | 上传图像超过内存限制(默认≤5MB) |"),
    ("request-too-large", "openai.RateLimitError: Error code: 429 - {'error': {'message': 'Request too large for gpt-4o "
                          "in organization org-x on tokens per min (TPM): Limit 30000, Requested 33264.'}}"),
    ("request-too-large", "2025-07-30 00:09:38  INFO router: src/service_discovery.rs:413: Successfully added worker"),
    ("request-too-large", "DEBUG:httpx:HTTP Request: POST http://gpu1:8000/v1/chat/completions \"HTTP/1.1 413 Payload "
                          "Too Large\""),
    ("request-too-large", "raise HTTPException(status_code=413, detail=\"Payload Too Large\")"),
    ("request-too-large", "    413: \"Payload Too Large\","),
    ("request-too-large", "  \"413\": {\"description\": \"Payload Too Large\"},"),
    ("request-too-large", "case http.StatusRequestEntityTooLarge: // 413 Payload Too Large"),
    ("request-too-large", "REQUEST_TOO_LARGE = \"request_too_large\""),
    ("request-too-large", "WARNING: payload too large (6.1 MB), downscaling page 3 and retrying"),
    ("request-too-large", "  --payload-limit <PAYLOAD_LIMIT>  Payload size limit in bytes. Requests above it get HTTP 413 "
                          "[default: 2000000]"),
    ("engine-arg-unrecognized", "Error: Missing option '--model'."),
    ("engine-arg-unrecognized", "    cli_test.go:88: expected error: \"unknown flag: --bogus\""),
    ("engine-arg-unrecognized", "\tassert.EqualError(t, err, \"unknown flag: --foo\")"),
    ("engine-arg-unrecognized", "* `Error: No such option: -m` means the -m/--method flag predates this release"),
    ("python-module-missing", "PDF rendering requires PyMuPDF: `pip install pymupdf`"),
    ("python-module-missing", "2024-08-10 10:00:00.000 | ERROR    | magic_pdf.model.pdf_extract_kit:<module>:28 - Required "
                              "dependency not installed, please install by "),
    ("hub-gated-repo", "Note: Access to model google/gemma-2-9b is restricted"),
    ("engine-arg-unrecognized", "TypeError: Foo.__init__() got an unexpected keyword argument 'disable_log_requests'"),
    ("flash-attn-undefined-symbol", "registered operator torchvision::nms for the Meta backend"),
    ("path-not-writable", "chmod: changing permissions of '/dev/null': Operation not permitted"),
]
QUIET += [
    ("endpoint-not-ready", "The model is currently loaded on GPU 0"),
    ("engine-arg-unrecognized", "the unknown flag: it is ignored by this build"),
    ("cuda-oom", "|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |"),
    ("python-module-missing", "This feature requires Python: 3.10 or newer"),
    ("hub-gated-repo", "Access to model meta-llama/Meta-Llama-3-8B is restricted to members of the organization's "
                       "review list, see the card"),
    ("no-space-left", "  Warning  Evicted  3m  kubelet  The node had condition: [MemoryPressure]."),
    ("service-unreachable", "2019/05/02 13:58:22 [crit] 11#11: *1 connect() to unix:/tmp/hypercorn.sock failed (13: "
                            "Permission denied) while connecting to upstream, client: 172.17.0.1"),
]

NEAR = [
    ("cuda-oom", "Comfy-Org/ComfyUI/pull/13950"),
    ("cuda-oom", "mlcommons/algorithmic-efficiency/issues/425"),
    ("flash-attn-undefined-symbol", "pytorch/pytorch/issues/157648"),
    ("path-not-writable", "conda/conda/issues/7267"),
]

(test_each_new_case_is_named_through_its_new_pattern, test_each_wording_is_named_through_its_pattern,
 test_lines_left_to_others_stay_out_of_the_entry, test_the_near_misses_stay_quiet) = corpus.family_tests(
    CASES, WORDINGS, QUIET, NEAR)


@pytest.mark.parametrize("line,cls", [
    ("panic: runtime error: index out of range [0] with length 0", "compiler-error"),   # "error:" comes first
    ("panic: interface conversion: interface {} is nil, not string", "panic"),
    ("`panic: height:27 or width:257 must be larger than factor:28`", "panic"),
    ("app/UmiOCR-data/plugins/linux_x64_PaddleOCR-json_v141/run.sh: 4: Bad substitution", "shell-error"),
    ("/ownit/tmp/bitwarden-install.sh: 48: Syntax error: \"(\" unexpected", "compiler-error"),   # its "error:" first
    ("./run.sh: line 12: syntax error near unexpected token `('", "shell-error"),
    ("zsh: no matches found: magic-pdf[full]==0.7.0b1", "shell-error"),
    ("type=AVC msg=audit(1503978775.261:360): avc:  denied  { write } for  pid=4546 comm=\"touch\" name=\"xxx\" "
     "scontext=system_u:system_r:container_t:s0 tclass=dir permissive=0", "selinux-denied"),
    ("Unable to open /dev/kfd read-write: Permission denied", "device-denied"),
    ("failed to open /dev/dri/renderD128: Permission denied", "device-denied"),
    ("/site-packages/bitsandbytes/libbitsandbytes_cuda116.dll: invalid ELF header", "library-missing"),
    # (not a failure: prose, a count, an audit line that only logged, a note about quoting)
    ("./run.sh: line 3: ${MODEL_PATH,,}: bad substitution", "shell-error"),
    ("bash: -c: line 1: syntax error near unexpected token `('", "shell-error"),
    ("type=AVC msg=audit(1411111111.123:45): avc:  denied  { read } for  pid=912 comm=\"vllm\" name=\"nvidia0\" "
     "scontext=system_u:system_r:container_t:s0 tclass=chr_file", "selinux-denied"),
    ("  panic: false", None),
    ("#55 0.094 The virtual environment was not created successfully because ensurepip is not", "venv-failed"),
    ("''Cannot connect to GPU backend", "no-gpu-found"),
    ("You cannot currently connect to a GPU due to usage limits in Colab. Learn more", "no-gpu-found"),
    ("Could not Open /dev/null in this mode: Permission denied", None),
    ("Don't panic: the server restarts itself.", None),
    ("the panic: handler is documented below", None),
    ("type=AVC msg=audit(1.2:3): avc:  denied  { create } for  pid=4692 comm=\"runc\" tclass=key permissive=1", None),
    ("quote extras (e.g. `pip install '.[fast]'`) to avoid \"no matches found\" errors caused by shell globbing", None),
    ("open /dev/null for reading", None),
])
def test_stop61_safety_net_shapes_are_failure_classes(line, cls):
    assert scanner.generic_class(line) == cls
