"""SOURCE-DERIVED wordings: the format strings of the tools that print a failure, filled in by hand.

Kept apart from the real corpus (tests/fixtures/diagnose/corpus/, copied from public threads) on purpose: no one
was seen pasting these exact lines, but the tools print them for the failure an entry names, so an entry written
for the failure (its key tokens) must accept them, and the near-alike lines next to them must stay apart.
Each item cites where its format comes from (repository, file, version); the filled-in values are illustrative.
"""

import pytest

import corpus

SCAN = corpus.Scanner()

# (entry the line must produce, the filled-in line, where the format string comes from)
NAMED = [
    # NVML's return codes (nvml.h, any driver since R304: NVML_ERROR_DRIVER_NOT_LOADED = 9,
    # NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18) as go-nvml names them (NVIDIA/go-nvml pkg/nvml/const.go:
    # ERROR_DRIVER_NOT_LOADED, ERROR_LIB_RM_VERSION_MISMATCH; Return.String()), wrapped by a Go program's fmt.Errorf
    ("cuda-driver-missing", "failed to initialize NVML: ERROR_DRIVER_NOT_LOADED", "NVIDIA/go-nvml pkg/nvml/const.go"),
    ("nvml-driver-mismatch", "error initializing NVML: ERROR_LIB_RM_VERSION_MISMATCH", "NVIDIA/go-nvml pkg/nvml/const.go"),
    # nvmlErrorString(NVML_ERROR_DRIVER_NOT_LOADED) = "Driver Not Loaded" after DCGM's / a C program's
    # "Failed to initialize NVML: %s" (nvidia-smi prints the same prefix for other codes)
    ("cuda-driver-missing", "Failed to initialize NVML: Driver Not Loaded", "nvml.h nvmlErrorString, NVML API reference"),
    # Ollama's NVML probe (ollama/ollama gpu/gpu_info_nvml.c, 0.1.2x): LOG(verbose, "nvmlInit_v2 err: %d\n", ret) and
    # snprintf(buf, buflen, "nvml vram init failure: %d", ret), with 18 = NVML_ERROR_LIB_RM_VERSION_MISMATCH
    ("nvml-driver-mismatch", "nvmlInit_v2 err: 18", "ollama/ollama gpu/gpu_info_nvml.c"),
    ("nvml-driver-mismatch", 'time=2024-03-01T10:00:00.000Z level=INFO source=gpu.go:300 msg="Unable to load CUDA '
     'management library /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.14: nvml vram init failure: 18"',
     "ollama/ollama gpu/gpu_info_nvml.c"),
    # FindPackageHandleStandardArgs' "Could NOT find ${_NAME} (missing: ${MISSING_VARS}) ${VERSION_MSG}" for
    # CMake's FindCUDAToolkit (Kitware/CMake Modules/FindCUDAToolkit.cmake, 3.17+: REQUIRED_VARS
    # CUDAToolkit_INCLUDE_DIR [CUDAToolkit_VERSION] CUDA_CUDART CUDAToolkit_BIN_DIR): headers found, no libcudart
    ("cudart-cmake-notfound", '  Could NOT find CUDAToolkit (missing: CUDA_CUDART) (found version "12.4.131")',
     "Kitware/CMake Modules/FindCUDAToolkit.cmake"),
    # git's smart-HTTP client (git/git remote-curl.c: error(_("RPC failed; %s"), curl_errorstr); for an HTTP status
    # curl_errorstr is "HTTP %ld curl %d %s") and fetch-pack's sideband reader (git/git fetch-pack.c, sideband.c, 2.3x)
    ("github-fetch-failed", "Cloning into 'vllm'...\nerror: RPC failed; HTTP 502 curl 22 The requested URL returned "
     "error: 502", "git/git remote-curl.c"),
    ("github-fetch-failed", "Cloning into 'cutlass'...\nerror: 4027 bytes of body are still expected\n"
     "fetch-pack: unexpected disconnect while reading sideband packet\nfatal: early EOF", "git/git fetch-pack.c"),
    # the OpenAI-compatible clients' exception classes for a 401 (anthropics/anthropic-sdk-python
    # src/anthropic/_exceptions.py AuthenticationError; BerriAI/litellm litellm/exceptions.py AuthenticationError,
    # whose message starts "litellm.AuthenticationError: ")
    ("unauthorized-401", "anthropic.AuthenticationError: invalid x-api-key",
     "anthropics/anthropic-sdk-python src/anthropic/_exceptions.py"),
    ("unauthorized-401", "litellm.AuthenticationError: AuthenticationError: OpenAIException - The api_key client "
     "option must be set", "BerriAI/litellm litellm/exceptions.py"),
    # urllib3's MaxRetryError (urllib3/urllib3 src/urllib3/exceptions.py: "Max retries exceeded with url: %s (Caused by
    # %r)", after the pool's "HTTPConnectionPool(host=%r, port=%r): ") for a refused local port
    ("service-unreachable", "requests.exceptions.ConnectionError: HTTPConnectionPool(host='localhost', port=8000): Max "
     "retries exceeded with url: /v1/chat/completions (Caused by NewConnectionError('<urllib3.connection."
     "HTTPConnection object at 0x7f0>: Failed to establish a new connection: [Errno 111] Connection refused'))",
     "urllib3/urllib3 src/urllib3/exceptions.py"),
    # round 12: Paddle's shared downloader (PaddlePaddle/Paddle python/paddle/utils/download.py, and its copies in
    # PaddleOCR ppocr/utils/network.py, PaddleDetection, PaddleGAN: raise RuntimeError("Download from {} failed. "
    # "Retry limit reached".format(url)) after DOWNLOAD_RETRY_LIMIT tries) for a PaddleDetection weight
    ("hub-unreachable", "RuntimeError: Download from https://paddledet.bj.bcebos.com/models/ppyoloe_crn_l_300e_coco."
     "pdparams failed. Retry limit reached", "PaddlePaddle/Paddle python/paddle/utils/download.py"),
    # Triton 3.2+ names the stub after the module (triton/runtime/build.py compile_module_from_src: src_path =
    # os.path.join(tmpdir, f"{name}.c"), name "__triton_launcher"); cc_cmd = [cc, src, "-O3", "-shared", "-fPIC", ...]
    ("triton-compile-failed", "subprocess.CalledProcessError: Command '['/usr/bin/cc', '/tmp/tmpab12cd34/"
     "__triton_launcher.c', '-O3', '-shared', '-fPIC', '-Wno-psabi', '-o', '/tmp/tmpab12cd34/__triton_launcher."
     "cpython-312-x86_64-linux-gnu.so', '-lcuda']' returned non-zero exit status 1.",
     "triton-lang/triton python/triton/runtime/build.py"),
    # the enum without its message: cuda-python returns the error as an IntEnum whose repr a caller prints
    # (NVIDIA/cuda-python cuda/bindings/runtime.pyx, 12.x: cudaError_t.cudaErrorCallRequiresNewerDriver = 36)
    ("driver-too-old", "RuntimeError: CUDA call failed: <cudaError_t.cudaErrorCallRequiresNewerDriver: 36>",
     "NVIDIA/cuda-python cuda/bindings/runtime.pyx"),
    # libnvidia-container's loader error (NVIDIA/libnvidia-container src/nvc.c, dxcore.c: "load library failed: %s",
    # dlerror()'s text after the name) under nvidia-container-cli's "initialization error: %s", as the runtime hook prints it
    ("nvml-library-missing", "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: "
     "cannot open shared object file: no such file or directory: unknown", "NVIDIA/libnvidia-container src/nvc.c"),
    # vLLM's --api-key middleware (vllm-project/vllm vllm/entrypoints/openai/api_server.py, 0.4-0.8:
    # JSONResponse(content={"error": "Unauthorized"}, status_code=401)), the body as curl prints it on one line
    ("unauthorized-401", '{"error":"Unauthorized"}', "vllm-project/vllm vllm/entrypoints/openai/api_server.py"),
    # vLLM's startup check (vllm-project/vllm vllm/v1/worker/utils.py request_memory, 0.10+: "Free memory on device
    # {device} ({free:.2f}/{total:.2f} GiB) on startup is less than desired GPU memory utilization ({util}, {req:.2f}
    # GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.") wrapped by a terminal
    ("gpu-busy-memory", "(EngineCore_DP0 pid=212) ValueError: Free memory on device cuda:0 (10.12/79.19 GiB) on startup is "
     "less than\ndesired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU "
     "memory used by other processes.", "vllm-project/vllm vllm/v1/worker/utils.py"),
    # round 13. huggingface_hub's disk-space check (huggingface/huggingface_hub src/huggingface_hub/file_download.py
    # _check_disk_space, 0.17+: warnings.warn(f"Not enough free disk space to download the file. The expected file size
    # is: {:.2f} MB. The target location {} only has {:.2f} MB free disk space.")), whole and with its head cut off
    ("no-space-left", "UserWarning: Not enough free disk space to download the file. The expected file size is: "
     "10000.00 MB. The target location /root/.cache/huggingface/hub only has 4489.36 MB free disk space.",
     "huggingface/huggingface_hub src/huggingface_hub/file_download.py"),
    # Flyte's report of a task pod's failed container (flyteorg/flyteplugins go/tasks/pluginmachinery/flytek8s/
    # pod_helper.go DemystifyFailure: "[%v] terminated with exit code (%v). Reason [%v]. Message: \n%v."): 137 is
    # SIGKILL, whatever Kubernetes' Reason says
    ("host-oom-killed", "[1/1] currentAttempt done. Last Error: USER::Pod failed. No message received from kubernetes.\n"
     "[a1b2c3-n0-0] terminated with exit code (137). Reason [Error]. Message: \n.",
     "flyteorg/flyteplugins go/tasks/pluginmachinery/flytek8s/pod_helper.go"),
    # pip's no-version error (pypa/pip src/pip/_internal/resolution/resolvelib/factory.py, candidates in ascending order)
    # for a pin whose major is below every release offered: TensorFlow 1.x has no wheel for Python 3.8+
    ("python-version-unsupported", "ERROR: Could not find a version that satisfies the requirement tensorflow==1.15.5 "
     "(from versions: 2.12.0rc0, 2.12.0, 2.13.0)", "pypa/pip src/pip/_internal/resolution/resolvelib/factory.py"),
    # Paddle's enforce for a failed CUDA call (PaddlePaddle/Paddle paddle/phi/core/enforce.h, 2.3+: "CUDA error(%d),
    # %s." with cudaGetErrorString, then the "[Hint: 'cudaErrorMemoryAllocation'. ...]" line)
    ("cuda-oom", "OSError: (External) CUDA error(2), out of memory. ", "PaddlePaddle/Paddle paddle/phi/core/enforce.h"),
    # round 17. distutils' spawn() failing to run nvcc (pypa/setuptools setuptools/_distutils/spawn.py, Python 3.10+:
    # f"command {cmd!r} failed: {exc.args[-1]}"), here on Windows where the toolkit path holds spaces and backslashes
    ("nvcc-not-found", "error: command 'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\bin\\nvcc.exe' "
     "failed: No such file or directory", "pypa/setuptools setuptools/_distutils/spawn.py"),
    # GNU ld's "cannot find -l%s" (binutils ld/ldfile.c) for the device runtime nvcc links by default, in any linker's
    # prefix
    ("ld-cudart-missing", "/usr/bin/ld: cannot find -lcudadevrt: No such file or directory", "binutils ld/ldfile.c"),
    # round 21. MiniCPM-o's version dispatch in vLLM (vllm-project/vllm vllm/model_executor/models/minicpmo.py: f"Currently,
    # MiniCPMO only supports versions {supported_versions}. Got version: {version}"), as minicpmv.py's for MiniCPM-V
    ("vllm-arch-unsupported", "ValueError: Currently, MiniCPMO only supports versions 2.6. Got version: (4, 5)",
     "vllm-project/vllm vllm/model_executor/models/minicpmo.py"),
    # round 21. Triton 3.4+'s longer wording of the launcher build's compiler check (triton-lang/triton
    # python/triton/runtime/build.py _build: "Failed to find C compiler. Please specify via CC environment variable or
    # set triton.knobs.build.impl.")
    ("triton-compile-failed", "RuntimeError: Failed to find C compiler. Please specify via CC environment variable or "
     "set triton.knobs.build.impl.", "triton-lang/triton python/triton/runtime/build.py"),
    # vLLM V0's memory profile and block count when the weights and the activation peak exceed the budget
    # (vllm-project/vllm vllm/worker/worker.py determine_num_available_blocks 0.6-0.8: "the rest of the memory reserved
    # for KV Cache is %.2fGiB."; vllm/executor/executor_base.py initialize_cache: "# %s blocks: %d, # CPU blocks: %d" with
    # current_platform.device_name, "GPU" before 0.7)
    ("kv-cache-too-small", "INFO 02-26 09:54:05 worker.py:267] model weights take 6.90GiB; non_torch_memory takes 0.05GiB; "
     "PyTorch activation peak memory takes 1.40GiB; the rest of the memory reserved for KV Cache is -0.75GiB.",
     "vllm-project/vllm vllm/worker/worker.py"),
    ("kv-cache-too-small", "INFO 04-27 10:13:05 llm_engine.py:275] # GPU blocks: 0, # CPU blocks: 512",
     "vllm-project/vllm vllm/engine/llm_engine.py"),
    ("kv-cache-too-small", "INFO 02-26 09:54:05 executor_base.py:111] # rocm blocks: 0, # CPU blocks: 2048",
     "vllm-project/vllm vllm/executor/executor_base.py"),
    # huggingface_hub's HFValidationError (huggingface_hub/utils/_validators.py validate_repo_id: "Repo id must use
    # alphanumeric chars or '-', '_', '.', '--' and '..' are forbidden, '-' and '.' cannot start or end the name, max
    # length is 96: '{repo_id}'.") wrapped at 80 columns by rich or a terminal: the value on a later line
    ("model-dir-missing", "HFValidationError: Repo id must use alphanumeric chars or '-', '_', '.', '--' ",
     "huggingface/huggingface_hub src/huggingface_hub/utils/_validators.py"),
    # a Windows toolkit path that is not there (subprocess's FileNotFoundError under setup.py builds)
    ("nvcc-not-found", "FileNotFoundError: [Errno 2] No such file or directory: 'C:\\Program Files\\NVIDIA GPU Computing "
     "Toolkit\\CUDA\\v12.4\\bin\\nvcc.exe'", "python/cpython Lib/subprocess.py _execute_child"),
    # round 23. TurboMind's check (InternLM/lmdeploy src/turbomind/utils/cuda_utils.h, 0.2-0.6: "[TM][ERROR] CUDA runtime
    # error: " + cudaGetErrorString + " " + file:line) as a Chinese report glues it to its own words, with no space
    ("cuda-oom", "服务运行一段时间后报错CUDA runtime error: out of memory /lmdeploy/src/turbomind/utils/allocator.h:233",
     "InternLM/lmdeploy src/turbomind/utils/cuda_utils.h"),
    # round 28. torch_memory_saver's check macro (fzyzcjy/torch_memory_saver csrc/utils.h CUDA_ERROR_CHECK: "[torch_memory_saver.cpp]
    # cudaError error: " << result << " (" << cudaGetErrorString(result) << ") " << " file=..."), 2 = cudaErrorMemoryAllocation;
    # c10's C++ warning logger (pytorch/pytorch c10/util/Exception.cpp WarningHandler::process: "[W file:line] Warning: <msg>
    # (function <fn>)") for CUDAFunctions.cpp's TORCH_WARN in libtorch without Python
    ("cuda-oom", "[torch_memory_saver.cpp] cudaError error: 2 (out of memory)  file=csrc/core.cpp func=resume line=182",
     "fzyzcjy/torch_memory_saver csrc/utils.h"),
    ("torch-cuda-init-warning", "[W CUDAFunctions.cpp:100] Warning: CUDA initialization: CUDA driver initialization failed, "
     "you might not have a CUDA gpu. (function operator())", "pytorch/pytorch c10/util/Exception.cpp"),
]

# (entry the line must NOT produce, the filled-in line, why, where the format comes from)
APART = [
    # round 21. TensorFlow's dso_loader probing an optional library (tensorflow/tsl/platform/default/dso_loader.cc:
    # "Could not load dynamic library '%s'; dlerror: %s"): it warns and goes on, unlike a loader refusing to start
    ("nvrtc-notfound", "2021-03-01 10:00:00.000000: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could "
     "not load dynamic library 'libnvrtc.so.11.1'; dlerror: libnvrtc.so.11.1: cannot open shared object file: No such "
     "file or directory", "tensorflow/tensorflow tensorflow/stream_executor/platform/default/dso_loader.cc"),
    # the same MaxRetryError when the local server answered but too slowly: a read timeout is not "nothing answers"
    ("service-unreachable", "HTTPConnectionPool(host='127.0.0.1', port=8000): Max retries exceeded with url: "
     "/v1/chat/completions (Caused by ReadTimeoutError(\"HTTPConnectionPool(host='127.0.0.1', port=8000): Read timed "
     "out. (read timeout=600)\"))", "urllib3/urllib3 src/urllib3/exceptions.py"),
    # git's push side of the same disconnect (git/git send-pack.c) is no fetch of a build dependency, and an HTTP 4xx
    # on a push is a refusal, not the network
    ("github-fetch-failed", "Cloning into 'x'...\nerror: RPC failed; HTTP 400 curl 22 The requested URL returned error: "
     "400\nsend-pack: unexpected disconnect while reading sideband packet", "git/git send-pack.c, remote-curl.c"),
    # FindCUDAToolkit's optional search as a status line: the build goes on without CUDA
    ("cudart-cmake-notfound", "-- Could NOT find CUDAToolkit (missing: CUDA_CUDART CUDAToolkit_BIN_DIR) (found version "
     '"12.4.131")', "Kitware/CMake Modules/FindPackageHandleStandardArgs.cmake"),
    # nvidia-smi's exit code for another NVML error (nvidia-smi(1): 9 = the driver is not loaded): not a mismatch
    ("nvml-driver-mismatch", "nvidia-smi failed with return code 9", "nvidia-smi(1) RETURN VALUE"),
    # WSAEACCES from the socket's constructor (python/cpython Lib/socket.py: socket.__init__ calls
    # _socket.socket.__init__(self, family, type, proto, fileno); 3.11+ adds the caret line): a raw socket without
    # an administrator, no port
    ("port-access-forbidden", '  File "C:\\Python312\\Lib\\socket.py", line 233, in __init__\n'
     "    _socket.socket.__init__(self, family, type, proto, fileno)\n"
     "    ~~~~~~~~~~~~~~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "PermissionError: [WinError 10013] An attempt was made to access a socket in a way forbidden by its access "
     "permissions", "python/cpython Lib/socket.py"),
    # a submodule missing alone is vLLM's own warning for a dev build (vllm-project/vllm vllm/version.py:
    # warnings.warn(f"Failed to read commit hash:\\n{e}", RuntimeWarning)), printed with its source line; the server goes on
    ("python-module-missing", "/usr/lib/python3/dist-packages/vllm/connections.py:8: RuntimeWarning: Failed to read "
     "commit hash:\nNo module named 'vllm._version'\n  from vllm.version import __version__ as VLLM_VERSION",
     "vllm-project/vllm vllm/version.py"),
    # round 12: huggingface_hub's snapshot_download returning a non-empty local_dir when the hub cannot be reached
    # (huggingface/huggingface_hub src/huggingface_hub/_snapshot_download.py, 0.23+: logger.warning(f"Returning
    # existing local_dir `{local_dir}` as remote repo cannot be accessed in `snapshot_download` ({api_call_error}).")):
    # the model is there and the run goes on
    ("hub-unreachable", "Returning existing local_dir `/models/PaddleOCR-VL` as remote repo cannot be accessed in "
     "`snapshot_download` ((MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded "
     "with url: /api/models/PaddlePaddle/PaddleOCR-VL/revision/main (Caused by NewConnectionError('<urllib3.connection."
     "HTTPSConnection object at 0x7f0>: Failed to establish a new connection: [Errno 101] Network is unreachable'))\"),"
     " '(Request ID: 0)')).", "huggingface/huggingface_hub src/huggingface_hub/_snapshot_download.py"),
    # Paddle's wheel bucket is pip's index, not a model host (pip's "Could not install packages due to an OSError:"
    # with urllib3's MaxRetryError, pip/_internal/commands/install.py create_os_error_message)
    ("hub-unreachable", "ERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='paddle-whl."
     "bj.bcebos.com', port=443): Max retries exceeded with url: /stable/cu118/paddlepaddle-gpu/ (Caused by "
     "NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f0>: Failed to establish a new "
     "connection: [Errno -3] Temporary failure in name resolution'))", "pypa/pip src/pip/_internal/commands/install.py"),
    # a program's own request to a non-index host timing out (urllib3 src/urllib3/connectionpool.py _raise_timeout:
    # "Read timed out. (read timeout=%s)") is not pip's
    ("pip-timeout", "ERROR - fetch failed: HTTPSConnectionPool(host='api.example-cdn.net', port=443): Read timed out. "
     "(read timeout=20)", "urllib3/urllib3 src/urllib3/connectionpool.py"),
    # round 13. pip's no-version error (pypa/pip src/pip/_internal/resolution/resolvelib/factory.py, "(from versions:
    # %s)" in ascending order) when the index lost the pin (a newer patch of the same minor first) or when the index is
    # PyTorch's CUDA one (local labels: it begins at that release whatever the Python): not the interpreter's version
    ("python-version-unsupported", "ERROR: Could not find a version that satisfies the requirement xgrammar==0.1.11 "
     "(from versions: 0.1.14, 0.1.15)", "pypa/pip src/pip/_internal/resolution/resolvelib/factory.py"),
    ("python-version-unsupported", "ERROR: Could not find a version that satisfies the requirement torch==1.13.1 "
     "(from versions: 2.0.0+cu118, 2.0.1+cu118)", "pypa/pip src/pip/_internal/resolution/resolvelib/factory.py"),
    ("python-version-unsupported", "ERROR: Could not find a version that satisfies the requirement torch==1.3.0 "
     "(from versions: 0.1.2, 0.1.2.post1, 0.1.2.post2)", "pypa/pip src/pip/_internal/resolution/resolvelib/factory.py"),
    # round 15: PaddleX's warning at a start without network (paddlex/inference/utils/official_models.py 3.1+:
    # "No model hoster is available! Please check your network connection to one of the following model hosts: ...
    # Otherwise, only local models can be used."): healthy offline runs with local models print it too (round 12);
    # only the raise after it ("No available model hosting platforms detected") is the failure
    ("hub-unreachable", "No model hoster is available! Please check your network connection to one of the following "
     "model hosts:", "PaddlePaddle/PaddleX paddlex/inference/utils/official_models.py"),
    # round 17. urllib3's retry warning (urllib3/urllib3 src/urllib3/connectionpool.py urlopen: log.warning("Retrying
    # (%r) after connection broken by '%r': %s", retries, err, url)) for a server's bare root: pip asks an index page or a
    # file, never "/"
    ("pip-retrying", "Retrying (Retry(total=2, connect=None, read=None, redirect=None, status=None)) after connection "
     "broken by 'NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f0>: Failed to establish a new "
     "connection: [Errno 111] Connection refused')': /", "urllib3/urllib3 src/urllib3/connectionpool.py"),
    # uv's other hint under the same error line (astral-sh/uv crates/uv-resolver: "You're on {os} (`{tag}`), but
    # `{name}` ({version}) only has wheels for the following platforms: ..."): an OS or architecture, not the Python
    ("python-version-unsupported", "hint: You're on macOS (`macosx_14_0_arm64`), but `nvidia-nccl-cu12` (v2.21.5) "
     "only has wheels for the following platforms: `manylinux2014_aarch64`, `manylinux2014_x86_64`",
     "astral-sh/uv crates/uv-resolver"),
    # round 23. SGLang's same check with SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 (sgl-project/sglang
    # python/sglang/srt/configs/model_config.py: logger.warning(f"Warning: User-specified context_length ({context_length})
    # is greater than the derived context_length ({derived_context_len}). This may lead to incorrect model outputs or CUDA
    # errors.")): the server goes on with the longer context
    ("max-model-len-too-long", "[2025-06-25 14:01:12] Warning: User-specified context_length (131072) is greater than "
     "the derived context_length (40960). This may lead to incorrect model outputs or CUDA errors.",
     "sgl-project/sglang python/sglang/srt/configs/model_config.py"),
    # round 28. torch_memory_saver's own note on a recoverable driver-API OOM (csrc/utils.h cu_mem_create: "cuMemCreate
    # CUDA_ERROR_OUT_OF_MEMORY (may not be an issue e.g. torch allocator will free cache and retry)"): the allocator frees its
    # cache and retries; only the check macro's "cudaError error: 2" after it ends the run
    ("cuda-oom", "[torch_memory_saver.cpp] cuMemCreate CUDA_ERROR_OUT_OF_MEMORY (may not be an issue e.g. torch allocator will "
     "free cache and retry)", "fzyzcjy/torch_memory_saver csrc/utils.h"),
    ("cuda-driver-missing", "[W CUDAFunctions.cpp:100] Warning: CUDA initialization: Found no NVIDIA driver on your system. "
     "Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx "
     "(function operator())", "pytorch/pytorch c10/util/Exception.cpp"),
    # round 31. aiohttp's plain ClientConnectorError (aiohttp/client_exceptions.py, 3.x: "Cannot connect to host
    # {host}:{port} ssl:{ssl} [{os_error}]") to a local server's own port, no proxy involved: the server is down
    # (service-unreachable), not a proxy; only a proxy client's well-known port or ClientProxyConnectionError say proxy
    ("local-proxy-failed", "aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host localhost:8000 "
     "ssl:default [Connect call failed ('127.0.0.1', 8000)]", "aio-libs/aiohttp aiohttp/client_exceptions.py"),
    # PySocks' refusal from a proxy on another host (socks.py: "Error connecting to {} proxy {}:{}"): a remote proxy is not
    # this host's proxy client
    ("local-proxy-failed", "socks.ProxyConnectionError: Error connecting to SOCKS5 proxy 10.0.0.5:1080: [Errno 111] "
     "Connection refused", "Anorov/PySocks socks.py"),
    # round 33. torch's DLL loader on Windows (pytorch/pytorch torch/__init__.py _load_dll_libraries, 1.8+: err.strerror +=
    # f' Error loading "{dll}" or one of its dependencies.') naming NVRTC's DLL under WinError 1455: the paging file is too
    # small to map it (paging-file-too-small's), not a missing DLL; nvrtc-notfound's unless keeps it apart
    ("nvrtc-notfound", 'OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading '
     '"C:\\Users\\me\\venv\\lib\\site-packages\\torch\\lib\\nvrtc64_112_0.dll" or one of its dependencies.',
     "pytorch/pytorch torch/__init__.py"),
    # round 37. the openai client's repr (openai/openai-python src/openai/types/chat, 1.x) of a reply that is a tool call
    # (finish_reason 'tool_calls', content None) or cut by max_tokens (finish_reason 'length', all of it still reasoning):
    # content None is normal there; thinking-not-disabled's pattern 3 takes only a reply that ended ('stop')
    ("thinking-not-disabled", "ChatCompletion(id='chatcmpl-9a8b7c6d5e4f3a2b', choices=[Choice(finish_reason='tool_calls', "
     "index=0, logprobs=None, message=ChatCompletionMessage(content=None, refusal=None, role='assistant', annotations=None, "
     "audio=None, function_call=None, tool_calls=[ChatCompletionMessageToolCall(id='chatcmpl-tool-1a2b3c', "
     "function=Function(arguments='{\"city\": \"Paris\"}', name='get_weather'), type='function')], "
     "reasoning_content='The user asks for the weather, so I call the tool.'))])", "openai/openai-python src/openai/types/chat"),
    ("thinking-not-disabled", "ChatCompletion(id='chatcmpl-0f1e2d3c4b5a6978', choices=[Choice(finish_reason='length', "
     "index=0, logprobs=None, message=ChatCompletionMessage(content=None, refusal=None, role='assistant', annotations=None, "
     "audio=None, function_call=None, tool_calls=[], reasoning_content='Okay, let me work through this step by step'))])",
     "openai/openai-python src/openai/types/chat"),
    # pip's InstallationError for a wheel whose platform tag alone does not fit (pypa/pip src/pip/_internal/resolution:
    # "%s is not a supported wheel on this platform."): a py2.py3-none wheel names no CPython, so not the interpreter's version
    ("python-version-unsupported", "ERROR: mssql_cli-1.1.0-py2.py3-none-manylinux1_x86_64.whl is not a supported wheel on "
     "this platform.", "pypa/pip src/pip/_internal/resolution/legacy/resolver.py"),
    # git's submodule checkout failure (git/git builtin/submodule--helper.c) for a submodule that is not CUTLASS
    ("cutlass-clone-failed", "fatal: Unable to checkout 'fa789aa1eaffb88c0175b7f31d91148ff6fcb943' in submodule path "
     "'dependencies/cub'", "git/git builtin/submodule--helper.c"),
    # round 39. urllib3's retry line when the connection to the index itself is reset (ProtocolError, no proxy in the way:
    # pypi/support#2957's shape): pip-retrying's, not a dead local proxy (local-proxy-failed pattern 10 wants ProxyError)
    ("local-proxy-failed", "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after "
     "connection broken by 'ProtocolError('Connection aborted.', ConnectionResetError(10054, 'An existing connection was "
     "forcibly closed by the remote host', None, 10054, None))': /simple/pip/", "urllib3/urllib3 src/urllib3/connectionpool.py"),
    # round 39. a proxy that answers but refuses the CONNECT (CPython's http.client _tunnel: "Tunnel connection failed: %d
    # %s", a 407 from a company proxy wanting credentials, batch 39's unnamed pip#1805): the proxy is up, not a dead one
    ("local-proxy-failed", "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after "
     "connection broken by 'ProxyError('Cannot connect to proxy.', OSError('Tunnel connection failed: 407 Proxy "
     "Authentication Required'))': /simple/requests/", "python/cpython Lib/http/client.py"),
    # round 39. uvicorn's access line for a 404 on the chat route (encode/uvicorn uvicorn/logging.py AccessFormatter:
    # '%s - "%s %s HTTP/%s" %d %s'): a server without the OpenAI routes answers it too (batch 3's near-miss), only the
    # stdlib http.server line of mlx_lm.server (served-model-name-mismatch pattern 6) is the model name
    ("served-model-name-mismatch", 'INFO:     127.0.0.1:45622 - "POST /v1/chat/completions HTTP/1.1" 404 Not Found',
     "encode/uvicorn uvicorn/logging.py"),
]


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("entry,line,origin", NAMED, ids=[f"{e}:{o}" for e, _, o in NAMED])
def test_a_source_format_filled_in_is_named(entry, line, origin, engine):
    hits = corpus.found(SCAN.scan({"log": line + "\n"}, engine))
    assert entry in hits, (origin, sorted(hits))


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("entry,line,origin", APART, ids=[f"{e}:{o}" for e, _, o in APART])
def test_a_near_alike_source_format_stays_apart(entry, line, origin, engine):
    hits = corpus.found(SCAN.scan({"log": line + "\n"}, engine))
    assert entry not in hits, (origin, sorted(hits))
