"""The log scanner: known failures, harmless noise and unexplained errors in a log.

Standard library only (hyperscan is used when it can be imported): this file also
runs on a remote host (``python3 -c`` with the rules as JSON) so that only the
findings travel back.

How it stays fast on multi-GB logs: every rule carries literals, one of which is
in any line it can match.  A multi-string search finds the few lines holding one
of them: hyperscan (compiled literal automaton, in-process), GNU grep (-F, streaming
the file) or, where neither is there, a Python loop over large chunks.  Only those
lines (and their context) reach the regexes; nothing is read into memory whole.
Rules over several lines look at their neighbour lines only when their own line
matched, by reading back (or ahead) from that line's byte offset.
"""

import collections
import functools
import gzip
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zlib

try:  # the colour codes stripped before matching: one regex, ocrdeploy.terminal's
    from ..terminal import COLOUR as ANSI
except ImportError:  # run alone on a host (python3 -c): the request carries it (see run_request)
    ANSI = None

try:  # (stop 51) the document model: on the controller only; a host's scan (python3 -c) reads services' and hosts' logs
    from .docmodel import reads_as_document as _reads_as_document
except ImportError:
    _reads_as_document = None

try:  # the compiled multi-pattern prefilter; optional, never needed for correctness
    import hyperscan
except Exception:  # noqa: BLE001 - any failure to import means: not available
    hyperscan = None

MARKER = "@@OCRDEPLOY-DIAGNOSE@@"
STAGE_ORDER = ("install", "compile", "start", "parse", "client")
MAX_LINE = 16384          # a line is cut here before matching and reporting
MAX_CANDIDATES = 2000000  # lines past this many candidates are counted, not examined
MAX_WINDOWS = 2000        # neighbour-line lookups of multi-line rules per log
SNIFF_BYTES = 8192        # the start of a log that must look like text
LEVEL = re.compile(r"(?<![\w/.-])(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL|(?:ERRO|FATA|DEBU)(?=\[\d))(?![\w/.-])")
QUIET_LEVELS = ("DEBUG", "INFO", "WARNING")
# A request echoed into a server's log at INFO/DEBUG (vLLM's "Received request ...: prompt: '...'") carries
# someone's text, not the server's state: no entry matches such a line, whatever the prompt says.
ECHO = re.compile(r"\b(?:Received|Added|Finished) request\b|\bprompt(?:_token_ids)?: ?['\"\[]|\bparams: SamplingParams\(")
# (round 15: a class named without the suffix but raised from a package's errors/exceptions module, as Triton's
# "triton.runtime.errors.OutOfResources: out of resource: shared memory" and huggingface_hub's
# "huggingface_hub.errors.OfflineModeIsEnabled: Cannot reach ..." print it)
# (round scan7: and from a module named in the singular, openai-python 0.x's openai/error.py: "openai.error.Timeout:
# Request timed out: HTTPConnectionPool(...)", "openai.error.TryAgain")
# (round scan9: and a class named with its case after an underscore, pynvml's NVMLError_<Name> made from NVML's return
# codes: "pynvml.nvml.NVMLError_NotSupported: Not Supported", "pynvml.NVMLError_InvalidArgument: Invalid Argument")
EXC_NAME = r"(?:(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)(?:_[A-Z][A-Za-z]{1,40})?|(?:[A-Za-z_][\w.]*\.)?(?:errors?|exceptions?)\.[A-Z]\w*)"
# The safety net: lines any failing tool prints.  A line of one of these classes that no
# entry explains is reported as unrecognised (exit 3), so such a log is never "clean".
GENERIC_CLASSES = (
    ("traceback", re.compile(r"Traceback \(most recent call last\)")),
    ("cmake-error", re.compile(r"CMake Error\b")),
    ("nvcc-fatal", re.compile(r"(?i)\b(?:nvcc|ptxas|nvlink|fatbinary|cicc)(?:\.exe)?\s+fatal\s*:")),
    ("build-killed", re.compile(r"^\s*(?:\S+:\s+)?Killed\s*$|\bninja: build stopped\b|\bninja: subcommand failed\b")),
    # (also with a space before the colon, as a retyped or cut title writes it: "ImportError : /opt/.../_C.so: undefined symbol")
    # (and a wrapper's class naming the cause's in parentheses: Ray's "ray.exceptions.RayTaskError(ValueError): ray::...")
    # (round scan12: and Node's util.inspect of an error that carries a code or a name of its own, in brackets after the
    # class: "TypeError [ERR_INVALID_ARG_TYPE]: The "path" argument must be of type string", the Vercel AI SDK's
    # "APICallError [AI_APICallError]: Not Found")
    ("exception", re.compile(r"(?<![\w.])" + EXC_NAME + r"(?:\([\w.]{1,80}\)| \[[A-Z][\w.]{1,80}\])?(?: ?:|\s*$)")),
    # (round rndfa) a model file whose first bytes are not the format's magic, in the loader's own words: ggml's
    # "gguf_init_from_file: invalid magic number 67676a74" / "invalid magic characters ''" (an old GGML .bin, an HTML
    # page saved as .gguf, a cut download), Ollama's "Error: invalid file magic", a Rust reader's "invalid GGUF magic
    # number": the model never loads, and no error word of its own stands on ggml's line.  Before compiler-error: the
    # format is the cause, "Error:" only its prefix
    # (round scan9: and ggml's older loader, "llama_model_load: invalid model file 'models/7B/ggml-model-q4_0.bin' (bad
    # magic)", "...: invalid model file (bad magic [got 0x67676d66 want 0x67676a74])": a model of another ggml version)
    ("model-format", re.compile(r"(?i)\binvalid (?:gguf |file )?magic (?:number|characters)\b|(?<![\w-])invalid file magic\b"
                                r"|\binvalid model file\b[^\n]{0,400}?\(bad magic\b"
                                # (round scan17) safetensors' refusal of a file whose first 8 bytes are not a header length
                                # it can read (a Git LFS pointer, an HTML page, a cut download), its error's Display without
                                # the SafetensorError class: "Error while deserializing header: HeaderTooLarge" (a title, an
                                # app's own print), "... header too large" (0.6)
                                r"|\bError while deserializing header: (?:HeaderTooLarge|HeaderTooSmall|InvalidHeader\w{0,30}"
                                r"|MetadataIncompleteBuffer|header too (?:large|small)|invalid header)\b"
                                # (round scan18) a serialized TensorRT engine (.engine/.plan) refused by the runtime's
                                # header check, built by another TensorRT or not an engine at all, in each release's
                                # words: TensorRT 7's "coreReadArchive.cpp (31) - Serialization Error in verifyHeader: 0
                                # (Magic tag does not match)", 8-10's "Serialization assertion stdVersionRead ==
                                # kSERIALIZATION_VERSION failed.Version tag does not match. Note: Current Version: 228,
                                # ...", a title's "IRuntime::deserializeCudaEngine: Version tag does not match."
                                r"|\b(?:Version|Magic) tag does not match\b")),
    # (gcc's other languages: "error fatal:", "schwerwiegender Fehler:", "erreur fatale :", "致命错误：")
    ("compiler-error", re.compile(r"(?i)(?<![\w-])(?:fatal )?error(?:\[E\d+\])?:|\bfatal error\b|\berror fatal:"
                                  r"|\bschwerwiegender Fehler:|\berreur fatale ?:|致命错误[:：]")),
    ("failed", re.compile(r"(?<![\w-])(?:FAILED|FATAL|Fatal error):")),
    # (round scan9) a Go command line refusing an option it does not know, in pflag's (cobra's) own words, "unknown flag:
    # --gpus" then "See 'docker run --help'." (docker, kubectl, helm, ollama, nerdctl), "unknown shorthand flag: 'g' in -g":
    # the command never ran (an old client, a misspelt or misplaced option); with "Error: " before it, compiler-error
    ("cli-flag", re.compile(r"(?<![\w-])unknown (?:shorthand )?flag: (?:--?[\w-]{1,60}|'[^'\n]{1,4}')")),
    # (round scan9) a Kubernetes container restarted again and again after it exited, the kubelet's back-off state as
    # kubectl prints it (the STATUS column of "kubectl get pods", "Init:CrashLoopBackOff", describe's "Reason:
    # CrashLoopBackOff"): the server never stays up, its own error in the container's log, not shown
    ("pod-crashloop", re.compile(r"\bCrashLoopBackOff\b")),
    # (round scan9) TensorRT's own error report ("Error Code %d: %s (%s)" with its ErrorCode's name: "[TRT] [E] 1:
    # [defaultAllocator.cpp::deallocate::35] Error Code 1: Cuda Runtime (invalid argument)", "Error Code 2: OutOfMemory (no
    # further information)", "Error Code 4: Internal Error (Engine deserialization failed.)"), under a "[E]" level of its
    # logger that LEVEL does not read, with no "error:" of its own
    ("tensorrt-error", re.compile(r"\bError Code \d{1,3}: [A-Z][A-Za-z]{1,30}(?: [A-Z][A-Za-z]{1,30}){0,2} \(")),
    # (round scan9) GNU make's own fatal line, "make: *** [Makefile:47: build/x.o] Error 1", "make[2]: *** [...] Error 2",
    # "make: *** No rule to make target 'x', needed by 'y'.  Stop." (a recipe's error it ignored prints "make: [...] Error
    # 1 (ignored)", without the stars): the build stopped, the compiler's own message above it cut or quiet
    ("make-error", re.compile(r"\b(?:g?make|mingw32-make)(?:\.exe)?(?:\[\d{1,4}\])?: \*\*\* \S")),
    # git's own fatal line ("fatal: unable to access 'https://host/x.git/': OpenSSL SSL_connect: ...", "fatal: clone of
    # ... failed"), also inside backticks or after a CI prefix; lowercase with a space, never "non-fatal:"
    ("git-fatal", re.compile(r"(?<![\w-])fatal: \S")),
    # (and libcurl's code as libmamba reports it: "critical libmamba Download error (6) Couldn't resolve host name [url]",
    # round 17)
    # (round 24) the transfer's TLS session or body cut in other clients' words: GnuTLS under git's "unable to access
    # 'URL': gnutls_handshake() failed: ..." (Debian/Ubuntu git), urllib3's "Connection broken: IncompleteRead(N bytes
    # read, M more expected)" (pip, poetry, requests)
    ("curl-error", re.compile(r"^\s*curl: \(\d+\) |\bDownload error \(\d{1,2}\) [A-Z]|\bgnutls_handshake\(\) failed\b"
                              r"|\bConnection broken: IncompleteRead\(\d+ bytes read\b")),
    ("validation-error", re.compile(r"\bValue error, ")),          # pydantic, as vLLM's config checks word it
    # (round 15) an OpenAI-compatible client's error for a 4xx/5xx answer, the server's JSON body after it (openai-python's
    # APIStatusError: f"Error code: {status_code} - {body}"), printed by apps without the class name
    ("http-error", re.compile(r"\bError code: [45]\d\d - [{\[]")),
    # a refused connect in any client's words (Python's ConnectionRefusedError, httpx/aiohttp, curl, proxies; Windows'
    # WSAECONNREFUSED 10061), with or without a host on the line
    ("connection-refused", re.compile(r"\bECONNREFUSED\b|\b[Cc]onnection refused\b|\bConnectionRefusedError\b|\bWinError 10061\b")),
    # nvidia-smi with the driver loaded but no GPU it can initialise (RmInitAdapter failed, a GPU the driver does not
    # know, a container runtime that exposed none): its whole output, no error word
    # (stop 61: and Google Colab refusing a GPU runtime, "Cannot connect to GPU backend" / "You cannot currently connect to
    # a GPU due to usage limits in Colab": the notebook runs without one)
    ("no-gpu-found", re.compile(r"\bNo devices were found\b|\bCannot connect to GPU backend\b|\bYou cannot currently connect to a GPU due to usage limits\b")),
    # uv's (miette's) error marker: "× Failed to download `x`" heads a chain of causes ("├─▶ ... ╰─▶ connection reset")
    # (and its ASCII rendering on consoles without Unicode, Windows' cmd: "  x Failed to download ... |-> ... `-> ...")
    ("uv-error", re.compile(r"^\s*× \S|^\s*x Failed to \S")),
    # CMake's find module failing (a REQUIRED package prints it after "CMake Error at"; a title or a plain message
    # alone); the optional search's status line "-- Could NOT find X" is the build going on; (round 29) and its version
    # check, FindPackageHandleStandardArgs' "Could NOT find CUDA: Found unsuitable version "8.0", but required is exact
    # version "7.5"" (or "at least"): a package found, but not in the version the project pins
    ("cmake-not-found", re.compile(r"^(?!\s*-- ).*?\bCould NOT find [\w:.-]+?(?: \((?:missing|Required is)|: Found unsuitable version\b)")),
    # the Docker daemon refusing a request (docker run/compose print it without any "error:" of their own)
    ("daemon-error", re.compile(r"\bError response from daemon\b")),
    # a system call's failure by its number, as Python ("[Errno 49] Can't assign requested address") and Windows print it
    # (stop 60: and Rust's io::Error Display, "<message> (os error N)": uv, hf-hub, tokenizers, a Tauri app's plugin
    # runner, alone on a line when the program printed no path: pot-app's "Permission denied (os error 13)")
    ("os-error", re.compile(r"\[(?:Errno|WinError) -?\d{1,6}\]|\(os error -?\d{1,6}\)")),
    # (round scan10) the kernel refusing to execute a file whose format it does not know (execve's ENOEXEC, strerror's
    # "Exec format error"), in runc's and the shells' words without an errno: "standard_init_linux.go:211: exec user
    # process caused "exec format error"", "exec /usr/local/bin/python3: exec format error" (an image built for another
    # CPU architecture, a binary for another OS, a script without its #! line): the program never starts
    ("exec-format", re.compile(r"(?i)\bexec format error\b")),
    # a CUDA runtime call failing in a C/C++ program's own check macro (llama.cpp's "CUDA error 217 at ggml-cuda.cu:6292:
    # peer access is not supported", a CUDACHECK's "Failed: Cuda error /path.cuh:307 '...'"): no exception, no "error:"
    # (and PyTorch 0.x's THC check, "THCudaCheck FAIL file=... line=66 error=46 : all CUDA-capable devices are busy or
    # unavailable"; the runtime's own messages for the errors no entry names, cudaGetErrorString's catalogue: busy or
    # exclusive devices (46), an illegal address (700), a kernel that faulted (719), a device-side assert (710))
    # (round scan14) a CUDA check macro's report that names the .cu source and line with the runtime's message, bitsandbytes'
    # CUDA_CHECK_RETURN ("Error named symbol not found at line 116 in file bitsandbytes/csrc/ops.cu", "Error invalid device
    # function at line 508 in file .../ops.cu"): no "CUDA error" words, the kernel's file says it
    ("cuda-error", re.compile(r"(?i)\bcuda error\b(?: \d{1,4})?(?: at | in | /|: |\s*\()|\bTHCudaCheck FAIL\b"
                              r"|(?-i:\bError [a-z][a-z ]{2,60} at line \d{1,6} in file [^\n]{1,300}?\.cuh?)\b"
                              r"|\ball CUDA-capable devices are busy or unavailable\b|\ban illegal memory access was encountered\b"
                              r"|\bunspecified launch failure\b|\bdevice-side assert triggered\b"
                              # ggml's CUDA backend (ggml-cuda.cu ggml_cuda_init: "failed to initialize CUDA: %s" with
                              # cudaGetErrorString) and any runtime's same words: llama.cpp then runs on the CPU, no
                              # error word of its own
                              r"|\bfailed to initiali[sz]e CUDA\b"
                              # (round 25) THC's check macro in torch 0.x-1.x and Lua torch's cutorch ("cuda runtime
                              # error (38) : no CUDA-capable device is detected at ..\\aten\\src\\THC\\THCGeneral.cpp:50"),
                              # and cudaErrorNoDevice's own text (100, 38 before CUDA 10.1; CUDA_ERROR_NO_DEVICE at cuInit)
                              # wherever a runtime prints it bare (PowerInfer's and llama.cpp's forks, a title)
                              r"|\bcuda runtime error \(\d{1,4}\)|\bno CUDA-capable device is detected\b"
                              # (round 45s) the samples' helper_cuda.h check, its code with the enum's name ("CUDA error
                              # code=999(cudaErrorUnknown)", "code=201(CUDA_ERROR_INVALID_CONTEXT)"); a CUDA call's failure
                              # by its code in a launcher's words ("cuInit err: 999", Ollama's "cudaSetDevice err: 35",
                              # gdev's "cuCtxCreate failed: res = 999").  The enums alone are not taken: error catalogues
                              # and doc quotes ("cudaErrorInitializationError = 3") print them with no failure
                              r"|(?-i:\bcode=\d{1,4} ?\((?:cudaError[A-Z]\w{2,40}|CUDA_ERROR_[A-Z_]{3,40})\))"
                              r"|(?-i:\bcu(?:da)?[A-Z][A-Za-z]{2,30})(?: err: | failed: res = )-?[1-9]\d{0,3}\b"
                              # (round 47g) the TensorRT samples' and their forks' CHECK macro ("Cuda failure: 700",
                              # "cuda failure in file 'yolo_layer.cu' line 51:35", "CUDA Failure at .../core.cpp:193:
                              # invalid device function"): the code or the place after the words, no error word
                              r"|\bcuda failure(?:: \d{1,4}\b| in file \S| at \S)"
                              # (round rndfa) TensorFlow's StreamExecutor naming the driver-API call and its CUresult
                              # enum ("failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error", "failed call to
                              # cuDevicePrimaryCtxRetain: CUDA_ERROR_ECC_UNCORRECTABLE"): in a title or a glog line cut
                              # before its date, with no level the safety net could read
                              r"|(?-i:\bfailed call to cu[A-Z]\w{2,40}: CUDA_ERROR_[A-Z_]{3,40})"
                              # (round scan7) Ollama's discovery (discover/gpu_info_nvcuda.c, 0.1.x-0.11: "cuda driver
                              # library init failure: %d" with cuInit's CUresult): 999, 802, 205, 3, ... and the GPU unused
                              r"|\bcuda driver library init failure: -?\d{1,4}\b"
                              # (round scan10) two more of cudaGetErrorString's catalogue, wherever a program's own
                              # check prints them without an error word the net reads: 802 cudaErrorSystemNotReady
                              # "system not yet initialized" (an NVSwitch machine whose fabric manager is not running:
                              # gpu_burn's "Couldn't init CUDA: Error (gpu_burn-drv.cpp:304): ...", a title's "Error 802:
                              # ..."), 701 cudaErrorLaunchOutOfResources "too many resources requested for launch" (a
                              # kernel launched with more registers or threads than the GPU has: TensorFlow's "F ...]
                              # Non-OK-status: CudaLaunchKernel(...) status: Internal: ...", a TensorRT wrapper's check)
                              r"|\bsystem not yet initialized\b|\btoo many resources requested for launch\b"
                              # (round scan11) a CUDA call named with the error enum it returned, in a binding's or a
                              # remoting layer's words and no error word the net reads: numba's "[100] Call to cuInit
                              # results in CUDA_ERROR_NO_DEVICE:" (its CudaSupportError's class on the line before, cut),
                              # qCUDA's "cuInit(0) return code:100 indicating CUDA_ERROR_NO_DEVICE in ..."; the enum alone
                              # (a catalogue, a doc quote) is still not taken
                              r"|(?-i:\bcu(?:da)?[A-Z]\w{2,40}(?:\([^()\n]{0,60}\))? [^\n]{0,40}?\b(?:CUDA_ERROR_[A-Z_]{3,40}|cudaError[A-Z]\w{2,40})\b)")),
    # the dynamic loader not finding a library (a wheel shipping no build for this CUDA, a missing driver library):
    # "libX.so: cannot open shared object file: No such file or directory", without any error word of its own
    # (and Windows' loader as torch words it, torch/__init__.py: 'Error loading "...\\torch\\lib\\x.dll" or one of its
    # dependencies.' after WinError 126/127/1114, also quoted without the exception's name)
    # (round 45s: and a binding's own loader failing on a native library by its path, LLamaSharp's "Failed to load
    # ./runtimes/win-x64/native/cuda12/llama.dll" and "Failed Loading 'runtimes/linux-x64/native/cuda12/libllava_shared.so'",
    # a Nix build's "JaxlibWithCuda failed to load library libcublasLt.so.11")
    # (round 47g: and ld.so's own head whatever the reason, "prog: error while loading shared libraries: libz.so.1:
    # wrong ELF class: ELFCLASS64", the library named before the colon)
    ("library-missing", re.compile(r"\.so(?:\.[\d.]{1,16})?: cannot open shared object file\b"
                                   # (stop 61) the loader's refusal of a file that is not a library for this system (a
                                   # Windows .dll or a cut download opened on Linux: "libbitsandbytes_cuda116.dll: invalid
                                   # ELF header")
                                   r"|\binvalid ELF header\b"
                                   r"|\berror while loading shared libraries: [^\s:]{1,200}: \S"
                                   r"|\bError loading \"[^\"]{1,400}\.dll\" or one of its dependencies\b"
                                   r"|\b[Ff]ailed (?:to load|[Ll]oading)(?: library)? '?[\w./\\:~-]{1,300}\.(?:dll|so(?:\.\d{1,6}){0,3}|dylib)\b"
                                   # (round scan7) ld.so's version check (glibc elf/dl-version.c: "version `%s' not found
                                   # (required by %s)" after the library's path: "/lib64/libm.so.6: version `GLIBC_2.27' not
                                   # found (required by /usr/local/bin/ollama)"): a binary built against a newer glibc or
                                   # libstdc++ than the host's never starts; the "weak version" one is verbose-only, not fatal
                                   r"|(?<!weak )\bversion `[\w.]{1,60}' not found \(required by \S"
                                   # (round scan7) and its symbol lookup (elf/dl-lookup.c: "undefined symbol: %s%s%s", the
                                   # version after ", version "), after the library that needs it: "libcusparse.so.12:
                                   # undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12", a title
                                   # without Python's "ImportError:"
                                   r"|\.so(?:\.[\d.]{1,16})?: undefined symbol: \S"
                                   # (round scan13) and that lookup quoted without the library, a C++ symbol by its
                                   # mangled name ("undefined symbol: _ZN3c105ErrorC1ENS_14SourceLocationERKSs" as a
                                   # title, "`undefined symbol: _ZNK3c105Error4whatEv`"): an extension built against
                                   # another libtorch / libstdc++ than the one loaded
                                   # (at the line's start or after a colon or an arrow: not one name of a list in a sentence)
                                   r"|(?:^[\s`'\"]{0,4}|[:>] {0,3})undefined symbol: _Z\w{4,}"
                                   # (stop 60) cffi's dlopen failing by the library's name ("OSError: cannot load library
                                   # 'pango-1.0': error 0x7e", WeasyPrint without GTK on Windows; "...: libcairo.so.2:
                                   # cannot open shared object file" on Linux), quoted without the OSError as a title
                                   r"|\bcannot load library '[^'\n]{1,200}': \S")),
    # a shell that cannot find the program (sh's "/bin/sh: 1: nvcc: not found", bash's "bash: x: command not found",
    # a container's entry script "exec: line 9: exec: nvidia-smi: not found"): the command never ran
    ("command-not-found", re.compile(r":\s(?:line \d{1,6}: |\d{1,6}: )?(?:exec: )?[\w./+-]{1,128}: (?:command )?not found\s*$")),
    # nvidia-smi (and NVML's other users) unable to reach the GPU through the driver, with no error word of its own:
    # "Failed to initialize NVML: Unknown Error" (a container whose device cgroup lost the GPU), "NVIDIA-SMI has failed
    # because it couldn't communicate with the NVIDIA driver", "Unable to determine the device handle for GPU
    # 0000:01:00.0: GPU is lost", its own version check "Mismatch in versions between nvidia-smi and NVML"
    # (round 15: and the kernel module loaded without a GPU it can bind, its own dmesg lines: "NVRM: No NVIDIA graphics
    # adapter probed!", "NVRM: The NVIDIA probe routine was not called for 3 device(s)." when nouveau owns them, "... probe
    # routine failed for 1 device(s).", "NVRM: None of the NVIDIA devices were initialized." for a BAR the firmware left invalid)
    ("nvml-error", re.compile(r"\bFailed to initialize NVML\b|\bNVIDIA-SMI has failed\b"
                              r"|\bUnable to determine the device handle for GPU\b"
                              r"|\bMismatch in versions between nvidia-smi and NVML\b"
                              r"|\bNVRM: No NVIDIA graphics adapter probed\b|\bNVRM: The NVIDIA probe routine (?:was not called|failed)\b"
                              r"|\bNVRM: None of the NVIDIA devices were initialized\b")),
    # a failed assertion in any runtime's words: torch's TORCH_INTERNAL_ASSERT ("NVML_SUCCESS == r INTERNAL ASSERT FAILED
    # at \"../c10/cuda/CUDACachingAllocator.cpp\":838, please report a bug to PyTorch."), glibc's assert ("python3:
    # x.c:12: f: Assertion `n > 0' failed."), glog's CHECK outside a glog line ("Check failed: error == cudaSuccess")
    # (round scan11: and the assertion as CUDA's device-side assert() prints it, the expression between backticks: "...
    # Indexing.cu:1284: indexSelectLargeIndex: block: [486,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize`
    # failed.", "ClassNLLCriterion.cu:106: ... Assertion `t >= 0 && t < n_classes` failed.")
    # (round scan15: and a C library's own assertion macro, its name ending in _ASSERT, as it prints it before abort():
    # ggml's "GGML_ASSERT: C:\...\ggml.c:4411: ctx->mem_buffer != NULL" (file and line, then the expression; llama.cpp,
    # whisper.cpp, gpt4all, llama-cpp-python and Ollama before mid-2024) and the newer "ggml.c:1554: GGML_ASSERT(view_src ==
    # NULL || ...) failed"; a #define that prints it ("GGML_ASSERT: %s:%d: %s") has no line number)
    ("assert-failed", re.compile(r"\bINTERNAL ASSERT FAILED\b|\bAssertion [`'][^\n]{1,400}[`'] failed\b|\bCheck failed: "
                                 r"|\b[A-Z][A-Z0-9]{1,20}_ASSERT: \S[^\n]{0,400}?:\d{1,6}: \S|\b[A-Z][A-Z0-9]{1,20}_ASSERT\([^\n]{1,400}\) failed\b"
                                 # (stop 60) Apple's frameworks' assertion before abort(), "<file>.mm:678: failed assertion
                                 # `Placeholder shape mismatches ...'" (Metal Performance Shaders Graph under torch's mps
                                 # device, Core ML): the process stops there
                                 r"|\.(?:mm?|swift|cpp):\d{1,6}: failed assertion [`']")),
    # pip finding no release of a requirement, as quoted without its "ERROR: " (or by pip < 10, which printed none)
    # (round scan7) a wheel whose RECORD does not match its files, in the wheel package's own words (wheelfile.py's
    # WheelError "Hash mismatch for file '...'", wheel < 0.31's install.BadWheelFile "Bad hash for file '...'"): wheel
    # unpack, pants, poetry's installer; the wheel is refused, no error word on the line
    ("wheel-hash", re.compile(r"\b(?:Hash mismatch|Bad hash) for file '")),
    ("pip-no-distribution", re.compile(r"\bNo matching distribution found for \S|\bCould not find a version that satisfies the requirement \S")),
    # a server that could not bind its socket, in its own words and without an errno (cpp-httplib under llama.cpp's and
    # llamafile's servers: "couldn't bind HTTP server socket, hostname: ...", "couldn't bind to server socket: hostname=...";
    # lwan's "Could not bind socket."): the cause (a taken port, an address not on this host, a Unix socket path, an
    # invalid TLS context) is not on the line; address-in-use names the loopback-host case
    # an HTTP API's error body as a client prints it: the OpenAI-compatible servers' `{"object":"error","message":...}`
    # (vLLM, SGLang, LMDeploy, FastChat; a Python client's repr with single quotes) and OpenAI's `{"error":{"message":...`;
    # the entries name the bodies they know (a model name not served, a 401)
    ("api-error-body", re.compile(r"""["']object["']: ?["']error["'], ?["']message["']: ?|\{["']error["']: ?\{["']message["']: ?""")),
    ("bind-failed", re.compile(r"(?i)\b(?:couldn[\'’]?t|could not|cannot|can[\'’]?t|failed to|unable to) bind\b[^\n]{0,40}?\b(?:socket|port|address)")),
    # (round 16) a tool giving up in its own words at the end of its line ("Couldn't init a GPU test: Low mem for result.
    # aborting.", gpu-burn's "No clients are alive!  Aborting"), with no error word of its own; and gpu-burn's
    # "Couldn't init a GPU test: %s" (gpu_burn-drv.cpp) alone
    ("aborted", re.compile(r"(?i)[.:;,!] {0,3}abort(?:ing|ed)\s*[.!]*\s*$|\bCouldn't init a GPU test: ")),
    # (round 21) a server's own words for a model it could not load, the cause after a colon and no exception name
    # (mlx_vlm.server's "Error loading model mlx-community/DeepSeek-OCR-8bit: 'dict' object has no attribute
    # 'model_type'", Jan's "Error loading MLX model: {...}", "Failed to load model X: ..." in other servers' and UIs'
    # words; one word may name the kind of model): the model never served
    # (round 45s: and "launch": Xinference's "Failed to launch model, detail: [address=..., pid=...] No available slot ...")
    ("load-failed", re.compile(r"(?i)\b(?:error (?:while )?loading|(?:failed|unable) to (?:load|launch)|(?:could ?not|couldn't|cannot|can't)"
                               r" load) (?:the |\w{2,12} )?model\b[^\n]{0,300}?: \S")),
    # (round 20) the linker not finding an input, in its own words and without "error:" (GNU ld and gold print
    # "/usr/bin/ld: cannot find -lGL", "ld: cannot find /tmp/.../x.o: No such file or directory"; Apple's ld "ld: library
    # not found for -lX"): the "collect2: error" after it may be cut away; ld-cudart-missing names CUDA's libraries
    ("linker-error", re.compile(r"\bld(?:\.(?:gold|bfd|lld))?(?:\.exe)?: (?:cannot find \S|library not found for -l\S)")),
    # (round 25) a local server refusing to load a model its own memory estimate says will not fit, in its words and
    # without an error word: Ollama's "model requires more system memory (2.7 GiB) than is available (2.0 GiB)" (the
    # JSON body, the CLI's "Error: ..." and clients quoting it), oMLX's "Model 'x' (18.00GB) exceeds max-model-memory
    # (16.00GB)"; the model never loads
    ("memory-refused", re.compile(r"(?i)\brequires more (?:system |gpu |video )?memory \([^()\n]{1,24}\) than (?:is )?available\b"
                                  r"|(?<![A-Za-z])exceeds max-model-memory\b"
                                  # (the lead, stop 46) oMLX's memory guard ending a request: "Request aborted: process
                                  # memory limit exceeded (usage 28.8 GB, ceiling 30.2 GB)"; the host's RAM, mid-request
                                  r"|\bprocess memory limit exceeded \(usage \d")),
    # (round 27) a host name that does not resolve, in the resolver's own words with no error word of their own: Go's
    # "dial tcp: lookup registry-1.docker.io: no such host" / "... on 10.0.2.3:53: ... i/o timeout" (docker build and
    # pull, Ollama, Go clients), glibc's EAI_AGAIN / EAI_NONAME texts ("Temporary failure in name resolution", "Name or
    # service not known"), macOS's "nodename nor servname provided, or not known", Node's getaddrinfo codes
    ("name-resolution", re.compile(r"\bdial tcp: lookup [\w.-]{1,253}(?: on [\w.:\[\]-]{1,60})?: |\bTemporary failure in name resolution\b"
                                   r"|\bName or service not known\b|\bnodename nor servname provided\b"
                                   r"|\bgetaddrinfo (?:ENOTFOUND|EAI_AGAIN)\b")),
    # (round 45s) urllib3/requests giving up on a connection, printed without the exception's name (a title, pip's
    # "Could not fetch URL ...: There was a problem confirming the ssl certificate: HTTPSConnectionPool(...): Max retries
    # exceeded with url: ...", poetry's cut title): the pool's "Max retries exceeded with url", and a proxy refusing
    # the CONNECT ("Caused by ProxyError('Cannot connect to proxy.', OSError('Tunnel connection failed: 403 Forbidden'))",
    # 407, 400); pip's "Retrying (Retry(...)) after connection broken by ..." warning is neither
    # (round scan7: and urllib3's read timeout, "HTTPConnectionPool(host='127.0.0.1', port=8080): Read timed out. (read
    # timeout=120)": connectionpool.py's ReadTimeoutError, its pool's repr before the message, printed by a client's own
    # "Error during recognition: ..." without the exception's name)
    # (round scan15: and urllib3's ProtocolError as requests prints it, without either class: "('Connection aborted.',
    # RemoteDisconnected('Remote end closed connection without response'))", "('Connection aborted.',
    # ConnectionResetError(104, 'Connection reset by peer'))": the server closed or reset the connection mid-request)
    ("http-client", re.compile(r"\bMax retries exceeded with url\b|\bTunnel connection failed: [1-5]\d\d\b"
                               r"|\bHTTPS?ConnectionPool\(host=[^()\n]{1,300}\): Read timed out\."
                               r"|\('Connection aborted\.', [A-Z]\w{2,40}\(")),
    # (round 45s) httpx's and httpcore's exceptions, whose names do not end in Error ("httpx.ReadTimeout: timed out
    # while streaming chunks from VLLM backend", "httpx.ConnectTimeout"), by their module
    ("httpx-error", re.compile(r"(?<![\w.])(?:httpx|httpcore)\.[A-Z]\w{2,40}(?::|\s*$)")),
    # (round 45s) OpenSSL's reason as a client prints it without the exception's name: Python's "[SSL:
    # WRONG_VERSION_NUMBER] wrong version number" inside "<urlopen error ...>", Node's "ERR_SSL_WRONG_VERSION_NUMBER"
    # (an https:// URL to a port that speaks plain HTTP, a TLS-intercepting proxy)
    ("tls-error", re.compile(r"\bERR_SSL_[A-Z_]{4,60}\b|\[SSL: [A-Z_]{4,60}\]")),
    # (round 45s) an HTTP error status as a client reports the request it made: "Ollama API request failed: 403
    # Forbidden, Detail: Forbidden"; and a proxy's error page as the client prints its body ("<title>413 Request Entity
    # Too Large</title>", "<h1>502 Bad Gateway</h1>"); a server's access log ("GET /x HTTP/1.1" 404) is neither
    # (round scan9: and openai-node's APIError for an answer with no body, "400 status code (no body)" (core.ts
    # makeMessage), which every Node client on it relays as its own message: Cline, Roo Code, pi, Continue)
    # (round scan11: and a client's own words for an answer with an error status, whatever its language: axios' "Request
    # failed with status code 429" (AxiosError's message, relayed by Node apps and LangChain.js without the class), Go
    # clients' "unexpected status code: 400" / "unexpected status code 429" (langchaingo's "API returned unexpected status
    # code: 400: ...", Sourcegraph's SSC client); 1xx-3xx are not taken)
    ("http-status", re.compile(r"\brequest failed: (?:HTTP )?[45]\d\d [A-Z][a-z]|\b[45]\d\d status code \(no body\)"
                               r"|<(?:title|h1)>[45]\d\d [A-Z][\w ]{2,60}</(?:title|h1)>"
                               r"|\bRequest failed with status code [45]\d\d\b|\bunexpected status code:? [45]\d\d\b"
                               # (round scan13) a Python HTTP client's answer with a server-side status as its repr
                               # prints it (requests' "<Response [500]>", httpx's "<Response [502 Bad Gateway]>"), a REPL's
                               # or a print's output with no error word: 5xx only (a 4xx repr is often a probe's answer)
                               r"|<Response \[5\d\d(?: [A-Z][A-Za-z]{1,20}(?: [A-Z][A-Za-z]{1,20}){0,3})?\]>")),
    # (round scan11) a decoder refusing a document that is not what the program expected (an HTML error page, a proxy's
    # text, a body of another shape), in the decoder's own words and with no error word of its own: JavaScript's JSON.parse
    # (V8: "Unexpected token '<', "<!DOCTYPE "... is not valid JSON", the older "Unexpected token < in JSON at position 0"),
    # Go's encoding/json ("invalid character '<' looking for beginning of value"), Rust's serde_json by its Display ("missing
    # field `index` at line 1 column 223", "invalid type: map, expected a sequence at line 7 column 18") and its Debug form
    # ('Error("missing field `updateId`", line: 1, column: 121)'); a named entry takes the bodies it knows (a completion
    # without its fields: reading-choices)
    ("decode-error", re.compile(r"\bUnexpected token [^\n]{1,60}? is not valid JSON\b|\bUnexpected token \S{1,4} in JSON at position \d"
                                r"|\binvalid character '[^'\n]{1,4}' looking for beginning of (?:value|object key string)\b"
                                # (serde's message, then the position serde_json adds to it)
                                r"|\b(?:(?:missing|unknown|duplicate) (?:field|variant) `[^`\n]{1,80}`|invalid (?:type|value|length): )"
                                r"[^\n]{0,300}? at line \d{1,9} column \d{1,9}\b"
                                # (round scan14) serde_json's own syntax errors, by their Display with the position
                                # ("EOF while parsing a value at line 1 column 0": an empty body; "expected value at line
                                # 1 column 1": an HTML page; "trailing characters at line 1 column 5")
                                r"|\b(?:EOF while parsing (?:a list|an object|a string|a value)|expected (?:value|ident)"
                                r"|trailing (?:characters|comma)|key must be a string|invalid (?:escape|number)) at line \d{1,9} column \d{1,9}\b"
                                # (round scan14) and serde's untagged enum that no variant matched, with serde_json's position
                                # (tokenizers' "data did not match any variant of untagged enum PyPreTokenizerTypeWrapper at
                                # line 960 column 3": a tokenizer.json newer than the library that loads it)
                                r"|\bdata did not match any variant of untagged enum \w{1,80} at line \d{1,9} column \d{1,9}\b"
                                # (round scan14) Python's json module's messages without JSONDecodeError's class (an app's
                                # own print of the exception, a UI's box) at the line's start, a quote before it at most (a
                                # sentence that quotes it, "... fail with "Expecting value: ..."", is text about it): the
                                # position with the character offset is json.decoder's own
                                r"|^\s{0,8}[`\"'\u201c\u201d]?(?:Expecting (?:value|property name enclosed in double quotes|'[,:]' delimiter)|Unterminated string starting at"
                                r"|Invalid control character at|Extra data): line \d{1,9} column \d{1,9} \(char \d{1,12}\)"
                                r"|\bError\(\"[^\"\n]{1,200}\", line: \d{1,9}, column: \d{1,9}\)"
                                # (round scan15) Go's encoding/json given a value of another type than the struct it fills
                                # (UnmarshalTypeError: "json: cannot unmarshal array into Go struct field
                                # Message.messages.content of type string", "... into Go value of type []string"): a body
                                # of another shape than the client or server was written for
                                r"|\bjson: cannot unmarshal [^\n]{1,60}? into Go (?:struct field \S|value of type \S)")),
    # (round scan11) V8's TypeError for a property read or set on undefined or null, printed without its class: a Nuxt/
    # Nitro server's "[nuxt] [request error] [unhandled] [500] Cannot read properties of undefined (reading 'find')", the
    # older "Cannot read property 'likes' of undefined" (V8 before 9.x), "Cannot set properties of undefined (setting 'x')":
    # the program crashed on a value it did not get
    ("js-typeerror", re.compile(r"\bCannot (?:read|set) properties of (?:undefined|null) \((?:reading|setting) '"
                                r"|\bCannot (?:read|set) property '[^'\n]{1,80}' of (?:undefined|null)\b")),
    # (round scan11) Python's own message for a call or an import that failed, printed without its exception's class (a
    # title, an app's or a UI's "error:" box, a server's report): TypeError's "AsyncEngineArgs.__init__() got an
    # unexpected keyword argument 'limit-mm-per-prompt'" (a library of another version than the caller was written for),
    # ImportError's "cannot import name 'LlamaFlashAttention2' from 'transformers.models.llama.modeling_llama' (...)"
    ("py-message", re.compile(r"(?<![\w.])[\w.]{1,120}\(\) got an unexpected keyword argument '"
                              r"|\bcannot import name '[\w.]{1,120}' from '[\w.]{1,200}'"
                              # (round scan18) ImportError's "No module named 'x'" relayed under a generic "exception:"
                              # label, the ImportError class gone: Python's bare "Exception: No module named
                              # 'img2table.ocr.base'" (an app's raise Exception(e)), Sphinx's "Could not import extension
                              # x (exception: No module named 'y')"
                              r"|(?i:\bexception: )No module named '?[A-Za-z_][\w.]{0,120}")),
    # (lead, after round 45s) a pod no node can take, in the scheduler's words: the FailedScheduling event's "0/6 nodes
    # are available: 6 Insufficient nvidia.com/gpu." (kubectl describe, kubectl get events), an extended resource short
    # on every node (nvidia.com/gpu, amd.com/gpu, tencent.com/vcuda-core) also in the autoscaler's NotTriggerScaleUp;
    # the pod never starts and nothing else in the log says why (no device plugin, GPUs all taken, a node selector).
    # A "[Warning]" event stays quiet (a pod a scale-up will place soon), as every generic class does at that level.
    ("unschedulable", re.compile(r"\b0/\d{1,5} nodes are available: |\bInsufficient [\w-]{1,63}(?:\.[\w-]{1,63}){1,4}/[\w.-]{1,63}")),
    # (round 47g) a connect failing on Windows in Go's words (net's "dial tcp 10.0.0.1:2376: connectex: A connection
    # attempt failed because the connected party did not properly respond ..." for WSAETIMEDOUT, any other WSA error's
    # text after it): docker.exe, frp, Go clients; no error word of its own, often at a warning level of the tool's
    ("connect-failed", re.compile(r"\bconnectex: [A-Z]")),
    # (round scan7) a Python installer's line for a package it could not install, its own marker and no error word:
    # Poetry's executor ("  - Installing torch (1.12.1): Failed", "•" before 1.2; Updating / Downgrading / Removing),
    # PDM's synchronizer ("  x Install flash-attn 2.8.3 failed", "✖" where the terminal has emoji)
    ("installer-failed", re.compile(r"^\s*[-•] (?:Installing|Updating|Downgrading|Removing) [\w.\[\],-]{1,100} \([^()\n]{1,80}\): Failed\b"
                                    r"|^\s*(?:x|✖\ufe0f?) (?:Install|Update|Remove) \S{1,100} \S{1,60} failed\s*$")),
    # (round scan7) a model provider refused when its credentials are checked, in Dify's plugins' words
    # (dify-official-plugins models/*/llm.py: "Credentials validation failed with status code 422 and response body ...",
    # "Credentials validation failed: invalid response object, must be 'chat.completion'"): the model cannot be added
    ("credentials-failed", re.compile(r"(?i)\bcredentials validation failed(?::| with status code \d)")),
    # (round scan7) the Hugging Face Hub's 404 in huggingface_hub's words (utils/_http.py hf_raise_for_status: "Entry Not
    # Found for url: {url}.", "Revision ...", "Repository ...", "Bucket ..." on the line after "404 Client Error."), which a
    # server or app relays without the exception's name: a file, revision or repository the download needs is not there
    ("hub-not-found", re.compile(r"\b(?:Entry|Revision|Repository|Bucket) Not Found for url: https?://\S")),
    # (round scan7) Triton Inference Server's model table (core src/server.cc's models_table: the state, then ": " and the
    # load's Status as "<Code>: <message>", common's error.cc code names "Internal", "Invalid argument", "Not found"...):
    # "| tensorrt_llm | 1 | UNAVAILABLE: Internal: unexpected error when creating modelInstanceState: ..."; the table is
    # printed at INFO without a level on its rows, and the model never serves
    ("model-unavailable", re.compile(r"\| UNAVAILABLE: [A-Z][a-z]{2,20}(?: [a-z]{2,20}){0,2}: \S")),
    # (round scan3) a Rust thread's panic ("thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value:
    # UnreachableServer', src/main.rs:91:20", "thread 'tokio-runtime-worker' panicked at lib/llm/src/engines/vllm/worker.rs:247:17:")
    # the runtime's own words for a crash, with no error word of their own ("Err" is not "error")
    # (stop 61) and Go's runtime panic, the line that opens its crash report ("panic: runtime error: index out of range
    # [0] with length 0", "panic: height:27 or width:257 must be larger than factor:28" from Ollama's new engine, then
    # "goroutine 1 [running]:"): at the start of the line only, in Go's lower case ("Panic: ..." in prose stays out)
    ("panic", re.compile(r"\bthread '[^'\n]{1,100}' panicked at\b|^[\s`>]{0,8}panic: (?!(?:true|false|null|none|~)\b)\S")),
    # (round scan3) an allocator's refusal in its own words, with no error word on the line: ONNX Runtime's arena
    # ("onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 285081600", on CPU
    # as on a GPU), a C++ runtime's "failed to allocate memory"
    ("alloc-failed", re.compile(r"(?i)\b(?:failed|unable) to allocate (?:device |gpu |host |pinned |cuda |cpu )?memory\b")),
    # (round scan9) the whole line a JSON object whose first key is "error" with the message as its string: the body of an
    # Express or Go server's refusal as curl or a client prints it (LM Studio's '{"error":"Unexpected endpoint or method.
    # (POST /chat/completions)"}', answered with a 200; Ollama's '{"error":"..."}').  Last: a class that names the message
    # itself (memory-refused for Ollama's "model requires more system memory ...") is the telling one
    ("error-body", re.compile(r"""^\s{0,8}\{["']error["']: ?["'][^"'\n]{2,}""")),
    # (round scan12) a launcher that gave up waiting for the process it started, in its own words and with no error word:
    # Ollama's "timed out waiting for llama runner to start - progress 0.00 -", Protractor's "Timed out waiting for driver
    # server to start", "... to come up", "... to become ready": the server never came up, its own cause (a load too slow
    # for the timeout, a crash) elsewhere or not shown
    # (round scan14) Lua's runtime error, "<chunk>.lua:<line>: attempt to index field 'choices' (a nil value)" (a Neovim
    # plugin, a game's script, an OpenResty handler): the script stopped on a value it did not get, no error word of its own
    ("lua-error", re.compile(r"\.lua:\d{1,6}: attempt to (?:index|call|perform arithmetic on|concatenate|compare|get length of) "
                             r"(?:a (?:nil|number|string|boolean|table|function|userdata) value|(?:field|local|global|upvalue|method) '[^'\n]{1,80}' \(a [a-z]{3,8} value\))")),
    # (round scan14) Apache httpd's report of a failed system call, the APR status in parentheses before its message id:
    # "(13)Permission denied: AH00058: Error retrieving pid file run/httpd.pid", "(2)No such file or directory: AH02291:
    # Cannot access directory ..." (a pid file, a log directory, a socket it cannot use); the notices ("AH00558: httpd:
    # Could not reliably determine ...") carry no status
    ("apache-error", re.compile(r"(?<![\w)])\(\d{1,6}\)[A-Z][A-Za-z ,'-]{2,80}: AH\d{5}: ")),
    ("start-timeout", re.compile(r"(?i)\btimed out waiting for [^\n]{1,80}? to (?:start|come up|become (?:ready|available|healthy)|be ready)\b")),
    # (round scan17) an HTTP client's exception for a 4xx/5xx answer, printed by an app without the class name or any error
    # word: aiohttp's ClientResponseError (f"{status}, message={message!r}, url={url!r}": Open WebUI's "Ollama: 500,
    # message='Internal Server Error', url='http://localhost:11434/api/chat'", Home Assistant integrations' "Failed to
    # communicate with the API! 400, message='Bad Request'"): the server refused the request, whatever the app calls it
    ("http-response", re.compile(r"(?<![\w.])[45]\d\d, message='[A-Z][A-Za-z' -]{1,60}'")),
    # (round hfa50) a browser refusing a cross-origin answer, in its console's words: Chromium's "Access to fetch at
    # 'http://127.0.0.1:11434/api/chat' from origin 'app://obsidian.md' has been blocked by CORS policy: ..." (Obsidian and
    # browser-extension clients of Ollama, LM Studio, llama-server), Firefox's "Cross-Origin Request Blocked: The Same Origin
    # Policy disallows reading the remote resource at ... (Reason: ...)": the request never reached the app, the server's
    # allowed origins (OLLAMA_ORIGINS, --cors) or its address the cause; no error word on the line
    ("cors-blocked", re.compile(r"\bhas been blocked by CORS policy\b|\bCross-Origin Request Blocked: ")),
    # (round hfa50) a container whose entry command cannot be executed, in the words of what tried: the runtime's own
    # container-log line (runc/Docker 20.10+: "exec /entrypoint.sh: no such file or directory", "exec
    # /usr/bin/entrypoint.sh: permission denied": a missing file, CRLF or a missing #! interpreter, no x bit) and bash's
    # exec builtin ("/opt/nvidia/nvidia_entrypoint.sh: line 67: exec: .: cannot execute: Is a directory"): the server
    # never starts; no error word on the line (exec-format keeps "exec format error").  (An entrypoint script's "line N:
    # /path: No such file or directory" was withdrawn by the stop-50 review: a `source` of a missing file prints the same
    # and the server starts anyway)
    ("exec-failed", re.compile(r"(?:^\s{0,8}|[`'\"] ?|: )exec \.?/[^\s:`'\"]{1,300}: (?:no such file or directory|permission denied)\b"
                               r"|: line \d{1,6}: exec: [^\n]{1,300}: cannot execute: [A-Z][a-z]")),
    # (round net53) a local inference server's own access log answering a generation route with a server-side failure,
    # the cause elsewhere or not logged: Ollama's gin line ("[GIN] 2024/06/16 - 17:43:34 | 500 |  5m1s |  127.0.0.1 |
    # POST     "/api/chat"", under journald or a compose prefix too) and llama-server's ("srv  log_server_r: request: POST
    # /v1/chat/completions 127.0.0.1 500", "... POST /infill 127.0.0.1 501").  Only 500 and 501 (the server failed or
    # cannot do it), and 404/405 to a GET (a client calling a POST-only route): a 400 is a bad request the server goes
    # past (healthy runs' logs hold them), 503 a server still loading that a poll retries, a 404 to a POST Ollama's
    # answer before a client pulls the model (the stop-50 review); /health, /v1/models, /api/show, /favicon.ico and the
    # web UI are never routes of it; the status in markdown bold as a paste shows it ("| **404** |").  uvicorn's access
    # lines stay at their INFO level
    ("access-error", re.compile(r"\| (?:(?:\*\*)?50[01](?:\*\*)? \|[^|\n]{1,40}\|[^|\n]{1,60}\| (?:GET|POST)"
                                r"|(?:\*\*)?40[45](?:\*\*)? \|[^|\n]{1,40}\|[^|\n]{1,60}\| GET) {1,12}\""
                                r"(?:/v1)?/(?:chat/completions|completions?|embeddings?|responses|messages|infill|api/(?:chat|generate|embed|embeddings))/?[?\"]"
                                r"|\brequest: (?:(?:GET|POST) (?:/v1)?/(?:chat/completions|completions?|embeddings?|responses|messages|infill)(?:[?/]\S{0,200})? \S{1,60} 50[01]"
                                r"|GET (?:/v1)?/(?:chat/completions|completions?|embeddings?|responses|messages|infill)(?:[?/]\S{0,200})? \S{1,60} 40[45])\s*$")),
    # (round pn54) a managed inference endpoint (Amazon SageMaker) that failed, in the service's own status words, the
    # model container's own error in CloudWatch and not in the pasted text: the endpoint's failure reason when the
    # container never answers /ping ("The primary container for production variant AllTraffic did not pass the ping
    # health check. Please check CloudWatch logs for this endpoint.", "The container-2 for production variant ...", a
    # title's "production variant AllTraffic did not pass the ping health check") and InvokeEndpoint's ModelError body for a request
    # the container failed ("Received server error (0) from model with message \"Amazon SageMaker could not get a response
    # ...\"", "Received client error (400) from model with message", "Received server error (500) from primary and could
    # not load the entire response body"), printed without its ModelError class; no error word of their own.  Not the
    # endpoint passing its check ("initially passes the ping health check"), not the /ping access lines
    ("endpoint-failed", re.compile(r"\bproduction variant \S{1,200} did not pass the ping health check\b"
                                   r"|\bReceived (?:server|client) error \(\d{1,3}\) from [\w-]{1,100} (?:with message\b|and could not load\b)")),
    # (stop 61) a shell refusing the script or the command line before the program runs, in its own words and with no
    # error word: dash's "run.sh: 4: Bad substitution" and "Syntax error: ..." (a bash script run by sh), bash's
    # "line 4: syntax error near unexpected token" / "unexpected end of file", zsh's glob of an unquoted extra
    # ("zsh: no matches found: magic-pdf[full]==0.7.0b1": pip never ran)
    # (dash's and bash's "Syntax error:" / "syntax error: unexpected end of file" are compiler-error's, whose "error:"
    # comes first; bash's "bad substitution" follows the expression, "bash: -c: line 1:" runs a command string)
    ("shell-error", re.compile(r"^\S{1,300}: (?:-c: )?(?:line )?\d{1,6}: (?:[^\n]{0,200}?\b[Bb]ad substitution\b|syntax error near unexpected token\b)"
                               r"|^\s{0,8}zsh: no matches found: \S")),
    # (stop 61) SELinux refusing a container or a service in the audit log ("type=AVC msg=audit(...): avc:  denied
    # { write } for pid=4546 comm=\"touch\" ... permissive=0"): the access was blocked (permissive=1 only logs it; older
    # kernels print no permissive field)
    ("selinux-denied", re.compile(r"\bavc: {1,4}denied {1,4}\{[^}\n]{1,200}\}(?![^\n]{0,800}\bpermissive=1\b)")),
    # (stop 61) Python's venv that could not install pip into the new environment ("The virtual environment was not
    # created successfully because ensurepip is not available.  On Debian/Ubuntu systems, you need to install the
    # python3-venv package"): every install step after it runs in no venv; no error word
    ("venv-failed", re.compile(r"\bThe virtual environment was not created successfully because ensurepip is not\b")),
    # (stop 61) a device node the process may not open ("Unable to open /dev/kfd read-write: Permission denied" from
    # rocminfo in a container without the render group, "failed to open /dev/nvidia0: Permission denied"): the GPU is
    # there but this user or container has no access; path-not-writable leaves /dev to it
    ("device-denied", re.compile(r"\b(?i:unable to|failed to|cannot|can't|could not|couldn't) open /dev/[\w/.-]{1,80}[^\n]{0,40}?: (?i:permission denied)\b")),
)
# (stop 47, the lead) not at WARNING level: round scan17 also counted a local server's 4xx/5xx logged as a WARNING
# (marker's "[WARNING] marker: Ollama inference failed: 500 Server Error ... for url: http://localhost:11434/..."), but an
# app polling a server that is still starting logs the same line and goes on ("health probe returned 503 Server Error:
# Service Unavailable for url: http://127.0.0.1:30000/health (server still loading, retrying)"): a healthy start's log
# would exit 3; withdrawn with its corpus item (marker#998)
# Fatal ends whatever the tool: signals, non-zero exit statuses, the kernel's GPU and OOM-killer lines.
# They count at WARNING level too (a supervisor logs a child's death as a warning), and a harmless entry
# matching elsewhere on the same line never absorbs them.
FATAL_CLASSES = (
    # (a shell's job report too: "line 28:  8156 Killed    python3 main.py")
    # (and the Chinese locale's "段错误 (核心已转储)")
    ("fatal-signal", re.compile(r"(?i)\bsegmentation fault\b|\bcore dumped\b|段错误|核心已转储|\bSIG(?:SEGV|ABRT|BUS|ILL|FPE|KILL)\b"
                                r"|\b(?:killed|terminated) by signal\b|\bsignal (?:6|9|11)\b|\bfatal python error\b"
                                # (the shell's job report, for SIGILL and SIGBUS too: see below)
                                # (round scan12: and zsh's job report, "[1]    348859 illegal hardware instruction  python
                                # run.py", "[1]    2771397 floating point exception  lmdeploy serve ...": its own names for
                                # SIGILL and SIGFPE)
                                r"|(?<![\w.])\d+ (?:Killed|Aborted|Illegal (?:hardware )?instruction|Bus error|floating point exception) {2,}\S"
                                # zsh's report names no job ("zsh: killed     python3 run.py", after a progress bar too)
                                # (round scan12: SIGILL and SIGFPE in zsh's words, "zsh: illegal hardware instruction
                                # ./app", "zsh: floating point exception  ./app": a binary built for CPU features this
                                # host lacks (Apple silicon under Rosetta, an AVX build), a division by zero)
                                r"|\bzsh: (?:killed|segmentation fault|abort|bus error|illegal hardware instruction|floating point exception)\b"
                                # the kernel's own line for a crashed process (dmesg, journald): "segfault at 60 ip ... error 4 in libX.so"
                                r"|\bsegfault at [0-9a-f]+ ip [0-9a-f]+ sp [0-9a-f]+ error -?\d+\b"
                                # SIGILL as the shell reports it without "core dumped" (a binary built for CPU features
                                # this host lacks: AVX2/AVX-512 builds of llama.cpp, torch): the bare line, or the job report;
                                # and SIGBUS the same way where no core is written (ulimit -c 0, most containers)
                                r"|^\s*(?:Illegal instruction|Bus error)\s*$"
                                # (round scan16) Go's report of a child that died of SIGILL (os.ProcessState's text,
                                # "signal: illegal instruction", with no "(core dumped)" where no core is written), ending
                                # its line: a runner a Go server execs ("llama.go:451: signal: illegal instruction"), a
                                # test binary go test runs
                                r"|\bsignal: illegal instruction\s*$"
                                # (round 45s) SIGBUS in PyTorch's DataLoader worker's own words (its handler prints it
                                # before the worker dies; /dev/shm too small in a container), with no ERROR: before it;
                                # and the shell's "Bus error (core dump)" as retyped without the "ed"
                                r"|\bUnexpected bus error encountered\b|(?-i:\bBus error \(core dump\))")),
    # (round scan9) SIGABRT's own prelude in a C++ program (libstdc++'s verbose terminate handler: "terminate called after
    # throwing an instance of 'std::runtime_error'", "... without an active exception", "... recursively"), then abort(),
    # whose shell report may be cut or missing.  A header like Traceback's: the "  what():  ..." line under it, when it is
    # an error line of its own class, names the block (Block.generic)
    ("cxx-terminate", re.compile(r"\bterminate called (?:after throwing an instance of '|without an active exception\b|recursively\b)")),
    # (round pn54) SIGABRT's own prelude from glibc's allocator, which found its heap corrupted (malloc.c malloc_printerr:
    # "malloc(): invalid next size (unsorted)", "malloc(): unsorted double linked list corrupted", "malloc(): corrupted top
    # size", "free(): invalid pointer", "free(): invalid next size (normal)", "free(): double free detected in tcache 2",
    # "double free or corruption (!prev)", "corrupted size vs. prev_size", "corrupted double-linked list",
    # "malloc_consolidate(): invalid chunk size", "munmap_chunk(): invalid pointer", "realloc(): invalid old size"; glibc
    # before 2.26 wrapped it as "*** Error in `python': double free or corruption (out): 0x... ***"), then abort(), whose
    # shell report ("Aborted (core dumped)") may be cut or missing: a native extension or library wrote past its memory;
    # no error word of its own
    ("heap-corruption", re.compile(r"(?<![\w.])(?:malloc|free|realloc|calloc|malloc_consolidate|munmap_chunk|_int_malloc|_int_free"
                                   r"|tcache_thread_shutdown)\(\): (?:invalid|corrupted|memory corruption|unsorted double|smallbin double"
                                   r"|largebin double|mismatching|double free detected|unaligned)\b"
                                   r"|\bdouble free or corruption \((?:top|out|!prev|fasttop|notop)\)"
                                   r"|\bcorrupted size vs\. prev_size\b|\bcorrupted double-linked list\b")),
    # (round scan9) a batch scheduler killing the job at one of its limits, in the scheduler's own words and with no error
    # word of its own (the run's output simply stops): PBS/Torque's MOM ("=>> PBS: job killed: walltime 86415 exceeded
    # limit 86400", "... mem ... exceeded limit ..."), Torque's abort mail and Moab ("Job exceeded its walltime limit. Job was
    # aborted", "MOAB_INFO:  job exceeded wallclock limit"), LSF's TERM_ reason ("TERM_RUNLIMIT: job killed after reaching
    # LSF run time limit."), Slurm's slurmstepd ("*** JOB 494583 ON node CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME
    # LIMIT ***", "*** STEP 1.0 ...", the old "*** JOB 830329 CANCELLED AT ... DUE TO TIME LIMIT on n447 ***")
    ("job-killed", re.compile(r"\bPBS: job killed: [^\n]{1,80}? exceeded limit\b"
                              r"|(?i:\bjob exceeded (?:its )?wall ?(?:time|clock)(?: time)? limit\b)"
                              r"|\bTERM_[A-Z]{3,20}: job killed after reaching LSF\b"
                              r"|\*\*\* (?:JOB|STEP) \d[\d._]{0,20}(?: ON \S{1,100})? CANCELLED AT \S{1,40}")),
    # (round net53) a Windows process that died or never started, by its NTSTATUS code in hex (Go's os/exec "exit status
    # 0xc0000409" under Ollama and Docker Model Runner, "exit code: 0xc0000135"; Windows Error Reporting's "Exception
    # code: 0xc0000005"; the loader's dialog "The application was unable to start correctly (0xc000007b)" and its Chinese
    # text "应用程序无法正常启动(0xc0000142)"): an access violation, a stack buffer overrun, an illegal instruction, a DLL
    # not found or of the wrong bitness; no error word on the line.  Error and warning codes only (a top digit 4 to F),
    # never 0xc000013a, STATUS_CONTROL_C_EXIT (a console closed or Ctrl+C: a stop, not a crash); the decimal form
    # "exit code -1073741819 (0xC0000005)" stays exit-status
    ("ntstatus", re.compile(r"(?i)\bexit(?:ed)? (?:status|code)\s?[:=]?\s?0x(?!c000013a\b)[4-9a-f][0-9a-f]{7}\b"
                            r"|\bException code: 0x[4-9a-f][0-9a-f]{7}\b"
                            r"|\bunable to start correctly \(?0x[89a-f][0-9a-f]{7}\b|无法正常启动\s?[(（]?0x[89a-f][0-9a-f]{7}")),
    ("exit-status", re.compile(r"(?i)\bexit(?:ed)? (?:status|code)\s*[:=]?\s*(?!0\b)-?\d+\b"
                               r"|\breturned non-zero exit status\b|\bexited with (?:code|status) (?!0\b)-?\d+\b"
                               # a launcher's report of a child (deepspeed's "exits with return code = -11", torch
                               # elastic's "failed (exitcode: 1)"); a negative return code is a signal however worded
                               # (round scan13: and a supervisor's "exited with status code 127", Tabby's llama-server
                               # under its WARN level: "status" before "code")
                               r"|\bexit(?:s|ed)? with (?:return |status )?code\s?=?\s?(?!0\b)-?\d+\b|\bexitcode\s{0,3}[:=]?\s{0,3}(?!0\b)-?\d+\b"
                               r"|\breturn ?code\s?[:=]?\s?-\d+\b"
                               # systemd's report of a unit's main process ("Main process exited, code=exited,
                               # status=1/FAILURE", "code=killed, status=9/KILL") and of the unit ("Failed with result
                               # 'exit-code'", 'signal', 'core-dump', 'oom-kill', 'timeout')
                               r"|\bcode=(?:exited|killed|dumped),? status=(?!0\b)\d{1,3}\b"
                               # (round 16) docker ps / compose ps's STATUS column ("Exited (132) 12 seconds ago",
                               # "Restarting (139)") and the terminated state as JSON (docker inspect "ExitCode": 132,
                               # a pod's "exitCode": 1)
                               r"|\b(?:Exited|Restarting) \((?!0\))\d{1,3}\)|\"[Ee]xit_?[Cc]ode\"\s?:\s?(?!0\b)-?\d+\b"
                               r"|\bFailed with result '(?!success')[\w-]{2,32}'"
                               # (round 15) a launcher's or supervisor's words for a child that died ("Server process
                               # terminated unexpectedly", "worker exited unexpectedly"), no status given
                               r"|\b(?:process|server|worker|engine|subprocess|child)\b[^\n]{0,40}?\b(?:terminated|exited|died|crashed) unexpectedly\b"
                               # (round scan10) Node's exit code of a child killed by a signal, null (child_process'
                               # 'exit' event: code null, the signal beside it), as a launcher or app relays it without
                               # the signal: "Electron exited with code null", LM Studio's "The model has crashed without
                               # additional information. (Exit code: null)"; "exitCode": null (not yet exited) is not it
                               r"|\bexit(?:ed with| with)? code:? null\b"
                               # (round scan10) systemctl's own report of a unit it could not start, whatever the reason
                               # ("Job for nvidia-fabricmanager.service failed because the control process exited with
                               # error code.", "... because a timeout was exceeded.", systemd before 226's "Job for
                               # mysql.service failed. See 'systemctl status mysql.service' ..."): the service never came up
                               r"|\bJob for [\w@.:-]{1,200} failed(?: because |\. See )"
                               # (round scan12) PBS/Torque's job mail, "Aborted by PBS Server ... Exit_status=-9",
                               # "Exit_status=-10" (a job the server aborted at a limit or could not run; a negative
                               # status is the server's JOB_EXEC code), "Exit_status=271" (killed by a signal): the
                               # mail's own spelling only, not a snake_case field of code ("exit_status=-1" in a test)
                               r"|(?-i:\bExit_status=)(?!0\b)-?\d{1,4}\b")),
    # (a cgroup's OOM killer as a scheduler reports it: slurmstepd's "Detected 1 oom-kill event(s)")
    ("kernel-gpu", re.compile(r"\bNVRM: Xid\b|\bXid \(PCI:|(?i:\bout of memory: kill(?:ed)? process\b|\boom-kill:"
                              r"|\binvoked oom-killer\b|\bfallen off (?:of )?the bus\b|\boom[-_]kill events?\b"
                              # (the kill line without its "Out of memory:" head: older and embedded kernels)
                              r"|\bkilled process \d+ \([^)]{1,64}\),? total-vm:)"
                              # (round 45s) an Xid by its number outside the kernel's own line (a title, a report:
                              # "llama-server causes reproducible Xid 62 followed by Xid 154", "Xid 8 gpu timeout");
                              # the GSP firmware no longer answering the driver, or the driver's own assertion failing
                              # ("NVRM: GPU0 _issueRpcAndWait: rpcSendMessage failed with status 0x0000000f for fn 10",
                              # "NVRM: nvAssertOkFailedNoLog: Assertion failed: GPU lost from the bus [NV_ERR_GPU_IS_LOST]")
                              r"|\b(?:Xid|XID) \d{1,3}\b"
                              r"|\bNVRM: (?:GPU\d{1,2} )?\w{1,60}: (?:\w{1,60} failed with status 0x[0-9A-Fa-f]{1,8}\b|Assertion failed: )")),
    # a package manager that found no set of versions: pip, uv, conda
    ("resolution-failed", re.compile(r"(?i)\bNo solution found when resolving dependencies\b|\bResolutionImpossible\b"
                                     r"|\bUnsatisfiableError\b|\bPackagesNotFoundError\b"
                                     # (round 24) libmamba's solver (mamba 1.4+, micromamba, conda's libmamba solver)
                                     r"|\bCould not solve for environment specs\b"
                                     # (round 45s) resolvo's (pixi, rattler) leaf of the unsolvable tree, "└─ blas * mkl,
                                     # for which no candidates were found."; Poetry's (PubGrub) conclusion ", version solving
                                     # failed." and its first derivation step, "Because vllm (0.8.5.post1) depends on
                                     # transformers (>=4.51.1)" at the line's start, as its SolverProblemError prints them
                                     r"|, for which no candidates were found\b|, version solving failed\b"
                                     r"|^\s*Because [\w.\[\]-]{1,100} \([^()\n]{1,60}\) depends on [\w.\[\]-]{1,100} \("
                                     # (round scan16) PubGrub's other first step, a range no release of a package is in:
                                     # "Because no versions of transformers match >4.45.2,<4.46.1 || ..." (Poetry's
                                     # SolverProblemError / SolveFailure, the conclusion line cut away or below the fold)
                                     r"|^\s*Because no versions of [\w.\[\]-]{1,100} match \S"
                                     # (round scan7) pip's resolver's own summary (resolvelib/factory.py: "Cannot install
                                     # {info} because these package versions have conflicting dependencies.", logged at
                                     # CRITICAL: pipenv relays it as "CRITICAL:pipenv.patched.pip._internal...")
                                     r"|\bthese package versions have conflicting dependencies\b"
                                     # (round scan7) uv's PubGrub conclusion (uv-resolver pubgrub/report.rs: "we can conclude
                                     # that your project's requirements are unsatisfiable", "... the requirements are
                                     # unsatisfiable"), the tail under "╰─▶" when the "× No solution found" head is cut
                                     r"|\brequirements are unsatisfiable\b"
                                     # (round scan7) rattler's solver under pixi and rattler-build (rattler_solve lib.rs:
                                     # "Cannot solve the request because of: {}", resolvo's report after it)
                                     r"|\bCannot solve the request because of: "
                                     # (round hfa50) uv's PubGrub step that rules a requirement out, "we can conclude that
                                     # torch==2.4.1 cannot be used." (uv-resolver pubgrub/report.rs), the requirement wrapped
                                     # onto a line of its own ("simpletuner[cuda13]==4.4.0 cannot be used."), when a report
                                     # quotes the chain without the "× No solution found" head or the "unsatisfiable" tail:
                                     # a version or "all versions of" before it, never a bare word ("xformers cannot be used")
                                     r"|\bconclude that (?:all versions of [\w.\[\]-]{1,100}|[\w.\[\]-]{1,100}(?:\{[^{}\n]{1,200}\})?"
                                     r"[=<>!~]=?[\w.*+!-]{1,60}(?:,[=<>!~]=?[\w.*+!-]{1,60}){0,3}) cannot be used\b"
                                     # (the stop-50 review: the requirement wrapped onto a line of its own only when the line
                                     # is that and ends there, "simpletuner[cuda13]==4.4.0 cannot be used.", not a sentence
                                     # that goes on "torch==2.4.1 cannot be used, so pin ...")
                                     r"|^\s{0,12}(?:all versions of [\w.\[\]-]{1,100}|[\w.\[\]-]{1,100}(?:\{[^{}\n]{1,200}\})?"
                                     r"[=<>!~]=?[\w.*+!-]{1,60}(?:,[=<>!~]=?[\w.*+!-]{1,60}){0,3}) cannot be used\.\s*$"
                                     # (round hfa50) libmamba's conflict tree (mamba 1.4+, micromamba, conda's libmamba
                                     # solver: "└─ pytorch-cuda >=11.8,<11.9 , which conflicts with any installable versions
                                     # previously reported;", "└─ python 3.7**  is not installable because it conflicts with
                                     # ..."), quoted without its "Could not solve for environment specs" head
                                     r"|\bconflicts with any installable versions previously reported\b")),
    # (round scan10) a CI runner's own error annotation, the step or the job failed as the runner reports it: GitHub
    # Actions' and Azure Pipelines' "##[error]..." log command ("2022-12-07T10:18:10.5771753Z ##[error]The runner has
    # received a shutdown signal. ...", "##[error]Bash exited with code '1'."), whatever tool's words follow it.  Last:
    # every other fatal class names more ("##[error]Process completed with exit code 1." stays exit-status, an oom-kill
    # line kernel-gpu) and a generic class comes first ("##[error]fatal: ..." is git-fatal); at a warning level too, as
    # the runner raises a tool's warning to an error; and Jenkins' own line for a build step that failed ("Build step
    # 'Execute shell' marked build as failure", before its "Finished: FAILURE")
    ("ci-error", re.compile(r"##\[error\] {0,4}\S|\bBuild step '[^'\n]{1,100}' marked build as failure\b")),
)
# A word every match of a class holds (lowercase: searched in the lowered line, else as written): an error-dense
# log (a crash loop's 1 KB ERROR lines) runs only the class regexes whose word is on the line.
GENERIC_HINTS = {
    "traceback": ("Traceback",), "cmake-error": ("CMake Error",), "nvcc-fatal": ("fatal",),
    "build-killed": ("Killed", "ninja: "), "exception": ("Error", "Exception", "errors.", "exceptions.", ".error.", ".exception."),
    # (each a text that every match holds, lowered: "error" alone let every "ERROR 12 ..." line reach the regex,
    # which (?i) and its look-behind make a try at every position, ~100 us a 1 KB line)
    "compiler-error": ("error:", "error[", "fatal error", "error fatal:", "fehler:", "erreur fatale", "致命错误"),
    "failed": ("FAILED:", "FATAL:", "Fatal error:"), "make-error": ("ake: *** ", "]: *** "), "tensorrt-error": ("Error Code ",), "cli-flag": ("unknown ",), "pod-crashloop": ("CrashLoopBackOff",), "git-fatal": ("fatal: ",), "curl-error": ("curl: (", "Download error (", "gnutls_handshake() failed", "IncompleteRead("), "validation-error": ("Value error, ",), "http-error": ("Error code: ",),
    "connection-refused": ("ECONNREFUSED", "onnection refused", "ConnectionRefusedError", "WinError 10061"),
    "no-gpu-found": ("No devices were found", "connect to GPU backend", "connect to a GPU due to usage limits"), "uv-error": ("× ", "x Failed to "), "cmake-not-found": ("Could NOT find ",), "daemon-error": ("Error response from daemon",),
    # (cuda-error's hints are lowercase: the check macro's words and the runtime's messages)
    "os-error": ("[Errno ", "[WinError ", "(os error "), "exec-format": ("exec format error",), "cuda-error": ("cuda error", "thcudacheck fail", "cuda-capable devices are busy",
                                                         "illegal memory access", "unspecified launch failure",
                                                         "device-side assert", "failed to initiali",
                                                         "cuda runtime error (", "no cuda-capable device is detected",
                                                         "code=", " err: ", "failed: res = ", "cuda failure",
                                                         "failed call to cu", "driver library init failure",
                                                         "system not yet initialized", "too many resources requested",
                                                         "cuda_error_", "cudaerror", " in file "),
    "model-format": ("magic", "deserializing header", "tag does not match"),
    "library-missing": ("cannot open shared object file", "error while loading shared libraries", "or one of its dependencies", "ailed to load", "ailed Loading", "ailed loading", "' not found (required by ", "invalid ELF header",
                        ": undefined symbol: ", "undefined symbol: _Z", "cannot load library '"), "command-not-found": (": not found", "command not found"),
    "nvml-error": ("Failed to initialize NVML", "NVIDIA-SMI has failed", "Unable to determine the device handle",
                   "Mismatch in versions between nvidia-smi", "NVRM: No NVIDIA", "NVRM: The NVIDIA probe", "NVRM: None of the NVIDIA"),
    "assert-failed": ("ASSERT FAILED", "Assertion ", "Check failed: ", "_ASSERT", ": failed assertion "),
    "pip-no-distribution": ("No matching distribution found", "Could not find a version that satisfies"),
    "api-error-body": ('"error"', "'error'"), "error-body": ('"error"', "'error'"),
    "bind-failed": ("t bind", "not bind", "to bind"),
    "aborted": ("abort", "couldn't init a gpu test"),
    "load-failed": ("load", "launch"),
    "linker-error": (": cannot find ", ": library not found for -l"),
    "memory-refused": ("requires more ", "exceeds max-model-memory", "process memory limit exceeded (usage "),
    "unschedulable": (" nodes are available: ", "Insufficient "),
    "connect-failed": ("connectex: ",),
    "name-resolution": ("dial tcp: lookup ", "name resolution", "Name or service not known", "nodename nor servname",
                        "getaddrinfo E"),
    "http-client": ("Max retries exceeded", "Tunnel connection failed", "Read timed out", "'Connection aborted.', "),
    "wheel-hash": ("Hash mismatch for file", "Bad hash for file"),
    "httpx-error": ("httpx.", "httpcore."),
    "tls-error": ("ERR_SSL_", "[SSL: "),
    "http-status": ("request failed: ", "<title>", "<h1>", "status code (no body)", "failed with status code ", "unexpected status code",
                    "<Response [5"),
    "decode-error": ("not valid JSON", " in JSON at position ", "looking for beginning of ", " at line ", ", line: ", " (char ", "json: cannot unmarshal "),
    "js-typeerror": ("Cannot read propert", "Cannot set propert"),
    "py-message": ("unexpected keyword argument", "cannot import name", "xception: No module named"),
    "panic": ("panicked at", "panic: "), "shell-error": ("ad substitution", "yntax error", "no matches found: "),
    "selinux-denied": ("avc:",), "device-denied": ("open /dev/",), "venv-failed": ("ensurepip is not",), "model-unavailable": ("| UNAVAILABLE: ",),
    "start-timeout": ("timed out waiting for ",),
    "lua-error": (": attempt to ",), "apache-error": (": AH",),
    "http-response": (", message='",), "cors-blocked": ("CORS policy", "Cross-Origin Request Blocked"), "exec-failed": ("exec ", "exec: "), "installer-failed": ("): Failed", " failed"), "access-error": ("| 50", "| 40", "| **", "request: "), "endpoint-failed": ("did not pass the ping health check", "error ("), "hub-not-found": (" Not Found for url: ",), "credentials-failed": ("credentials validation failed",), "alloc-failed": ("to allocate ",),
}
GENERIC_LOWER = ("start-timeout", "exec-format", "alloc-failed", "nvcc-fatal", "model-format", "compiler-error", "cuda-error", "bind-failed", "aborted", "load-failed", "memory-refused",
                 "credentials-failed")
GENERIC_LITERALS = ("traceback (most recent call last)", "error", "exception", "failed:", "fatal", "killed",
                    "ninja: build stopped", "ninja: subcommand failed", "curl: (", "value error, ", "econnrefused",
                    "segmentation fault", "segfault at", "core dumped", "段错误", "核心已转储", "schwerwiegender fehler", "erreur fatale", "致命错误", "sigsegv", "sigabrt", "sigbus", "sigill", "sigfpe", "sigkill",
                    "by signal", "signal 6", "signal 9", "signal 11", "exit status", "exit code", "exited with",
                    "nvrm: xid", "xid (pci:", "out of memory: kill", "oom-kill", "oom_kill", "fallen off",
                    "no solution found", "resolutionimpossible", "unsatisfiableerror", "packagesnotfounderror",
                    "could not solve for environment specs", "gnutls_handshake() failed", "incompleteread(",
                    "error response from daemon", "connection refused", "connectionrefusederror", "no devices were found", "× ", "could not find ", "[errno ", "[winerror ", "(os error ", "exit with", "exits with", "return code", "returncode", "exitcode", "erro[", "fata[",
                    "cannot open shared object file", ": not found", "command not found",
                    "thcudacheck fail", "failed to initialize cuda", "failed to initialise cuda", "cuda-capable devices are busy", "illegal memory access", "unspecified launch failure",
                    "device-side assert", "failed to initialize nvml", "nvidia-smi has failed",
                    "unable to determine the device handle", "internal assert failed", "assertion `", "assertion '",
                    "cannot load library '",
                    "check failed: ", "code=exited", "code=killed", "code=dumped", "failed with result",
                    "no matching distribution found", "could not find a version that satisfies",
                    "mismatch in versions between nvidia-smi", "no nvidia graphics adapter probed",
                    "probe routine was not called", "probe routine failed", "none of the nvidia devices were initialized",
                    "x failed to ", "unexpectedly",
                    "illegal instruction", "couldn't bind", "couldn’t bind",
                    "could not bind", "cannot bind", "can't bind", "can’t bind", "failed to bind", "unable to bind",
                    # (round 16: docker's container status and JSON exit codes, a tool's "... aborting.")
                    # (a literal led by punctuation would make the prefilter stop at every ". " of a log: "aborting" alone)
                    "exited (", "restarting (", "exit_code\"", "aborting", "couldn't init a gpu test",
                    # (round scan17: aiohttp's ClientResponseError without an error word, "400, message='Bad Request'")
                    ", message='",
                    # (round 21: a server's "Error loading model X: ..." / "Failed to load model X: ...")
                    "loading model", "load model", "load the model", "loading the model",
                    # (round 20: the linker's own "cannot find")
                    ": cannot find ", ": library not found for -l",
                    # (round 25: THC's "cuda runtime error (N)", cudaErrorNoDevice's text, a server's memory refusal)
                    "cuda runtime error (", "no cuda-capable device is detected", "requires more ", "exceeds max-model-memory", "process memory limit exceeded (usage ",
                    # (round 27: a host name that does not resolve, the resolver's own words)
                    "dial tcp: lookup ", "temporary failure in name resolution", "name or service not known",
                    "nodename nor servname", "getaddrinfo enotfound", "getaddrinfo eai_again",
                    # (round 45s: bare CUDA enums and call codes, a binding's loader, a launch, the bus error, Xids and
                    # the GSP's RPC, resolvo's and Poetry's refusals, urllib3's and httpx's failures, an HTTP status)
                    " err: ", "failed: res = ", "failed to load ", "failed loading ",
                    "launch model", "bus error", "xid ", "failed with status 0x", "assertion failed: ",
                    "no candidates were found", "version solving failed", ") depends on ", "because no versions of ",
                    "max retries exceeded with url", "tunnel connection failed", "httpx.", "httpcore.",
                    "request failed: ", "<title>4", "<title>5", "<h1>4", "<h1>5", "err_ssl_", "[ssl: ",
                    # (lead: the scheduler's unschedulable pod)
                    " nodes are available: ", "insufficient ",
                    # (round 47g: logrus' lower-case error levels, nginx's levels above [error], Windows' connect
                    # failures in Go's words, a CUDA check macro's "Cuda failure"; ld.so's head has "error")
                    "level=error", "level=fatal", "[crit] ", "[alert] ", "[emerg] ", "connectex: ", "cuda failure",
                    # (round rndfa: a model file's bad magic; TensorFlow's "failed call to cuX: CUDA_ERROR_..." has "error")
                    "invalid magic", "invalid gguf magic", "invalid file magic",
                    # (round scan18: TensorRT's engine header check, "Version tag does not match", "Magic tag ...")
                    "tag does not match",
                    # (round scan3: a Rust thread's panic, an allocator's refusal)
                    "panicked at", "failed to allocate ", "unable to allocate ",
                    # (stop 61: Go's panic, a shell's refusal, SELinux's denial, a device node, a file not a library)
                    "panic: ", "bad substitution", "no matches found: ", "avc:", "open /dev/", "invalid elf header",
                    "connect to gpu backend", "connect to a gpu due to usage limits", "ensurepip is not",
                    # (round scan7: ld.so's version check, Ollama's cuInit report, pip's resolver summary at CRITICAL)
                    "' not found (required by ", "driver library init failure", "have conflicting dependencies",
                    # (round scan7: urllib3's read timeout, wheel's RECORD check, uv's PubGrub conclusion)
                    "read timed out", "hash mismatch for file", "bad hash for file", "are unsatisfiable",
                    # (round scan7: ld.so's symbol lookup, Triton's model table)
                    ": undefined symbol: ", "| unavailable: ",
                    # (round scan7: rattler's solver, Poetry's and PDM's failed installs, Dify's credential check)
                    "cannot solve the request", "): failed", "x install ", "x update ", "x remove ", "✖ install ",
                    "✖ update ", "✖ remove ", "✖️ install ", "credentials validation failed",
                    # (round scan7: the Hub's 404 texts)
                    " not found for url: ",
                    # (round scan9: C++'s terminate, a scheduler's kill, openai-node's status without a body, make's stop)
                    "terminate called", "cancelled at ", "walltime limit", "wallclock limit",
                    "wall clock limit", "status code (no body)", "make: *** ",
                    # (round scan9: pflag's unknown option, the kubelet's back-off, ggml's old loader's bad magic)
                    "unknown flag: ", "unknown shorthand flag: ", "crashloopbackoff", "bad magic",
                    # (round scan10: Jenkins' failed build step; "##[error]", "exec format error" and "exit code: null"
                    # hold "error" and "exit code")
                    "marked build as failure",
                    # (round scan10: two of the CUDA runtime's error texts, 802 and 701)
                    "system not yet initialized", "too many resources requested for launch",
                    # (round scan10: systemctl's failed start job, both forms)
                    " failed because ", " failed. see ",
                    # (round scan11: axios' and Go clients' status, a decoder's refusal (JSON.parse, encoding/json,
                    # serde_json), V8's TypeError without its class; the CUDA enum holds "error")
                    "failed with status code ", "unexpected status code", "is not valid json", " in json at position ",
                    "looking for beginning of ", "missing field `", "unknown field `", "unknown variant `",
                    "duplicate field `", "duplicate variant `", "missing variant `", "invalid type: ", "invalid value: ",
                    "invalid length: ", "\", line: ", "cannot read propert", "cannot set propert",
                    # (round scan11: Python's TypeError and ImportError messages without their class)
                    "unexpected keyword argument", "cannot import name",
                    # (round scan12: zsh's names for SIGILL and SIGFPE, a launcher's start timeout)
                    "illegal hardware instruction", "floating point exception", "timed out waiting for ",
                    # (round scan12: PBS's job mail)
                    "exit_status=",
                    # (round scan13: a Python HTTP client's Response repr with a 5xx status; "exited with status code"
                    # holds "exited with")
                    "<response [5",
                    # (round scan13: ld.so's symbol lookup quoted without its library, a mangled C++ name)
                    "undefined symbol: _z",
                    # (round scan14: serde_json's syntax errors, Lua's runtime error, Apache's failed call with its
                    # APR status; bitsandbytes' CUDA check holds "error", Apache's "[core:error]" level too)
                    "eof while parsing ", "expected value at line ", "expected ident at line ", "trailing characters at line ",
                    "trailing comma at line ", "key must be a string at line ", "invalid escape at line ",
                    "invalid number at line ", ": attempt to ", ": ah0", ": ah1", ":crit] ", ":alert] ", ":emerg] ",
                    # (round scan14: Python's json messages without their class)
                    "expecting value: line ", "expecting property name enclosed", "' delimiter: line ",
                    "unterminated string starting at: line ", "invalid control character at: line ", "extra data: line ",
                    # (round scan14: serde's untagged enum with no matching variant)
                    "did not match any variant of untagged enum ",
                    # (round scan15: a C library's _ASSERT macro in both forms, urllib3's ProtocolError as requests prints
                    # it, Go's encoding/json type mismatch)
                    "_assert: ", "_assert(", "'connection aborted.', ", "json: cannot unmarshal ",
                    # (round hfa50: uv's ruled-out requirement and libmamba's conflict tree without their heads, a
                    # browser's CORS refusal)
                    " cannot be used", "installable versions previously reported", "blocked by cors policy",
                    "cross-origin request blocked",
                    # (round hfa50: a container's entry command that cannot be executed)
                    "exec /", "exec ./", ": cannot execute: ",
                    # (round net53: an inference server's access line answering a generation route 500/501, or 404/405
                    # to a GET: gin's status column, llama-server's request line)
                    "| 500 |", "| 501 |", "| 404 |", "| 405 |", "| **50", "| **40", "request: post /", "request: get /",
                    # (round net53: a Windows crash or failed start by its NTSTATUS; "exit status" and "exit code" above)
                    "exception code: 0x", "unable to start correctly", "无法正常启动",
                    # (round pn54: a managed endpoint's failure: SageMaker's ping check, InvokeEndpoint's ModelError body)
                    "did not pass the ping health check", "received server error (",
                    "received client error (",
                    # (round pn54: glibc's allocator aborting on a corrupted heap)
                    "malloc(): ", "free(): ", "realloc(): ", "calloc(): ", "malloc_consolidate(): ", "munmap_chunk(): ",
                    "tcache_thread_shutdown(): ", "double free or corruption", "corrupted size vs. prev_size",
                    "corrupted double-linked list")
# glog/absl's E and F lines carry no error word of their own (Paddle's "E1201 09:12:44.123456  1234 allocator.cc:88]
# Allocate too much memory for the GPU memory pool"): the level letter with the month and day ("e1201 ", every date of
# the year) and TensorFlow's "...779607: E " are literals of their own, so that line_level() sees them (error-level)
GLOG_LITERALS = tuple("%s%02d%02d " % (lv, m, d) for lv in "ef" for m in range(1, 13) for d in range(1, 32)) + (": e ", ": f ")
GENERIC_LITERALS = GENERIC_LITERALS + GLOG_LITERALS
# (round net56) llama.cpp's E letter after its timestamp's last digit (LLAMA_LEVEL), and a JSON event's level field at
# error or above without the word "error" or "fatal" (JSON_LEVEL: pino's numbers, "ERR", "crit", "panic", "emerg", "alert")
GENERIC_LITERALS = GENERIC_LITERALS + tuple("%d e " % d for d in range(10)) + tuple(
    '"%s":%s%s' % (k, sp, v) for k in ("level", "lvl", "severity", "levelname") for sp in ("", " ")
    for v in ("50", "60", '"err"', '"crit', '"panic"', '"alert"', '"emerg'))
TRACEBACK = "Traceback (most recent call last)"
EXC_LINE = re.compile(r"(?<![\w.])((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt|Exit)"
                      r"|(?:[A-Za-z_][\w.]*\.)?(?:errors|exceptions)\.[A-Z]\w*)(?::\s*(.*))?$")


class InputProblem(Exception):
    """The log cannot be scanned (or not to its end); the message says why."""


class CompiledRule(object):
    __slots__ = ("id", "stage", "severity", "patterns", "literals", "unless", "levels", "not_levels",
                 "overrides", "preceded_by", "followed_by", "within", "reset_by", "context_on_line", "retried_by")

    def __init__(self, d):
        self.id = d["id"]
        self.stage = d["stage"]
        self.severity = d.get("severity", "error")
        self.patterns = [re.compile(p) for p in d["patterns"]]
        self.literals = [s.lower() for s in d["literals"]]
        self.unless = [re.compile(p) for p in d.get("unless") or ()]
        self.levels = set(d.get("levels") or ())
        self.not_levels = set(d.get("not_levels") or ())
        self.overrides = set(d.get("overrides") or ())
        self.preceded_by = [re.compile(p) for p in d.get("preceded_by") or ()]
        self.followed_by = [re.compile(p) for p in d.get("followed_by") or ()]
        self.within = int(d.get("within") or 20)
        self.reset_by = [re.compile(p) for p in d.get("reset_by") or ()]
        self.context_on_line = bool(d.get("context_on_line"))
        self.retried_by = [re.compile(p) for p in d.get("retried_by") or ()]

    @property
    def multiline(self):
        return bool(self.preceded_by or self.followed_by or self.reset_by or self.retried_by)


# A table is compiled once per process, not once per log: its ~550 patterns overflow re's own cache (512), so
# compiling them again for each log of a run (or each case of the corpus) re-parsed every one, ~0.2 s a log.
# Keyed by the rule's wire form, so an edited rule is compiled afresh; bounded, since a caller may pass many tables.
def compile_rule(rule):
    return rule if isinstance(rule, CompiledRule) else _compiled_wire(json.dumps(rule, sort_keys=True))


@functools.lru_cache(maxsize=8192)
def _compiled_wire(wire):
    return CompiledRule(json.loads(wire))


# What wrappers put before a tool's own line: a container build's step and seconds (BuildKit "#12 3.456 ",
# its TTY view "138.5 "), a compose service ("vllm-1  | "), journald/syslog ("May 15 23:09:30 host kernel: "),
# dmesg ("[  518.050606] ", "[Sun Mar 30 08:24:00 2025] "), ISO timestamps and the container runtime's stream tag
# (k8s CRI "2024-05-01T12:00:00.123Z stdout F "), kubectl --prefix ("[pod/x/c] ") and srun -l's task number ("0: ").
# The patterns see the line without them (an anchored "^Killed$" still matches "#9 7.312 Killed"); the report shows
# the line as written.  One anchored match per layer: a line without a prefix costs one failed match.
WRAPPER = re.compile(
    r"(?:#\d{1,6} (?:\d{1,7}\.\d{1,4} )?"                                           # BuildKit --progress=plain
    r"|\d{1,7}\.\d{1,4} +(?=\S)"                                                     # BuildKit's TTY view
    # docker compose's service; not a level column after a time ("10:00:00 WARNING  | ...", a logging format's
    # "%(asctime)s %(levelname)-8s | %(message)s"): that is the line's level (stop 58's review)
    r"|(?!(?i:debug|info|notice|warn|warning|error|err|critical|fatal|trace|success)\s+\|)[A-Za-z0-9][\w.-]{0,63} +\| "
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [\w.-]{1,64} [\w./@-]{1,64}(?:\[\d{1,10}\])?: "  # journald, syslog
    r"|\[ {0,12}\d{1,10}\.\d{1,9}\] "                                                  # dmesg
    r"|\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\] "                     # dmesg -T
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)? {1,4}"     # ISO time (dmesg --time-format iso)
    r"(?:(?:stdout|stderr) [FP] )?"                                                  # + k8s CRI stream tag
    r"|\[pod/[\w.-]{1,253}/[\w.-]{1,253}\] "                                          # kubectl logs --prefix
    r"|\d{1,5}: +(?=\S)"                                                            # srun -l
    # (stop 58) launchers and process managers that tag each line of the processes they run, measured by wrapping every
    # recognised real case (bench/diagnose_wrapped.py): an unknown prefix cost 2.8-3.9% of them (the patterns anchored
    # at a line's start, the levels read there) and raised false alarms on healthy runs' lines.
    #  - Ray's and vLLM's process tags, SkyPilot's task tags: "(RayWorkerWrapper pid=3524, ip=10.0.0.5) ",
    #    "(APIServer pid=1) ", "(VllmWorker rank=0 pid=123) ", "(VllmWorker TP0 pid=406) ", Ray Serve's
    #    "(ServeReplica:default:VLLMDeployment pid=648, ip=...) ", "(pid=77) ", "(worker1, rank=1, pid=2345, ip=...) ",
    #    "(raylet) "; a pid is what makes it a tag ("(most recent call last)" and "(ok)" are not)
    r"|\((?:[A-Za-z_][\w:.-]{0,127}(?:, | ))?(?:(?:rank=|TP|DP|PP)\d{1,6}(?:, | ))?"
    r"pid=\d{1,10}(?:, ip=[\w.:-]{2,64})?\) "
    r"|\(raylet(?:, ip=[\w.:-]{2,64})?\) "
    #  - torchrun's per-rank tee ("[rank0]: Traceback ...", torch 2.2+; "[default0]:Traceback ..." before it)
    r"|\[(?:rank|default)\d{1,6}\]: ?"
    #  - pm2's "0|vllm     | " (compose's own has no "|" in the name)
    r"|\d{1,4}\|[\w.-]{1,64} +\| "
    #  - a timestamp put before each line by the runner, not by the tool: Jenkins' timestamper
    #    ("[2026-12-07T10:00:00.123Z] ", "10:00:00 ", "[10:00:00] "), a bracketed date and time
    #    ("[2026-12-07 10:00:00,123] "); not moreutils' ts ("Dec  7 10:00:00 "): journald's form above would take a
    #    line's "fatal error: " for its host and program
    r"|\[\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?\] "
    r"|(?:\[\d\d:\d\d:\d\d(?:[.,]\d{1,6})?\]|\d\d:\d\d:\d\d(?:[.,]\d{1,6})?) "
    #  - a markdown quote ("> " before a pasted line in an issue or a chat; ">>> " is Python's prompt, not a quote)
    # Each takes the one space after it: the tool's own indentation (pip's box, CMake's block) is the tool's line
    r"|> "
    # (round 46) an app's or a tool's bracketed source tag relaying a child's lines ("[ENGINE] " a desktop app's engine
    # install, "[worker-3] ", "[build] " CMake Tools, "[lighttpd] " s6): one word of letters, digits, "_", "." or "-",
    # letter first, no space inside; a log level or a status in brackets ("[ERROR] ", "[WARN] ", "[emerg] ",
    # "[FAILED] ") is the line's own word and stays, so do "[Errno 13]", "[1/4]", "[E file.cc:12]" (a space or a digit)
    r"|\[(?!(?i:debug|info|notice|warn|warning|error|err|erro|crit|critical|alert|emerg|fatal|fata|panic|trace"
    r"|fail|failed|failure|ok|[a-z])\])[A-Za-z][\w.-]{0,40}\] +(?=\S)"
    r")")
MAX_WRAPPERS = 4
# A log event written as one JSON object a line (docker's json-file driver {"log":"...\n",...}, structlog/loguru/
# bunyan {"event"|"msg"|"message": "...",...}): the tool's own line is that string, escapes decoded.  Only a line
# that opens with "{" after the prefixes is looked into; a truncated event still yields its message field.
JSON_MESSAGE = re.compile(r'"(?:log|event|msg|message|MESSAGE)"\s?:\s?"((?:[^"\\]|\\.){0,16384})"')


# (round 46) What makes a JSON object a log event and not an HTTP error body: its message under a log key ("log",
# "event", "msg", "MESSAGE") or a level, time or source key beside "message" (bunyan, pino, GCP's severity,
# python-json-logger's levelname, structlog's service_name).  A body that carries only "message" beside its status
# fields ({"code":401,"reason":"Unauthorized","message":...}, OpenAI's {"message":...,"type":...,"code":...}) is the
# failure as a whole: the patterns see all of it.
JSON_EVENT_KEY = re.compile(r'"(?:log|event|msg|MESSAGE|level|levelname|severity|time|ts|timestamp|@timestamp|logger'
                            r'|hostname|pid|stream|service|service_name)"\s?:')
# The cause of a Go service's event, which zap and logrus keep in a field of its own beside the message
# ({"level":"fatal","msg":"discovery failed","error":"listen tcp 127.0.0.1:2380: bind: address already in use"}):
# the message alone says only what the service was doing.  A string value only: {"error":{...}} is an API's body.
JSON_ERROR_FIELD = re.compile(r'"(?:error|err)"\s?:\s?"((?:[^"\\]|\\.){1,16384})"')


def _json_string(body):
    """A JSON string's body decoded, its line end dropped; None where its escapes are not JSON's."""
    try:
        return json.loads('"' + body + '"').rstrip("\r\n")
    except ValueError:
        return None


# A CJK character is a word character to re, so "\b" finds no edge where a Chinese, Japanese or Korean sentence runs
# straight into an English word ("报错Port 5000 is in use", "出现CUDA out of memory了"): every pattern that starts or
# ends with \b would miss the failure it names. The matched text gets a space at each such edge; the report shows the
# line as written.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_EDGE = re.compile("(?<=[%s])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?=[%s])" % (_CJK, _CJK))


def spaced(text):
    """The text with a space where CJK script and an ASCII letter or digit meet (see _CJK_EDGE)."""
    return text if text.isascii() else _CJK_EDGE.sub(" ", text)


def unwrap(text):
    """The line without the wrappers' prefixes (see WRAPPER), and the message of a JSON log event."""
    for _ in range(MAX_WRAPPERS):
        m = WRAPPER.match(text)
        if m is None or not m.end():
            break
        text = text[m.end():]
    if text[:1] == "{" or text[:2] == " {":
        m = JSON_MESSAGE.search(text)
        if m and m.group(0)[1:8] == "message" and JSON_EVENT_KEY.search(text) is None:
            m = None    # (round 46) an HTTP error body, not a log event: seen whole
        if m:
            message = _json_string(m.group(1))
            if message is None:
                return text
            cause = JSON_ERROR_FIELD.search(text)
            cause = cause and _json_string(cause.group(1))
            if cause and cause not in message:
                message = message + ": " + cause    # joined as Go wraps an error ("what: why")
            text = message
    return text


# glog/absl's one-letter levels, as C++ frameworks (TensorFlow, Paddle, XLA) write them: "W0121 11:28:26.123500   524 file.cc:287] "
# and TensorFlow's "2021-02-27 01:33:51.779607: W external/...": a W line is a warning whatever words it quotes.
GLOG_LEVEL = re.compile(r"(?:^|(?<=[\s|\]]))(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{1,9}: ([IWEF]) "
                        r"|([IWEF])\d{4} \d\d:\d\d:\d\d\.\d{1,9} {1,8}\d{1,10} )")
GLOG_LEVELS = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "CRITICAL"}
# A logger that relays a child's or its own standard streams at a fixed level (FastChat/LLaVA's
# "| INFO | stdout | ..."): that level says where the text came from, not how bad it is.
RELAY = re.compile(r"\s{0,3}[|:\]-]?\s{0,3}std(?:out|err)\b")
# (round 47g) levels no LEVEL word spells: Go's logrus/slog text form in lower case (docker, containerd,
# nvidia-container-toolkit, dcgm-exporter: 'time="..." level=fatal msg="Error watching fields: ..."') and nginx's error
# log from [error] up ("2018/10/19 16:05:32 [crit] 42#42: accept4() failed (24: Too many open files)", [alert], [emerg];
# lead: and [error] itself, "[error] 13#13: *142993 upstream timed out (110: Connection timed out) while reading response
# header from upstream": a proxy in front of an engine that did not answer in time).
# Only the error levels: logrus' level=info/warning and nginx's [warn]/[notice] stay without a level, as before.
KV_LEVEL = re.compile(r"(?:^|(?<=\s))level=(error|fatal)(?=\s|$)"
                      r"|(?:^|(?<=\s))\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[(error|crit|alert|emerg)\] \d{1,10}#\d{1,10}: "
                      # (round scan14) Apache httpd's error log, "[core:error] [pid 1:tid 140275100432256]" (2.4, module and
                      # level) or "[error] [client 10.0.0.1]" (2.2), after its date
                      r"|(?:^|(?<=[\s\]]))\[(?:[a-z][\w-]{0,40})?:?(error|crit|alert|emerg)\] \[(?:pid \d|client )")
KV_LEVELS = {"error": "ERROR", "fatal": "CRITICAL", "crit": "CRITICAL", "alert": "CRITICAL",
             "emerg": "CRITICAL"}


def json_event_error(text):
    """(round net56) Whether the JSON log event on the line has a level field at error or above (JSON_LEVEL) in its own
    object, before any nested one ({"msg":"...","config":{"level":50}} is a setting, not the event's level)."""
    i = text.find("{")
    if i < 0:
        return False
    j = text.find("{", i + 1)
    return JSON_LEVEL.search(text, i, j if j > 0 else len(text)) is not None


# (round net56) llama.cpp's own log format (common/log.cpp, common_log_entry::print with timestamps on, as llama-server,
# llama-cli and the servers built on them (llama-box, Jan, Lemonade, Ollama's runner) print it): the time since start as
# "%d.%02d.%03d.%03d " (minutes, seconds, ms, us), then the level letter and a space, "I ", "W ", "E ", "D ":
# "0.04.413.360 E llama_model_load_from_file_impl: failed to load model", "3.02.792.354 E srv  load_model: failed to load
# model, '...'".  Only the E letter is read (ERROR, error-level): the other letters stay unread, as before
LLAMA_LEVEL = re.compile(r"(?:^|(?<=[\s|\]`]))\d{1,5}\.\d\d\.\d\d\d\.\d\d\d E (?=\S)")
# (round net56) a JSON log event's own level field at error or above, which unwrap() leaves behind when it takes the
# event's message (pino's and bunyan's numbers, 50 error and 60 fatal: {"level":50,"time":...,"msg":"..."}; zap's, logrus'
# and slog's words, {"level":"error","msg":"..."}, {"level":"ERROR",...}; the old llama.cpp server's {"level":"ERR",...};
# GCP's and python-json-logger's "severity" / "levelname"): the event is the program's error whatever its message says
JSON_LEVEL = re.compile(r'(?i)"(?:level|levelname|severity|lvl)"\s?:\s?(?:"(?:error|err|fatal|critical|crit|panic|alert'
                        r'|emerg|emergency)"|[56]0(?=\s?[,}]))')


EXC_HEAD = re.compile(r"\s{0,8}" + EXC_NAME + r": ")


def line_level(text):
    m = LEVEL.search(text, 0, 120)
    if not m:
        if " E " in text[:120] and LLAMA_LEVEL.search(text, 0, 120):
            return "ERROR"
        g = GLOG_LEVEL.search(text, 0, 120) if ("0" in text or ": " in text) else None
        if g:
            return GLOG_LEVELS[g.group(1) or g.group(2)]
        k = KV_LEVEL.search(text, 0, 120) if ("level=" in text or "] " in text) else None
        return KV_LEVELS[k.group(1) or k.group(2) or k.group(3)] if k else None
    if RELAY.match(text, m.end()):
        return None
    if m.start() and EXC_HEAD.match(text, 0, m.start()):
        # (round scan12) the level word is in an exception's message, not the line's level: vLLM's "RuntimeError:
        # Failed to infer device type, please set the environment variable `VLLM_LOGGING_LEVEL=DEBUG` to ..."
        return None
    lv = m.group(1)
    # (logrus, as Docker's CLI and Go tools print it: "ERRO[0000] error waiting for container")
    return {"WARN": "WARNING", "FATAL": "CRITICAL", "ERRO": "ERROR", "FATA": "CRITICAL", "DEBU": "DEBUG"}.get(lv, lv)


def generic_class(text):
    """The safety-net class of an error-looking line, or None (quiet log levels never count, but a
    fatal end counts at WARNING too)."""
    level = line_level(text)
    cls = fatal_class(text) if level not in ("DEBUG", "INFO") else None
    if cls in KILL_CLASSES:     # the more telling class first: "error: ... oom-kill event" is a memory kill
        return cls
    if level not in QUIET_LEVELS:
        name = _generic(text)
        if name == "compiler-error" and "cuda" in text.lower() and _generic(text, CUDA_ONLY):
            # (round rndfa) a CUDA runtime's own message ("CUDA error: all CUDA-capable devices are busy or
            # unavailable") carries the "error:" a compiler's line does: the runtime's class is the telling one
            return "cuda-error"
        if name:
            return name
    if cls:
        return cls
    if level in ("ERROR", "CRITICAL"):
        return "error-level"
    return None


CUDA_ONLY = ("cuda-error",)


def _generic(text, only=None):
    """The first GENERIC_CLASSES class (of `only`, when given) whose regex matches, its hint word checked first."""
    low = None
    for name, rx, hints, lower in _GENERIC_GATED:
        if only is not None and name not in only:
            continue
        if lower:
            if low is None:
                low = text.lower()
            hay = low
        else:
            hay = text
        for h in hints:     # (a plain loop: any() over a generator costs more than the tests on most lines)
            if h in hay:
                break
        else:
            continue
        if rx.search(text):
            return name
    return None


_GENERIC_GATED = tuple((name, rx, GENERIC_HINTS[name], name in GENERIC_LOWER) for name, rx in GENERIC_CLASSES)


# (round scan13) ninja's report that a step failed ("FAILED: cpu_adam.so"), which heads the command and the lines that say
# why: a line of another class after it in the same block names the block ("cc: error: x.c: No such file or directory",
# "/usr/bin/ld: cannot find -lcurand"); the lines that only say the build stopped do not.  (make's "make[2]: *** [x.o]
# Error 139" before the "Segmentation fault" of a parallel job would be the same shape, but no uncited thread proves it)
# (round net53) and an inference server's access line (access-error): the request failed, a line of another class
# beside it says why ("llama runner stopped with error: signal: killed" under the gin 500 of docker/genai-stack#62)
REPORT_CLASSES = ("failed", "access-error")
QUIET_CLASSES = ("build-killed", "exit-status", "error-level", "ci-error")


# The fatal classes that name what killed the process: reported before an "error:" class on the same line
# (a scheduler's "error: Detected 1 oom-kill event"); an exit status is reported after it.
KILL_CLASSES = ("fatal-signal", "kernel-gpu", "job-killed")


# a word one of which every FATAL_CLASSES match holds: most error lines skip the regexes
FATAL_HINTS = ("restarting (", "segmentation", "segfault at", "core dumped", "段错误", "核心已转储", "sig", "fatal python", "exit", "nvrm", "xid", "out of memory",
               "return code", "returncode", "failed with result", "unexpectedly",
               "oom-kill", "oom_kill", "fallen off", "no solution found", "resolutionimpossible", "unsatisfiableerror",
               "packagesnotfounderror", "could not solve for environment specs", "killed", "aborted", "illegal instruction",
               # (round 45s)
               "bus error", "xid ", "nvrm: ", "no candidates were found", "version solving failed", "because ",
               # (round scan7)
               "conflicting dependencies", "unsatisfiable", "cannot solve the request",
               # (round hfa50: uv's "... cannot be used", libmamba's tree)
               "cannot be used", "previously reported",
               # (round scan9: C++'s terminate, a scheduler's kill)
               "terminate called", "pbs: job killed", "wall", "job killed after reaching", "cancelled at ",
               # (round scan10: a CI runner's error annotation, Jenkins' failed build step)
               "##[error]", "marked build as failure",
               # (round scan10: systemctl's failed start job; "because " above holds its newer form)
               " failed. see ",
               # (round scan12: zsh's SIGILL and SIGFPE)
               "illegal hardware", "floating point exception",
               # (round net53: a Windows crash or failed start by its NTSTATUS; "exit" holds Go's "exit status 0x...")
               "exception code: 0x", "unable to start correctly", "无法正常启动",
               # (round pn54: glibc's allocator aborting on a corrupted heap)
               "(): ", "double free or corruption", "corrupted size vs", "corrupted double-linked")


def fatal_class(text):
    low = text.lower()
    for h in FATAL_HINTS:
        if h in low:
            break
    else:
        return None
    for name, rx in FATAL_CLASSES:
        if rx.search(text):
            return name
    return None


def clean(raw):
    """Bytes of one line -> the text segments to match (ANSI stripped, CR rewrites split)."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    if len(text) > MAX_LINE:
        text = text[:MAX_LINE]
    text = text.rstrip("\n")
    if ANSI is not None:
        text = ANSI.sub("", text)
    if "\r" in text:
        segs = [s for s in text.split("\r") if s.strip()]
        return segs or [""]
    return [text]


# ------------------------------------------------------------ what can be read

class _Gunzip(object):
    """A .gz file read as a stream that hands out everything it could decompress before a break
    (a truncated or corrupt file), then raises InputProblem; gzip.GzipFile loses that last part."""

    def __init__(self, path):
        self.raw = open(path, "rb")
        self.z = zlib.decompressobj(31)
        self.buf = b""
        self.problem = None
        self.done = False

    def read(self, n):
        while len(self.buf) < n and not self.done:
            chunk = self.raw.read(1 << 20)
            try:
                if not chunk:
                    self.done = True
                    if not self.z.eof:
                        self.problem = "the gzip data ends early (truncated file)"
                    break
                self.buf += self.z.decompress(chunk)
                while self.z.eof and self.z.unused_data:     # a file of several gzip members
                    rest = self.z.unused_data
                    self.z = zlib.decompressobj(31)
                    self.buf += self.z.decompress(rest)
            except zlib.error as exc:
                self.done, self.problem = True, "the gzip data is corrupt (%s)" % exc
        out, self.buf = self.buf[:n], self.buf[n:]
        if not out and self.problem:
            raise InputProblem("it could not be read to the end: %s; findings are up to there" % self.problem)
        return out

    def close(self):
        self.raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _open(path):
    return _Gunzip(path) if path.endswith(".gz") else open(path, "rb")


def check_input(path):
    """None when the log can be scanned; "empty" for an empty log; else why it cannot (an input error).

    Only regular files are opened: a FIFO or a device (/dev/zero) would block or never end.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "no such file"
    except PermissionError:
        return "not readable (permission denied)"
    except OSError as exc:
        return "cannot be read: %s" % (exc.strerror or exc)
    if stat.S_ISDIR(st.st_mode):
        return "is a directory, not a log file"
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if (
            stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)) else "a socket or other special file"
        return "is %s, not a regular log file" % kind
    if not os.access(path, os.R_OK):
        return "not readable (permission denied)"
    try:
        with _open(path) as fh:
            head = fh.read(SNIFF_BYTES)
    except (OSError, EOFError, zlib.error, InputProblem) as exc:
        if st.st_size and path.endswith(".gz"):
            return "not a readable gzip file (%s)" % (exc,)
        return "cannot be read: %s" % (exc,)
    if not head:
        return "empty"
    if b"\x00" in head:
        return "not a text log (binary data: NUL bytes in its first %d bytes)" % len(head)
    return None


# ------------------------------------------------------------ candidate lines: grep

def _bounded_lines(stream):
    """Lines of a binary stream, each cut at MAX_LINE bytes (the rest of a long line is skipped)."""
    while True:
        line = stream.readline(MAX_LINE)
        if not line:
            return
        if not line.endswith(b"\n") and len(line) >= MAX_LINE:
            while True:
                rest = stream.readline(1 << 20)
                if not rest or rest.endswith(b"\n"):
                    break
        yield line


PARALLEL_MIN_BYTES = 64 << 20   # below this one grep is as fast as several


def _grep_jobs(path):
    if path.endswith(".gz"):
        return 1    # one stream: it cannot be read by several greps
    try:
        if os.path.getsize(path) < PARALLEL_MIN_BYTES:
            return 1
    except OSError:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


def _parse_grep_line(line):
    """b'12:3456:text' (a match) or b'12-3456-text' (context) -> (lineno, offset, is_match, raw)."""
    i = 0
    n = len(line)
    while i < n and 48 <= line[i] <= 57:
        i += 1
    if i == 0 or i >= n:
        return None
    sep = line[i:i + 1]
    j = i + 1
    while j < n and 48 <= line[j] <= 57:
        j += 1
    if j == i + 1 or j >= n:
        return None
    return int(line[:i]), int(line[i + 1:j]), sep == b":", line[j + 1:]


def _grep_stream(argv, path, env):
    """One grep over the file; yields (lineno, offset, is_match, raw)."""
    feeder = None
    if path.endswith(".gz"):
        feeder = subprocess.Popen(["gzip", "-dc", "--", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc = subprocess.Popen(argv + ["-"], stdin=feeder.stdout, stdout=subprocess.PIPE, env=env)
        feeder.stdout.close()
    else:
        proc = subprocess.Popen(argv + ["--", path], stdout=subprocess.PIPE, env=env)
    try:
        for line in _bounded_lines(proc.stdout):
            if line.startswith(b"--") and line.strip() == b"--":
                continue
            item = _parse_grep_line(line)
            if item is not None:
                yield item
    finally:
        proc.stdout.close()
        rc = proc.wait()
        if feeder is not None:
            err = feeder.stderr.read().decode("utf-8", "replace").strip().splitlines()
            feeder.stderr.close()
            if feeder.wait() != 0:
                raise InputProblem("gzip could not decompress it to the end (%s); findings are up to there"
                                   % (err[-1] if err else "gzip failed"))
    if rc > 1:
        raise InputProblem("grep failed on it (exit code %d)" % rc)


def _merge_sorted(streams, depth=4096):
    """Several line-sorted candidate streams as one, each line once (a match wins over context).

    Each stream runs in a thread of its own behind a bounded queue, so the greps read the file
    together while memory stays a few thousand lines, whatever the number of candidates.
    """
    import heapq
    import queue
    import threading

    stop = threading.Event()
    done = object()
    queues = [queue.Queue(depth) for _ in streams]

    def pump(stream, q):
        try:
            for item in stream:
                while not stop.is_set():
                    try:
                        q.put(item, timeout=0.2)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    stream.close()
                    return
            q.put(done)
        except BaseException as exc:  # noqa: BLE001 - handed to the reader, raised there
            q.put(exc)

    def drain(q):
        while True:
            item = q.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    threads = [threading.Thread(target=pump, args=(st, q), daemon=True) for st, q in zip(streams, queues)]
    for t in threads:
        t.start()
    try:
        prev = None
        for item in heapq.merge(*(drain(q) for q in queues), key=lambda it: it[0]):
            if prev is not None and item[0] == prev[0]:
                if item[2] and not prev[2]:
                    prev = item
                continue
            if prev is not None:
                yield prev
            prev = item
        if prev is not None:
            yield prev
    finally:
        stop.set()
        for q in queues:          # unblock a pump waiting on a full queue
            try:
                while True:
                    q.get_nowait()
            except queue.Empty:
                pass
        for t in threads:
            t.join(5)


def grep_candidates(path, literals, context):
    """Candidate lines through grep -F (several greps over literal subsets on big files); sorted by line."""
    grep = shutil.which("grep")
    env = dict(os.environ, LC_ALL="C")
    lits = sorted(set(literals))
    jobs = min(_grep_jobs(path), len(lits))
    # Contiguous runs of the sorted literals: grep's multi-string search is much faster on
    # literals that share their beginnings than on an interleaved split (measured 1.4 s vs 2.6 s).
    groups = [lits[i * len(lits) // jobs:(i + 1) * len(lits) // jobs] for i in range(jobs)]
    files = []
    try:
        for group in groups:
            fd, name = tempfile.mkstemp(prefix="ocrdeploy-lits-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(("\n".join(group) + "\n").encode("utf-8"))
            files.append(name)
        base = [grep, "-a", "-n", "-b", "-i", "-F"] + (["-B", str(context), "-A", str(context)] if context else [])
        if jobs == 1:
            for item in _grep_stream(base + ["-f", files[0]], path, env):
                yield item
            return
        streams = [_grep_stream(base + ["-f", name], path, env) for name in files]
        for item in _merge_sorted(streams):
            yield item
    finally:
        for name in files:
            os.unlink(name)


# ------------------------------------------------------------ candidate lines: in-process blocks

def _lines_before(block, start, n):
    """Up to n (start, end) spans of the lines before the line that begins at `start`."""
    spans = []
    p = start
    while len(spans) < n and p > 0:
        q = block.rfind(b"\n", 0, p - 1) + 1
        spans.append((q, p - 1))
        p = q
    return spans[::-1]


def trie_regex(words):
    """One regex for many literals (bytes or str, the pattern is of their type), factored as a trie: Python's re
    tries one branch per character instead of every literal at every position (about 10x faster than a flat
    alternation).  At a position it matches the shortest literal that starts there (RuleIndex finds the longer
    ones from it); with no literals it never matches."""
    words = list(words)
    as_bytes = bool(words) and isinstance(words[0], bytes)
    empty = b"" if as_bytes else ""
    trie = {}
    for w in words:
        node = trie
        for ch in (w if not as_bytes else [bytes([c]) for c in w]):
            node = node.setdefault(ch, {})
        node[None] = True

    def build(node):
        if None in node:     # a word ends here: the rest is optional for the search
            return empty
        alts = [re.escape(ch) + build(node[ch]) for ch in sorted(k for k in node if k is not None)]
        if len(alts) == 1:
            return alts[0]
        return (b"(?:" + b"|".join(alts) + b")") if as_bytes else "(?:" + "|".join(alts) + ")"

    if not trie:
        return b"(?!)" if as_bytes else "(?!)"
    return build(trie)


def compiled_trie(words):
    """trie_regex compiled, once per process for one set of literals (a table's ~650 take ~0.1 s to build)."""
    return _compiled_trie(tuple(sorted(set(words))))


@functools.lru_cache(maxsize=64)
def _compiled_trie(words):
    return re.compile(trie_regex(words))


def python_finder(literals):
    """Offsets in a block where a literal match starts (Python's re over the lowered block)."""
    alternation = compiled_trie(s.encode("utf-8") for s in literals)

    def find(block):
        return (m.start() for m in alternation.finditer(block.lower()))
    return find


@functools.lru_cache(maxsize=16)
def hyperscan_database(literals, flag):
    """A compiled hyperscan database of the literals (a sorted tuple; a match's id is its index there), each
    with `flag`; compiled once per process, like the rules and the trie."""
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=[b"".join(b"\\x%02x" % c for c in lit.encode("utf-8")) for lit in literals],
               ids=list(range(len(literals))), flags=[flag] * len(literals))
    return db


def hyperscan_finder(literals):
    """Offsets in a block where a literal match ends (hyperscan's compiled automaton, caseless)."""
    db = hyperscan_database(tuple(sorted(set(literals))), hyperscan.HS_FLAG_CASELESS)

    def find(block):
        ends = []
        db.scan(block, match_event_handler=lambda _id, _from, to, _flags, _ctx: ends.append(to - 1))
        return ends
    return find


def block_candidates(path, finder, context, chunk_size=8 << 20):
    """The same as grep_candidates, in-process: a literal search over large chunks of the file.

    Lines without a literal are never looked at one by one: the search jumps from hit to
    hit inside an 8 MiB chunk, and newlines are counted only up to each hit.
    """
    stream = _open(path)
    base = 0            # lines before this chunk
    block_at = 0        # bytes before this chunk
    prev_tail = {}      # the last `context` lines of the previous chunk: lineno -> raw
    after_left = 0      # context lines owed to a hit at the end of the previous chunk
    last_yielded = 0
    skip_rest = False
    leftover = b""
    try:
        while True:
            try:
                data = stream.read(chunk_size)
            except (OSError, EOFError, zlib.error) as exc:
                raise InputProblem("it could not be read to the end (%s); findings are up to there" % (exc,))
            # (a truncated .gz raises InputProblem itself, after handing out what it could decompress)
            buf = leftover + data
            if skip_rest:       # the rest of an enormous line already examined: skip to its end
                nl = buf.find(b"\n")
                if nl < 0:
                    block_at += len(buf)
                    leftover = b""
                    if not data:
                        break
                    continue
                block_at += nl + 1
                buf, skip_rest = buf[nl + 1:], False
            if not buf:
                if not data:
                    break
                leftover = b""
                continue
            if data:
                cut = buf.rfind(b"\n") + 1
                if cut == 0 and len(buf) < 4 * chunk_size:
                    leftover = buf      # a line longer than the chunk: read on
                    continue
                if cut == 0:            # an enormous line: examine its start, skip the rest
                    cut, skip_rest = len(buf), True
                block, leftover = buf[:cut], buf[cut:]
            else:
                block, leftover = buf, b""
            out = {}

            def line(start):
                end = block.find(b"\n", start)
                end = len(block) if end < 0 else end
                return block[start:min(end, start + MAX_LINE)], end + 1

            nxt, owed, after_left = 0, after_left, 0
            for i in range(owed):
                if nxt >= len(block):
                    after_left = owed - i     # the block is shorter than the context owed
                    break
                raw, nxt = line(nxt)
                out[base + i + 1] = (None, False, raw)
            counted_to, counted, last_start = 0, base, -1
            for pos in finder(block):
                start = block.rfind(b"\n", 0, pos) + 1
                if start == last_start:
                    continue
                last_start = start
                counted += block.count(b"\n", counted_to, start)
                counted_to = start
                lineno = counted + 1
                raw, nxt = line(start)
                out[lineno] = (block_at + start, True, raw)
                if context:
                    spans = _lines_before(block, start, context)
                    for k, (q, e) in enumerate(spans):
                        out.setdefault(lineno - len(spans) + k, (None, False, block[q:min(e, q + MAX_LINE)]))
                    for k in range(context - len(spans)):
                        ln = lineno - len(spans) - k - 1
                        if ln in prev_tail:
                            out.setdefault(ln, (None, False, prev_tail[ln]))
                    for k in range(context):
                        if nxt >= len(block):
                            after_left = max(after_left, context - k)
                            break
                        raw2, nxt = line(nxt)
                        out.setdefault(lineno + k + 1, (None, False, raw2))
            n_lines = block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
            if context:
                end_start = len(block) - (1 if block.endswith(b"\n") else 0)
                last = block.rfind(b"\n", 0, end_start) + 1
                spans = _lines_before(block, last, context - 1) + [(last, end_start)]
                first_no = base + n_lines - len(spans) + 1
                prev_tail.update({first_no + k: block[q:min(e, q + MAX_LINE)] for k, (q, e) in enumerate(spans)})
                for ln in sorted(prev_tail)[:-context]:
                    del prev_tail[ln]
            for ln in sorted(out):
                if ln <= last_yielded:
                    continue    # already given as context of the previous chunk's last hit
                offset, is_match, raw = out[ln]
                last_yielded = ln
                yield ln, offset, is_match, raw
            base += n_lines
            block_at += len(block)
            if not data:
                break
    finally:
        stream.close()


def python_candidates(path, literals, context, chunk_size=8 << 20):
    return block_candidates(path, python_finder(literals), context, chunk_size)


def hyperscan_candidates(path, literals, context, chunk_size=8 << 20):
    return block_candidates(path, hyperscan_finder(literals), context, chunk_size)


ENGINES = {"grep": grep_candidates, "python": python_candidates, "hyperscan": hyperscan_candidates}


def pick_engine(path, engine="auto"):
    if engine != "auto":
        if engine == "hyperscan" and hyperscan is None:
            raise InputProblem("the hyperscan engine was asked for, but hyperscan cannot be imported here")
        return engine
    if hyperscan is not None:
        return "hyperscan"
    if shutil.which("grep") and (not path.endswith(".gz") or shutil.which("gzip")):
        return "grep"
    return "python"


# ------------------------------------------------------------ neighbour lines (multi-line rules)

class Windows(object):
    """Neighbour lines of multi-line rules, from one forward pass over the log.

    Candidates come in file order, so their windows do too: the reader only moves forward and keeps
    a bounded tail of what it read.  A .gz is decompressed once for all windows, not once per window;
    a plain file is seeked over the stretches no window needs.
    """

    KEEP = 16 << 20     # bytes kept before a window's line (and read after it) at most

    def __init__(self, path):
        self.path = path
        self.fh = None
        self.buf = bytearray()
        self.at = 0             # file offset of buf[0]
        self.eof = False
        self.seekable = not path.endswith(".gz")

    def close(self):
        if self.fh is not None:
            self.fh.close()
            self.fh = None

    def _read(self):
        try:
            chunk = self.fh.read(1 << 20)
        except (OSError, EOFError, zlib.error, InputProblem):
            chunk = b""     # a truncated .gz: the neighbours past the break are unknown
        if not chunk:
            self.eof = True
        self.buf += chunk

    def _move_to(self, start):
        """Drop what lies before `start`; a plain file seeks over a gap, a .gz reads through it."""
        start = max(0, start)
        if self.seekable and (start < self.at or start >= self.at + len(self.buf)):
            self.fh.seek(start)
            self.buf, self.at, self.eof = bytearray(), start, False
            return
        if start <= self.at:
            return
        if start >= self.at + len(self.buf):
            if self.seekable:
                self.fh.seek(start)
                self.buf, self.at, self.eof = bytearray(), start, False
                return
            self.at += len(self.buf)
            self.buf = bytearray()
            while not self.eof and self.at + len(self.buf) <= start:
                self.at += len(self.buf)
                self.buf = bytearray()
                self._read()
        del self.buf[:start - self.at]
        self.at = start

    def _newline(self, pos, limit):
        """Index in buf of the first newline at or after pos, reading on up to `limit`; -1 if none."""
        while True:
            i = self.buf.find(b"\n", pos)
            if i >= 0 or self.eof or self.at + len(self.buf) >= limit:
                return i
            pos = len(self.buf)
            self._read()

    def around(self, offset, before, after):
        """(lines before, lines after) the line starting at byte `offset`, each raw and cut at MAX_LINE."""
        if self.fh is None:
            self.fh = _open(self.path)
        if offset < self.at:
            return [], []       # behind the pass (never for candidates in file order)
        back = 1 << 16 if self.seekable else self.KEEP
        while True:
            self._move_to(offset - back)
            while not self.eof and self.at + len(self.buf) <= offset:
                self._read()
            rel = offset - self.at
            prev = []
            q = rel
            while len(prev) < before and q > 0:
                r = self.buf.rfind(b"\n", 0, q - 1)
                if r < 0 and self.at > 0:
                    break       # the kept part starts inside this line: it is not whole
                prev.append(bytes(self.buf[r + 1:min(q - 1, r + 1 + MAX_LINE)]))
                q = r + 1
            prev.reverse()
            if len(prev) >= before or self.at == 0 or not self.seekable or back >= self.KEEP:
                break
            back *= 4           # long lines: look further back
        nxt = []
        limit = offset + self.KEEP
        e = self._newline(rel, limit) if after else -1
        while e >= 0 and len(nxt) < after:
            start = e + 1
            e = self._newline(start, limit)
            if e < 0:
                if self.eof and start < len(self.buf):
                    nxt.append(bytes(self.buf[start:start + MAX_LINE]))   # a last line without newline
                break
            nxt.append(bytes(self.buf[start:min(e, start + MAX_LINE)]))
        return prev, nxt


# how many lines after a hit a retried_by line may stand (a traceback's last line, a blank, the retry message)
RETRY_WITHIN = 3


def _any(patterns, raw):
    return any(p.search(unwrap(seg)) for seg in clean(raw) for p in patterns)


def window_ok(rule, windows, offset, segs=()):
    """A multi-line rule's own line matched: do its neighbours match too?  With context_on_line, a line that carries
    its own context (preceded_by on the matching line itself, `segs`, as written or unwrapped: "c++: fatal error:
    Killed signal terminated program cc1plus" is a compile, and so is a BuildKit step's "#8 245.6 Killed") needs no
    line before it."""
    own = rule.context_on_line and any(p.search(seg) for seg in segs for p in rule.preceded_by)
    if own and not rule.followed_by and not rule.reset_by and not rule.retried_by:
        return True
    before = rule.within if (rule.preceded_by or rule.reset_by) else 0
    after = max(rule.within if rule.followed_by else 0, RETRY_WITHIN if rule.retried_by else 0)
    prev, nxt = windows.around(offset, before, after)
    # retried_by: the client tried again right after this failure (a retry line among the next RETRY_WITHIN lines), so
    # this attempt is not the run's end; a run that never recovers prints its last failure with no retry after it,
    # and that one counts
    if rule.retried_by and any(_any(rule.retried_by, ln) for ln in nxt[:RETRY_WITHIN]):
        return False
    # reset_by where the context is the line itself (or there is no preceded_by): a veto by the lines just before (a
    # raw socket's constructor frame before a 10013 is no port), so the entry's line alone still counts when nothing
    # before it says otherwise
    if rule.reset_by and (own or not rule.preceded_by) and any(_any(rule.reset_by, ln) for ln in prev):
        return False
    if rule.preceded_by and not own:
        hit = None
        for i in range(len(prev) - 1, -1, -1):
            if _any(rule.preceded_by, prev[i]):
                hit = i
                break
        if hit is None:
            return False
        if rule.reset_by and any(_any(rule.reset_by, prev[j]) for j in range(hit + 1, len(prev))):
            return False
    if rule.followed_by and not any(_any(rule.followed_by, ln) for ln in nxt):
        return False
    return True


# ------------------------------------------------------------ matching

# Prose ABOUT an error, not a tool's line: a sentence that explains when an error happens in general ("... occurs when
# Uvicorn cannot bind"), a fix's description ("Contains the fix for `OSError: [Errno 98] ...`"), a conditional about
# what a status shows ("If a container has an OOM, the pod ... shows the Reason as `OOMKilled`"), or an error named as
# the end of a narrative ("... leading to CUDA out of memory error").  No tool prints these shapes; a line with a log
# level is a log line whatever its words.  The safety net still sees the line (an exception name in it stays
# unrecognised, never clean); only the entries are not claimed from it.  Each word below is a literal every match
# holds, so a line without any of them costs one substring test per word.
#
# Round 15 adds three shapes: a fix's title, the error quoted after its first word and a space ('Fix push-docker-image's
# "No space left on device"', "fixed bug 'Address is already in use'"; "Fix: <error>" is an issue asking for one); an outcome
# predicted in steps to reproduce ("As result we will have [Errno 98] ..."); what the logs show, described ("Exit code
# 137/236 as shown in logs, but ... `reason` as OOMKilled").
# (round 18) A change's description naming the error it removes ("- Prevents `NVRTC_ERROR_...` on systems where ..."):
# a bullet or line opened by the verb, the error quoted after it; a general reading of a status ("exit code 137
# usually indicates an OOM kill"); an error explained in a relative clause ("failed with exit code 137, which is an
# Out of Memory error").
PROSE_WORDS = (" when ", "fix", "if a", "shows the ", "lead", " will ", " would ", "as shown in", "as seen in",
               "as reported in", "as displayed in",
               "feat", "docs", "chore", "refactor", "perf", "revert", "to avoid", "to prevent", "related to",
               "caused by", "due to", "indicates that", "means that", "+- ", "+* ", "+#",
               "prevents ", "fixes ", "avoids ", "solves ", "resolves ", "works around ", "indicate", ", which ",
               "if you ", "显示", "表示", "意味着", "•", "●", "▪", "◦", "‣", "because", "when you ")
PROSE = re.compile(r"(?i)\b(?:occurs?|happens?|arises?|appears?|is (?:raised|thrown|shown|displayed|printed|reported)) when "
                   r"(?:a|an|the|you|your|it|\w+ (?:cannot|can't|can not|fails|tries))\b"
                   r"|\b(?:contains|includes|adds|is) the fix for\b"
                   r"|^\W{0,3}If an? \w+(?: \w+)? (?:has|gets|hits|is|runs)\b[^\n]{0,80}, the\b"
                   r"|\bshows the \w+ as\b"
                   r"|\b(?:leading|leads|led) to (?:a |an |the )?[\w -]{0,60}\berror\s*$"
                   r"|^\W{0,3}(?:\d{1,3}[.)] )?(?:[a-z]{2,10}(?:\([\w./-]{1,40}\))?!?: ?)?fix(?:e[sd]|ing)? [^\n\"“`']{0,120}[\"“`'][^\n]{3,}"
                   r"|\b(?:we|you|I|it|they) (?:will|would) (?:have|get|see|receive|hit|encounter)\b"
                   # (round 34) the same told of anyone ("When using a CUDA toolkit that is newer than the driver, one will
                   # get `CUDA_ERROR_UNSUPPORTED_PTX_VERSION` when trying to load the PTX", a feature request's premise)
                   r"|\b(?:one|users?|people|the user|someone|everyone) (?:will|would) (?:have|get|see|receive|hit|encounter)\b"
                   r"|\bas (?:shown|seen|reported|displayed) in (?:the |our |my )?(?:logs?|output|console|status|events?)\b"
                   # (round 17) a commit's or a pull request's title in the Conventional Commits form, its type in lower
                   # case ("fix: <the error it fixes>", "docs(faq): ..."; a title "Fix: 404 ..." is a user's), a purpose clause
                   # whose object is an exception ("... to avoid an OSError: ..."), an error quoted in backticks as the
                   # subject of an explanation ("the `X` is related to ..."), a sentence explaining an error ("This error
                   # traceback is related to ...", "The error message indicates that ..."), and a diff's added Markdown
                   # line (a list item or a heading: "+- Error: `OSError: ...`")
                   r"|^\W{0,3}(?-i:fix|feat|docs|chore|refactor|perf|revert)(?:\([^)\n]{1,40}\))?!?: "
                   # (round 30) the same type written with a dot ("feat. explain port already in use error")
                   r"|^\W{0,3}(?-i:fix|feat|docs|chore|refactor|perf|revert)\. (?-i:[a-z])"
                   r"|\bto (?:avoid|prevent) (?:an?|the) [`'\"]?\w*(?:Error|Exception)\b"
                   # (round 34) the same purpose told of a call or a program ("Use SO_REUSEADDR to prevent bind() from failing
                   # with OSError: [Errno 98]"), or of an error labelled before its quote ("Add SO_REUSEADDR for socket to avoid
                   # error: "Address already in use"."): a change's reason, no run of it
                   r"|\bto (?:avoid|prevent) [^\n]{0,60}?\b(?:failing|crashing|erroring(?: out)?|dying|aborting|exiting) (?:with|on|due to)\b"
                   r"|\bto (?:avoid|prevent) (?:the |an? )?(?:errors?|exceptions?|failures?|crash(?:es)?) ?[:：]"
                   # (round 42f) the same purpose with the error quoted as the object's name ("This option allowed us to avoid a
                   # "no space left on device" error when the /tmp directory was too small"): a reason for an option or a
                   # change, no run
                   r"|\bto (?:avoid|prevent) (?:an?|the|this|that) [`'\"“][^`'\"”\n]{3,160}[`'\"”] (?:errors?|exceptions?|failures?"
                   r"|issues?|problems?|messages?|crash(?:es)?)\b"
                   r"|`[^`\n]{4,300}` (?:is|are) (?:\w+ly )?(?:related to|caused by|due to)\b"
                   r"|\b(?:this|the|that) (?:\w+ )?error(?: message| traceback)?(?: `[^`\n]{1,300}`)? (?:is (?:\w+ly )?(?:related to|caused by|due to)"
                   r"|indicates|means that|(?:happens|occurs|arises|appears|is (?:raised|thrown)) because)\b"
                   r"|^\+(?:[-*] |#{1,6} )"
                   r"|^\W{0,3}(?:Prevents|Fixes|Avoids|Solves|Resolves|Works around) (?:the |an? )?[`'\"]"
                   r"|\b(?:usually|typically|generally|commonly|often) indicates?\b"
                   # (round 36) a quoted error explained by a clause after it ("... fails every later turn of the session
                   # with `At most 4 image(s) may be provided in one prompt`, because vLLM checks the limit per request")
                   r"|`[^`\n]{4,300}`, because\b"
                   r"|, which (?:is|means|indicates) (?:an? |the )?[\w -]{0,40}\b(?:error|kill|failure)\b"
                   # (round 16) a reader's conditional about an error ("... if you get an error like `couldn't find
                   # libnvidia-ml.so library in your system` you need to run"), a Chinese sentence saying what a status or
                   # code means ("原因 OOMKilled 显示容器尝试使用超出其限制的内存量。"), and a rendered page's bullet that says
                   # what a tool does ("• nvidia-smi exits non-zero with Failed to initialize NVML: ...", a runbook's
                   # symptom list): no tool prints these shapes
                   r"|\b(?:if|when|whenever) you (?:get|see|hit|encounter|run into|receive) (?:an? |the |this )?(?:error|message|warning)(?: message)?s? (?:like\b|such as\b|saying\b|[\"“'`])"
                   r"|[A-Za-z][\w./-]{1,60} ?(?:显示|表示|意味着)[^\n]{1,200}。\s*$"
                   r"|^\s*[•●▪◦‣]\s+[\w.-]{1,40} (?:exits|fails|returns|reports|prints|shows|says|throws|raises|errors out)\b")


# (round 22) documentation and change descriptions quoting real output (held-out batches 22, 23), one line at a time.
# Each shape is tried only when its own literal is on the line (or, anchored, at the line's start), so a log whose every
# line is an error pays a few substring tests, not the regexes:
#  - a fix's title naming the error unquoted ("Fix no space left on device error in CI"), a list item naming a kind of
#    error in the plural (a troubleshooting page's topics: "- CUDA out of memory errors"), a short title asking for
#    support of a status ("Support OOMKilled");
#  - a past fix told ("... to get killed with exit code 137 ... This was resolved by setting MAX_JOBS =2."), a change's
#    counterfactual ("Without this fix, stopping and restarting the server can lead to EADDRINUSE ..."; a modal "may lead
#    to" alone is a tool's own advice too: vLLM's "This may lead to incorrect model outputs or CUDA errors");
#  - a placeholder where a run prints a value ("Unsupported gpu architecture 'compute_XX'", "CUDA X.Y", "X MiB");
#  - an article's title or hook ("CUDA out of memory — why it happens and how to fix it", "... - Causes And Solutions",
#    "Ever run into that frustrating OSError: ..."), a general reading of when an error comes ("... This typically occurs
#    because ...").
PROSE_START = re.compile(r"(?i)\W{0,3}(?:Fix|Fixe[sd]|Fixing|Solve[sd]?|Solving|Resolve[sd]?|Avoid(?:s|ed)?|Prevent(?:s|ed)?)\s(?!\s)"
                         r"[^\n:]{3,120}?\b(?:errors?|issues?|problems?|failures?|crash(?:es)?|exceptions?)\b"
                         r"|\s*[-*+]\s+[^:`'\"\n]{3,80}\berrors\s*$"
                         r"|\W{0,3}(?:Support|Detect|Surface|Recogni[sz]e)\s+(?:for\s+)?[\w-]+(?:\s+[\w-]+){0,5}\s*$")
# what a change does to code, told by the change itself ("This PR adds ...", round 40f; "This change introduces ...",
# round 42f's next paragraph): the fix verbs are left out (a report's "This fixes <error>" relays a real failure)
CHANGE_VERBS = (r"adds|dumps|logs|prints|emits|catches|handles|wraps|propagates|surfaces|reports|records|introduces|implements"
                r"|updates|moves|removes|re-?raises|refactors|replaces|renames|extends|improves|exposes|detects|checks|validates"
                r"|guards|skips|retries|bumps|pins|sets|allows|enables|disables")


class _KindThatOccurs:
    """(round 42f) "a(n) <Error or quote> ... that/which occurs when": the relative clause first (once a line), then the
    indefinite article before the error within 260 characters of it, so a 16 KiB line costs two bounded searches."""
    CLAUSE = re.compile(r"(?i)\b(?:that|which) (?:occurs|happens|arises|appears|is raised|is thrown|shows up|pops up)"
                        r" (?:when|whenever|if|while)\b(?! (?:I|we|my|our)\b)")
    HEAD = re.compile(r"(?i)\ban? (?:[\w.]{0,60}(?:Error|Exception)\b|[`'\"“])")

    def search(self, seg):
        m = self.CLAUSE.search(seg)
        if m is None:
            return None
        return self.HEAD.search(seg, max(0, m.start() - 260), m.start())


PROSE_SHAPES = (
    (("ed by", "around by"),
     re.compile(r"(?i)\b(?:this|it|that|which) (?:was|has been|got) (?:resolved|fixed|solved|worked around) by\b")),
    (("without this ",), re.compile(r"(?i)\bWithout this (?:fix|change|patch|PR|option|setting|flag)\b")),
    (("why ", "cause"),
     re.compile(r"(?i)\bwhy (?:it|this|they) happens?\b|\bcauses? (?:and|&) (?:solutions?|fix(?:es)?|workarounds?|remed(?:y|ies))\b")),
    (("ever ",), re.compile(r"(?:^|[.!?]\s{1,3})(?:Ever|Have you ever) (?:run into|hit|got|gotten|seen|encountered|faced|come across)\b")),
    (("ly occur", "ly happen", "ly arise", "ly mean", "ly come", "ly result", "ly look", "ly read", "ly contain", "often ", "ly caused",
      "ly due"),
     re.compile(r"(?i)\b(?:usually|typically|generally|commonly|normally|often) (?:occurs?|happens?|arises?|means|comes? from"
                r"|results? from|looks? like|reads\b|contains? the (?:text|words?|string|message|line)"
                # (round 42f) a cause told as the rule ("... you will find it is usually caused by the mismatched CUDA compute
                # capability"): a reply's or a page's reading of the error, no run
                r"|caused by|due to)\b")),
    # (round 42f) a reader sent to search for the error ("If you google this error “CUDA error: no kernel image ...”, you will
    # find ..."): a reply about the error's kind; a user's "I googled this error" tells of their own search, not taken
    (("if you ",),
     re.compile(r"(?i)\bif you (?:google|bing|search(?: for| the (?:web|internet) for)?|look up) (?:for )?(?:this|the|that) (?:exact )?"
                r"(?:error|message|exception|warning)\b")),
    # (round 42f) a page reading a message out to its reader ("... fails with a blunt message: ld cannot find -lcuda. That
    # line tells you the linker searched every library directory it knows"): an explainer; a log never explains itself
    ((" you",),
     re.compile(r"(?i)\b(?:that|this|the) (?:line|message|error|output|warning|log line|text)(?: message)? (?:tells|is telling|says to) you\b")),
    # (round 42f) a story told in the third person ("He pressed Enter to compile. ... Instead, it spat back a cold,
    # unceremonious rejection: /usr/bin/ld: cannot find -lcuda"): a narrative essay built around the message; a report
    # tells its own run in the first person
    (("he ",),     # "she " holds it too
     re.compile(r"(?:^|[.!?]\s{1,3})(?:He|She) (?:pressed|typed|ran|hit|clicked|launched|started|entered|watched|stared|sat|leaned"
                r"|sighed|opened|waited|tried)\b")),
    # (round 42f) an error named as a kind with when it comes, in the present ("This PR fixes a ModuleNotFoundError: No module
    # named 'torch' that occurs when trying to install the package in a clean environment"): the indefinite article and the
    # general "that occurs when" tell of a class of failure; a report says what its run printed ("I got this error when",
    # "... that occurs when I run": the first person after "when" is not taken)
    (("that ", "which "),
     _KindThatOccurs()),
    # (round 42f) a general conditional with its consequence ("When using the spring-boot-starter-web (using Tomcat) if the port
    # is already in use then a "java.net.BindException: ..." exception occurs and the app does not start"): a request's or a
    # page's account of a behaviour, beside round 40f's "When the X is ..., the server doesn't"; the indefinite "then a(n)"
    # tells a kind (a user's "when the model is loaded then the following error" is not taken)
    (("then a",),
     re.compile(r"(?i)\b(?:if|when|whenever) (?:the|an?) [\w -]{1,40}? (?:is|are|gets|has) [^\n]{0,80}?,? then an? ")),
    # (round 42f) what a change brings, told as expected now ("There should now be a log message `address already in use` when
    # there is a port conflict."): a pull request's note on its new message; no run printed it
    ((" now ",),
     re.compile(r"(?i)\b(?:there|it|you|we|users?|one|the (?:server|app|tool|log|output|user|console)) (?:should|will|would) now "
                r"(?:be|see|get|show|log|print|emit|have|receive|display|report) (?:an?|the) (?:(?:new|clear|clearer|proper|helpful|log"
                r"|error|warning|debug|info) ){0,2}(?:messages?|lines?|errors?|warnings?|logs?|entry|entries|events?)\b")),
    # (round 42f) a reviewer's evidence for the change under review ("Independent data point supporting this fix: hit the same
    # failure mode ... ninja was OOM-killed (FAILED: [code=137])"): a comment on a pull request retelling an earlier run
    (("data point", "datapoint", "evidence", "confirmation", "repro"),
     re.compile(r"(?i)\b(?:data ?points?|evidence|datapoints?|confirmation|repro(?:duction)?) (?:supporting|confirming|for|in favou?r of"
                r"|backing) (?:this|the) (?:fix|change|PR|pull request|patch|approach)\b")),
    # (round 42f) a quoted error followed by the change's plan for it ("`nvcc fatal   : Unsupported gpu architecture
    # 'compute_86'` . Disable unless we have cuda 11.1 or greater"): a pull request's imperative, no run
    (("`",),
     re.compile(r"`[^`\n]{4,300}`\s{0,2}[.;,]?\s{0,3}(?:So |Hence |Thus |Therefore )?(?:Disable|Enable|Skip|Remove|Drop|Exclude|Restrict"
                r"|Limit|Gate|Only (?:build|compile|enable|use|add))\b[^\n]{0,80}?\b(?:unless|until|if|when|once) we\b")),
    # (round fa9) an error message judged for its wording on the hit's own line ('Our error message ("Error: Invalid API
    # key.") is too generic.', GitGuardian/ggshield#1120): a change's or a request's verdict on the message it quotes; a run
    # prints its message, never a verdict on it. A report's run keeps its own line ("This error message is confusing." over
    # tofnd's "Error: Address already in use (os error 98)": the verdict's line alone is taken)
    (("error m", "error t"),
     re.compile(r"(?i)\berror (?:messages?|msgs?|texts?)\s{0,2}(?:\([^)\n]{1,160}\)\s{0,2}|[\"“`][^\"”`\n]{1,160}[\"”`]\s{0,2})?"
                r"(?:is|was|are|were|seems|looks) (?:(?:too|very|quite|rather|overly|a bit|pretty|somewhat|really|still|so) )?"
                r"(?:generic|misleading|confusing|vague|unhelpful|cryptic|unclear|uninformative|meaningless|opaque)\b")),
    # (round 42f) a failure status denied ("Pods are not OOMKilled, containers are"): the words say the status does not hold
    (("oom",),
     re.compile(r"(?i)\b(?:not|never|n't) (?:been |being |getting |get |gets |got )?(?:OOM[- ]?Killed|killed by the OOM killer)\b")),
    # (round 28) an error named as a kind ("The ModuleNotFoundError: No module named 'x' is a common Python runtime error
    # indicating that ..."), and a message that says of itself it may be harmless ("cuMemCreate CUDA_ERROR_OUT_OF_MEMORY (may
    # not be an issue e.g. torch allocator will free cache and retry)", "... can be safely ignored")
    (("is a ", "is an "),
     re.compile(r"(?i)\bis an? (?:(?:very|relatively|really) )?(?:common|frequent|typical|classic|well-known|frequently seen)"
                r"(?: [\w-]+){0,3} (?:errors?|exceptions?|issues?|problems?)\b")),
    # (round 30) a change told against the failure it replaces ("... the server now automatically finds and uses the next
    # available port instead of crashing with "Address already in use""): the error is what no longer happens
    (("instead of ",),
     re.compile(r"(?i)\binstead of (?:just |simply |silently )?(?:crashing|failing|erroring(?: out)?|dying|aborting|exiting|bailing out|throwing|raising)"
                r"(?: (?:with|on))?\b"
                # (round 42f) the same told of a call left to fail ("... instead of directly calling ollama.chat and having it
                # throw a "httpx.ConnectError: ..."", a feature request's premise): the failure a change would spare
                r"|\binstead of [^\n]{0,120}?\b(?:having|letting|making|leaving) (?:it|them|this|that|the [\w.-]{1,30}) (?:just |simply )?"
                r"(?:throw|raise|crash|fail|error out|die|abort|exit|blow up)\b")),
    # (round 30) an error quoted and then named as a kind in the plural, with when or where it came ("causing
    # `cudaErrorNoKernelImageForDevice` errors during basic tensor operations", "caused `nvcc fatal : Unsupported gpu
    # architecture` errors during compilation"): a report or a change's description tells of the errors, a tool prints one
    (("` errors ",), re.compile(r"`[^`\n]{4,300}` errors (?:during|when|while|in|on|at|from|with|after|for)\b")),
    # (round 30) a quote labelled as an example at the line's start ("Example: `"localhost:8081" port already in use!`", a
    # fix's description of the message it will throw): a run's line does not open with that label
    (("example",), re.compile(r"(?i)^\W{0,3}(?:for )?example\s?[:：]\s?[`'\"“]")),
    (("not be a", "be ignored", "safely ignore", "safe to ignore"),
     re.compile(r"(?i)\b(?:may|might) not be an? (?:issue|problem|error|concern)\b|\b(?:can|may|should) (?:safely )?be (?:safely )?ignored\b"
                r"|\b(?:is )?safe(?:ly)? to ignore\b|\bcan safely ignore\b")),
    # (round 32) a proposal of the message a tool could log, in the imperative or with a modal ("- if nonzero, log something
    # like `memory cgroup out of memory: process killed`", "we could print a message like ..."): no run printed it
    (("something like", "a message like", "an error like", "a warning like", "a line like", "something about", "a message about",
      "a message for", "a message when", "a message if", "an event", "a line about", "more info", "more details"),
     re.compile(r"(?i)(?:^\W{0,3}|[,;:]\s{1,3}|\b(?:we|you|it|they) (?:could|should|can|might|would) (?:then |also |instead )?)"
                r"(?:log|print|emit|show|display|output|write|raise|throw|report|return|say)s? "
                r"(?:something|a message|an error|a warning|a line) like\b"
                # and a title asking for it ("Log something about OOMKilled containers")
                r"|^\W{0,3}(?:\[[\w -]{1,20}\]:?\s{1,3})?(?:Log|Print|Emit|Report|Surface) (?:something|a message|an event|a line"
                r"|more (?:info|information|details)) (?:about|for|on|when|if)\b")),
    # (round 32) a test that injects the failure ("Tested by forcing `result = ncclSystemError` in the macro."): the error
    # that follows is the test's own making, a pull request's record of its new message
    (("by forcing", "by injecting", "by simulating", "by faking", "by mocking", "by hardcoding", "by hard-coding"),
     re.compile(r"(?i)\b(?:tested|verified|checked|reproduced|triggered|confirmed|validated|exercised) (?:it |this |that )?"
                r"(?:locally )?by (?:forcing|injecting|simulating|faking|mocking|hard-?coding)\b")),
    # (round 32) a general statement that a setup may fail for a reason ("When using EAGLE 2 speculative decoding, it may
    # fail to start up due to a CUDA graph capture failure."): a page's or a change's hint, not a run's report
    (("may fail", "might fail", "can fail", "could fail"),
     re.compile(r"(?i)\b(?:it|this|that|which|they|the (?:server|engine|model|process|job|launch|startup)) (?:may|might|can|could) "
                r"(?:\w+ )?fail\b[^\n]{0,60}?\b(?:due to|because of)\b")),
    # (round 32) a request to tell two failures apart, opened by the verb ("Distinguish between command killed due to high
    # memory usage and failed for another reason ..."): a feature request's title, no run
    (("distinguish", "differentiate"),
     re.compile(r"(?i)^\W{0,3}(?:\[[\w -]{1,20}\]:?\s{1,3})?(?:Distinguish|Differentiate)(?:s|ing)? (?:between )?")),
    # (round 32) a sentence about how a message reads ("CUDA out-of-memory message is hard to understand", "the error
    # message is misleading"): a request about the wording; a run's own lines below it are still read
    (("hard to", "difficult to", "confusing", "unclear", "misleading", "cryptic", "unhelpful", "not helpful", "not very helpful"),
     re.compile(r"(?i)\bmessages? (?:is|are) (?:\w+ )?(?:(?:hard|difficult|impossible) to (?:understand|read|interpret|debug)"
                r"|confusing|unclear|misleading|cryptic|unhelpful|not (?:very )?helpful)\b")),
    # (round 34) what a test expects, not what a run did: a spec runner's test path with its "should" ("Container OOM ›
    # runtime should output OOMKilled reason › should terminate with exitCode 137 and reason OOMKilled", cri-tools under
    # Ginkgo; Jest prints the same "›"), a test's expectation told ("container terminated "reason: Error" when "reason:
    # OOMKilled" is expected")
    (("\u203a", "[it]", "is expected"),
     re.compile(r"(?i)(?:\u203a|\[It\])\s{0,3}should\b|\bwhen\b[^\n]{0,120}\bis expected\b")),
    # (round 34) a question how to keep a failure from happening ("[Usage]: How to ensure that VLLM serve do not crash due to
    # CUDA out of memory as much as possible"): the error is what the asker wants not to meet, no run of theirs is shown;
    # "How to solve <error>" and "how to avoid <error>?" are users who hit it, and are not taken
    # (round 36) a general consequence told in the present ("pip's default build isolation creates a fresh env without
    # torch, so flash-attention's setup.py fails with ModuleNotFoundError: ..."): why a thing fails, in a change's
    # description; a run's report says what failed ("so the build failed with")
    ((" fails with", " crashes with", " errors out with", " dies with", " aborts with"),
     re.compile(r"(?i)\b(?:so|hence|therefore|thus),? (?:[\w'.-]+ ){0,3}(?:fails|crashes|errors out|dies|aborts) with\b")),
    (("how ",),
     re.compile(r"(?i)^\W{0,3}(?:\[[\w -]{1,20}\]:?\s{1,3})?How (?:to|can I|can we|do I|do we|should I|should we|could I|could we) "
                r"(?:ensure|make sure|guarantee)\b[^\n]{0,100}?\b(?:not|never|no longer|\w+n't)\b")),
    # (round 38f) an explainer's hedge in Chinese: who may or often meet the error, then the error ("开发者可能会遇到"Unsupported
    # gpu architecture 'compute_89'"的错误提示", "你可能都遇到过 EADDRINUSE、Address already in use", "开发者经常会遇到RuntimeError:
    # CUDA out of memory错误", "相信不少刚学网络编程的人都会遇上这个问题"): a page tells what readers could see; a run's report says
    # what it printed ("我遇到了", "我可能遇到了一个bug", "大家好 我也遇到了"), and a user's "我经常遇到" is not taken
    (("可能", "也许", "或许", "开发者", "用户", "使用者", "大家", "读者", "新手", "初学者", "不少", "很多", "许多", "多数"),
     re.compile(r"(?:可能|也许|或许)(?:会|都|也|经常|常常)?(?:遇到|碰到|遇上|看到|收到|遭遇)(?!了|过了)"
                r"|(?:(?:开发者|用户|使用者|大家|读者|新手|初学者)们?|(?:不少|很多|许多|大多数|多数)[^\n，,。；;]{0,12}?(?:人|开发者|用户))[^\n，,。；;]{0,20}?"
                r"(?:(?:经常|常常|通常|时常|往往|总是|难免)会?|都会)(?:遇到|碰到|遇上|遭遇)(?!了|过了)")),
    # (round 38f) a quoted error read out by the sentence right after it ("\"fatal error: cuda_fp8.h: No such file or
    # directory\"字面意思是编译器在包含路径中找不到 ..."): a page explaining the words, no tool prints its own line followed by
    # what it means
    (("意思", "含义"),
     re.compile(r"[\"”」』'`](?:这个|此)?(?:错误|报错)?的?(?:字面)?(?:意思|含义)(?:是|为|就是)")),
    # (round 38f) a page's own analysis run together on the hit's line ("... Please set it to your CUDA install root.根因你装的是
    # cuda-toolkit runtime"): "root cause" in Chinese is an article's label, no tool writes it
    (("根因", "根本原因"), re.compile(r"根因|根本原因")),
    # (round 38f) a change's reason told with what its authors now do ("... `c++: fatal error: Killed signal terminated program
    # cc1plus`. I suspect this is due to ..., so we reinstate the restriction"): the present tense of a pull request; a
    # report's "so we reduced" is past and is not taken
    (("so we ", "hence we ", "therefore we ", "thus we ", "so this "),
     re.compile(r"(?i)\b(?:so|hence|therefore|thus),? (?:we|this (?:PR|pull request|change|commit|patch)) (?:now |hereby )?"
                r"(?:reinstate|restore|revert|re-?enable|re-?add|limit|reduce|lower|cap|pin|disable|bump|raise|drop|skip)s?\b")),
    # (round 38f) a change's credit line ("Reported by technical editor Vahid M — `uv sync` was failing with ...", git's
    # "Reported-by:" trailer): who met the error, told in a pull request or a changelog, not the run's own output
    (("reported",), re.compile(r"^\W{0,3}(?:Originally )?Reported(?: by|-by:) ")),
    # (round 40f) an error that no longer comes, told in the past habitual ("It used to fail with the following error: ...
    # I used to get the error `java.io.IOException: Failed to bind.`", a feature request's premise): the run that printed it
    # is gone; "it used to work" is not taken
    (("used to ",),
     re.compile(r"(?i)\b(?:I|we|it|this|that|they|you|the (?:server|app|build|job|test|service)) used to (?:get|see|hit|receive|throw"
                r"|raise|fail|crash|error out|die|abort)\b")),
    # (round 40f) an error named as a recurring kind ("Should take care of the occasional `OSError: [Errno 98] Address already in
    # use` in `test_...`", "the intermittent 'Connection reset' in CI"): a change's reason or a tracking note; a run prints the
    # error, not how often it comes
    (("occasional", "intermittent", "sporadic", "flaky", "sporadically", "take care of", "takes care of"),
     re.compile(r"(?i)\b(?:the|an?|these|those|some) (?:occasional|intermittent|sporadic|flaky|random|rare|recurring|periodic)"
                r"(?: [\w-]+){0,2} [`'\"“]"
                r"|^\W{0,3}(?:This (?:PR|pull request|change|commit|patch) )?(?:should|will|would|to|may|might)? ?takes? care of "
                r"(?:the |an? |these |this )?[^\n`'\"“]{0,40}[`'\"“]")),
    # (round 40f) a pull request telling what it does ("This PR dumps the input batch information to the log before propagating
    # a CUDA out-of-memory error ..."): its own description, no run; "This fixes ..." relays a failure and is labelled real
    # (batch 4's jetson-containers#1457), so the fix verbs are not taken
    (("this pr ", "this pull request ", "this patch ", "this commit ", "this diff ", ". this "),
     re.compile(r"(?i)^\W{0,3}This (?:PR|pull request|patch|commit|diff) (?:now |also |simply |just |only )?"
                r"(?:" + CHANGE_VERBS + r"|makes|changes|raises|uses)\b"
                # (round 42f) the same after the reason's sentence on one line ("... the startup fails with enigmatic EADDRINUSE
                # 10110 stuff. This changes the" / "server so that it just logs error ..."), "This" alone before a verb that
                # only a change does to code ("This makes the server unusable" is a report's, not taken)
                r"|[.!?]\s{1,3}This (?:PR |pull request |patch |commit |change )?(?:now |also )?(?:changes|adds|introduces|implements"
                r"|replaces|removes|reworks|rewrites|refactors|renames|moves) (?:the|a|an|it|this|that|these)\b")),
    # (round 40f) a test that plants the failure's text, beside round 32's "tested by forcing" ("the e2e scenario now plants a
    # real allocator OOM signature (`torch.OutOfMemoryError: HIP out of memory. ...`)"): the error is the test's own making
    (("plant", "inject", "simulat", "fake", "mock", "stub"),
     re.compile(r"(?i)\b(?:plant|inject|simulat|fak|mock|stubb?)(?:s|es|ed|ing|e)? (?:in )?(?:a|an|the|its|their)? ?(?:[\w-]+ ){0,4}?"
                r"(?:signature|error (?:message|string|line|text)|message|string|phrase|output|log line|failure text)s?\b")),
    # (round 40f) a general statement of a behaviour under a condition ("When the address is already in use (BindExection) the
    # server doesn't stop and there is no error message ...", "If the address is already in use, TBM should present a better
    # error message"): a bug's or a change's description, or a wish; a log never tells its own condition
    (("when the ", "when an ", "when a ", "if the ", "if an ", "if a "),
     re.compile(r"(?i)^\W{0,3}(?:When|If|Whenever) (?:the|an?) [\w -]{1,40}? (?:is|are|gets|has|was) [^\n]{0,80}?(?:\b(?:the|it)|,)"
                r" (?:[\w-]+ ){0,2}?(?:does(?:n't|n’t| not)|won't|will not|never|keeps|continues|should|must|ought to|needs to)\b")),
    # (round 38f) an article's hook to its reader, beside round 22's "Ever run into": "If you've trained a model in PyTorch,
    # you've hit this error: RuntimeError: CUDA out of memory.", "You must be familiar with this message: RuntimeError: ...";
    # a user tells their own run ("I've hit this error")
    (("familiar with", "if you"),
     re.compile(r"(?i)\bif you(?:'|’)?(?:ve| have)\b[^\n]{0,100}?,\s?you(?:'|’)?(?:ve| have|ll| will) (?:probably |likely |already |definitely |surely )?"
                r"(?:hit|seen|met|gotten|got|run into|encountered|come across)\b"
                r"|\byou(?: (?:must|should|will|may|might) be|(?:'|’)re| are) (?:probably |likely |already |all too |very |quite )*"
                r"familiar with (?:this|the|that) (?:[\w-]+ )?(?:error|message|warning|exception)\b")),
    # (round scan3) an explainer's scene told to its reader, the reader's own thing the subject of the failure ("... a few
    # seconds later your terminal vomits RuntimeError: CUDA out of memory", "Your container crashes. docker ps shows it exited
    # with code 137."): a page's hook; a report tells its own run ("my build died"), a user's steps say "you get"
    # (stop 60: Google Colab's own notice speaks to its user the same way, "Your session crashed after using all available
    # RAM", and is a run's: host-oom-killed's)
    (("your ",),
     re.compile(r"(?i)(?:^|[.!?,;]\s{1,3}|\b(?:and|then|later|now|suddenly)\s)your (?!session crashed after using all available RAM\b)(?:[\w-]+ ){1,3}?(?:just |suddenly |then |now |immediately )?"
                r"(?:dies|died|crash(?:es|ed)|fail(?:s|ed)|vomits|vomited|spits|spat|throws|threw|blows up|blew up|aborts|aborted|chokes"
                r"|choked|bombs|bombed|errors out|errored out|falls over|fell over)\b")),
    # (round scan3) an explainer's title naming the error as its topic, then what the page gives ("Exit Code 137: What It
    # Means and How to Fix It", "Exit code 137 (OOMKilled) — what it means and how to fix it", "CUDA Out of Memory: What It
    # Means and How to Fix It"): a page's head line; a run never titles its output, and a user's title asks ("How to fix
    # ...?", "what does it mean?")
    (("what it means", "what this error means", "what the error means", "how to fix it", "how to solve it", "how to resolve it"),
     re.compile(r"(?i)[:\-\u2013\u2014|]\s{0,3}what (?:it|this(?: error)?|that|the error) means\b[^?\n]{0,60}$"
                r"|\band how to (?:fix|solve|resolve|avoid|prevent|debug) (?:it|them|this|that)\W{0,3}$")),
    # (round scan3) a definition: the error or status, the sentence's subject at the line's start, then what it means ("Exit
    # code 137 means your process received SIGKILL", "OOMKilled means a container was terminated because ...", 'The "Smudge
    # error: Error downloading object" in Git LFS means the smudge filter failed ...', "Quick answer: Exit code 137 means the
    # process was killed by SIGKILL"): an explainer reads the error out; a tool's line does not open with its own error and
    # gloss it, and a user's "this means I can't ..." opens with no error
    ((" means ",),
     re.compile(r"(?i)^\W{0,3}(?:[\w ]{1,20}[:：] )?(?:The |An? )?(?:[`'\"“][^`'\"”\n]{3,160}[`'\"”]|[\w.()\[\]/-]+(?: [\w.()\[\]/-]+){0,7})"
                r"(?: (?:errors?|messages?|exceptions?|status|codes?))?(?: (?:in|from|on|with) [\w.-]+(?: [\w.-]+){0,3})? means (?:that |your |the "
                r"|an? |its? |this |you |something |some |one )")),
)
# (round 42f) the round 40f shape "This PR adds/dumps/...", "This change" too, opening the paragraph under a hit (see _below)
THIS_CHANGE = re.compile(r"(?i)^\W{0,3}This (?:PR|pull request|patch|commit|diff|change) (?:now |also |simply |just |only )?"
                         r"(?:" + CHANGE_VERBS + r")\b")
# case-sensitive: a placeholder is written in capitals
# (round net56) and x's where a run prints a number: a size or a count ("Tried to allocate XXX MiB", "xx.xx GiB", "Input prompt
# (xxxx tokens)"), a port after an address ("127.0.0.1:XX"), a library's soname version ("libcudart.so.xxx"), an
# architecture in lower case ("sm_xx"): a message as a template; a user's redaction hides a name or a path ("C:\Users\XXXX"),
# not a number
PLACEHOLDERS = ("XX", "X.Y", "iB", " MB", " GB", "xx", "X.X", "x.x")
PLACEHOLDER = re.compile(r"[A-Za-z]_XX\b|\bX\.Y\b|\b[XYZN] (?:[KMG]iB|[KMG]B)\b"
                         r"|\b(?:[xX]{2,}(?:[.,][xX]{1,4})?|[xX][.,][xX]{1,4}) ?(?:[KMG]i?B|bytes|tokens)\b|\d:(?:x{2,}|X{2,})\b"
                         r"|\.so\.(?:x{1,4}|X{1,4})\b|\b(?:sm|compute)_xx\b|\bport (?:x{2,}|X{2,})\b")


def prose_shape(seg, low):
    """One of the documentation line shapes above (PROSE_START, PROSE_SHAPES, PLACEHOLDER); the caller checks the
    line has no log level."""
    if PROSE_START.match(seg) is not None:
        return True
    for words, rx in PROSE_SHAPES:
        for w in words:
            if w in low:
                if rx.search(seg) is not None:
                    return True
                break
    for w in PLACEHOLDERS:
        if w in seg:
            return PLACEHOLDER.search(seg) is not None
    return False


# A title (or first line) that asks for or announces a change to how an error is told, not a run that hit it: an
# imperative or comparative head, then the messaging word and a preposition before the error's text ("Give nicer error
# on EADDRINUSE: ...", "Add Q&A about Address already in use error to faq.md", "More hints on what to do with CUDA Out
# of memory errors", "Improve error message for address already in use").  Anchored at the line's start: a line that
# does not begin with one of these words costs one failed match.  (round net56: also led by the issue it answers, "(#34) -
# better error messages when EADDRINUSE", pouchdb/pouchdb-server#35's title)
ISSUE_LEAD = r"(?:\(#\d{1,6}\)|#\d{1,6}:?)\s{0,2}[-:\u2013\u2014]?\s{0,2}"  # "(#34) - ", "#12: " before a title; DOC_CHANGE takes it too
REQUEST = re.compile(r"(?i)^\W{0,3}(?:\[[\w -]{1,20}\]:?\s{1,3}|" + ISSUE_LEAD + r")?(?:Add|Adds|Added|Adding|Show|Give|Improve[sd]?|Handle|Catch|Print|Return"
                     r"|Document|Explain|More|Better|Nicer|Clearer|Friendlier)\b[^\n]{0,60}?\b(?:messages?|errors?|hints?|notes?"
                     r"|tips?|Q&A|FAQ|catch|handling)\b (?:on|for|about|when|with|to do with|of|if)\b")
# A diff that adds a document's front matter or Markdown ("+title: Docker Container Killed — Exit Code 137 (OOM)",
# "+keywords: exit code 137, OOM, ...", "+## Problem Overview"): a change to a page, not a run.  A shell trace ("+ cmd"),
# nvidia-smi's table ("+----") and nested traces ("++ ") never take this shape.
DIFF_DOC = re.compile(r"\+(?:[A-Za-z_][\w-]{0,40}: |#{1,6} )")


# (round 40f) a line of source code that logs the message ("        logger.info(\"CUDA graphs can take additional 1~3 GiB memory
# per GPU. \"", vLLM's source quoted in a pull request's review): the call that would print the words, not a run that did;
# a logger's output never shows the call.  Python's logging and warnings, a JS console and Java/Go loggers, the string
# literal opening the arguments.
LOG_CALL = re.compile(r"^\s{0,40}(?:(?:self|cls|this)\.)?(?:_{0,2}log(?:ger)?|logging|LOG(?:GER)?|Log|warnings|console|log\.Printf?|klog)"
                      r"\.(?:debug|info|warn(?:ing)?|error|exception|critical|fatal|log|Debugf?|Infof?|Warnf?|Warningf?|Errorf?|Fatalf?)"
                      r"\(\s{0,4}(?:[frbuFRBU]{1,2})?[\"'`]")
LOG_CALL_WORDS = ("log", "warnings.", "console.")
# (stop 58) and a C or C++ check macro whose message is the error ('  TORCH_CHECK(kernel_launched, "cutlassF: no kernel
# found to launch!");', AT_ERROR("..."), PADDLE_ENFORCE_EQ(..., "..."), CUDA_CHECK(...)): the library's source quoted in
# a thread, which a run never prints (C++ echoes no source line; a compiler that quotes one says its own error first).
# Moved here from bf16-unsupported-gpu's unless (stop 57), where it held for one entry: any entry's message in such a
# line is a quote.  A bare ERROR( is a logger's level, not a macro: ERROR needs a prefix.
CHECK_CALL = re.compile(r"^\s{0,40}(?:(?:[A-Z][A-Z0-9]{0,20}_){0,3}(?:CHECK|ASSERTM?|ENFORCE)(?:_[A-Z0-9]{1,12}){0,2}"
                        r"|(?:[A-Z][A-Z0-9]{0,20}_){1,3}ERROR)\s?\([^\n]{0,200}?\"")


# (round net56) a change to documentation told by the change itself: the verb (Add, Adds, Added, Update, Document, Explain,
# Mention), then a unit of prose it adds (a note, a paragraph, a section, an FAQ entry, a tip, a caveat, documentation) and
# what the unit is about or where it goes ("1. Add one paragraph about the error "listen tcp 127.0.0.1:11434: bind: address
# already in use" for starting Ollama.", "Adds a note to the documentation for how to successfully start the application
# after encountering an `address already in use` error."): a pull request's summary of a docs change, no run; a user's
# log never opens with it.  ("Add troubleshooting for error: `ptxas fatal: ...`", vllm#31338's summary, is a corpus case
# and names no unit of prose: not taken)
DOC_CHANGE = re.compile(r"(?i)^\W{0,3}(?:\d{1,2}[.)]\s{0,2}|" + ISSUE_LEAD + r")?(?:"
                        r"(?:Add|Adds|Added|Adding|Update[sd]?|Updating|Document(?:s|ed|ing)?"
                        r"|Explain(?:s|ed|ing)?|Mention(?:s|ed)?)\s(?:an? |one |two |the |some |new |short |small |brief )?"
                        r"(?:[\w-]+ ){0,2}?(?:notes?|paragraphs?|sections?|entry|entries|FAQ|Q&A|tips?|caveats?|explanations?"
                        r"|docs|documentation)\s(?:about|on|regarding|addressing|covering|for|to|in)\b"
                        # ("Document how to fix 'Address already in use' errors", tarantool/cartridge#2090's title)
                        r"|(?:Document|Explain|Describe)(?:s|ed|ing)? (?:how to (?:fix|solve|resolve|avoid|handle|work around|recover"
                        r"|debug|troubleshoot)|what to do (?:about|with|when|if)|why)\b)")
DOC_CHANGE_VERBS = ("add", "update", "document", "explain", "mention", "describe")


def is_prose(seg, low):
    """True for a sentence about an error rather than a tool's report of one (see PROSE, REQUEST, DIFF_DOC), or a
    line that quotes one by what the line is (see QUOTE_SHAPES, LOG_CALL, CHECK_CALL)."""
    if any(w in low[:24] for w in DOC_CHANGE_VERBS) and DOC_CHANGE.match(seg) is not None and line_level(seg) is None:
        return True
    if "(" in seg and any(w in low for w in LOG_CALL_WORDS) and LOG_CALL.match(seg) is not None:
        return True
    if '"' in seg and "(" in seg and CHECK_CALL.match(seg) is not None:
        return True
    if REQUEST.match(seg) is not None and line_level(seg) is None:
        return True
    if seg[:1] == "+" and DIFF_DOC.match(seg) and line_level(seg) is None:
        return True
    if seg[:1] == "+" and DIFF_ADDED.match(seg):
        return True
    if seg.lstrip()[:1] == "#" and DOC_TITLE.match(seg) and line_level(seg) is None:
        return True     # a page's title that fixes or troubleshoots the error it names (see DOC_TITLE)
    if prose_shape(seg, low) and line_level(seg) is None:
        return True
    for w in PROSE_WORDS:
        if w in low:
            break
    else:
        return False
    return (PROSE.search(seg) is not None or DEFINITION.search(seg) is not None) and line_level(seg) is None


# Lines that QUOTE an error, by what the line is (held-out batch 17's false alarms: a review diff of a doc, a diff of code
# that builds the kernel's message to look for it, an FAQ's title, a rule definition's pattern list); like PROSE they
# claim no entry and the safety net still sees them.
#  - a unified diff's added line: "+" then text or code with no space ("+通常出现 `Cuda Error: ...`") or indented code
#    ("+    err = f'Out of memory: Killed process {pid}'"); set -x's "+ cmd" has one space, "++ cmd" and table borders
#    ("+----+", "+====") are not taken;
#  - a removed line followed by its replacement ("-X ..." then "+X ...", the same first characters): a review diff
#    (removed_line_replaced(); bash's "-bash: x: command not found" has no "+" line after it);
#  - an FAQ entry's title ("FAQ problem ：The solution to “CUDA driver version is insufficient ...”", "FAQ4: Can not find
#    library: libcudnn.so ...") and an answer's heading ("The solution to ...");
#  - a rule definition: a key that says what to look for (pattern, keyword, regex, signature, matcher) with the quoted
#    text on its line (YAML "pattern: 'CUDA out of memory'", JSON, a bold markdown label), or quoted list items right
#    under such a key (quoted_under_definition_key(): "- **Keyword / Pattern**:" then "  - `RuntimeError: CUDA error: ...`").
DIFF_ADDED = re.compile(r"\+(?:[^\s+=-]|[ \t]{2,}\S)")
DIFF_REMOVED = re.compile(r"-(?:[^\s=-]|[ \t]{2,}\S)")
_DEFINITION_KEY = r"(?:patterns?|keywords?|regexp?|regex(?:es)?|signatures?|matchers?)"
DEFINITION = re.compile(r"(?i)^\W{0,12}(?:FAQ\s?\d{0,3}\b|The solution (?:to|for)\b)"
                        r"|^[\s\-*+#\"'{,]{0,24}[\w ]{0,30}?" + _DEFINITION_KEY + r"[\W_]{0,4}[:=：]\s*[`'\"“]")
DEFINITION_KEY_LINE = re.compile(r"(?i)(?<![a-z])" + _DEFINITION_KEY + r"\b[\W_]{0,4}[:：]\s*$")
QUOTED_ITEM = re.compile(r"\s*(?:[-*+]|\d{1,3}[.)])\s+[`'\"“]")
PROSE_WORDS = PROSE_WORDS + ("faq", "the solution", "pattern", "keyword", "regex", "signature", "matcher")


def _unwrapped(raw):
    return unwrap(clean(raw)[0])


def removed_line_replaced(seg, nxt):
    """A diff's removed line ("-X ...") whose next line is its replacement ("+X ...", the same first characters)."""
    if not nxt or not DIFF_REMOVED.match(seg):
        return False
    after = _unwrapped(nxt[0])
    n = min(12, len(seg) - 1)
    return n >= 4 and after[:1] == "+" and DIFF_ADDED.match(after) is not None and after[1:1 + n] == seg[1:1 + n]


def quoted_under_definition_key(seg, prev):
    """A quoted list item right under a key that says what to look for (siblings between them allowed)."""
    if not QUOTED_ITEM.match(seg):
        return False
    for raw in reversed(prev):
        line = _unwrapped(raw)
        if QUOTED_ITEM.match(line):
            continue
        return DEFINITION_KEY_LINE.search(line) is not None
    return False


# (round 22) Page-level shapes: the lines around a hit say the text is documentation or a change's description that
# shows real output, not a run (held-out batch 22's error-reference and how-to pages, PR descriptions' before/after):
#  - the quote sits under a section heading that presents an error as an example: "Symptoms", "The Error", "Common CLI
#    Output", "Typical output", "What the error looks like" (a line of its own, optionally a Markdown heading or bold);
#    a heading of any other kind in between ends that section ("## Logs", "Steps to reproduce" are a user's);
#  - the quote is a fenced block whose introducing line (the nearest non-blank line above the opening fence) says what
#    a change does to it ("Solves the", "Fixes the following error:", "This PR fixes"), labels it as the state before
#    a change ("before:", "**Before**", "Before this PR:"), asks to change the message ("Improve this error to ..."), or
#    addresses a reader ("If you see this error:"); a block set apart by blank lines is read the same way;
#  - a page's title that fixes or troubleshoots (DOC_TITLE), over every sub-heading below it;
#  - the paragraph after the quote gives its fix ("Fix: Use CUDA 13.0 Docker container."), a sentence's end wrapped onto
#    the hit's line (CONSEQUENCE_TAIL), a checked task's expected result (TASK_DONE).
# A user's issue wraps a real log in the same Markdown ("I get this error:", "### Error log", "```"), and none of these
# words introduce it.  Only lines an entry matched are looked at (their few lines before: no cost on a clean log);
# the lookups have their own budget (MAX_DOC_WINDOWS), apart from the multi-line rules'.
MAX_DOC_WINDOWS = 2000
DOC_LOOKBACK = 16
DOC_LOOKAHEAD = 4         # (round 42f: 2 -> 4, for the page shapes below a hit: NEXT_HEADING, BYLINE)
DOC_HEADING = re.compile(r"(?i)^[\s>#*_]{0,8}(?:\d{1,2}[.)] ?)?(?:symptoms?:?|error symptoms?:?|examples:?"
                         # (round 36) what a proposal or a test plan expects to see ("Expected symptoms:" over "- kubectl
                         # describe shows: ... Reason: OOMKilled", a fault to inject): no run printed it
                         r"|expected (?:symptoms?|errors?|error (?:messages?|output)):?"
                         r"|the (?:[\w-]+ ){0,2}error(?: messages?)?(?: (?:you(?:'re| are| might be| may be)|you'll be) (?:seeing|getting|hitting))?"
                         r"|common (?:cli |console |terminal |command[- ]line )?(?:output|error messages|errors)"
                         # (round rndfa) the same list heads in Chinese ("常见错误" over a fix page's messages, "常见的报错如:"
                         # over an article's two quoted errors, "典型错误信息示例" (typical error message examples) over the
                         # messages a pip-timeout page reads out): errors told as common or typical, no run of the writer's
                         r"|(?:常见|典型)的?(?:报错|错误)(?:信息|提示)?(?:示例|如下|如|有|包括)?[:：]?"
                         r"|typical (?:error |cli |console )?(?:output|messages?|errors?)"
                         r"|what (?:the error|the output|it|you(?:'ll| will)? see) (?:looks? like|is)"
                         r"|example (?:error )?output|sample (?:error )?output"
                         # (round 30) an FAQ page's own title line over its numbered entries ("FAQ" then "1.CUDA out of
                         # memory"), and a reference list of what a tool prints in each case ("Here are the error messages
                         # for each type of service when they encounter a port already in use:"); a user's "Here are the
                         # errors I get:" names no "for each"
                         r"|faq|frequently asked questions"
                         r"|here (?:are|is) the (?:\w+ )?(?:messages?|errors?|output)\b[^\n]{0,60}?\bfor (?:each|every)\b[^\n]{0,160}:"
                         # (round 40f) a pull request's own sections ("## Problem", "### Motivation", "## Root Cause", a
                         # template's "Problem statement"): the change's reason told or quoted under them, no run of its
                         # own; a user's issue heads its log "Logs", "Error", "Describe the bug" (no real case of any batch
                         # or the corpus sits under these three)
                         r"|(?:the )?problem(?: statement)?[:：]?|motivation[:：]?|root[- ]cause(?: analysis)?[:：]?"
                         # (round 42f) an explainer's section reading the error out ("What this error means" over "401 Incorrect
                         # API key provided means the API ... rejected the request"), and a pull request's test plan ("## Test
                         # plan" over "- [x] Confirm pod terminates with `reason=OOMKilled`"): what a run should show, no run
                         r"|what (?:this|the|that) (?:error|message|code|warning|exception)(?: message| code)? (?:means|is telling you)"
                         r"|what does (?:this|the|that) (?:error|message|code)(?: message)? mean\??"
                         r"|test(?:ing)? plan[:：]?|how (?:was|has) this been tested\??|testing (?:done|notes|instructions)[:：]?)[\s*_]{0,6}$")
# a page's title or a heading over a list of entries: a Markdown heading that says the page fixes or troubleshoots
# ("# Fix: Address Already in Use (Port 8000)", "# Port 8000 Already in Use - Fixed! ✅", "# Troubleshooting: ...",
# "## Common Errors", "## Known issues"); it holds over the sub-headings below it.  A question is a user's ("## How
# to fix this?"), and so is a heading about what they tried ("### Troubleshooting steps").
DOC_TITLE = re.compile(r"(?i)^\s{0,3}#{1,6}\s+\W{0,4}(?:"
                       r"(?:fix(?:ed|ing)?|troubleshooting|how to (?:fix|solve|resolve)|solution|solved|resolved)\b"
                       r"(?!\s+(?:steps|tried|attempts?|done)\b)[^?\n]*"
                       r"|[^?\n]*\b(?:fixed|solved|resolved)\W*"
                       r"|(?:common|known|frequent) (?:errors|issues|problems)(?: and (?:solutions|fixes))?[^?\n]*)$")
# the line after a quote names its fix or cause (a troubleshooting entry: the error, then "Fix: Use CUDA 13.0 Docker
# container."); a user's "Solution?" asks
# (round 28: and a Chinese how-to's "解决办法：" / "解决方法:" / "原因：", with either colon)
ENTRY_AFTER = re.compile(r"(?i)^[>*_-]{0,4}(?:fix|solution|resolution|workaround|cause|root cause|how to fix"
                         r"|解决(?:办法|方法|方案)|原因)[*_]{0,2}\s?[:：]")
# (round 28) a question heading that a page answers at once ("What Does CUDA Error 209 Mean?" then "The full console message
# usually looks like this: ..."): the hit is the question, and the next non-blank line is documentation's (is_prose); a
# user's question title is followed by their own report, not by a general reading
QUESTION_HEAD = re.compile(r"(?i)^[\s#*_>]{0,8}(?:what|why|how)\b[^\n?]{3,120}\?[\s*_]{0,4}$")
# a heading of another kind: a Markdown heading or a bold line of its own ("## Environment", "**Logs**")
OTHER_HEADING = re.compile(r"^\s{0,3}(?:>\s?)?(?:#{1,6}\s|\*\*[^*\n]{1,60}\*\*:?\s*$)")
FENCE = re.compile(r"^\s{0,8}(?:>\s?)?(?:```|~~~)")
FENCE_INTRO = re.compile(r"(?i)^[\s>#*_-]{0,8}(?:"
                         # (round 34) the same with a modal or a future ("This PR will display the above error in addition
                         # to ...", "This PR is going to resolve the following issue:"), and a fix offered for the quote
                         # below it ("Possible fix of:", "Potential fix for:")
                         r"(?:this|the) (?:pr|pull request|change|commit|patch|fix) (?:will|would|should|is going to) "
                         r"(?:also )?(?:fix|solve|resolve|address|display|show|print|log|output|report|emit|surface|prevent|avoid)s?\b"
                         r"|(?:(?:a|the|this is an?) )?(?:possible|potential|partial|proposed|probable|likely|tentative) fix(?:es)? (?:of|for)\b[^\n]{0,120}[:：]\s*$"
                         r"|(?:this (?:pr|pull request|change|commit|patch|fix) )?(?:fixes|solves|resolves|prevents|avoids"
                         r"|works around|addresses|gets rid of)\b"
                         r"|before(?: (?:this|the) (?:fix|change|patch|pr|pull request|commit))?[\s*_]{0,4}:?[\s*_]{0,4}$"
                         r"|(?:improve|clarify|reword) (?:this|the) (?:error|message)"
                         # a reader addressed ("If you see this error:", "If you get the following error")
                         r"|if you (?:see|get|hit|encounter|run into|receive) (?:this|the following|an?|the)\b"
                         # (round 28) a tool's existing output introduced as what it already says ("In K8s, Apache Spark
                         # already provides the following explanation at `Spark UI` `Executor Tab` explicitly."): a
                         # discussion of a change, not a run
                         r"|[^\n]{0,80}?\balready (?:provides?|shows?|prints?|displays?|gives?|reports?|explains?)\b[^\n]{0,40}?"
                         r"\bthe following (?:explanation|message|hint|description|reason|text)\b"
                         # (round 32) a change's description showing the message it brings ("Here is an example of the
                         # new error:", "The new error message looks like:", wrapped or not), a request or a discussion
                         # listing a kind of error ("Here are some examples of such errors that I'm referring to:"), and a
                         # prediction in Chinese ("很可能会出现如下情况：", "this may well happen:"): no run of theirs
                         r"|[^\n]{0,200}?\b(?:an? )?examples? of (?:the|an?) (?:new|improved|updated|better|clearer|resulting|reworded)"
                         r" (?:error|message|output|warning)s?\b"
                         r"|[^\n]{0,200}?\b(?:the|this) (?:new|improved|updated|reworded) (?:error )?message (?:now )?(?:looks?|reads?) like\b"
                         r"|[^\n]{0,300}?\bexamples? of (?:such|these kinds? of|this kind of|these types? of|this type of)"
                         r" (?:errors?|messages?|failures?|warnings?)\b"
                         r"|[^\n]{0,160}?(?:可能|也许|或许)会?(?:出现|遇到|报出?)(?:如下|以下|下面的?)"
                         # (round 36) a change's new message as a heading of its own ("new message" over the fenced
                         # test output it prints), a run shown as the one that worked ("Here a successful one from my
                         # local-machine", a comparison with the failing one), and a change's purpose ("This is to work
                         # around an issue in flash-attn build definition. The issue manifests itself as:")
                         r"|(?:the |a )?(?:new|improved|updated|reworded) (?:error )?(?:message|output)s?[\s*_:：]{0,4}$"
                         r"|[^\n]{0,80}?\b(?:an?|the|my) (?:successful|working|passing) (?:one|run|output|log|example)\b"
                         r"|this (?:pr |pull request |change |commit |patch )?is (?:meant |intended )?to (?:work around|fix|avoid|address|resolve|prevent)\b"
                         # (round 38f) an article's scene told to its reader in the past ("You changed your base URL to an
                         # OpenAI-compatible provider, sent a request, and got back:" over the JSON it shows; "You have hit
                         # something like this in your terminal:"): a reader's imagined run; a user's steps say "you get" in
                         # the present
                         r"|you (?:just )?(?:changed|switched|pointed|ran|sent|tried|deployed|installed|upgraded|started|launched|called"
                         r"|built|configured|wrote|added|made|spun up|followed|copied|pasted)\b[^\n]{0,200}?\b(?:and|then|but|only to)"
                         r"(?: you)? (?:got|saw|received|hit|were greeted (?:with|by)|ended up with)\b[^\n]{0,40}[:：]\s*$"
                         r"|you(?:'|’)?(?:ve| have) (?:probably |likely |already )?(?:hit|seen|gotten|got|run into|encountered) "
                         r"(?:something|an error|a message|an? [\w-]+ error|output) like this\b"
                         # (round 38f) a change's bullet naming what goes wrong without the thing it adds ("- Without `nvcc`,
                         # the scheduler crashes immediately after loading model weights:" over the CI lines): a pull request's
                         # summary list; a report's own sentence is not a list item
                         r"|(?<=[-*+] )without `[^`\n]{1,60}`,? [^\n]{0,160}?\b(?:crash(?:es)?|fails?|errors? out|dies|aborts?|breaks?)\b[^\n]{0,80}[:：]\s*$"
                         # (round 40f) a change's reason told as a general cause over the quote ("This causes build failures
                         # on ARM64 systems with CUDA 13+:"): failures as a kind, in the plural, where they happen; a user
                         # writes "this causes the following error:" of their own run, which is not taken
                         r"|[^\n]{0,200}?\b(?:this|that|which|it) (?:causes|leads to|results in|triggers) (?:(?:build|compile|compilation"
                         r"|runtime|test|CI|startup|import|load) )?(?:failures|errors|crashes) (?:on|in|for|with|when|under|during)\b[^\n]{0,120}[:：]\s*$"
                         # (round 40f) what is liable to fail, told of a thing ("Some of the tests ... are subject to failing for:"):
                         # a change's reason, no run
                         r"|[^\n]{0,200}?\b(?:is|are|was|were) (?:\w+ )?(?:subject|prone|liable|susceptible|vulnerable) to "
                         r"(?:fail(?:ing|ures?)?|errors?|crash(?:es|ing)?|flak(?:y|iness))\b[^\n]{0,120}[:：]\s*$"
                         # (round 40f) a wish for a better message than the one quoted ("If the address is already in use, TBM
                         # should present a better error message than a Ruby stack trace:"): a feature request, the quote is
                         # what it wants replaced
                         r"|[^\n]{0,200}?\b(?:should|could|would|must|ought to) (?:present|show|give|print|display|raise|return|report"
                         r"|emit|log|output|surface) (?:a |an )?(?:much )?(?:better|clearer|nicer|friendlier|proper|human-readable|more (?:helpful"
                         r"|useful|informative|descriptive|meaningful|readable)) (?:error )?(?:message|error|output|hint|explanation)s?\b"
                         r"[^\n]{0,120}[:：]\s*$"
                         # (round 42f) a general reading of how the error shows ("This happens only on Windows, whose error log
                         # usually looks like this:" over the indented quote, another project's FAQ quoted): no run of theirs
                         r"|[^\n]{0,200}?\b(?:usually|typically|generally|normally|often|commonly|mostly) (?:looks?|reads?|appears?)"
                         r" (?:like|as follows|something like)\b[^\n]{0,40}[:：]\s*$"
                         # (round scan4) a hedged intro: the reader told what they may meet ("When working with networking in
                         # Python, you may encounter the error message:", "If you query the model with 2 images, you would see
                         # the 400 error like:", "some people might experience below error:"): a page's or a change's prediction
                         # over its example; a user tells their own run as it went ("I get", "I got", "you get" in steps), never
                         # with might/may/could/would
                         r"|[^\n]{0,300}?\b(?:you|users?|people|some (?:people|users)|one) (?:might|may|could|would) (?:also |then |still |sometimes )?"
                         r"(?:see|get|encounter|experience|hit|receive|run into|face|be greeted (?:with|by)) (?:an? |the |this |some )?"
                         r"(?:following |below |same |new )?(?:[\w-]+ ){0,2}"
                         r"(?:errors?|messages?|output|exceptions?|warnings?|traceback)(?: messages?)?(?: (?:like|such as|similar to)"
                         r"(?: this)?)?[\s*_]{0,4}[:：]\s*$"
                         # (round gfa) the quote is what a change removes, told over it: the change (this, it, which) fixes,
                         # prevents or avoids "the following" ("This fixes the following timeout issue when installing
                         # PyTorch via uv.", "... but it fixes the following error when trying to build the docker image:"),
                         # the imperative of a pull request ("Fix the following error"), what a line of code is there for
                         # ("This part of code was added to avoid the following pip3 errors:", "This is needed to prevent
                         # the following error on NVIDIA GPUs ..."), the state without the change ("w/o this change, gets the
                         # following error:", "Error without fix:", "Without this, trying to `import torch` ... would result
                         # in"), and a fix's purpose as a label ("To fix the error:"). A user asks or tries ("How can I fix
                         # the following error?", "I'm trying to avoid the following error:", "I get the following error:"),
                         # and a line in the first person ("Without this patch I get:", "This fixes the following error for
                         # me, but ...") is the user's own run: not taken; nor the plain future ("Without this, it will
                         # fail with:", round fa10's withdrawn shape), only the conditional would/could/might
                         # (the lead's review) nor a line of a user's own voice: any first person, singular or plural
                         # and in lower case ("i still get it", "we still get it"), a plea ("please"), or the fix said not to
                         # work ("still", "does not help")
                         r"|(?![^\n]*\b(?:i|my|me|we|our|us|still|please|help|does ?n[o']t|did ?n[o']t)\b)(?:"
                         r"[^\n]{0,200}?\b(?:this|it|which)(?: (?:pr|pull request|change|commit|patch|fix))? (?:also |should |will )?"
                         r"(?:fix(?:es)?|prevents?|avoids?|solves?|resolves?|works? around|gets? rid of) (?:the|these) following\b"
                         r"|(?:fix|prevent|avoid)(?: the| these)? following (?:errors?|issues?|problems?|failures?"
                         r"|exceptions?|warnings?|crash(?:es)?)\b"
                         r"|[^\n]{0,200}?\b(?:added|needed|required|introduced|necessary) (?:in order )?to (?:fix|prevent|avoid|solve"
                         r"|resolve|work around|get rid of) (?:the|these) following\b"
                         r"|(?:w/o|without) this ?(?:change|patch|fix|pr|pull request|commit)\b"
                         r"|without this, [^\n]{0,160}?\b(?:would|could|might)\b"
                         r"|(?:the )?(?:errors?|output|logs?) (?:w/o|without) (?:the |this )?(?:fix|change|patch)\b"
                         r"|to (?:fix|avoid|prevent|solve|resolve) the (?:following )?errors?[\s*_]{0,4}[:：]\s*$))")
# (not taken, stop 47: round fa10's plain-future prediction "... will receive this error:" / "the following error will be
# printed:", withdrawn by the lead: a user's reproduction step says the same over the user's own traceback ("Run `vllm
# serve ...` on a 24 GB card and you will get this error:"), whose finding it hid)
# (not taken: a commit's "to avoid error:" over the CI log it quotes: held-out batch 20 labels intel/compute-runtime#242's
# pasted ninja step a real compile-oom-killed case)


# a sentence wrapped into the hit's line, the line above ending in someone else's predicted consequence ("Without this
# option, user may get error" then '"Address Already in Use" when restarting server.'); a user's "I get" is not taken
CONSEQUENCE_TAIL = re.compile(r"(?i)\b(?:users?|you|one|people|clients?|it|this|that|they|which) (?:can|could|may|might"
                              r"|will|would) (?:\w+ )?(?:get|see|hit|encounter|receive|run into)\b[^.:!?\n]{0,30}$")
# a test plan's result: the hit is a sub-item of a checked task-list item ("- [x] tests:" then "  - In a new python 3.10
# environment I now get the error: `ERROR: ...`"), a pull request's record of what its change does
TASK_DONE = re.compile(r"(?i)^(\s*)[-*+] \[x\] ")
LIST_ITEM = re.compile(r"^(\s*)[-*+] ")


# (round 32) the line right above the hit says the error it shows is none ("`kit f` on a second node prints an ERROR -- its
# not an error"): the report is about a message printed in error, the run goes on; "... is not an error, but then I get:"
# introduces a real one
DISMISSED = re.compile(r"(?i)(?:\b(?:it'?s|it is|this is|that'?s|that is|which is) not (?:really |actually )?an? (?:real |actual )?error\b"
                       r"|\bnot (?:a real|an actual) error\b)(?![^\n]{0,60}\b(?:but|however|then)\b)")
# (round 34) a sentence about an error (is_prose) whose quote is cut at the line's end, its head there and its message on
# the hit's line ("Use SO_REUSEADDR to prevent bind() from failing with OSError: [Errno 98]" then "Address already in use."):
# the hit is the sentence's end, not a line of a run
WRAPPED_ERROR_HEAD = re.compile(r"(?:\[Errno \d{1,5}\]|\b[A-Z]\w{0,40}(?:Error|Exception)(?: \d{1,5})?:)\s*$")
# (round 32) the failing value set by hand at a Python prompt in the same quote (">>> response.choices = []" then
# ">>> response.choices[0]" and its IndexError): a reproduction on a made-up object, no tool or server returned it
REPL_SET = re.compile(r"^\s{0,8}(?:>\s?)?>>> [A-Za-z_][\w.]{0,80}(?:\[[^\]\n]{0,40}\])* = (?:\[\]|\{\}|\(\)|None|''|\"\")\s*$")


def _intro_above(lines, i):
    """Whether the nearest non-blank line above lines[i] introduces a quote as documentation does (FENCE_INTRO)."""
    for j in range(i - 1, -1, -1):
        if lines[j].strip():
            if FENCE_INTRO.match(lines[j]) is not None:
                return True
            # (round 32) a sentence wrapped onto the introducing line ("... The new error" then "message looks like:")
            if lines[j][:1].islower() and j > 0 and lines[j - 1].strip():
                return FENCE_INTRO.match(lines[j - 1].rstrip() + " " + lines[j]) is not None
            return False
    return False


# (round 36) a table of error codes dumped one field a line ("901" / "901" / "cudaErrorStreamCaptureInvalidated" /
# "operation failed due to ..."; cuda-python#458's list of CUDA's runtime errors): the hit is a bare identifier alone
# on its line right under a bare number, or one of the one or two text lines under that name; a run prints the name
# inside its message, never a code alone above it
TABLE_CODE = re.compile(r"^\s{0,8}-?\d{1,6}\s*$")
TABLE_NAME = re.compile(r"^\s{0,8}[A-Za-z_]\w{5,80}\s*$")


# (round 42f) Shapes below a hit (DOC_LOOKAHEAD lines) and around it:
#  - the next heading under the hit names the section a page or a pull request puts after its quote: the quote's reason
#    ("### BUG" / "English: An attempt was made to access a socket ..." / "### Reason", a debugging tutorial), or the
#    change's test plan ("- Live-tested on ...: fixture reaches `OOMKilled` / exit `137`" then "## Test plan"); a user's
#    issue goes on with "Expected behavior", "Environment", "Steps to reproduce", or a "Possible cause" they guess
#  - a help centre's byline right under the title ("Error Code 401 - Incorrect API key provided" then "Written by ...",
#    "Updated over a week ago"): the title is an article's
#  - the next paragraph tells what the change does ("Currently, developers does not get information about `OOMKilled`
#    status updates." then "This change introduces the check ..."): the hit is a pull request's reason (the round 40f
#    shape "This PR adds/...", fix verbs left out)
#  - the hit is a row of a Markdown table of codes and their meanings (a header with a code column and a description
#    column over "| --- |"; "| 00000070 | 112 | ... | ERROR_DISK_FULL | There is not enough space on the disk. |", a
#    validation bot's lookup); nvidia-smi's boxes have no "---" separator row
#  - the hit is a line of a unified diff's hunk (context, added or removed lines back up to "@@ -a,b +c,d @@"): a change
#    to a file, not a run
NEXT_HEADING = re.compile(r"(?i)^\s{0,3}(?:>\s?)?(?:#{1,6}\s+|\*\*)\W{0,3}(?:reasons?|causes?|root[- ]causes?|why(?: (?:it|this) happens)?"
                          r"|原因|test(?:ing)? plan|testing|how (?:was|has) this been tested\??)[\s*_:：]{0,6}$")
ANY_HEADING = re.compile(r"^\s{0,3}(?:>\s?)?(?:#{1,6}\s|\*\*[^*\n]{1,60}\*\*:?\s*$)")
# (round fa8) also "By <Name> · Last verified <date>": an error knowledge base's byline under the error it names (runlocalai.co's
# pages), the author's name and the page's review stamp together
BYLINE = re.compile(r"(?i)^\s{0,4}(?:(?-i:Written|Posted|Published|Authored) by (?-i:[A-Z])"
                    r"|(?-i:By [A-Z][\w.'-]{1,40}(?: [A-Z][\w.'-]{1,40}){0,3}) ?[·•|] ?(?:last )?(?:verified|updated|reviewed"
                    r"|published|edited)\b"
                    r"|(?:last )?(?:updated|edited|published|posted) (?:over |about |almost |more than |less than )?(?:an?|\d{1,3})"
                    r" (?:minute|hour|day|week|month|year)s? ago\b)")
TABLE_ROW = re.compile(r"^\s{0,8}\|[^\n]*\|\s*$")
TABLE_RULE = re.compile(r"^\s{0,8}\|?(?:\s*:?-{3,}:?\s*\|){2,}\s*(?::?-{3,}:?\s*)?$")
TABLE_CODE_COL = re.compile(r"(?i)\|\s*(?:(?:exit |error |status |return )?codes?|hex|dec(?:imal)?|errno|value|number|no\.?|#)\s*(?=\|)")
TABLE_MEANING_COL = re.compile(r"(?i)\|\s*(?:description|meaning|explanation|message|symbol|name)\s*(?=\|)")
# (round fa9) a troubleshooting table: a header with an error column (Error, Issue, Problem, Symptom, Signature, Message,
# 错误类型, 错误码, 状态码 ...) and a column of what to do about it (fix, solution, cause, what to do, action, 原因, 解决,
# 处理策略, 排查, 触发场景 ...): "| Message or symptom | What to do |" over "| --- | --- |", then "| Address already in use |
# Run `python3 server.py --port 8001` ... |" (a setup guide's "If something goes wrong"); a run's output has no such header
TABLE_ERROR_COL = re.compile(r"(?i)\|\s*(?:\*\*)?(?:(?:error|message|issue|problem|symptom|signature)s?\b|错误|状态码|报错"
                             r"|异常类型|现象|问题)[^|\n]{0,30}(?=\|)")
TABLE_DOC_COL = re.compile(r"(?i)\|[^|\n]{0,20}(?:\b(?:fix(?:es)?|solutions?|(?:root )?causes?|what to do|actions?|remed(?:y|ies)"
                           r"|resolution|workaround)\b|原因|解决|处理|排查|触发场景)[^|\n]{0,20}(?=\|)")
HUNK = re.compile(r"^@@ -\d{1,9}(?:,\d{1,9})? \+\d{1,9}(?:,\d{1,9})? @@")


# (round fa2) a hit in a bullet list whose next bullets, at the same depth and with no gap, give the quote's cause and fix
# as labelled entries ("- The error: *\"Using SOCKS proxy, but ...\"*" then "- Root cause: `httpx` was declared without the
# `[socks]` extra" then "- Fix: change ..."): a pull request's summary or a fix page's entry; a user's report lists what
# they ran and saw, not the cause and fix of it ("Workaround:" is left out: a user who found one writes it under their own run)
SIBLING_ENTRY = re.compile(r"(?i)^\s*[-*+]\s{1,3}[*_]{0,2}(?:root[- ]cause|cause|fix|solution|resolution)[*_]{0,2}\s?[:：]")


def _sibling_entry(seg, nxt):
    """Whether a bullet after the hit's (same indent, no blank line between) is a labelled cause or fix entry."""
    depth = len(LIST_ITEM.match(seg).group(1))
    for raw in nxt:
        line = _unwrapped(raw).rstrip()
        m = LIST_ITEM.match(line)
        if m is None or len(m.group(1)) != depth:
            return False
        if SIBLING_ENTRY.match(line) is not None:
            return True
    return False


def _below(nxt):
    """True when the lines under a hit (NEXT_HEADING, BYLINE, a change's next paragraph) make it documentation."""
    gap = False
    for raw in nxt:
        line = _unwrapped(raw).rstrip()
        if not line.strip():
            gap = True
            continue
        if BYLINE.match(line):
            return True
        if ANY_HEADING.match(line) or line.lstrip()[:1] == "#":
            return NEXT_HEADING.match(line) is not None
        if gap:
            low = line.lower()
            return low.lstrip(" >*_-")[:5] == "this " and THIS_CHANGE.match(line) is not None
    return False


def _in_table_or_hunk(lines, seg):
    """The hit is a row of a table of codes and meanings, or a line of a diff hunk (see above)."""
    if TABLE_ROW.match(seg):
        for i in range(len(lines) - 1, 0, -1):
            if TABLE_RULE.match(lines[i]):
                head = lines[i - 1]
                return TABLE_ROW.match(head) is not None and (
                    (TABLE_CODE_COL.search(head) is not None and TABLE_MEANING_COL.search(head) is not None)
                    or (TABLE_ERROR_COL.search(head) is not None and TABLE_DOC_COL.search(head) is not None))
            if not TABLE_ROW.match(lines[i]):
                return False
        return False
    if seg[:1] in (" ", "+", "-"):
        for i in range(len(lines) - 1, -1, -1):
            line = lines[i]
            if line[:2] == "@@":
                return HUNK.match(line) is not None
            if line and line[:1] not in (" ", "+", "-", "\\"):
                return False
    return False


def documented(prev, seg="", nxt=()):
    """True when the lines before a hit (raw, oldest first) put it in documentation's frame (see DOC_HEADING,
    FENCE_INTRO, CONSEQUENCE_TAIL, TASK_DONE): under an example-output heading, in a quote (fenced, or a block of
    lines set apart by a blank line) introduced as a change's before, a sentence's end wrapped onto its line, or a
    checked task's result."""
    if len(nxt) >= 2 and not _unwrapped(nxt[0]).strip() and ENTRY_AFTER.match(_unwrapped(nxt[1])):
        return True     # a paragraph after the quote gives its fix (a tool's own "   Fix: ..." hint follows at once)
    if nxt and LIST_ITEM.match(seg) and _sibling_entry(seg, nxt):
        return True     # (round fa2) a bullet among a summary's "Root cause:" / "Fix:" bullets (see SIBLING_ENTRY)
    if nxt and _below(nxt):
        return True     # (round 42f) a reason or test-plan heading, a byline, or the change told in the next paragraph
    if nxt and QUESTION_HEAD.match(seg):
        for raw in nxt:
            line = _unwrapped(raw).strip()
            if line:
                return is_prose(line, line.lower())     # the page's answer under its question (QUESTION_HEAD)
    lines = [_unwrapped(raw).rstrip() for raw in prev]
    if seg[:1] in ("|", " ", "+", "-") and _in_table_or_hunk(lines, seg.rstrip()):
        return True     # (round 42f) a table of codes and meanings, a diff hunk's line
    tail = lines[-3:] + [seg]
    for k in (1, 2, 3):     # (round 36) an error table (TABLE_CODE): the hit is the name field right under its code
        # field (k=1), or one of the one or two text fields under that name (k=2, 3)
        if len(tail) > k and TABLE_CODE.match(tail[-k - 1]) and TABLE_NAME.match(tail[-k]):
            return True
    if FENCE.match(seg) and _intro_above(lines, len(lines)):
        return True     # (round 32) the hit opens the fence itself ("```RuntimeError: ..."): its introducing line above
    intro_checked = False   # the quote's introducing line is looked at once: above the fence, or above the block
    first = True
    item = LIST_ITEM.match(seg)
    top = None              # the top line of the block of non-blank lines the hit is in
    gap_checked = False
    section = True          # no heading of another kind between the hit and the line looked at
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        if not line.strip():
            if not gap_checked and not intro_checked and top is not None:
                gap_checked = True  # the first blank line above the hit: the block's top, or the line above the gap
                if FENCE_INTRO.match(top) or _intro_above(lines, i):
                    return True
            continue
        if first:           # the nearest line above the hit: a sentence's end wrapped onto its line, or (round 32) a
            first = False   # line saying the ERROR it shows is none (a title over the quoted line)
            if CONSEQUENCE_TAIL.search(line) or ("not a" in line.lower() and DISMISSED.search(line)):
                return True
            if WRAPPED_ERROR_HEAD.search(line) is not None and is_prose(line.strip(), line.strip().lower()):
                return True     # (round 34) the rest of an error a sentence above quotes, wrapped onto the hit's line
        if not gap_checked:
            top = line
            if not intro_checked and ">>>" in line and REPL_SET.match(line):
                return True
        if not intro_checked and line[-1:] in (":", "：") and FENCE_INTRO.match(line):
            return True     # an introducing line inside the block ("If you see this error:" then the lines it quotes)
        if item is not None:
            t = TASK_DONE.match(line)
            if t is not None and len(t.group(1)) < len(item.group(1)):
                return True
            other = LIST_ITEM.match(line)
            if other is None or len(other.group(1)) < len(item.group(1)):
                item = None
        if DOC_TITLE.match(line):
            return True
        if section and DOC_HEADING.match(line):
            return True
        if section and OTHER_HEADING.match(line):
            section = False     # a section of another kind: only a page's title above still counts
        if not intro_checked and FENCE.match(line):
            intro_checked = True
            if _intro_above(lines, i):
                return True
    return (not intro_checked and not gap_checked and top is not None and len(lines) < DOC_LOOKBACK
            and FENCE_INTRO.match(top) is not None)


# (round 45d) The document, not the line: a page ABOUT errors (an explainer or fix-it page, a pull request's description)
# quotes a failure in its title, its headings, its prose and its examples, and every line-shape above clears only the
# wordings it was tuned on.  Once a log has a hit that the line and window vetoes left standing, the start of the text
# (PAGE_BYTES; a file over PAGE_MAX_BYTES is a run's log, never a page) is read ONCE and judged as a whole:
#  - a page: two or more of an explainer's own headings (PAGE_HEADING: "How to fix ...", "Common causes", "Why it
#    happens", "What ... means", "Solution 2", "Method 1", "Quick summary", "Prerequisites", "Conclusion", 解决方法, 原因分析
#    ...: short lines of their own, not sentences; not the bare "Solution", "Workaround", "Root cause", "Symptoms",
#    "Step 1" a user's own report also heads its sections with), or a blog widget (PAGE_WIDGET: dev.to's "Enter fullscreen mode",
#    "Copy code", "N min read", an error catalogue's "Fix: 2-5 min" badge), or a pull request's own marker (PAGE_PR: "## Purpose" / "## Changes" / "## Motivation"
#    as a heading, "Fixes #12" / "Closes #12" on a line of its own, a paragraph opened by "This PR ..."); not "## Summary"
#    (an issue's too: r-spade/ormah#102 heads a CI failure with it) nor "This fixes ..." (batch 4's jetson-containers#1457
#    and the corpus's nemotron-january-2026#8 are labelled real);
#  - never a page when the text carries a bug report's own sections (REPORT_HEADING: "Describe the bug", "Steps to
#    reproduce", "Reproduction", "Expected behavior", "Environment", "System info", "Logs", collect_env's "PyTorch
#    version:"): a user's issue with a log inside is a failing run, whatever else it says.
# In such a page a hit stands only where a run's output stands (in_run_output): the hit's line or the block of
# non-blank lines around it (up to a fence or a blank line) shows a run: a shell or REPL prompt, a traceback's header
# or frames, a timestamp, a log level, a compiler's "file:line:col:" (RUN_MARK).  A title, a heading, a bullet of
# prose, a lone quoted line under "Typical messages:" are the page's words.  The safety net still sees the line, as
# with every veto above.  Nothing here runs on a log without a hit, and the page is judged once per log.
PAGE_BYTES = 256 << 10
PAGE_MAX_BYTES = 1 << 20
PAGE_LINE = 160           # a heading is a short line; longer ones are never matched against the heading shapes
# (round fa11) a paragraph of prose longer than PAGE_LINE * 4 (a forum bot's answer, a blog's paragraph stored as one
# line) was passed over whole; its opening (PAGE_LINE * 4 characters) is now read for the page sentences, on a line up to
# this length with no log level (a run's long line, a JSON record, keeps being passed over)
PAGE_PARAGRAPH = 4096
PAGE_HEADING = re.compile(r"(?i)^[\s>#*_•\d.)-]{0,8}(?:"
                          r"how to (?:fix|solve|resolve|troubleshoot)\b|(?:fix(?:ing)?|solving|resolving)\b[^.!]{0,100}$"
                          r"|(?:common |the most common )causes?\b[^.!?\n]{0,60}$|causes? of (?:the|this) (?:error|issue|problem)\W{0,3}$"
                          r"|why (?:it|this|the error|does (?:this|it)) happens?\b|why does\b[^.!]{0,100}\?\W{0,3}$|why\b[^.!?\n]{0,100}$"
                          r"|the (?:exact |full )?error(?: (?:string|message|text))?\W{0,3}$|prevention\b[^.!?\n]{0,60}$"
                          r"|what\b[^.!?\n]{0,80}\bmeans?\??\W{0,3}$|what is\b[^.!]{0,100}\?\W{0,3}$"
                          r"|understanding\b[^.!?\n]{0,100}$|(?:quick |the )(?:fix|solution)s?\W{0,3}$"
                          r"|(?:solution|method|fix|way) \d{1,2}\b|quick (?:summary|fix|answer)\b|prerequisites\W{0,3}$"
                          r"|what you(?:'|’)ll learn\W{0,3}$|conclusion\W{0,3}$|troubleshooting\b|frequently asked questions\W{0,3}$"
                          r"|table of contents\W{0,3}$|related (?:articles|posts|errors|guides)\W{0,3}$"
                          r"|[^。！？?\n]{0,40}(?:解决(?:办法|方法|方案|思路)|原因(?:分析)?|修复方法|排查(?:步骤|思路))\W{0,3}$)")
PAGE_WIDGET = re.compile(r"(?i)^\s{0,8}(?:enter fullscreen mode|exit fullscreen mode|copy code)\s*$"
                         r"|^[^\n]{0,120}?(?<![\w.])\d{1,3} min(?:ute)?s? read\s*$"
                         # (round rndfa) an error catalogue's effort badge, the reading time's sibling: "High severity
                         # beginner · Fix: 2-5 min" over the exception's name and "What this error means"
                         r"|^[^\n]{0,120}?\bfix(?: time)?: ?\d{1,3}(?: ?[-–] ?\d{1,3})? ?min(?:ute)?s?\s*$")
# (round scan6) what a change or a commit says it does (round 40f's CHANGE_VERBS, the knobs it turns, the text it clarifies,
# what it restores), or what it is ("This change is temporary", "... is a workaround")
_CHANGE_SELF = (r"(?:now |also |simply |just |only )?(?:" + CHANGE_VERBS + r"|increases|decreases|lowers|reduces|restores|reverts"
                r"|clarifies|documents|is (?:a |an |only )?(?:temporary|workaround|stopgap|quick fix|hotfix|follow-up))\b")
PAGE_PR = re.compile(r"(?i)^\s{0,3}(?:#{1,6}\s{1,3}(?:purpose|(?:proposed )?changes(?: made)?|motivation|what does this pr do\??"
                     r"|description of (?:the )?changes?)\W{0,3}$|(?:fixes|closes|resolves) #\d{1,7}\W{0,3}$"
                     # (round scan8) the same section as a label of its own line ("**Changes:**" over "- Saves up few GBs to
                     # prevent `no space left on device` error."): bold or with its colon, never inside a sentence
                     r"|(?:\*\*)?(?:proposed |summary of |list of )?changes(?: made| proposed)?(?::\*\*|\*\*:|:)\s*$"
                     r"|this (?:pr|pull request|patch) \w"
                     # (round scan6) the same told as "This change" / "This commit" with a verb only a change says of itself
                     # ("This commit increases the memory limit from 128Mi ...", "This change clarifies that:"; a report's
                     # "This change makes the build fail", "This change of limits did not help" are not taken), and after
                     # the reason's sentence on one line (PAGE_PR_MID)
                     r"|this (?:change|commit) (?:" + _CHANGE_SELF + r")"
                     # (round fa2) a pull request's verification list, each bullet told against the change ("- before
                     # this change, `python -m build --wheel` failed with `ModuleNotFoundError: ...`", "- after this
                     # change, ... succeeds"): the runs are the change's before and after, quoted in a bullet of prose
                     r"|[-*+]\s{1,3}(?:\*\*|_)?(?:before|after|without|with) (?:this|the) (?:change|pr|pull request|patch|fix)\b[*_]{0,2}[,:]\s"
                     # (round fa2) a feature request's own template ("### Is your feature request related to a problem?
                     # Please describe.", "Describe the solution you'd like", PyTorch's and vLLM's "🚀 The feature, motivation
                     # and pitch"): the error it quotes is what the request wants told better or avoided, no failing run
                     # reported; a bug report's sections (REPORT_HEADING) still make the text a report
                     r"|[\s#*_]{0,8}\W{0,3}(?:is your feature request related to a problem|describe the solution you(?:'|’)?d like"
                     r"|describe alternatives you(?:'|’)?ve considered|the feature, motivation and pitch)\b"
                     # (round scan8) a pull request template's own headings, which name the change ("#### What type of PR is
                     # this?", "#### What this PR does / why we need it", "#### Which issue(s) this PR fixes:", "### How was this
                     # patch tested?"), and a change's test plan, as a heading or as a commit message's label ("Test Plan: CI
                     # pipeline"): furniture only a change's description carries; a report's template asks for the run
                     # (REPORT_HEADING), and a user's paste of a run has neither
                     r"|(?:#{1,6}\s{1,3}|\*\*)[^\n]{0,60}?(?:\bthis (?:pr|pull request|patch)\b|\b(?:pr|pull request|patch) is this\b)"
                     r"|(?:#{1,6}\s{1,3}|\*\*)?test(?:ing)? plan\b[*_]{0,2}(?::|\W{0,3}$))")
# (round scan6) PAGE_PR's "This PR/change/commit ..." after the sentence that gives the reason, on the same line ("On rh01, the
# pod is getting OOMKilled. This change is temporary to increase the memory limit.", "... This PR restores the function as it
# was before ..."): the change as the subject of its own sentence; a user's report says what they ran
PAGE_PR_MID = re.compile(r"(?i)[.!?]\s{1,3}this (?:(?:pr|pull request|patch) \w|(?:change|commit) " + _CHANGE_SELF + ")")
# (round scan5) a page's own title as the text's first line (an explainer's "Understanding and Resolving "Address Already in
# Use" Errors", "... Error Explained", "CUDA Out of Memory: What It Means and How to Fix It", a guide's "Fixing Ollama's 'CUDA
# Error: Out of Memory' — ..."): the gerund and the explainer's words name an article; a user's title asks ("How to fix ...?",
# "How to solve this error: ...") or names the error alone, and neither is taken
PAGE_TITLE = re.compile(r"(?i)^\W{0,4}(?:understanding (?:and (?:resolving|fixing|solving|troubleshooting) )?\S"
                        r"|(?:(?:an? |the )?(?:guide|tutorial|introduction) to )?(?:fixing|solving|resolving|troubleshooting)\s"
                        # (review, stop 42) a user's own title in the same gerund tells their run ("Fixing this error on my A100
                        # box is not working"): first person or a failed attempt is no article's title
                        r"(?![^\n]{0,160}\b(?:my|I|me|we|our|not working|doesn't|does not|won't|can't|cannot)\b)[^\n:?]{3,120}?\b(?:errors?|issues?|problems?|failures?|crash(?:es)?"
                        r"|exceptions?)\b[^?]*$)"
                        r"|\b(?:error|errors|exception|message|problem|bug)\W{0,3} explained\W{0,4}$"
                        r"|\bwhat (?:it|this error|the error) means\b[^?]*$|\b(?:and|&) how to (?:fix|solve|resolve|avoid) (?:it|them)\W{0,4}$")
# (round scan5) an explainer's own voice addressing its reader ("This tutorial will guide you through ...", "In this article,
# we'll ..."): a page's prose around the error it quotes; a user's report tells their own run ("I followed this guide" is not
# taken). The round's one-page idioms ("you're not alone", "Let's be real", "Almost everyone who hits this") were dropped at
# merge: no page of their own proved them
PAGE_VOICE = re.compile(r"(?i)\bin this (?:article|post|guide|tutorial|blog post|write-?up),? (?:we|I|you)(?:'ll| will| are going to|(?:'|’)re going to)\b"
                        r"|\bthis (?:article|tutorial|guide|post|blog post) (?:will (?:guide|walk|show|explain|help|cover|teach)|explains|walks you|shows you"
                        r"|covers|guides you)\b"
                        # an article's abstract telling what it offers ("Abstract: This paper provides an in-depth analysis of the
                        # IOError: [Errno 28] ... error encountered when ...")
                        r"|\bthis (?:paper|essay|article|post|guide|tutorial|write-?up) (?:provides|presents|offers|explores) (?:an?|the|some|several|practical)\b"
                        # (round scan6) a repository document telling what it is for ("## This document is used to record some
                        # common issues which may occur when you use our framework" over "### 1. **RuntimeError: CUDA out of
                        # memory**"): a page of known issues, not a report
                        r"|\bthis (?:document|doc|page|runbook|faq|wiki|readme) (?:is used to|is meant to|is intended to|lists|describes"
                        r"|collects|records|covers|explains|documents|summari[sz]es)\b")
# (round scan6) a failure told as what WOULD happen, not what a run printed: the modal future of a failure verb ("If your
# workflow includes anything that tries to do a `pip install` ..., it will fail with an error similar to:", "Otherwise package
# installation will fail with `error: externally-managed-environment`", "it may exit with code 137"), or the reader's future
# ("On Ubuntu 24.04 with Python 3.12 you will get the following error when trying to install ..."): a bug's or a request's
# account of a behaviour, an explainer's or a maintainer's note, a pull request's premise; a report tells its own run in the
# past or the present ("it fails with", "I get"), and a tool's line with a log level is not taken
PAGE_FORECAST = re.compile(r"(?i)\b(?:will|may|might) (?:\w+ly )?(?:fail|exit|result in|crash|abort|error out)\b"
                           r"|\b(?:you|one|users?) will (?:get|see|hit|receive|encounter)\b")
# (round scan6) a sentence reading the quoted error out to its reader ("This error indicates that the port `9100` is already
# in use. To resolve this, ...", a troubleshooting page under the message it quotes; "The 401 error means Unauthorized."): the
# error is the sentence's subject and the verb says what it means; a report quotes what its run printed and asks, and a tool's
# line with a log level is not taken (round 17's PROSE clears such a line alone; here it makes the text a page)
# (stop 47, the lead) not ComfyUI's own tip under a GPU allocation failure ("Allocation on device 0 would exceed allowed memory.
# (out of memory)" ... "This error means you ran out of memory on your GPU.", printed by its executor with every OOM:
# Comfy-Org/ComfyUI#12360 in batch 111, EricRollei/Comfy_HunyuanImage3#16, huanngzh/ComfyUI-MVAdapter#97): a tool's line,
# which made every ComfyUI OOM a page and its report clean
PAGE_EXPLAIN = re.compile(r"(?i)\b(?:this|the|that) (?:[\w-]+ )?error(?: message| code)? (?:indicates|means|signals|tells you)\b"
                          r"(?! you ran out of memory on your GPU\.)"
                          # (round fa3) a numbered code read out ("Exit code 137 means your process didn't decide to quit
                          # — something killed it from the outside with SIGKILL", a runbook's "Exit code 137 means the
                          # container received SIGKILL from the kernel OOM killer"): an explainer decoding the number
                          r"|\b(?:exit|error|status|return) code \d{1,4} (?:means|indicates|signals|tells you)\b")
# (round scan6) the reader addressed with the condition of meeting the error ("If you run into `torch.OutOfMemoryError: CUDA
# out of memory.` while deploying the model, this is most likely due to ...", "If you see an error like `...`, it means"): a
# troubleshooting page's or a doc's entry; a report tells what its own run printed (round 16's PROSE clears the line alone
# when "error" comes before the quote; here the text is a page)
PAGE_READER = re.compile(r"(?i)\bif you (?:run into|encounter|hit|see|get|receive|are seeing|are getting|come across|experience) "
                         r"(?:an? |the |this |any )?(?:[\w-]+ )?(?:errors?|messages?|exceptions?|[`\"“])")
# (round scan8) the change promising what it will do to the error it names ("Add REUSEPORT for linux so ... This will get
# rid of error "address already in use" upon binding."): the change, as "This", is the subject of a future fix; a user's
# report tells a fix that did not hold ("This should fix it, but I still get ..."), and a line saying so is not taken
PAGE_PROMISE = re.compile(r"(?i)\bthis (?:will|should) (?:get rid of|fix|resolve|solve|avoid|prevent|eliminate)\b"
                          r"(?![^\n]*(?:\b(?:but|still|not|no longer|never)\b|n(?:'|’)t\b))")
# (round scan8) a Chinese explainer's voice: the failure told as what developers often, easily or may run into ("在训练大
# 模型...时，开发者经常会遇到这样的报错:", "开发者可能会遇到"[Errno 48] Address already in use"的错误提示"), or the quoted
# error read out ("常见的OSError: [Errno 98] Address already in use错误表明存在端口冲突", PAGE_EXPLAIN's Chinese): an article
# generalises over its readers' runs; a user's report tells its own ("我运行时遇到", "报如下错误"), and a line with a first
# person is not taken
PAGE_ZH = re.compile(r"^(?![^\n]*我)[^\n]*?(?:(?:经常|常常|往往|很容易|容易|常|可能)会?遇到|错误(?:信息|提示)?(?:表明|意味着))")
# (round fa6) a Chinese explainer generalising over its readers: a quantified generic subject ("很多开发者尝试直接拉取...
# 镜像却启动失败,报错信息五花八门——libcudart.so.12 not found、...", "这个错误几乎每个刚接触 GPU 编程的人都会遇到一次甚至多次",
# "每一个做AI工程化落地的人都绕不开的“经典坑”", "很多企业服务器因业务连续性要求,不允许轻易重启或重装驱动"), PAGE_COMMON's
# Chinese: an article tells what happens to many or to everyone; a user's report tells its own run ("我运行时遇到") or that
# others' fixes did not hold ("看了很多人的方法还是不行"), and a line with a first person (我), "还是/仍然/依然" or a question
# is not taken. The noun may stand up to 16 characters after the quantifier ("每个刚接触 GPU 编程的人"), never across a stop
PAGE_ZH_MANY = re.compile(r"^(?![^\n]*(?:我|还是|仍然|依然|[?？]))[^\n]*?(?:很多|许多|不少|大量|大部分|多数|每一?个)"
                          r"[^\n，。,.、;；:：!！]{0,16}?(?:开发者|用户|人(?!工)|朋友|同学|企业|工程师|团队|新手|初学者)")
# (round fa7) a Chinese explainer calling the failure common, PAGE_COMMON's and PAGE_ZH_MANY's sibling: this situation, error
# or problem is (quite, very, especially) common ("尤其是在使用YOLOv8这类集成化镜像进行目标检测任务时,这个问题尤为常见。" under
# "...一条熟悉的错误提示往往浮出水面:No space left on device。", "这种情况在部署DeepSeek-OCR时相当常见"): an article generalises
# over its readers' runs; a user asks whether it is ("这个问题很常见吗?": not taken) or tells their own, and a line with 我 is
# not taken
PAGE_ZH_COMMON = re.compile(r"^(?![^\n]*我)[^\n]*?(?:这种|这类|此类|这个|这一|该)(?:情况|错误|问题|报错|异常|现象)"
                            r"[^。！？?\n]{0,30}?(?:相当|非常|十分|很|比较|极其|尤为|尤其|最为)常见(?!吗|么|嘛)")
# (round fa7) a Chinese article's voice telling what it does, PAGE_VOICE's Chinese ("In this article we'll", "This guide
# explains"): 本文 / 本篇(文章) / 本教程 / 本指南, then (我们) (将/会/就/则/主要) and a verb of what the article does ("本文就从实战角度出发,
# 深入剖析这一常见问题的本质", "本文将带你从一个工程师的视角,层层拆解这个高频报错", "本文结合..."): a page about the error it
# quotes; a user's report calls another's article 这篇文章 ("按照这篇文章的方法还是报错", not taken), and a line with 我 (not
# the author's 我们), 仍然/依然 or a question is not taken
PAGE_ZH_VOICE = re.compile(r"^(?![^\n]*(?:我(?!们)|仍然|依然|[?？]))[^\n]*?(?:本文|本篇(?:文章)?|本教程|本指南)(?:我们)?(?:将|会|就|则|主要)?"
                           r"(?:从|带你|带领|为你|为大家|介绍|详细|深入|系统|结合|旨在|总结|分享|汇总|整理|讲解|解析|剖析|聚焦|梳理|探讨|记录)")
# (round fa7) a Chinese explainer's opening question to its reader, PAGE_JA's "見たことはありませんか": have you (ever) met
# it ("你有没有遇到过这样的场景?" over "...结果第一行import torch就报错:" and the ImportError, "你是否曾在启动Time-LLM分布式
# 训练时遭遇"Address already in use"错误?", "你有没有在运行 PyTorch 或 TensorFlow 的时候,突然蹦出这么一行红字:"): an
# article sets the scene for its readers; a user asks others ("你们有没有遇到过", "有没有人遇到过": not taken) or a helper
# asks what was tried or done ("你有没有试过 ...", "你是否在虚拟环境中安装?": the verb after it is one of meeting the error, and
# 是否 is taken only with 也 or 曾), and a line with 我 is not taken
PAGE_ZH_ASK = re.compile(r"^(?![^\n]*我)[^\n]*?你(?:有没有|是否(?:也曾?|曾)经?)(?:在|被|遇到|遭遇|碰到|见过|踩过|经历)")
# (round fa7) a Japanese explainer's voice, PAGE_ZH's Japanese: the reader invited to look at the error with the page
# ("典型的な例を見てみましょう。" over "...RuntimeError: CUDA out of memoryが発生。", "...その解決策を探っていきましょう"),
# asked whether they have met it ("以下のような表示を見たことはありませんか?", "...というメッセージに遭遇し、インストールが
# ブロックされて困っていませんか?"), or the page's own title or section telling why it appears ("「This environment is
# externally managed」と出る理由と対処法", "このエラーが発生する主な理由:"): an article addresses its readers; a user's report
# tells its own run ("実行すると以下のエラーが出ました") and asks for help ("何か方法はありませんか?", "このエラーが発生する原因が
# 分かりません": neither is taken), and a line in the first person (私/僕/自分/俺) is not taken
PAGE_JA = re.compile(r"^(?![^\n]*(?:私|僕|自分|俺))[^\n]*?(?:(?:て|で)(?:み|いき)ましょう"
                     r"|(?:経験|見たこと|遭遇したこと)(?:は|が)?(?:、?あなたにも)?ありませんか|困っていませんか"
                     r"|(?:出る|発生する|起きる|起こる)(?:主な)?(?:理由|原因)(?:と(?:対処法?|解決(?:策|方法)|対策)|[:：]))")
def _not_on_doubt(first_person=False, also=""):
    """The start of a page sentence that is not taken on a line with a question, a doubt ("but", "still", "not",
    "never", "no longer", "n't": a user's attempt that did not hold), with first_person "I"/"my"/"me" (a user's
    own account), or one of the marker's own further words (`also`, an alternation: "try|tried" ...)."""
    words = "but|still|not|never|no longer" + ("|my|me" if first_person else "") + ("|" + also if also else "")
    return (r"(?i)^(?![^\n]*(?:\?|\b(?:" + words + r")\b|n(?:'|’)t\b" + (r"|(?-i:\bI\b)" if first_person else "")
            + r"))[^\n]*?")


# (round fa3) a change told by its purpose against the error it names: "to prevent / avoid / work around / get around / get
# past" with the error as the object, quoted, named by its exception class, or as OOM ("Added cleanup steps ... to prevent
# System.IO.IOException: "No space left on device" errors", "Set CI `PYTORCH_ALLOC_CONF` env variable to avoid OOM:", "Free
# Disk Space on pod_dev CI to avoid an OSError: `[Errno 28] ...`"): a pull request's or a commit's description, a maintainer's
# note; the error is what the change keeps from happening, not what a run printed. A user's attempt that did not hold ("I
# set ... to avoid OOM but still get"), a question, or a line in the first person is not taken (a user's own workaround is
# told as theirs); PyTorch's own "to avoid fragmentation" names no error
PAGE_PURPOSE = re.compile(_not_on_doubt(first_person=True) +
                          r"\bto (?:prevent|avoid|work around|get around|get past) (?:the |an? |these |this |any )?(?:[\w.]+: )?"
                          r"(?:[`\"“']|oom\b|[\w.]*(?:error|exception)\b(?!s? (?:handling|messages?)))")
# (round fa6) a change told by the fault it fixes: "<what is done> to fix / resolve / solve (the/this) <up to three words>
# error / bug / issue / problem" ("Socket: reuse address to resolve the error "address already in use"", "So we add
# environment `LD_LIBRARY_PATH` to fix this base image bug", "added six and pyyaml to requirements.txt to fix missing module
# error"): a pull request's title or description, PAGE_PURPOSE's sibling; the error it names is the reason, no run of the
# change printed it. A user asks for the fix or tells an attempt that did not hold ("How to fix this error?", "Any help to
# fix this error", "I tried X to fix the issue but ...", "Please suggest a way to solve this problem", "attemps to fix the
# problem:"): a line with a question, a first person ("I", "my", "me"), a doubt ("but/still/not/never/no longer/n't") or a
# word of asking or trying is not taken
PAGE_FIX_FOR = re.compile(_not_on_doubt(first_person=True, also=r"how|try|tries|trying|tried|help|unable|able|attemp\w*"
                                        r"|want|wants|need|needs|way|please|suggest\w*|anyone|idea|appreciat\w*") +
                          r"\bto (?:fix|resolve|solve) (?:the |this |these |that |an? )?(?:[\w-]+ ){0,3}(?:errors?|bugs?|issues?|problems?)\b")
# (round fa6) PAGE_PURPOSE's sibling: a change told as catching or handling the error it names ("- update
# stable-diffusion-task lib to catch RuntimeError: CUDA error: out of memory"): the error is what the change now deals
# with, no run of it printed it. pip's and poetry's own "The following error occurred when trying to handle this error:"
# and a user's attempt ("I tried to catch the OOM but ...", "how to handle this error?") are not taken: a line with a
# question, a doubt, a first person or "try/tried/trying"
PAGE_CATCH = re.compile(_not_on_doubt(first_person=True, also="try|tries|trying|tried") +
                        r"\bto (?:catch|handle|gracefully handle) (?:the |an? |these |this |any )?"
                        r"(?:[\w.]+: )?(?:[`\"“']|oom\b|[\w.]*(?:error|exception)\b(?!s? (?:handling|messages?)))")
# (round fa4) a change told by what it does to the message it quotes: it makes the error message clearer or more
# descriptive ("While starting the server, an error "[Errno 111] Connection refused" is thrown without specifying any
# reason. This commit makes the error message more descriptive."): a pull request's or a commit's description, whose
# subject is the change ("This", "This commit/change/PR/patch/fix"); the error is the one it rewords, no run printed it. A
# commit message is wrapped at about 72 columns, so the sentence is also looked for across the line above and the line
# (about_errors). A line with a question, "but/still/not/never/no longer" or "n't" is not taken (a user's "This makes the
# message clearer, but I still get ..." tells a run). Not taken: "This turns a cryptic `IndexError: ...` into a clear,
# actionable error message." (batch 87's optillm#310): no uncited thread of its own found to prove that branch.
PAGE_BETTER = re.compile(_not_on_doubt() +
                         r"\bthis (?:(?:change|commit|pr|pull request|patch|fix) )?(?:now |also )?(?:makes|renders) "
                         r"[^\n]{0,160}?\b(?:errors?|messages?)\b[^\n]{0,60}?\b(?:more (?:descriptive|helpful|informative|useful"
                         r"|readable|actionable|explicit|meaningful|specific|user-friendly|understandable)|clearer|friendlier)\b")
PAGE_BETTER_WORDS = ("more ", "clearer", "friendlier")
# (round fa5) an explainer generalising over its readers' runs: a generic subject (developers, users, people, you, one)
# that may, often or commonly meets the error ("developers frequently encounter the [Errno 111] Connection refused error",
# "you may encounter the error message “Errno 98: Address already in use”", "users may encounter the frustrating
# “RuntimeError: CUDA out of Memory” error"), PAGE_ZH's English: a page tells what happens to its readers in general; a
# user's report tells its own run ("I get", "my server fails"), and a line in the first person ("I", "my", "me", "we",
# "our") or with a question is not taken. Not "see"/"get"/"hit" ("as you can see", "you can hit Ctrl+C" are a report's
# words); "you will encounter" is PAGE_FORECAST's already
PAGE_COMMON = re.compile(r"(?i)^(?![^\n]*(?:\?|\b(?:my|me|we|our)\b|(?-i:\bI\b)))[^\n]*?"
                         r"\b(?:developers|users|programmers|engineers|people|beginners|newcomers|many|you|one)"
                         r"(?: (?:may|might|can|could|will|would|often|frequently|commonly|sometimes|typically|usually"
                         r"|occasionally|routinely|most commonly))+ (?:encounter|run into|come across|face|stumble (?:upon|on|across)"
                         r"|bump into)\b")
# (round fa5) a request about the message itself: the error message could use improvement / should be clearer, the tool
# should give a better or more helpful error, it might be possible to improve it (mitmproxy's title '"OSError: [Errno 48]
# Address already in use" -- error message could use improvement', webtorrent's "I know that this is because the port is
# used, but I think we should give it a better error message."): a feature request or a change's summary, whose subject
# is the wording the user met, not a run to diagnose; the error it quotes is the one to be reworded. A report's own run
# keeps its findings (in_run_output), and a report's sections keep it a report (REPORT_HEADING). No doubt guard: the
# request is often a user's ("I think we should ...", "so I thought it might be possible to improve it"). (round fa8) also a
# plain adjective of use for the message asked for, and the user as the one who should get it: "provide a proper error
# message to the users" (Ericsson/codechecker#510), "user should get a useful error message, like"; "to get" is left out
# (a user's "I ran it with -v to get a useful error message:" tells a run)
PAGE_WISH = re.compile(r"(?i)\berror messages? (?:could|should|can|would|might) (?:really )?(?:use (?:some |an? )?improvement"
                       r"|be improved|be (?:more \w+|clearer|better|friendlier|nicer))"
                       r"|\b(?:give|present|show|print|provide|return|raise|emit|(?:should|would|could|must) (?:get|see|receive))"
                       r" (?:it |them |us |users |the user )?(?:a |an )?(?:much )?"
                       r"(?:better|clearer|friendlier|nicer|more (?:helpful|descriptive|informative|user-friendly|meaningful|useful)"
                       r"|proper|useful|helpful|meaningful|informative|descriptive|actionable|sensible)"
                       r" error(?: message)?\b|\bpossible to improve (?:it|the (?:error )?message|this)\b")
# (round fa5) a change told as raising a resource's limit or request against the failure it names ("bump memory limits",
# "increase memory limits and requests ... to 10G to resolve OOMKilled", "- Bumped requests 256Mi→512Mi, limits
# 512Mi→1536Mi."): a pull request's title or summary, an operator's note; the OOMKilled it quotes is the reason, no run
# printed it. A user's attempt is told with its doubt ("I increased the memory limit but it is still OOMKilled", "even
# after raising the limit", "Should I increase the limit?"): a line with a question, a first person ("I", "my", "me"),
# "but/still/not/never/no longer/n't", "again", "even", "after", "despite" or "tried" is not taken
PAGE_RAISE = re.compile(_not_on_doubt(first_person=True, also="again|even|after|despite|tried") +
                        r"\b(?:bump(?:ed|s|ing)?|increas(?:e|ed|es|ing)|rais(?:e|ed|es|ing)|doubl(?:e|ed|es|ing)|jacks?)"
                        r" (?:up )?(?:the )?(?:memory |mem |cpu )?(?:requests?|limits?)\b")
# (round fa7) an explainer's epithet for the error it quotes: "the dreaded / infamous / notorious" error ("The build reaches
# step 8 of 12 and then crashes with the dreaded error: no space left on device.", "One such error is the infamous "bind:
# address already in use" message"): a page's register about an error everyone meets; a user meeting it tells so ("I keep
# getting the dreaded OOM", "Still hitting the infamous ... error", "Why do I get the dreaded ...?"), and a line with a
# question, a doubt, a first person or a verb of meeting it (get, got, getting, keep, hit, hitting, running into, seeing,
# again, even) is not taken
PAGE_DREAD = re.compile(_not_on_doubt(first_person=True, also=r"gets?|got|getting|keeps?|kept|keeping|hit|hits|hitting|running"
                                      r"|seeing|saw|again|even") +
                        r"\b(?:the|that|this) (?:dreaded|infamous|notorious)\b")
# (round fa8) a change told as rewording the error message it names: "Refine error message of system_allocator.cc" (over
# "Expose other errors except `cudaErrorMemoryAllocation` to users."), "**Optimize the error messages of paddle CUDA API.**",
# "Enhance the error message for nccl when shared memory is insufficient.", "Improve error message when model path does not
# exist": a pull request's or an improvement's title, PAGE_BETTER's and PAGE_WISH's sibling told by its verb; the error it
# names or shows is the one being reworded, no run of it printed it. A user's line that asks or tells an attempt ("Could you
# improve the error message?", "I tried to clarify the error message but it still fails") is not taken: a line with a
# question, a doubt or a first person
PAGE_REWORD = re.compile(_not_on_doubt(first_person=True) +
                         r"\b(?:improv(?:e|es|ed|ing)|enhanc(?:e|es|ed|ing)|optimi[sz](?:e|es|ed|ing)|refin(?:e|es|ed|ing)"
                         r"|polish(?:es|ed|ing)?|clarif(?:y|ies|ied|ying)|reword(?:s|ed|ing)?) (?:the |an? |some |all |our |its |their )?"
                         r"(?:[\w.-]+ ){0,3}error (?:messages?|msgs?|texts?|hints?)\b")
# (round fa8) a page telling its reader's run in the second person, a sentence opening with "You" and the verb of what the
# reader did ("You built a solid rig. ... You pulled Qwen 3.5 27B ...", "You check the logs and see nothing useful. You run
# docker ps and ...", "You're loading a local LLM or running inference with PyTorch and hit RuntimeError: CUDA out of
# memory.", "You run pip install and get this:", "You launch vLLM and it crashes during startup"): a how-to's or a blog's
# story opener, the scene its reader knows; a user's report tells its own run in the first person or as steps ("Run X").
# Across the corpus and batches 1-102 the marker takes fourteen lines, all near-misses. A tool speaking to its user
# ("You are running out of disk space", "You are running version 3.28.3", "You ran out of memory") is not taken: no
# "running", and "run/ran" not followed by "out"; nor a line with a question, a doubt or a first person
PAGE_SCENE = re.compile(_not_on_doubt(first_person=True) +
                        r"(?:^|[.!?][\"”’)]?\s{1,3})(?-i:You)(?:(?:'|’)ve)? (?:just |then |finally )?(?:built|pulled|check|checked"
                        r"|launch|launched|spin up|spun up|deploy|deployed|fire up|fired up|type|typed|kick off|kicked off"
                        r"|run(?! out\b)|ran(?! out\b)|start|started|hit|open|opened|upgrade|upgraded|install|installed|load|loaded)\b"
                        r"|(?:^|[.!?][\"”’)]?\s{1,3})(?-i:You)(?:(?:'|’)re| are) (?:loading|training|fine-tuning|deploying|building"
                        r"|serving|launching|starting)\b")
# the page sentences about_errors looks for on any line: (words one of which the line holds, a cheap gate before the
# regex; the marker; whether a tool's line with a log level is left out): an explainer's voice, the change told after its
# reason, a failure foretold, the quoted error read out, the reader's condition of meeting it, a Chinese explainer's voice,
# the change's promise
PAGE_MARKERS = ((("this ",), PAGE_VOICE, False), (("this ",), PAGE_PR_MID, True),
                ((" will ", " may ", " might "), PAGE_FORECAST, True), ((" error", " code "), PAGE_EXPLAIN, True),
                (("if you ",), PAGE_READER, True), (("遇到", "错误"), PAGE_ZH, True),
                (("很多", "许多", "不少", "大量", "大部分", "多数", "每个", "每一个"), PAGE_ZH_MANY, True),
                (("ましょう", "ませんか", "理由", "原因"), PAGE_JA, True),
                (("你有没有", "你是否"), PAGE_ZH_ASK, True),
                (("常见",), PAGE_ZH_COMMON, True),
                (("本文", "本篇", "本教程", "本指南"), PAGE_ZH_VOICE, True),
                (("this will ", "this should "), PAGE_PROMISE, True),
                (("to prevent ", "to avoid ", "to work around ", "to get around ", "to get past "), PAGE_PURPOSE, True),
                (("to fix ", "to resolve ", "to solve "), PAGE_FIX_FOR, True),
                (("to catch ", "to handle ", "gracefully handle "), PAGE_CATCH, True),
                (("encounter", "run into", "come across", " face", "stumble ", "bump into"), PAGE_COMMON, True),
                (("better", "clearer", "friendl", "nicer", "more ", "improve", "proper", "useful", "helpful", "meaningful",
                  "informative", "descriptive", "actionable", "sensible"), PAGE_WISH, True),
                (("bump", "increas", "rais", "doubl", "jack"), PAGE_RAISE, True),
                (("dreaded", "infamous", "notorious"), PAGE_DREAD, True),
                (("error m", "error t", "error h"), PAGE_REWORD, True),
                (("you ", "you'", "you’"), PAGE_SCENE, True))
REPORT_HEADING = re.compile(r"(?i)^[\s>#*_]{0,8}(?:describe the bug|bug description|steps to reproduce|to reproduce|reproduction"
                            r"|expected behaviou?r|actual behaviou?r|environment|system info(?:rmation)?|your environment"
                            r"|logs?|error logs?|pytorch version:|collecting environment information)\W{0,6}$")
RUN_MARK = re.compile(r"^\s{0,8}(?:>\s?)?(?:\$ \S|# \S|>>> \S|PS [^>\n]{1,120}> ?\S|[A-Za-z]:\\[^>\n]{0,120}> ?\S"
                      r"|[\w.-]{1,40}@[\w.-]{1,64}:[^$#\n]{0,120}[$#] ?\S|\(\w[\w.-]{0,40}\) \S[^$\n]{0,120}\$ \S)"
                      r"|Traceback \(most recent call last\)|^\s{0,12}File \"[^\"\n]{1,300}\", line \d"
                      r"|\b\d\d:\d\d:\d\d\b|^\s{0,12}at [\w$.<>]{1,200} ?\(|(?<![\w/.-])[\w/.-]{1,200}\.(?:c|cc|cpp|cxx|cu|cuh|h|hpp|py):\d{1,6}(?::\d{1,5})?: "
                      # (stop 62) NumPy 2's banner for an extension built against 1.x opens a run's output; its own next
                      # line ("NumPy 2.0.0 as it may crash.") is not a page's sentence
                      r"|^\s{0,12}A module that was compiled using NumPy 1\.x cannot be run in\b"
                      # (stop 63) dpkg's and apport's own lines under a failed package install ("No apport report written
                      # because the error message indicates a disk full error" is the run's output, not a page's reason)
                      r"|^\s{0,12}(?:dpkg: error processing (?:archive|package) \S|No apport report written because the error message"
                      r" indicates\b|E: Sub-process /usr/bin/dpkg returned an error code \(\d{1,3}\))")


def about_errors(path):
    """Whether the text at `path` is a page about errors (see PAGE_HEADING above); read once, bounded."""
    try:
        if os.path.getsize(path) > PAGE_MAX_BYTES:
            return False
        fh = _open(path)
        try:
            data = fh.read(PAGE_BYTES)
        finally:
            fh.close()
    except (OSError, EOFError, zlib.error):
        return False
    headings = 0
    page = False
    first = True
    above = ""      # the non-blank line above, in the same paragraph (PAGE_BETTER's wrapped sentence)
    for raw in data.decode("utf-8", "replace").splitlines():
        line = _unwrapped(raw).strip() if raw else ""
        if not line or (len(line) > PAGE_LINE * 4 and (len(line) > PAGE_PARAGRAPH or line_level(line) is not None)):
            above = ""
            continue
        line = line[:PAGE_LINE * 4]     # (round fa11) a long paragraph's opening (see PAGE_PARAGRAPH)
        prev_line, above = above, line
        if len(line) <= PAGE_LINE and REPORT_HEADING.match(line) is not None:
            return False
        if first:
            first = False
            if len(line) <= PAGE_LINE and line_level(line) is None and PAGE_TITLE.search(line) is not None:
                page = True     # (round scan5) the text opens with a page's title (see PAGE_TITLE)
        if page:
            continue
        low = line.lower()
        if PAGE_PR.match(line) is not None or PAGE_WIDGET.match(line) is not None:
            page = True
        elif any(any(w in low for w in words) and marker.search(line) is not None and not (plain and line_level(line) is not None)
                 for words, marker, plain in PAGE_MARKERS):
            page = True     # (rounds scan5, scan6) a page's own sentence anywhere in the text (see PAGE_MARKERS)
        elif (any(w in low for w in PAGE_BETTER_WORDS) and "this " in (prev_line.lower() + " " + low)
              and line_level(line) is None and PAGE_BETTER.search(prev_line + " " + line if prev_line else line) is not None):
            page = True     # (round fa4) the change makes the quoted error's message clearer (see PAGE_BETTER)
        elif len(line) <= PAGE_LINE and line[-1:] not in (".", ":", "：", ",", ";") and PAGE_HEADING.match(line) is not None:
            headings += 1
            page = headings >= 2
    return page


def in_run_output(prev, seg, nxt):
    """Whether the hit's line, or the block of non-blank lines it stands in, shows a run (RUN_MARK)."""
    if line_level(seg) is not None or RUN_MARK.search(seg) is not None:
        return True
    for lines in (reversed(prev), nxt):
        for raw in lines:
            line = _unwrapped(raw).rstrip()
            if not line.strip() or FENCE.match(line):
                break
            if line_level(line) is not None or RUN_MARK.search(line) is not None:
                return True
    return False


class RuleIndex(object):
    """The rules whose literals a (lowered) line holds, found in one pass over the line.

    Testing each rule's literals one by one costs a substring search per literal (641 of them) on every candidate
    line: on a log where every line is an error line that was half the scan, ~300 us a 1 KB line.  One pass of
    hyperscan's automaton (SINGLEMATCH: one report per literal) takes ~2 us; without hyperscan, one trie regex finds
    each position where a literal starts (its shortest literal there, then the longer ones it begins) in ~120 us.
    Both are built only once a log has shown LAZY candidate lines: a short log keeps the plain loop and pays no
    compile.  The answer is the same as the loop's (tests/diagnose/test_rule_index.py compares them).
    """
    LAZY = 32

    def __init__(self, rules, lazy=None, use_hyperscan=None):
        self.rules = rules
        self.left = self.LAZY if lazy is None else lazy
        self.use_hyperscan = hyperscan is not None if use_hyperscan is None else use_hyperscan
        self.find = self.loop if self.left else self._build()

    def loop(self, low):
        """The rules in table order with a literal in `low`, one substring test at a time (the reference)."""
        if self.find == self.loop:
            self.left -= 1
            if self.left < 0:
                self.find = self._build()
        return [rule for rule in self.rules if any(lit in low for lit in rule.literals)]

    def _build(self):
        lits = sorted({lit for rule in self.rules for lit in rule.literals})
        owners = {lit: [] for lit in lits}
        for i, rule in enumerate(self.rules):
            for lit in set(rule.literals):
                owners[lit].append(i)
        rules = self.rules
        if not lits:
            return lambda low: []
        if self.use_hyperscan:
            db = hyperscan_database(tuple(lits), hyperscan.HS_FLAG_SINGLEMATCH)    # (the line is lowered already)
            by_id = [owners[lit] for lit in lits]

            def find(low):
                found = []
                db.scan(low.encode("utf-8", "surrogatepass"),
                        match_event_handler=lambda i, _from, _to, _flags, _ctx: found.append(i))
                if not found:
                    return []
                idx = set()
                for i in found:
                    idx.update(by_id[i])
                return [rules[i] for i in sorted(idx)]
            return find
        first = compiled_trie(lits)
        longer = {}     # the literals that begin with one: they follow it in sorted order
        for i, lit in enumerate(lits):
            j = i + 1
            while j < len(lits) and lits[j].startswith(lit):
                j += 1
            longer[lit] = lits[i + 1:j]

        def find(low):
            idx = set()
            m = first.search(low)
            while m is not None:
                at, lit = m.start(), m.group()
                idx.update(owners[lit])
                for other in longer[lit]:
                    if low.startswith(other, at):
                        idx.update(owners[other])
                m = first.search(low, at + 1)
            return [rules[i] for i in sorted(idx)]
        return find


def match_line(rules, segs):
    """(rule, indices of its patterns that match) pairs for any segment of one line, after `unless` and levels;
    `rules` is the log's RuleIndex."""
    hits = {}
    for seg in segs:
        low = seg.lower()
        if is_prose(seg, low):
            continue
        level = None
        level_known = False
        if ("request" in low or "prompt" in low or "params" in low) and ECHO.search(seg):
            level, level_known = line_level(seg), True
            if level in ("INFO", "DEBUG"):
                continue
        for rule in rules.find(low):
            if rule.levels or rule.not_levels:
                if not level_known:
                    level, level_known = line_level(seg), True
                if rule.levels and level not in rule.levels:
                    continue
                if level in rule.not_levels:
                    continue
            if any(u.search(seg) for u in rule.unless):
                continue
            idx = [i for i, p in enumerate(rule.patterns) if p.search(seg)]
            if idx:
                prev = hits.get(rule.id)
                hits[rule.id] = (rule, sorted(set(idx) | set(prev[1] if prev else ())))
    return list(hits.values())


# The safety-net classes that name an error of their own kind wherever they stand on a line (the looser ones,
# an exception name or "error:", are often the very words a harmless or warning entry is about).
FOREIGN = ("traceback", "cmake-error", "nvcc-fatal", "build-killed", "curl-error", "connection-refused")


def foreign_error(text, hits):
    """The safety-net class of an error on this line that the (harmless or warning) entries matching it do not
    explain: a fatal end, or a line of a FOREIGN class once their patterns' matches are cut out; else None."""
    if line_level(text) in ("DEBUG", "INFO"):
        return None
    rest = text
    for rule, _ in hits:
        for p in rule.patterns:
            rest = p.sub(" ", rest)
    return fatal_class(rest) or _generic(rest, FOREIGN)


def drop_overridden(hits):
    if len(hits) > 1:
        dropped = set()
        for rule, _ in hits:
            dropped |= rule.overrides
        hits = [h for h in hits if h[0].id not in dropped]
    return hits


def _norm(text):
    return re.sub(r"0x[0-9a-fA-F]+|\d+", "#", text.strip())[:300]


class Context(object):
    """The lines around a finding, from the last few lines seen and the next few to come: nothing
    of the log is kept beyond that (memory does not grow with the log)."""

    def __init__(self, context):
        self.context = context
        self.recent = collections.deque(maxlen=2 * context + 1)
        self.waiting = []       # (last line wanted, list being filled)

    def add(self, lineno, text):
        self.recent.append((lineno, text))
        if self.waiting:
            still = []
            for last, out in self.waiting:
                if lineno <= last:
                    out.append([lineno, text])
                    if lineno < last:
                        still.append((last, out))
            self.waiting = still

    def around(self, lineno):
        out = [[n, t] for n, t in self.recent if lineno - self.context <= n <= lineno]
        if self.context:
            self.waiting.append((lineno + self.context, out))
        return out


MAX_GROUPS = 1000   # distinct unrecognised errors reported per log; more are counted


class SafetyNet(object):
    """Error-looking lines no entry explains, as blocks (a traceback is one block), repeats grouped;
    decided while the log streams by, with a few lines of look-ahead.

    A traceback is explained by the entry that matches its exception line (known or harmless: the
    exception line is where the traceback ends); plain error lines by a known finding next to them
    (within 3 lines before, inside, or 5 after).
    """

    def __init__(self, ctx):
        self.ctx = ctx
        self.cur = None
        self.pending = []       # finished blocks whose 5 lines of look-ahead are not all seen
        self.last_known = -10   # the last line of an error/warning finding
        self.groups = {}
        self.more = 0

    def _new(self, lineno, text, cls):
        tb = TRACEBACK in text
        return {"start": lineno, "end": lineno, "traceback": tb, "closed": False, "first_after": None,
                "explained": False, "known_before": self.last_known >= lineno - 3, "summary": None, "ctx": None}

    def explainer(self, lineno, known):
        """A line an entry matched (known: an error or warning, else harmless)."""
        for b in self.pending + ([self.cur] if self.cur else []):
            if b["first_after"] is None and lineno > b["end"]:
                b["first_after"] = lineno
            if known and lineno <= b["end"] + 5:
                b["explained"] = True
        if known:
            self.last_known = lineno

    def generic(self, lineno, text, cls):
        cur = self.cur
        if cur is None:
            joins = False
        elif TRACEBACK in text:
            # "ERROR: Exception in ASGI application" and the like head the traceback that follows
            joins = not cur["traceback"] and lineno - cur["end"] == 1
        elif cur["traceback"]:
            # a traceback ends at its exception line, which may be a finding
            joins = not cur["closed"] and cur["first_after"] is None and lineno - cur["end"] <= 200
        else:
            joins = lineno - cur["end"] <= 3
        if joins:
            if self.last_known > cur["end"]:
                cur["explained"] = True     # a known finding inside the block
            cur["end"], cur["first_after"] = lineno, None
        else:
            if cur is not None:
                cur["next"] = lineno
                self.pending.append(cur)
            cur = self.cur = self._new(lineno, text, cls)
        stripped = text.strip()
        if TRACEBACK in text:
            cur["traceback"], cur["closed"] = True, False
        elif cur["traceback"] and EXC_LINE.search(stripped):
            cur["closed"] = True
        if cur["summary"] is None or (EXC_LINE.search(stripped) and TRACEBACK not in text) \
                or (cur["summary"][2] == "cxx-terminate" and cls != "cxx-terminate") \
                or (cur["summary"][2] in REPORT_CLASSES and cls not in REPORT_CLASSES + QUIET_CLASSES):
            cur["summary"] = (lineno, text, cls)
            cur["ctx"] = self.ctx.around(lineno)

    def advance(self, lineno):
        """Every line before `lineno` has been seen: judge the blocks that cannot change any more."""
        if self.pending and self.pending[0]["end"] + 5 < lineno:
            keep = []
            for b in self.pending:
                if b["end"] + 5 < lineno:
                    self._judge(b)
                else:
                    keep.append(b)
            self.pending = keep

    def _judge(self, b):
        if b["traceback"] and not b["closed"]:
            # its exception line was not an error-looking line of its own: the next finding is it
            k, nxt = b["first_after"], b.get("next")
            if k is not None and k - b["end"] <= 200 and (nxt is None or k < nxt):
                return
        if b["explained"] or (b["known_before"] and not b["traceback"]):
            return
        line, text, cls = b["summary"]
        key = _norm(text)
        g = self.groups.get(key)
        if g is not None:
            g["count"] += 1
        elif len(self.groups) >= MAX_GROUPS:
            self.more += 1
        else:
            self.groups[key] = {"first_line": line, "count": 1, "text": text, "class": cls,
                                "block": [b["start"], b["end"]], "context": b["ctx"]}

    def finish(self):
        for b in self.pending + ([self.cur] if self.cur else []):
            self._judge(b)
        self.pending, self.cur = [], None
        return sorted(self.groups.values(), key=lambda g: g["first_line"])


# (round 40f) a failure told with its fallback on one line ("Failed to get pretrained config via AutoConfig, falling back to
# local config.json. Error: The checkpoint you are trying to load has model type `qwen3_5` but Transformers does not
# recognize this architecture."): the program goes on another way, the error it quotes is not the run's end
FALLBACK = re.compile(r"(?i)\bfail(?:ed|ure|s)?\b[^\n]{0,200}?[,;:.]\s{0,2}(?:and |so )?(?:falling|fall(?:s|ing)?) back (?:to|on)\b")


def scan(path, rules, context=2, engine="auto"):
    """Scan one log; returns a JSON-serialisable report (with "error" when it could not be read to its end).

    Memory stays the same whatever the size of the log: findings keep a count, their first line and
    its context; unrecognised errors are grouped as they stream by.
    """
    compiled = [compile_rule(r) for r in rules]
    literals = set(GENERIC_LITERALS)
    for r in compiled:
        literals.update(r.literals)
    engine = pick_engine(path, engine)
    source = ENGINES[engine]
    index = RuleIndex(compiled)

    ctx = Context(context)
    net = SafetyNet(ctx)
    windows = Windows(path)
    findings = {}         # rule id -> dict
    examined = 0
    n_windows = 0
    n_doc = 0
    page = None           # (round 45d) whether the text is a page about errors: judged at the first standing hit
    problem = None
    try:
        for lineno, offset, is_match, raw in source(path, literals, context):
            segs = clean(raw)
            text = " | ".join(segs) if len(segs) > 1 else segs[0]
            net.advance(lineno)
            ctx.add(lineno, text)
            if not is_match:
                continue
            examined += 1
            if examined > MAX_CANDIDATES:
                continue
            written = segs
            segs = [spaced(unwrap(seg)) for seg in segs]    # what is matched: the line without its wrappers'
            # prefixes, a space where CJK script meets an English word (spaced)
            bare = " | ".join(segs) if len(segs) > 1 else segs[0]
            hits = []
            for rule, idx in match_line(index, segs):
                if rule.multiline:
                    n_windows += 1
                    if n_windows > MAX_WINDOWS or offset is None or not window_ok(rule, windows, offset,
                                                                                           written + segs):
                        continue
                hits.append((rule, idx))
            hits = drop_overridden(hits)
            if hits and "back " in bare and FALLBACK.search(bare) is not None:
                # (round 40f) a failure the program recovers from on the same line (see FALLBACK): its error entries are
                # not the run's failure; harmless and warning entries still explain it
                hits = [h for h in hits if h[0].severity != "error"]
            around = None   # the lines around a hit, read once for both vetoes below
            if hits and offset is not None and n_windows < MAX_WINDOWS and any(
                    seg[:1] == "-" or QUOTED_ITEM.match(seg) for seg in segs):
                n_windows += 1
                around = windows.around(offset, DOC_LOOKBACK, DOC_LOOKAHEAD)
                prev, nxt = around[0][-6:], around[1][:1]
                if any(removed_line_replaced(seg, nxt) or quoted_under_definition_key(seg, prev) for seg in segs):
                    hits = []   # a quote of the error (see QUOTE shapes above is_prose): the safety net still sees it
            if hits and offset is not None and n_doc < MAX_DOC_WINDOWS:
                n_doc += 1
                prev, nxt = around or windows.around(offset, DOC_LOOKBACK, DOC_LOOKAHEAD)
                if documented(prev, written[0], nxt):
                    hits = []   # documentation showing output (see DOC_HEADING above): the safety net still sees it
                elif page is not False and not in_run_output(prev, written[0], nxt):
                    if page is None:
                        page = about_errors(path)   # (round 45d) once per log, at its first standing hit
                    if page:
                        hits = []   # a page about errors quoting one outside a run's output (see about_errors)
            for rule, idx in hits:
                f = findings.get(rule.id)
                if f is None:
                    f = findings[rule.id] = {"id": rule.id, "stage": rule.stage, "severity": rule.severity,
                                             "count": 0, "first_line": lineno, "last_line": lineno,
                                             "text": text, "patterns": [], "context": ctx.around(lineno)}
                f["count"] += 1
                f["last_line"] = lineno
                if not set(idx) <= set(f["patterns"]):
                    f["patterns"] = sorted(set(f["patterns"]) | set(idx))
            if any(r.severity == "error" for r, _ in hits):
                net.explainer(lineno, known=True)
            elif hits:
                # harmless and warning entries explain their own words, never an error of another kind on the line
                # (what is left once their patterns are cut out), and never the error lines around them
                cls = foreign_error(bare, hits)
                if cls:
                    net.generic(lineno, text, cls)
                else:
                    net.explainer(lineno, known=False)
            else:
                cls = generic_class(bare)
                if cls is None and segs != written:
                    # an API's error body that unwrap() took for a JSON log event ({"error":{"message":...}}): the
                    # body, not its message, is what tells the failure
                    whole = " | ".join(written)
                    cls = _generic(whole, ("api-error-body",))
                    if cls is None and json_event_error(whole):
                        cls = "error-level"     # (round net56) the event's own level field (see JSON_LEVEL)
                if cls:
                    net.generic(lineno, text, cls)
    except InputProblem as exc:
        problem = str(exc)
    finally:
        windows.close()

    unrecognised = net.finish()
    ordered = sorted(findings.values(), key=lambda f: (STAGE_ORDER.index(f["stage"]) if f["stage"] in STAGE_ORDER
                                                      else 99, f["first_line"]))
    report = {
        "file": path,
        "engine": engine,
        "candidates": examined,
        "truncated": examined > MAX_CANDIDATES,
        "findings": [f for f in ordered if f["severity"] != "harmless"],
        "harmless": [f for f in ordered if f["severity"] == "harmless"],
        "unrecognised": unrecognised,
    }
    if net.more:
        report["unrecognised_more"] = net.more
    if problem:
        report["error"] = problem
    return report


_FRAME = re.compile(r'[ \t]*(?:File "|at [\w$.<>]+\(|#\d+ +0x)')    # Python's, Java's and gdb's stack frames
# (stop 63) apt's and dpkg's own error lines ("E: dpkg was interrupted, you must manually run 'sudo dpkg --configure
# -a' ...", "E: Could not get lock ..."): apt's "E:" is its level, for the document judge only (line_level keeps its
# forms: an apt "W:" is not taken for a WARNING line by the entries' not_levels)
_APT_LINE = re.compile(r"[\s`>]{0,8}E: (?:dpkg |Could not |Unable to |Sub-process |Package |Unmet |Some |Failed |The )")


def log_line(line):
    """A line a log wrote, not a person (for judge_document): a log level (any of the forms line_level reads, after
    the wrappers' prefixes unwrap takes off), apt's "E:" or a stack frame."""
    if _FRAME.match(line) is not None:
        return True
    text = unwrap(line.strip())
    return line_level(text) is not None or _APT_LINE.match(text) is not None


def judge_document(report, path):
    """(stop 51) A log given to read (--log, stdin) whose whole text reads as one ABOUT errors (docmodel.py: a pull
    request, a how-to page, a feature request that quotes an error, in any language) keeps its error findings as
    "quoted", not findings, with the model's probability as "document": a quote of a failure is not a run that
    failed.  The safety net's lines stay as they are; a text past PAGE_MAX_BYTES is a log, never judged."""
    if _reads_as_document is None or not any(f["severity"] == "error" for f in report.get("findings") or ()):
        return report
    try:
        if os.path.getsize(path) > PAGE_MAX_BYTES:
            return report
        fh = _open(path)
        try:
            data = fh.read(PAGE_MAX_BYTES + 1)
        finally:
            fh.close()
    except (OSError, EOFError, zlib.error):
        return report
    if len(data) > PAGE_MAX_BYTES:
        return report
    p = _reads_as_document(data.decode("utf-8", "replace"), is_log=log_line)
    if p is None:
        return report
    report["quoted"] = [f for f in report["findings"] if f["severity"] == "error"]
    report["findings"] = [f for f in report["findings"] if f["severity"] != "error"]
    report["document"] = round(p, 3)
    return report


def service_logs(workdir, name=None):
    """Logs of the services `inv serve` started: <workdir>/.ocrdeploy/services/<name>.json -> "log", each with
    the service's port (None when the record has none) for the fixes that name it."""
    state_dir = os.path.join(os.path.expanduser(workdir), ".ocrdeploy", "services")
    try:
        entries = sorted(os.listdir(state_dir))
    except OSError:
        entries = []
    logs = []
    for entry in entries:
        if not entry.endswith(".json") or (name and entry[:-5] != name):
            continue
        record = os.path.join(state_dir, entry)
        try:
            if not stat.S_ISREG(os.stat(record).st_mode):
                continue    # a FIFO or device where a record should be: never opened
            with open(record) as fh:
                doc = json.load(fh)
        except (OSError, ValueError):
            continue
        log = doc.get("log") if isinstance(doc, dict) else None
        if isinstance(log, str) and log:
            port = doc.get("port")
            logs.append((log, port if isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536
                         else None))
    return state_dir, logs


STDIN_MAX = 2 << 30     # bytes of standard input kept for a scan (OCRDEPLOY_STDIN_MAX_BYTES overrides)


def _spool_stdin():
    """Standard input copied to a temporary file, so that every engine reads a regular file.

    Bounded: an endless input (`tail -f`, `yes`) stops at STDIN_MAX with a message instead of filling
    $TMPDIR; binary input is refused from its first bytes; the file never outlives a failure.
    """
    limit = int(os.environ.get("OCRDEPLOY_STDIN_MAX_BYTES") or STDIN_MAX)
    src = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else sys.stdin
    fd, name = tempfile.mkstemp(prefix="ocrdeploy-stdin-", suffix=".log")
    try:
        with os.fdopen(fd, "wb") as out:
            total = 0
            while True:
                chunk = src.read(1 << 20)
                if not chunk:
                    break
                if total == 0 and b"\x00" in chunk[:SNIFF_BYTES]:
                    raise InputProblem("not a text log (binary data: NUL bytes in its first %d bytes)"
                                       % min(len(chunk), SNIFF_BYTES))
                total += len(chunk)
                if total > limit:
                    raise InputProblem("standard input is longer than %d MiB (an endless stream?); save it to a "
                                       "file and give --log FILE" % (limit >> 20))
                out.write(chunk)
    except OSError as exc:
        os.unlink(name)
        raise InputProblem("standard input could not be saved to a temporary file in %s (%s); save it to a "
                           "file and give --log FILE" % (tempfile.gettempdir(), exc.strerror or exc))
    except BaseException:
        os.unlink(name)
        raise
    return name


def scan_one(path, rules, context=2, engine="auto", label=None):
    label = label or path
    problem = check_input(path)
    if problem == "empty":
        return {"file": label, "engine": None, "candidates": 0, "truncated": False, "findings": [],
                "harmless": [], "unrecognised": [], "note": "empty file: nothing to scan"}
    if problem:
        return {"file": label, "error": problem}
    try:
        rep = scan(path, rules, context, engine)
    except (InputProblem, OSError) as exc:
        return {"file": label, "error": str(exc)}
    rep["file"] = label
    return rep


def run_request(req):
    global ANSI
    # the controller's colour regex (ocrdeploy.terminal's COLOUR: imported here in-process, sent to a host): compiled
    # only when it is not the one already in use
    if req.get("ansi") and (ANSI is None or ANSI.pattern != req["ansi"]):
        ANSI = re.compile(req["ansi"])
    jobs = [(path, None) for path in req.get("paths") or []]      # (log, its service's port or None)
    given = len(jobs)     # the logs given to read come first; the services' own logs after them
    out = []
    if req.get("services"):
        state_dir, logs = service_logs(req["services"], req.get("service_name"))
        if not logs:
            out.append({"file": state_dir, "error": "no service log found: nothing started by `inv serve` "
                                                     "is recorded in %s" % state_dir})
        jobs.extend(logs)
    args = (req["rules"], req.get("context", 2), req.get("engine", "auto"))
    for i, (path, port) in enumerate(jobs):
        if path == "-":
            try:
                spooled = _spool_stdin()
            except InputProblem as exc:
                out.append({"file": "-", "error": str(exc)})
                continue
            try:
                rep = scan_one(spooled, *args, label="-")
                out.append(judge_document(rep, spooled) if req.get("documents") else rep)
            finally:
                os.unlink(spooled)
            continue
        rep = scan_one(path, *args)
        if port:
            rep["port"] = port
        if req.get("documents") and i < given:     # a log given to read, not a service's own (those are runs)
            rep = judge_document(rep, path)
        out.append(rep)
    return out


def main(argv):
    out = run_request(json.loads(argv[1]))
    sys.stdout.write(MARKER + "\n" + json.dumps(out) + "\n")


if __name__ == "__main__":
    main(sys.argv)
