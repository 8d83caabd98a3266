"""(stop 60) Three failures that recurred unnamed in the held-out batches get entries, and nccl-error reads torch's newer
watchdog and NCCL's shared-memory segment without their prefixes.

- path-not-writable: EACCES / EROFS on a named path (a model cache, a tool's home, a service's data folder owned by
  another user or on a read-only mount) in Python's, Go's, coreutils', Rust's, Node's and Java's words: unnamed in seven
  batches, four times in 224.
- download-lock-stale: a download waiting on a lock file nobody releases (huggingface_hub's "Still waiting to acquire
  lock", filelock's Timeout and DEBUG lines, audb's): a wait under 10 s, or one a progress bar or the lock's
  acquisition ends, is a download that goes on.
- cpu-instruction-unsupported: SIGILL in every reporter's words, exit code 132, and the refusals that name the
  instruction set (vLLM's CPU backend, TensorFlow, Paddle): the safety net's fatal-signal in twenty-odd batches. The
  GPU's own illegal instruction stays out.
- glibc-too-old: the loader's or the linker's GLIBC_2.x / GLIBCXX_3.4.x / CXXABI / __isoc23_ symbol version not found:
  the safety net's library-missing in nine batches.
- after batches 225-232: hub-gated-repo reads httpx's 401/403 for a hub file, git-lfs-download-failed a pointer file
  unpickled ("invalid load key, 'v'"), nvidia-container-toolkit-missing enroot's missing nvidia-container-cli,
  shm-too-small the DataLoader watchdog's "workers are out of shared memory", compile-oom-killed a versioned clang,
  flash-attn-undefined-symbol the loader's words in markdown bold; rate-limited, a 429 or a quota (hosted APIs,
  gateways, the hub's per-IP limit), unnamed in six batches.
- after batches 233-236: path-not-writable a relative name in quotes and the strerror without its errno,
  glibc-too-old the conda installer's own glibc check, host-oom-killed Google Colab's "Your session crashed after using
  all available RAM" (an explainer's "Your X crashed" stays prose), cuda-toolkit-torch-mismatch the check's head alone.
"""

import corpus

CASES = [
    ("path-not-writable", 2, "ollama/ollama/issues/1066"),
    ("path-not-writable", 2, "ollama/ollama/issues/7471"),
    ("path-not-writable", 0, "PaddlePaddle/PaddleOCR/issues/18175"),
    ("path-not-writable", 1, "paddle-python/paddle-client/issues/13"),
    ("path-not-writable", 6, "openobserve/openobserve-helm-chart/issues/54"),
    ("path-not-writable", 5, "prisma/prisma1/issues/1908"),
    ("path-not-writable", 3, "devcontainers/templates/issues/268"),
    ("download-lock-stale", 2, "huggingface/datasets/issues/3983"),
    ("download-lock-stale", 2, "pypa/virtualenv/issues/2178"),
    ("download-lock-stale", 3, "audeering/audb/issues/311"),
    ("glibc-too-old", 0, "airockchip/rknn-llm/issues/276"),
    ("glibc-too-old", 2, "numba/llvmlite/issues/1342"),
    ("host-oom-killed", 30, "googlecolab/colabtools/issues/2332"),
    ("host-oom-killed", 30, "AliaksandrSiarohin/first-order-model/issues/367"),
    ("host-oom-killed", 30, "googlecolab/colabtools/issues/1811"),
    ("glibc-too-old", 0, "ultralytics/ultralytics/issues/21757"),
    ("glibc-too-old", 0, "pyg-team/pyg-lib/issues/548"),
    ("glibc-too-old", 0, "ggml-org/llama.cpp/pull/11392"),
    ("glibc-too-old", 0, "KumaTea/pytorch-aarch64/issues/16"),
    ("glibc-too-old", 0, "kherud/java-llama.cpp/issues/19"),
    ("glibc-too-old", 0, "huggingface/llm-ls/issues/25"),
    ("glibc-too-old", 1, "denoland/rusty_v8/issues/1655"),
    ("glibc-too-old", 0, "MusicPlayerDaemon/MPD/issues/64"),
    ("cpu-instruction-unsupported", 0, "intel/ipex-llm/issues/12739"),
    ("cpu-instruction-unsupported", 1, "openai/codex/issues/25367"),
    ("cpu-instruction-unsupported", 3, "scale-lab/DRiLLS/issues/9"),
    ("cpu-instruction-unsupported", 0, "aingdesk/AingDesk/issues/62"),
    ("cpu-instruction-unsupported", 1, "apple/tensorflow_macos/issues/72"),
    ("cpu-instruction-unsupported", 0, "PaddlePaddle/Paddle/issues/58"),
    ("cpu-instruction-unsupported", 2, "Firstyear/opensuse-proxy-cache/issues/13"),
    ("cpu-instruction-unsupported", 3, "vllm-project/vllm/issues/4654"),
    # moved from generic.yaml's unnamed failures: the safety net's fatal-signal, which the entry now names
    ("cpu-instruction-unsupported", 0, "kuvaus/LlamaGPTJ-chat/issues/21"),
    ("cpu-instruction-unsupported", 0, "ollama/ollama/issues/1603"),
    ("cpu-instruction-unsupported", 1, "hacksider/Deep-Live-Cam/issues/548"),
    ("cpu-instruction-unsupported", 1, "mvdctop/Movie_Data_Capture/issues/887"),
]

# each line alone, named through the pattern given (the runtimes' wordings as their sources print them)
WORDINGS = [
    ("path-not-writable", 0, "PermissionError: [Errno 13] Permission denied: '/home/appuser/.cache/huggingface'"),
    ("path-not-writable", 0, "PermissionError: [Errno 13] 权限不够: '/root/.cache/huggingface/hub'"),
    ("path-not-writable", 0, "ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied: "
                             "'/usr/local/lib/python3.10/dist-packages/torch'"),
    ("path-not-writable", 0, "PermissionError: [Errno 13] Permission denied: 'C:\\\\Program Files\\\\Python311\\\\Lib'"),
    ("path-not-writable", 1, "OSError: [Errno 30] Read-only file system: '/nonexistent'"),
    ("path-not-writable", 2, "Error: could not create directory mkdir /var/lib/ollama: permission denied"),
    ("path-not-writable", 2, "Error: open /root/.ollama/id_ed25519: read-only file system"),
    ("path-not-writable", 3, "mkdir: cannot create directory '/models': Permission denied"),
    ("path-not-writable", 3, "/bin/sh: 1: cannot create /data/out.txt: Read-only file system"),
    ("path-not-writable", 3, "mkdir: 无法创建目录 \"/models\": 权限不够"),
    ("path-not-writable", 4, "Error: failed to create cache dir /root/.cache/hf-hub: Permission denied (os error 13)"),
    ("path-not-writable", 4, "Error: Read-only file system (os error 30)"),
    ("path-not-writable", 5, "Error: EACCES: permission denied, mkdir '/root/.cache/prisma'"),
    ("path-not-writable", 5, "Error: EROFS: read-only file system, open '/app/.cache/x.json'"),
    ("path-not-writable", 5, "java.nio.file.AccessDeniedException: /opt/models/cache"),
    ("path-not-writable", 5, "java.io.FileNotFoundException: /var/log/app.log (Permission denied)"),
    ("path-not-writable", 0, "PermissionError: [Errno 13] Permission denied: '/dev/shm/sagemaker_sessions'"),
    ("path-not-writable", 0, "ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied: "
                             "'/usr/lib/python3/dist-packages/x'"),
    ("path-not-writable", 6, "create cache dir success: Os { code: 30, kind: ReadOnlyFilesystem, message: \"Read-only file "
                             "system\" }"),
    ("download-lock-stale", 0, "still waiting to acquire lock on /home/a/.cache/huggingface/hub/.locks/models--x--y/fc1c.lock"),
    # (through a logger that prints its level: a sentence or two of it alone, with no log line around, reads as a
    # document's to the document model; VARIANTS.md "Stop 60")
    ("download-lock-stale", 0, "2025-03-02 10:01:12,345 - huggingface_hub.utils._fixes - INFO - Still waiting to acquire "
                               "lock on /data/.cache/huggingface/hub/.locks/models--x--y/a1b2.lock (elapsed: 90.1 seconds)"),
    ("download-lock-stale", 1, "Lock acquisition timed out after 600s on /data/hub/.locks/models--x/abc.lock. This may be "
                               "caused by a stale lock from a crashed process."),
    ("download-lock-stale", 1, "filelock._error.Timeout: The file lock '/root/.cache/huggingface/hub/.locks/x.lock' could "
                               "not be acquired."),
    ("download-lock-stale", 2, "2024-07-09 16:49:48,434 - filelock - DEBUG - Lock 137698966490000 not acquired on "
                               "/home/s/.cache/huggingface/hub/.locks/models--Q/04944f.lock, waiting 0.05 seconds ..."),
    ("download-lock-stale", 3, "UserWarning: Lock could not be acquired. Timeout exceeded."),
    ("cpu-instruction-unsupported", 0, "./entrypoint.sh: line 12:    20 Illegal instruction     (core dumped) python "
                                       "manage.py shell"),
    ("cpu-instruction-unsupported", 0, "Illegal instruction (core dumped)"),
    ("cpu-instruction-unsupported", 0, "2023/09/26 23:40:47 llama.go:320: llama runner exited with error: signal: "
                                       "illegal instruction"),
    # (Paddle's summary as it prints it: the sentence alone on a line reads as a document's)
    ("cpu-instruction-unsupported", 0, "----------------------\nError Message Summary:\n----------------------\n"
                                       "FatalError: `Illegal instruction` is detected by the operating system.\n"
                                       "  [TimeInfo: *** Aborted at 1680 (unix time) try \"date -d @1680\" if you are "
                                       "using GNU date ***]\n  [SignalInfo: *** SIGILL (@0x7f8d20b0ed18) received by PID "
                                       "1218259 (TID 0x7f8d23833740) from PID 548465944 ***]"),
    ("cpu-instruction-unsupported", 0, "非法指令 (核心已转储)"),
    ("cpu-instruction-unsupported", 1, "[1]    122549 illegal hardware instruction (core dumped)  python predict.py"),
    ("cpu-instruction-unsupported", 1, "  [SignalInfo: *** SIGILL (@0x7f278b41e86a) received by PID 44052 (TID "
                                       "0x7f2792799000) from PID 18446744071750936682 ***]"),
    ("cpu-instruction-unsupported", 1, "kernel: [1728595.660950] traps: python3[213941] trap invalid opcode "
                                       "ip:7f4aa44a4e94 sp:7ffceec92e60 error:0 in libllama.so[7f4aa448a000+9f000]"),
    ("cpu-instruction-unsupported", 1, "Process finished with exit code -1073741795 (0xC000001D)"),
    ("cpu-instruction-unsupported", 2, "xinference exited with code 132"),
    ("cpu-instruction-unsupported", 2, "Error: container exit code: 132"),
    ("cpu-instruction-unsupported", 2, "Exception: exit code= 132"),
    # a command line that names CUDA or a GPU is still the CPU's SIGILL
    ("cpu-instruction-unsupported", 0, "./run.sh: line 5:  1234 Illegal instruction     (core dumped) python -c \"import "
                                       "torch; print(torch.cuda.is_available())\""),
    ("cpu-instruction-unsupported", 0, "Error: llama runner process has terminated: signal: illegal instruction (core "
                                       "dumped) [GPU 0]"),
    ("cpu-instruction-unsupported", 3, "  vLLM CPU backend requires AVX512 ISA support."),
    ("cpu-instruction-unsupported", 3, "The TensorFlow library was compiled to use AVX instructions, but these aren't "
                                       "available on your machine."),
    ("cpu-instruction-unsupported", 3, "Error: AVX is not support on your machine, but you have installed paddlepaddle "
                                       "without no_avx core, you should reinstall paddlepaddle"),
    ("glibc-too-old", 0, "/usr/local/bin/ollama: /lib64/libm.so.6: version `GLIBC_2.27' not found (required by "
                         "/usr/local/bin/ollama)"),
    ("glibc-too-old", 0, "ImportError: /opt/conda/envs/x/bin/../lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found "
                         "(required by /opt/conda/envs/x/lib/python3.11/site-packages/cpuinfer_ext.so)"),
    ("glibc-too-old", 0, "Can not import paddle core libstdc++.so.6: version `GLIBCXX_3.4.30' not found"),
    # (beside vLLM's harmless import warning on the same line: the harmless entry does not absorb the error)
    ("glibc-too-old", 0, "WARNING 05-01 [_custom_ops.py:20] Failed to import from vllm._C with ImportError(\"/lib64/"
                         "libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by /x/vllm/_C.abi3.so)\")"),
    ("glibc-too-old", 0, "node: /lib64/libstdc++.so.6: version `CXXABI_1.3.9' not found (required by node)"),
    ("glibc-too-old", 1, "/usr/bin/ld: libonnxruntime.a(x.o): undefined reference to `__isoc23_strtol@GLIBC_2.38'"),
    ("glibc-too-old", 1, "undefined reference to `memcpy@GLIBC_2.34'"),
    ("hub-gated-repo", 6, "httpx.HTTPStatusError: Client error '401 Unauthorized' for url 'https://huggingface.co/"
                          "black-forest-labs/FLUX.1-dev/resolve/3de623fc3c33e44ffbe2bad470d0f45bccf2eb21/vae/config.json'"),
    ("git-lfs-download-failed", 8, "_pickle.UnpicklingError: invalid load key, 'v'."),
    ("nvidia-container-toolkit-missing", 11, "slurmstepd: error: pyxis:     [ERROR] Command not found: "
                                             "nvidia-container-cli, see https://github.com/NVIDIA/libnvidia-container"),
    ("shm-too-small", 1, "RuntimeError: DataLoader worker (pid 3002) is killed by signal: Bus error. It is possible that "
                         "dataloader's workers are out of shared memory. Please try to raise your shared memory limit."),
    ("compile-oom-killed", 7, "Out of memory: Killed process 2442957 (clang-22) total-vm:2384408kB, anon-rss:1707148kB, "
                              "file-rss:1104kB, shmem-rss:0kB, UID:1001 pgtables:4616kB oom_score_adj:0"),
    ("rate-limited", 0, "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for URL: "
                        "https://huggingface.co/meta-llama/Meta-Llama-3-8B/resolve/main/config.json"),
    ("rate-limited", 0, "Error retrieving 'completions': 429 Too Many Requests at /x/perl5/OpenAI/API.pm line 48."),
    ("rate-limited", 1, "openai.RateLimitError: Error code: 429 - {'errors': {'message': 'We have to rate limit you for "
                        "model Qwen/Qwen3-235B-A22B-Instruct-2507.'}}"),
    ("rate-limited", 1, "RateLimitError: 429 Request too large for gpt-4o in organization org-x"),
    ("rate-limited", 2, "Rate limit reached for gpt-4o-mini in organization <org> on requests per day (RPD): Limit 200"),
    ("rate-limited", 2, "You exceeded your current quota, please check your plan and billing details."),
    ("flash-attn-undefined-symbol", 3, "ImportError: /x/site-packages/intel_extension_for_pytorch/lib/"
                                       "libintel-ext-pt-gpu.so: **undefined symbol: _ZNK5torch8autograd4Node4nameB5cxx11Ev**"),
    # after batches 233-236
    ("path-not-writable", 0, "[Errno 13] Permission denied: 'output-md-root'"),
    ("path-not-writable", 0, "Permission denied: '/.paddleocr'"),
    ("glibc-too-old", 2, "Installer requires GLIBC >=2.28, but system has 2.17."),
    ("host-oom-killed", 30, "Your session crashed after using all available RAM\nConnected to "
                            "https://colab.research.google.com/tun/m/m-s-1 external_polymer_binary.js:5359:1066"),
    ("cuda-toolkit-torch-mismatch", 0, "always show install error CUDA version (11.7) mismatches"),
    ("nccl-error", 9, "[rank3]:[E227 16:30:43.526301625 ProcessGroupNCCL.cpp:1834] [PG ID 2 PG GUID 3 Rank 3] Timeout at "
                      "NCCL work: 32, last enqueued NCCL work: 32, last completed NCCL work: 31."),
    ("nccl-error", 9, "misc/shmutils.cc:88 failed to extend /dev/shm/nccl-WU88OE to 9637892 bytes"),
    ("nccl-error", 9, "Error while creating shared memory segment /dev/shm/nccl-CsYXMW (size 9637888)"),
]

# lines each entry leaves to others (or to nobody)
QUIET = [
    # a bind's EACCES names no path (port-access-forbidden's), nor does SSH's publickey refusal
    ("path-not-writable", "PermissionError: [Errno 13] Permission denied"),
    ("path-not-writable", "ERROR:    [Errno 13] error while attempting to bind on address ('0.0.0.0', 80): permission "
                          "denied"),
    ("path-not-writable", "git@github.com: Permission denied (publickey)."),
    # a device node is GPU access, a library the loader cannot open is the loader's line
    ("path-not-writable", "PermissionError: [Errno 13] Permission denied: '/dev/nvidia0'"),
    ("path-not-writable", "Error: open /dev/nvidiactl: permission denied"),
    ("path-not-writable", "OSError: libcudart.so.12: cannot open shared object file: Permission denied"),
    # huggingface_hub's warnings that say it goes on
    ("path-not-writable", "Could not cache non-existence of file. Will ignore error and continue. Error: [Errno 13] "
                          "Permission denied: '/cache/huggingface/hub/models--x/.no_exist/abc/processor_config.json'"),
    ("path-not-writable", "Could not set the permissions on the file '/data/.cache/huggingface/download/x.incomplete'. "
                          "Error: [Errno 30] Read-only file system: '/tmp_x'.\nContinuing without setting permissions."),
    # the routine first wait of a download that goes on, and a wait a progress bar ends
    ("download-lock-stale", "Fetching 7 files:   0%|   | 0/7 [00:00<?, ?it/s]Still waiting to acquire lock on "
                            "clip_download/.cache/huggingface/.gitignore.lock (elapsed: 0.1 seconds)"),
    ("download-lock-stale", "still waiting to acquire lock on /h/.cache/huggingface/hub/.locks/m/a.lock\n"
                            "Fetching 4 files: 100%|██████████| 4/4 [00:31<00:00,  7.80s/it]"),
    ("download-lock-stale", "2024-07-09 16:49:48,434 - filelock - DEBUG - Lock 1376 not acquired on /h/.locks/m/a.lock, "
                            "waiting 0.05 seconds ...\n2024-07-09 16:49:48,440 - filelock - DEBUG - Lock 1376 not "
                            "acquired on /h/.locks/m/a.lock, waiting 0.05 seconds ...\n2024-07-09 16:49:48,490 - filelock "
                            "- DEBUG - Lock 1376 acquired on /h/.locks/m/a.lock"),
    ("download-lock-stale", "still waiting to acquire lock on /h/.cache/huggingface/hub/.locks/m/a.lock\n" * 4 +
                            "Fetching 4 files: 100%|██████████| 4/4 [00:51<00:00, 12.80s/it]"),
    # the base x86-64 symbol version (conda's compiler_compat ld) and GLIBC_PRIVATE are other failures; an ABI flag
    ("glibc-too-old", "/envs/py310/compiler_compat/ld: libcudart.so.11.0: undefined reference to `dlsym@GLIBC_2.2.5'"),
    ("glibc-too-old", "ImportError: /x/paddle/fluid/core_avx.so: undefined symbol: _dl_sym, version GLIBC_PRIVATE"),
    ("glibc-too-old", "./app: /lib64/libc.so.6: version `GLIBC_2.2.5' not found (required by ./app)"),
    # a 401 from a local server through httpx is the client's key, not the hub's gate; a pickle of another file
    ("hub-gated-repo", "httpx.HTTPStatusError: Client error '401 Unauthorized' for url "
                       "'http://localhost:8000/v1/chat/completions'"),
    ("hub-gated-repo", "httpx.HTTPStatusError: Client error '401 Unauthorized' for url "
                       "'https://models.example.com/org/repo/resolve/main/config.json'"),
    ("git-lfs-download-failed", "_pickle.UnpicklingError: invalid load key, '<'."),
    # a 429 the client retries at once, a sentence naming the status, the hub's hint about rate limits
    ("rate-limited", "openai.RateLimitError: Error code: 429 - {'error': {'message': 'Rate limit reached'}}\n"
                     "INFO:openai._base_client:Retrying request to /chat/completions in 0.8 seconds"),
    ("rate-limited", "INFO:     127.0.0.1:40000 - \"POST /v1/chat/completions HTTP/1.1\" 429 Too Many Requests"),
    ("rate-limited", "INFO:httpx:HTTP Request: POST https://api.openai.com/v1/chat/completions \"HTTP/1.1 429 Too Many "
                     "Requests\""),
    # a library's fallback and a warning that goes on; a /proc or /sys file; transformers' cache warning at import
    ("path-not-writable", "2024-01-01 WARNING matplotlib: mkdir -p failed for path /home/u/.config/matplotlib: [Errno 13] "
                          "Permission denied: '/home/u/.config/matplotlib'"),
    ("path-not-writable", "mkdir -p failed for path /.config/matplotlib: [Errno 13] Permission denied: '/.config'"),
    ("path-not-writable", "UserWarning: [Errno 13] Permission denied: '/home/x/.triton/cache' ; continuing without cache"),
    ("path-not-writable", "WARNING: [Errno 30] Read-only file system: '/models/.locks'"),
    ("path-not-writable", "PermissionError: [Errno 13] Permission denied: '/proc/driver/nvidia/params'"),
    ("path-not-writable", "There was a problem when trying to write in your cache folder (/.cache/huggingface/hub). You "
                          "should set the environment variable TRANSFORMERS_CACHE to a writable directory."),
    # the watchdog's lines that follow a CUDA error as well as a timeout
    ("nccl-error", "[rank0]:[E ProcessGroupNCCL.cpp:1] [PG ID 0 Rank 0] Exception (either an error or timeout) detected by "
                   "watchdog at work: 5, last enqueued NCCL work: 5, last completed NCCL work: 4."),
    ("nccl-error", "[rank0]:[E1023 10:00:00.000 ProcessGroupNCCL.cpp:630] [Rank 0] Some NCCL operations have failed or "
                   "timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
                   "corrupted/incomplete data."),
    # SIGILL as a name in code, and a versioned compiler as the OOM killer's own task
    ("cpu-instruction-unsupported", "87 |     sigaction(SIGILL, &ill_act, &ill_oact);"),
    ("cpu-instruction-unsupported", "#define SIGILL 4"),
    ("host-oom-killed", "clang-22 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, "
                        "oom_score_adj=0"),
    # a rank waiting under a minute for another's download
    ("download-lock-stale", "Still waiting to acquire lock on /x/hub/.locks/m/a.lock (elapsed: 50.0 seconds)"),
    # a bind's address tuple after the errno is no path; torch's minor-version warning is no refusal; an explainer's scene
    ("path-not-writable", "socket.error: [Errno 13] Permission denied: ('0.0.0.0', 80)"),
    ("cuda-toolkit-torch-mismatch", "UserWarning: The detected CUDA version (12.1) has a minor version mismatch with the "
                                    "version that was used to compile PyTorch (12.4). Most likely this shouldn't be a "
                                    "problem."),
    ("host-oom-killed", "Your container crashes. docker ps shows it exited with code 137."),
    # the GPU's illegal instruction, an Xid, and Go's bare child status under go test
    ("cpu-instruction-unsupported", "RuntimeError: CUDA error: an illegal instruction was encountered"),
    ("cpu-instruction-unsupported", "NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp "
                                    "Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter"),
    ("cpu-instruction-unsupported", "        signal: illegal instruction"),
    ("cpu-instruction-unsupported", "exit code 1320"),
    ("cpu-instruction-unsupported", "signal.signal(signal.SIGILL, handler)"),
]

NEAR = [
    ("path-not-writable", "zeyad-mansour/lunar/issues/59"),
    ("path-not-writable", "huggingface/huggingface_hub/pull/4274"),
    ("download-lock-stale", "noonghunna/club-3090/pull/728"),
    ("download-lock-stale", "NERSC/interactEM/pull/532"),
    ("glibc-too-old", "pytorch/pytorch/issues/71682"),
    ("glibc-too-old", "conda/conda-docs/issues/757"),
    ("host-oom-killed", "googlecolab/colabtools/issues/1464"),
    ("glibc-too-old", "taraksh01/wisper/pull/11"),
    ("glibc-too-old", "OpenCSGs/csglite/pull/150"),
    ("glibc-too-old", "corsix/polyfill-glibc/issues/21"),
    ("cpu-instruction-unsupported", "tensorflow/tensorflow/issues/39926"),
    ("cpu-instruction-unsupported", "tensorflow/models/issues/1136"),
    ("cpu-instruction-unsupported", "NVIDIA/TensorRT-LLM/issues/11313"),
    ("cpu-instruction-unsupported", "nexu-io/open-design/pull/5733"),
]

(test_each_new_case_is_named_through_its_new_pattern, test_each_wording_is_named_through_its_pattern,
 test_lines_left_to_others_stay_out_of_the_entry, test_the_near_misses_stay_quiet) = \
    corpus.family_tests(CASES, WORDINGS, QUIET, NEAR)
