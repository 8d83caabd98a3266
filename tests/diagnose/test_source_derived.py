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
]

# (entry the line must NOT produce, the filled-in line, why, where the format comes from)
APART = [
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
    # round 13. pip's no-version error (pypa/pip src/pip/_internal/resolution/resolvelib/factory.py, "(from versions:
    # %s)" in ascending order) when the index lost the pin (a newer patch of the same minor first) or when the index is
    # PyTorch's CUDA one (local labels: it begins at that release whatever the Python): not the interpreter's version
    ("python-version-unsupported", "ERROR: Could not find a version that satisfies the requirement xgrammar==0.1.11 "
     "(from versions: 0.1.14, 0.1.15)", "pypa/pip src/pip/_internal/resolution/resolvelib/factory.py"),
    ("python-version-unsupported", "ERROR: Could not find a version that satisfies the requirement torch==1.13.1 "
     "(from versions: 2.0.0+cu118, 2.0.1+cu118)", "pypa/pip src/pip/_internal/resolution/resolvelib/factory.py"),
    ("python-version-unsupported", "ERROR: Could not find a version that satisfies the requirement torch==1.3.0 "
     "(from versions: 0.1.2, 0.1.2.post1, 0.1.2.post2)", "pypa/pip src/pip/_internal/resolution/resolvelib/factory.py"),
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
