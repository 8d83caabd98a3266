"""The scanner on the shapes real logs take: prefixes, colours, CR rewrites, bad bytes, huge lines, gz."""

import gzip
import random

import pytest

from ocrdeploy.diagnose import scanner
from ocrdeploy.diagnose.engine import wire_rules
from ocrdeploy.diagnose.table import load_table

WIRE = wire_rules(load_table())
ENGINES = ["grep", "python"]

OOM = "c++: fatal error: Killed signal terminated program cc1plus"
BUSY = ("ValueError: Free memory on device cuda:0 (1.54/22.05 GiB) on startup is less than desired GPU memory "
        "utilization (0.9, 19.84 GiB).")


def scan_text(tmp_path, data, engine, name="x.log", **kw):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return scanner.scan(str(p), WIRE, engine=engine, **kw)


def assert_only_unrecognised(tmp_path, engine, log, cls):
    """The one-line log names no entry and leaves exactly an unrecognised line of class `cls` (None: a clean report)."""
    rep = scan_text(tmp_path, log + "\n", engine)
    assert not rep["findings"]
    assert [u.get("class") for u in rep["unrecognised"]] == ([cls] if cls else [])


def ids(rep):
    return [f["id"] for f in rep["findings"]]


@pytest.mark.parametrize("engine", ENGINES)
def test_prefixes_ansi_and_repeats(tmp_path, engine):
    lines = ["INFO starting"] * 87 + [
        f"\x1b[1;36m(EngineCore_DP0 pid=7)\x1b[0;0m \x1b[31mERROR\x1b[0m 10-19 [core.py:935] {BUSY}",
        f"[rank0]: {BUSY}",
        f"#12 84.1 {OOM}",
    ] + [f"2026-10-19T12:00:{i:02d}Z {OOM}" for i in range(310)]
    rep = scan_text(tmp_path, "\n".join(lines) + "\n", engine)
    by = {f["id"]: f for f in rep["findings"]}
    assert by["gpu-busy-memory"]["count"] == 2 and by["gpu-busy-memory"]["first_line"] == 88
    assert by["compile-oom-killed"]["count"] == 311 and by["compile-oom-killed"]["first_line"] == 90
    # ordered by stage (compile before start), then first occurrence
    assert ids(rep) == ["compile-oom-killed", "gpu-busy-memory"]
    ctx = dict((n, t) for n, t in by["gpu-busy-memory"]["context"])
    assert ctx[87] == "INFO starting" and "\x1b" not in ctx[88]


@pytest.mark.parametrize("engine", ENGINES)
def test_cr_rewritten_progress_and_bad_bytes(tmp_path, engine):
    data = (b"Capturing CUDA graphs:  10%|#  | 7/67\rCapturing CUDA graphs:  37%|###  | 25/67 received SIGTERM\n"
            b"\xff\xfe garbage \xc3\x28 bytes\n"
            b"ptxas fatal   : Unsupported .version 9.4; current version is '9.0' \xe2\x82\n")
    rep = scan_text(tmp_path, data, engine)
    assert ids(rep) == ["cudagraph-capture-failed", "ptxas-unsupported-version"]


@pytest.mark.parametrize("engine", ENGINES)
def test_very_long_line_does_not_break_the_scan(tmp_path, engine):
    huge = "x" * (3 * 1024 * 1024)
    data = f"{huge}\n{OOM}\n{huge} Killed signal terminated program cicc\nINFO done\n"
    rep = scan_text(tmp_path, data, engine)
    f = rep["findings"][0]
    assert f["id"] == "compile-oom-killed" and f["first_line"] == 2 and f["count"] == 1
    assert all(len(t) <= scanner.MAX_LINE for _, t in f["context"])


@pytest.mark.parametrize("engine", ENGINES)
def test_gzip_log(tmp_path, engine):
    p = tmp_path / "build.log.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("line\n" * 1000 + "/usr/bin/ld: cannot find -lcudart\n")
    rep = scanner.scan(str(p), WIRE, engine=engine)
    assert [(f["id"], f["first_line"]) for f in rep["findings"]] == [("ld-cudart-missing", 1001)]


@pytest.mark.parametrize("engine", ENGINES)
def test_unrecognised_errors_and_what_explains_them(tmp_path, engine):
    text = "\n".join([
        "INFO 1",
        "Traceback (most recent call last):",
        '  File "a.py", line 3, in <module>',
        "    main()",
        "KeyError: 'shard_7'",                       # unexplained traceback
        "INFO 2",
        "ERROR 10-19 [api.py:1] request 12 failed",  # an ERROR line nobody knows
        "INFO 3", "INFO 4", "INFO 5", "INFO 6",
        "Traceback (most recent call last):",
        '  File "b.py", line 9, in load',
        f"{BUSY}",                                   # explained: the traceback ends in a known error
        "INFO 7", "INFO 8", "INFO 9", "INFO 10",
        "ERROR 10-19 [api.py:1] request 97 failed",  # same as line 7 but for the numbers
    ]) + "\n"
    rep = scan_text(tmp_path, text, engine)
    assert ids(rep) == ["gpu-busy-memory"]
    un = rep["unrecognised"]
    assert [(u["first_line"], u["count"]) for u in un] == [(5, 1), (7, 2)]
    assert un[0]["text"] == "KeyError: 'shard_7'" and un[0]["block"] == [2, 5]


@pytest.mark.parametrize("engine", ENGINES)
def test_harmless_kept_apart_and_level_sensitive(tmp_path, engine):
    text = "\n".join([
        "WARNING 10-19 [deep_gemm.py:64] Failed to import deep_gemm: undefined symbol: _ZSt8to_charsPcS_DF128_",
        "INFO 10-19 [gpu_model_runner.py:3400] If out-of-memory error occurs during cudagraph capture, consider "
        "decreasing `gpu_memory_utilization`",
        "WARNING 10-19 [__init__.py:31] Failed to import triton_kernels: No module named 'triton_kernels'",
    ]) + "\n"
    rep = scan_text(tmp_path, text, engine)
    assert rep["findings"] == [] and rep["unrecognised"] == []
    assert {f["id"] for f in rep["harmless"]} == {"deep-gemm-to-chars", "cudagraph-oom-advice",
                                                  "optional-import-warning"}
    # the same import failure at ERROR level is not harmless
    rep = scan_text(tmp_path, "ERROR 10-19 [x.py:1] Failed to import triton_kernels: No module named 'x'\n", engine)
    assert rep["harmless"] == [] and rep["unrecognised"]


def test_engines_agree_on_random_logs(tmp_path):
    rnd = random.Random(3)
    pool = ["INFO ok", OOM, BUSY, "Traceback (most recent call last):", "  File 'x'", "OSError: disk",
            "WARNING Failed to import foo", "plain text", "", "\x1b[31mERROR\x1b[0m bad thing happened"]
    text = "\n".join(rnd.choice(pool) for _ in range(5000)) + "\n"
    reps = [scan_text(tmp_path, text, engine, name=f"{engine}.log") for engine in ENGINES]
    for rep in reps:
        rep.pop("engine")
        rep.pop("file")
    assert reps[0] == reps[1]


def test_parallel_grep_split_finds_the_same(tmp_path, monkeypatch):
    text = ("INFO filler line\n" * 20000 + OOM + "\n" + BUSY + "\n") * 3
    one = scan_text(tmp_path, text, "grep", name="a.log")
    monkeypatch.setattr(scanner, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(scanner, "_grep_jobs", lambda path: 3)
    three = scan_text(tmp_path, text, "grep", name="a.log")
    assert one["findings"] == three["findings"] and one["candidates"] == three["candidates"]


def test_trie_regex_matches_exactly_the_literals():
    import re

    words = [b"error", b"err", b"nccl", b"[errno 28]", b"a.b"]
    rx = re.compile(scanner.trie_regex(words))
    for w in words:
        assert rx.search(b"xx " + w + b" yy")
    assert not rx.search(b"er nccX aXb [erxno 2")
    text = re.compile(scanner.trie_regex([w.decode() for w in words]))
    assert text.search("an err: x").group() == "err"      # the shortest literal that starts there
    assert not text.search("er nccX aXb [erxno 2")
    assert not re.search(scanner.trie_regex([]), "anything") and not re.search(scanner.trie_regex([]), "")


# Issue 24: the wrappers users run things in, each around a line whose pattern is anchored at its start
# (the uv timeout's "Caused by:" chain link, a bare "Killed").
WRAPPED = [
    "#12 3.456 {}",                                          # BuildKit --progress=plain
    "#12 {}",
    "138.5 {}",                                              # BuildKit's TTY view of a failed step
    "vllm-1  | {}",                                          # docker compose
    "vllm_server  | {}",
    "Jun 30 11:07:05 gpu-0 build-vllm[4242]: {}",             # journald / syslog
    "[ 8957.099615] {}",                                      # dmesg
    "[Sun Mar 30 08:24:00 2025] {}",                         # dmesg -T
    "2024-04-29T14:55:41,679700+02:00 {}",                    # dmesg --time-format iso
    "2024-05-01T12:00:00.123456789Z stderr F {}",            # k8s CRI log
    "[pod/vllm-0/server] {}",                                # kubectl logs --prefix
    "0: {}",                                                 # srun -l
    "vllm-1  | 2024-05-01T12:00:00Z {}",                     # layers of them
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("wrapper", WRAPPED)
def test_wrapper_prefixes_are_stripped_once_in_the_scanner(tmp_path, engine, wrapper):
    lines = [wrapper.format("  Caused by: operation timed out"), wrapper.format("Killed")]
    rep = scan_text(tmp_path, "\n".join(lines) + "\n", engine)
    by = {f["id"]: f for f in rep["findings"]}
    # (a bare Killed with no build around it is the host's memory, a container build's step a compile)
    killed = "compile-oom-killed" if wrapper.startswith(("#12 ", "138.5 ")) or "build-" in wrapper else "host-oom-killed"
    assert set(by) == {"pip-timeout", killed}, (wrapper, rep)
    assert by["pip-timeout"]["text"] == lines[0]       # the report shows the line as written


def test_unwrap_leaves_a_tools_own_line_alone():
    for line in ("INFO 10-19 12:00:00 [api_server.py:1] vLLM API server version 0.11.0", "Killed",
                 "ERROR: Could not find a version", "(most recent call last) x", "(base) $ pip install x",
                 "| GPU  Name  Persistence-M | Bus-Id  Disp.A |", "3.10.12 is not supported"):
        assert scanner.unwrap(line) == line
    assert scanner.unwrap("#9 7.312 #9 7.312 Killed") == "Killed"


def test_a_json_events_error_field_joins_its_message():
    """zap and logrus keep the cause beside the message; a body's {"error": {...}} object and a cause the message
    already holds are left as they are, and an undecodable cause leaves the message alone."""
    event = '{"level":"fatal","msg":"discovery failed","error":"listen tcp :2380: bind: address already in use"}'
    assert scanner.unwrap(event) == "discovery failed: listen tcp :2380: bind: address already in use"
    assert scanner.unwrap('{"level":"error","msg":"grpc: bind failed","err":"bind failed"}') == "grpc: bind failed"
    assert scanner.unwrap('{"level":"info","msg":"started","error":{"code":1}}') == "started"
    assert scanner.unwrap('{"level":"error","msg":"start failed","error":"bad \\u12 escape"}') == "start failed"
    assert scanner.unwrap('{"log":"Killed\\n","stream":"stderr"}') == "Killed"


def test_kernel_segfault_and_zsh_kill_lines_are_fatal():
    """The kernel's line for a crashed process (its format: arch/x86/mm/fault.c show_signal_msg, "%s[%d]: segfault at
    %lx ip %px sp %px error %lx in %s") and zsh's job-less kill report are fatal ends; prose about a segfault is not."""
    kernel = ("[Mon Jun 23 19:39:31 2025] python3.10[3078129]: segfault at 60 ip 00007f24b8cf2616 sp 00007ffc0f212680 "
              "error 4 in libc10_cuda.so[7f24b8cc8000+5c000] likely on CPU 15 (core 8, socket 1)")
    assert scanner.fatal_class(kernel) == "fatal-signal"
    assert scanner.fatal_class("Processing:  27%|##| 359/1306 [02:04<05:59]zsh: killed     python3 run.py") == "fatal-signal"
    assert scanner.fatal_class("the segfault at startup is gone since 2.1") is None
    # the addresses are hex: a fault address with letters in it (Ubuntu 9.10's syslog as pasted on a VMware forum,
    # "my ubuntu always shuts it down by itself", 2010-01-20)
    syslog = ("Jan 19 18:03:51 jfernandez-ubuntu kernel: [27366.708415] gnome-panel[1883]: segfault at 7f8c0fded360 "
              "ip 00007f8c0e394ef0 sp 00007fffd0c89830 error 4 in libc-2.10.1.so[7f8c0e31f000+166000]")
    assert scanner.fatal_class(syslog) == "fatal-signal"
    assert scanner.fatal_class("zsh: command not found: vllm") is None


def test_the_kernels_kill_line_without_its_out_of_memory_head_is_a_memory_kill():
    """Older and embedded kernels print the kill line alone (systemd#6966's /var/log/messages)."""
    line = "Aug 18 03:19:11 169 kernel: Killed process 7748 (python) total-vm:12907828kB, anon-rss:11500204kB, file-rss:0kB"
    assert scanner.fatal_class(line) == "kernel-gpu"
    assert scanner.fatal_class("the test killed process 12 (a fixture) on purpose") is None


@pytest.mark.parametrize("line,level", [
    # glog/absl one-letter levels (TensorFlow's own timestamp form, Paddle's glog form)
    ("2021-02-04 08:52:12.943009: W tensorflow/stream_executor/gpu/asm_compiler.cc:235] Your CUDA software stack is old.",
     "WARNING"),
    ("W0121 11:28:26.123500   524 dynamic_loader.cc:287] The third-party dynamic library (libcudnn.so) that Paddle", "WARNING"),
    ("2019-10-15 15:23:07.768703: I tensorflow/stream_executor/platform/default/dso_loader.cc:44] Successfully opened",
     "INFO"),
    ("E0101 00:00:00.000000  1 a.cc:1] x", "ERROR"),
    # a logger relaying standard streams at a fixed level (FastChat's model worker, FastChat#310): not the text's level
    ("2023-04-08 19:44:25 | ERROR | stderr |   warn(", None),
    ("2023-04-08 19:44:25 | INFO | model_worker | Loading the model 7B on worker ecacaf ...", "INFO"),
    ("INFO 08-03 19:16:46 [cli_args.py:309] non-default args", "INFO"),
    ("Wrong 1234 thing", None),
    # logrus (Docker's CLI, Go tools): four letters and the seconds since start (OpenBMB/XAgent#273's docker CLI line)
    ("ERRO[0000] error waiting for container:  ", "ERROR"),
    ("FATA[0001] failed to start daemon", "CRITICAL"),
    ("WARN[0000] The \"HOME\" variable is not set.", "WARNING"),
    ("ERRORS: 3", None),
    ("ERRO something without a counter", None),
])
def test_line_levels_of_other_loggers(line, level):
    assert scanner.line_level(line) == level


def test_an_error_relayed_through_stdout_at_info_is_still_an_error():
    """LLaVA's/FastChat's worker logs whatever the process prints at INFO ("| INFO | stdout | ..."): a CUDA error
    in it is not quiet.  (The relay's format as FastChat#310 shows it, around FastChat#379's error line.)"""
    line = "2023-04-12 10:00:00 | INFO | stdout | RuntimeError: CUDA error: unknown error"
    assert scanner.generic_class(line) == "exception"
    assert scanner.generic_class("2023-04-12 10:00:00 | INFO | model_worker | RuntimeError: CUDA error: unknown error") is None


def test_json_log_events_are_unwrapped_to_their_message():
    """Issue 24 round 5: docker's json-file driver ({"log":"...\\n","stream":...}, its documented record) and structured
    loggers ({"event": ...}, {"msg": ...}) carry the tool's line as a JSON string: the patterns see it decoded."""
    docker = '{"log":"KeyError: \'qwen3_vl\'\\n","stream":"stderr","time":"2019-01-01T11:11:11.111111111Z"}'
    assert scanner.unwrap(docker) == "KeyError: 'qwen3_vl'"
    event = ('model-download  | {"event": "File \\"/opt/.venv/lib/python3.12/site-packages/transformers/models/auto/'
             'configuration_auto.py\\", line 914, in __getitem__", "timestamp": "2026-04-29T04:20:41.228656Z"}')
    assert scanner.unwrap(event).startswith('File "/opt/.venv/lib/python3.12/site-packages/transformers/models/auto/')
    # the message field need not come first, and a record cut short still yields it
    assert scanner.unwrap('{"level": "error", "msg": "CUDA out of memory", "ts": 1') == "CUDA out of memory"
    assert scanner.unwrap('{"message": "Killed", "service_name": "model_d') == "Killed"
    # no message field, a broken escape, or no JSON object at the line's start: the line as it was
    for line in ('{"level": "error", "code": 2}', '{"msg": "bad \\x escape"}', 'x {"msg": "Killed"}'):
        assert scanner.unwrap(line) == line


@pytest.mark.parametrize("engine", ENGINES)
def test_a_json_logged_traceback_is_matched_through_its_events(tmp_path, engine):
    """The KeyError of a model type counts after transformers' configuration_auto frame, and that frame is found in the
    events before it; a KeyError from any other lookup is not an architecture, unless its key is the model type of a
    family transformers gained over its releases (qwen3_vl): that name carries its own context (a title, a cut log)."""
    frame = ('{"event": "File \\"/opt/.venv/lib/python3.12/site-packages/transformers/models/auto/configuration_auto.py'
             '\\", line 914, in __getitem__", "timestamp": "2026-04-29T04:20:41.228656Z"}')
    other = '{"event": "File \\"/usr/lib/python3.10/configparser.py\\", line 964, in __getitem__", "timestamp": "x"}'
    raise_ = '{"event": "raise KeyError(key)", "timestamp": "2026-04-29T04:20:41.228671Z"}'
    key = '{"event": "KeyError: \'cpm_dragonfly\'", "timestamp": "2026-04-29T04:20:41.228685Z"}'
    family = '{"event": "KeyError: \'qwen3_vl\'", "timestamp": "2026-04-29T04:20:41.228685Z"}'
    for last in (key, family):
        rep = scan_text(tmp_path, "\n".join([frame, raise_, last]) + "\n", engine)
        assert [f["id"] for f in rep["findings"]] == ["model-arch-unknown"], rep
    rep = scan_text(tmp_path, "\n".join([other, raise_, key]) + "\n", engine)
    assert "model-arch-unknown" not in [f["id"] for f in rep["findings"]], rep
    rep = scan_text(tmp_path, "\n".join([other, raise_, family]) + "\n", engine)
    assert [f["id"] for f in rep["findings"]] == ["model-arch-unknown"], rep


def test_a_gpu_off_the_bus_in_any_wording_is_a_fatal_end():
    assert scanner.fatal_class("[ 1843.308145] NVRM: GPU 0000:b3:00.0: GPU has fallen off of the bus.") == "kernel-gpu"
    assert scanner.fatal_class("NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus") == "kernel-gpu"


@pytest.mark.parametrize("line,cls", [
    # a launcher's report of a child: deepspeed's return code, torch elastic's exitcode, a signal as a negative code
    ("[2023-07-19 10:43:11,392] [ERROR] [launch.py:321:sigkill_handler] ['python'] exits with return code = -11", "exit-status"),
    ("E0323 21:57:08.583000 23 api.py:869] failed (exitcode: 1) local_rank: 0 (pid: 88) of binary: /opt/venv/bin/python3",
     "exit-status"),
    ("subprocess returncode=-6", "exit-status"),
    ("exits with return code = 0", None),
    ("HTTP return code 200", None),
])
def test_launchers_return_codes_are_exit_statuses(line, cls):
    assert scanner.fatal_class(line) == cls


def test_docker_daemon_errors_and_errno_lines_are_failure_classes():
    """docker run/compose print the daemon's refusal with no "error:" of their own; an errno printed alone is a failed
    system call: both are the safety net's, and quiet levels still silence them."""
    assert scanner.generic_class("docker: Error response from daemon: manifest unknown.") == "daemon-error"
    assert scanner.generic_class("[Errno 49] Can't assign requested address") == "os-error"
    assert scanner.generic_class("[WinError 10060] A connection attempt failed") == "os-error"
    assert scanner.generic_class("WARNING 12-01 [x.py:1] fd limit errors like `OSError: [Errno 24] Too many open files`") is None
    assert scanner.generic_class("see [Errno] in the docs") is None


@pytest.mark.parametrize("line,cls", [
    # systemd's report of a unit (journald prefix stripped by unwrap in the scan; here the bare text)
    ("loraserver.service: Main process exited, code=exited, status=1/FAILURE", "exit-status"),
    ("overc-conftools.service: Control process exited, code=exited status=1", "exit-status"),
    ("Main PID: 2079978 (code=exited, status=2)", "exit-status"),
    ("x.service: Main process exited, code=killed, status=9/KILL", "exit-status"),
    ("systemd-netlogd.service: Failed with result 'exit-code'.", "exit-status"),
    ("Process: 529 ExecStart=/usr/lib/lxc/lxc-net start (code=exited, status=0/SUCCESS)", None),
    ("x.service: Failed with result 'success'.", None),
])
def test_systemd_unit_reports_are_exit_statuses(line, cls):
    assert scanner.fatal_class(line) == cls


@pytest.mark.parametrize("line,cls", [
    ("Failed to initialize NVML: Unknown Error", "nvml-error"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", "nvml-error"),
    ('NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":838, please report a bug to PyTorch.',
     "assert-failed"),
    ("python3: prog.c:12: main: Assertion `n > 0' failed.", "assert-failed"),
    ("THCudaCheck FAIL file=/opt/conda/THC/generic/THCStorage.cu line=66 error=46 : all CUDA-capable devices are busy or "
     "unavailable", "cuda-error"),
    ("RuntimeError: an illegal memory access was encountered", "exception"),
    ("the kernel faulted: an illegal memory access was encountered", "cuda-error"),
    # (stop 60) cffi's dlopen by a library's name (WeasyPrint without GTK on Windows, docTR#815) and Apple's frameworks'
    # assertion before abort() (Metal Performance Shaders Graph under torch's mps device, surya#216)
    ("cannot load library 'pango-1.0': error 0x7e. Additionally, ctypes.util.find_library() did not manage to locate a "
     "library called 'pango-1.0'", "library-missing"),
    ("/AppleInternal/Library/BuildRoots/d98/Library/Caches/com.apple.xbs/Sources/MetalPerformanceShadersGraph/mpsgraph/"
     "MPSGraph.mm:678: failed assertion `Placeholder shape mismatches (expected 1 vs got tensorData with 896) at dimIdx = "
     "0'", "assert-failed"),
    # quiet levels stay quiet; words that only look alike are not failures
    ("INFO 12-01 [gpu.py:3] checking whether Failed to initialize NVML: Unknown Error is shown", None),
    ("all assertions passed", None),
    ("Foo.mm:12: failed assertion count 0", None),
    # (stop 60) Rust's io::Error with no path before it (pot-app's plugin runner): a system call's failure by its number
    ("Permission denied (os error 13)", "os-error"),
    ("the os error codes are listed below", None),
    ("cannot load library 'pango-1.0' later", None),
])
def test_gpu_runtime_failures_without_an_error_word_are_failure_classes(line, cls):
    assert scanner.generic_class(line) == cls


# round 15: the formats these tools print (filled in by hand, as test_source_derived does for entries): openai-python's
# APIStatusError text (f"Error code: {status_code} - {body}"), uv's miette report in its ASCII theme ("x" for "×"),
# the NVIDIA kernel module's probe messages (nv.c), a class from a package's errors module without the Error suffix
# (triton/runtime/errors.py OutOfResources), torch elastic's failure table ("exitcode  : %s (pid: %s)", spaced colon)
@pytest.mark.parametrize("line,cls", [
    ("Error code: 400 - {'object': 'error', 'message': 'max_tokens must be at least 1', 'type': 'BadRequestError'}",
     "http-error"),
    ("  x Failed to download `torch==2.5.1`", "uv-error"),
    ("[  188.120000] NVRM: No NVIDIA graphics adapter probed!", "nvml-error"),
    ("[    6.554916] NVRM: The NVIDIA probe routine failed for 1 device(s).", "nvml-error"),
    ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 81920, Hardware limit: 65536.",
     "exception"),
    # (not an error: a count, a word, a path)
    ("Error code: 0 errors found", None),
    ("box x Failed to", None),
    ("see the errors.md file", None),
])
def test_round15_safety_net_shapes_are_failure_classes(line, cls):
    assert scanner.generic_class(line) == cls


@pytest.mark.parametrize("line,cls", [
    ("  exitcode  : 1 (pid: 11377)", "exit-status"),
    ("  exitcode  : 0 (pid: 11377)", None),
    ("Server process terminated unexpectedly", "exit-status"),
    ("the connection was closed unexpectedly", None),
])
def test_round15_launcher_reports_are_exit_statuses(line, cls):
    assert scanner.fatal_class(line) == cls


@pytest.mark.parametrize("engine", ENGINES)
def test_a_glog_error_line_without_an_error_word_is_not_clean(tmp_path, engine):
    """glog's E/F level letter is the only sign of trouble on Paddle's allocator line: the prefilter has the letter with
    every month and day as literals, so the line reaches line_level() and is reported (exit 3), an I line is not."""
    log = ("I1201 09:12:40.000001  1234 init.cc:10] starting\n"
           "E1201 09:12:44.123456  1234 allocator.cc:88] Allocate too much memory for the GPU memory pool, assigned 8000 MB\n")
    rep = scan_text(tmp_path, log, engine)
    assert [g["class"] for g in rep["unrecognised"]] == ["error-level"]
    assert "Allocate too much memory" in rep["unrecognised"][0]["text"]
    assert scan_text(tmp_path, log.splitlines()[0] + "\n", engine)["unrecognised"] == []


@pytest.mark.parametrize("engine", ENGINES)
def test_the_harmless_thc_invalid_argument_line_is_not_a_failure_but_other_thc_checks_are(tmp_path, engine):
    ok = "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=405 error=11 : invalid argument\n"
    rep = scan_text(tmp_path, ok, engine)
    assert rep["unrecognised"] == [] and [h["id"] for h in rep["harmless"]] == ["thc-general-invalid-argument"]
    bad = "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=87 error=30 : unknown error\n"
    assert [g["class"] for g in scan_text(tmp_path, bad, engine)["unrecognised"]] == ["cuda-error"]


# (a sentence about an error, the same words as a tool's line, the entry they name)
PROSE_PAIRS = [
    ("The bind fails with [Errno 98] Address already in use, which occurs when the old server still holds the port.",
     "OSError: [Errno 98] Address already in use", "address-in-use"),
    ("This PR contains the fix for `RuntimeError: CUDA out of memory` on long pages.",
     "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB", "cuda-oom"),
    ("If a pod gets killed, the status shows the Reason as `OOMKilled` and exit code 137.",
     "    Last State:     Terminated\n      Reason:       OOMKilled", "host-oom-killed"),
    ("Serving two models on one card, every batch after the first leads to a CUDA out of memory error",
     "torch.OutOfMemoryError: CUDA out of memory.", "cuda-oom"),
    # round 15: a fix's title quoting the error, an outcome predicted in steps to reproduce, what the logs show described
    ('Fix error "Address already in use".', "OSError: [Errno 98] Address already in use", "address-in-use"),
    ("Restart the server at once and you will get [Errno 98] Address already in use.",
     "OSError: [Errno 98] Address already in use", "address-in-use"),
    ("Exit code 137 as shown in the logs, while the pod status has `reason` as OOMKilled.",
     "    Last State:     Terminated\n      Reason:       OOMKilled", "host-oom-killed"),
    # (round 18) a change's bullet naming the error it removes, a general reading of a status, a relative clause
    ("- Prevents `OSError: [Errno 98] Address already in use` on a quick restart of the test server",
     "OSError: [Errno 98] Address already in use", "address-in-use"),
    ("Exit code 137 usually indicates an OOM kill.", "Exited with code 137", "host-oom-killed"),
    ("The server process failed with exit code 137, which is an Out of Memory error.", "Exited with code 137",
     "host-oom-killed"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("prose,log,entry", PROSE_PAIRS, ids=[e for _, _, e in PROSE_PAIRS])
def test_prose_about_an_error_is_not_a_finding_but_the_tools_line_is(tmp_path, engine, prose, log, entry):
    assert entry not in ids(scan_text(tmp_path, prose + "\n", engine))
    assert entry in ids(scan_text(tmp_path, log + "\n", engine, name="y.log"))
    # a line with a log level is a log line whatever its words (a server's own explanation of its failure)
    assert entry in ids(scan_text(tmp_path, "ERROR 12-02 10:00:00 " + prose + "\n", engine, name="z.log"))


# (text that QUOTES an error by what it is, the same error as a tool prints it, the entry) - round 14, held-out batch 17
QUOTE_PAIRS = [
    # a diff's added line: text with no space after "+", indented code
    ("+通常出现 `Cuda Error: CUDA driver version is insufficient for CUDA runtime version`, 原因在于驱动偏低",
     "Cuda Error: CUDA driver version is insufficient for CUDA runtime version", "driver-too-old"),
    ("+    err = f'Out of memory: Killed process {process.pid}'",
     "[ 518.050606] Out of memory: Killed process 4242 (python3) total-vm:81234567kB", "host-oom-killed"),
    # a diff's removed line followed by its replacement
    ("-The run stops with `RuntimeError: CUDA out of memory` on big pages.\n"
     "+The run stops with `RuntimeError: CUDA out of memory` on big pages; lower the batch.",
     "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB", "cuda-oom"),
    # an FAQ's title, an answer's heading
    ("FAQ problem ：The solution to “CUDA driver version is insufficient for CUDA runtime version”",
     "RuntimeError: CUDA driver version is insufficient for CUDA runtime version", "driver-too-old"),
    # a rule definition: the key on the line (YAML, a Go constant), or quoted items under it
    ('    pattern: "CUDA out of memory"', "torch.OutOfMemoryError: CUDA out of memory.", "cuda-oom"),
    ('\tCUDAOOMPattern  = ".*CUDA out of memory.*"', "torch.OutOfMemoryError: CUDA out of memory.", "cuda-oom"),
    ("- **Keyword / Pattern**:\n  - `RuntimeError: CUDA error: out of memory`",
     "RuntimeError: CUDA error: out of memory", "cuda-oom"),
    ('error_patterns:\n  - "GPU OOM"\n  - "CUDA error: out of memory"', "RuntimeError: CUDA error: out of memory", "cuda-oom"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("quote,log,entry", QUOTE_PAIRS, ids=[str(i) for i in range(len(QUOTE_PAIRS))])
def test_a_quote_of_an_error_is_not_a_finding_but_the_tools_line_is(tmp_path, engine, quote, log, entry):
    rep = scan_text(tmp_path, quote + "\n", engine)
    assert entry not in ids(rep)
    assert entry in ids(scan_text(tmp_path, log + "\n", engine, name="y.log"))


@pytest.mark.parametrize("engine", ENGINES)
def test_lines_that_only_look_like_a_diff_or_a_list_stay_findings(tmp_path, engine):
    # bash's login-shell prefix (no "+" replacement after it), set -x's trace, a person's list of the errors they got
    assert "nvcc-not-found" in ids(scan_text(tmp_path, "-bash: nvcc: command not found\n+ echo done\n", engine))
    assert "cuda-oom" in ids(scan_text(tmp_path, "+ python3 run.py\nRuntimeError: CUDA out of memory. Tried\n", engine,
                                       name="b.log"))
    assert "cuda-oom" in ids(scan_text(tmp_path, "I get these errors:\n  - `RuntimeError: CUDA error: out of memory`\n",
                                       engine, name="c.log"))
    # a diff's removed line whose next line is not its replacement is still read
    assert "cuda-oom" in ids(scan_text(tmp_path, "-RuntimeError: CUDA out of memory. Tried\n+something else\n", engine,
                                       name="d.log"))


# (round 22) documentation and change descriptions that show real output, by the line's or the page's shape, and the
# same error wrapped by a user in the same Markdown (a heading, a fence, a sentence around it), which stays a finding
DOC_PAIRS = [
    # a section heading presenting the error as an example
    ("Symptoms\nWARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection "
     "broken by 'NewConnectionError(...)': /simple/requests/",
     "### Error log\nWARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after "
     "connection broken by 'NewConnectionError(...)': /simple/requests/", "pip-retrying"),
    ("The Error\n\nYou load a 70B model and CUDA runs out of memory:\n\ntorch.cuda.OutOfMemoryError: CUDA out of memory.",
     "**Describe the bug**\nWhen I load the model I get:\n\ntorch.cuda.OutOfMemoryError: CUDA out of memory.", "cuda-oom"),
    # a page's title that fixes the error, over the sub-headings below it
    ("# Fix: Address Already in Use (Port 8000)\n\n## Error\n\n```\nERROR: [Errno 48] Address already in use\n```",
     "# vllm serve exits at start\n\n## Error\n\n```\nERROR: [Errno 48] Address already in use\n```", "address-in-use"),
    # a fence introduced as a change's before, or by a change's purpose
    ("Before:\n```\nOSError: [Errno 98] Address already in use\n```\nNow:\n```\nCannot start web server\n```",
     "I get this error:\n```\nOSError: [Errno 98] Address already in use\n```", "address-in-use"),
    ("Solves the\n```\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```\nerror.",
     "How do I fix this?\n```\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```", "cuda-oom"),
    ("If you see this error:\n```\nc++: fatal error: Killed signal terminated program cc1plus\n```",
     "When I build I see this error:\n```\nc++: fatal error: Killed signal terminated program cc1plus\n```",
     "compile-oom-killed"),
    # the error's fix on the line after it (a troubleshooting entry)
    ("Error message: `RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB`\n\nFix: lower the batch size.",
     "Error message: `RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB`\n\nAny idea?", "cuda-oom"),
    # a sentence wrapped into the error's line, a checked task's expected result
    ("Without this option, user may get error\n\"Address Already in Use\" when restarting server.",
     "I restarted the server and got\n\"OSError: [Errno 98] Address already in use\" when restarting server.",
     "address-in-use"),
    ("- [x] tests:\n  - In a 3.10 env I now get: `ERROR: Package 'x' requires a different Python: 3.10.16 not in '>=3.11'`",
     "- [x] I searched the issues\n\nERROR: Package 'x' requires a different Python: 3.10.16 not in '>=3.11'",
     "python-version-unsupported"),
    # line shapes: a fix's title, a topic list, a placeholder, a request, a past fix told
    ("Fix no space left on device error in CI during docker build",
     "No space left on device error in CI during docker build", "no-space-left"),
    ("- CUDA out of memory errors\n- ImportError", "- RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
     "cuda-oom"),
    ("nvcc fatal : Unsupported gpu architecture 'compute_XX'", "nvcc fatal : Unsupported gpu architecture 'compute_30'",
     "nvcc-unsupported-arch"),
    ("Support OOMKilled", "Last State: Terminated\n  Reason: OOMKilled", "host-oom-killed"),
]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_prose_like_title_that_is_the_error_stays_a_finding(tmp_path, engine):
    # titles often read as sentences; only the explaining shapes are prose ("when" alone is not)
    title = "CUDA out of memory when running two workers on one GPU"
    assert "cuda-oom" in ids(scan_text(tmp_path, title + "\n", engine))
    # an issue asking for a fix ("Fix: <error>") is a report of the error, not a fix's title
    title = 'Fix: 404 Not Found - Model "gemma-3-27b-it" not found on API'
    assert "served-model-name-mismatch" in ids(scan_text(tmp_path, title + "\n", engine, name="t2.log"))


# round 21: a server's own words for a model it could not load, the cause after a colon, no exception name
# (mlx_vlm.server's "Error loading model %s: %s"); the progress lines around a load stay quiet
@pytest.mark.parametrize("line,cls", [
    ("Error loading model mlx-community/DeepSeek-OCR-8bit: 'dict' object has no attribute 'model_type'", "load-failed"),
    ("Failed to load model llama3:8b: unable to open the weights file", "load-failed"),
    ("Could not load the model because: out of memory", "load-failed"),
    ("Error loading MLX model: {\"code\":\"MLX_PROCESS_ERROR\",\"details\":\"\"}", "load-failed"),
    ("Loading model: mlx-community/DeepSeek-OCR-8bit", None),
    ("INFO 02-26 09:54:02 model_runner.py:1115] Loading model weights took 5.2032 GB", None),
    ("failed to load model", None),
])
def test_round21_a_model_load_failure_in_a_servers_words_is_a_failure_class(line, cls):
    assert scanner.generic_class(line) == cls


# round 20: the linker's own "cannot find" (GNU ld, gold; Apple's "library not found for -l") without an "error:" of
# its own, its collect2 line cut away (a title, an excerpt ending there)
@pytest.mark.parametrize("line,cls", [
    ("/usr/bin/ld: cannot find -lGL", "linker-error"),
    ("  /usr/bin/ld: cannot find /tmp/pip-install-x/deepspeed/build/temp.linux-x86_64-3.10/csrc/adam/fused_adam_frontend.o:"
     " No such file or directory", "linker-error"),
    ("ld: library not found for -lomp", "linker-error"),
    ("x86_64-linux-gnu-ld.gold: cannot find -lpython3.10", "linker-error"),
    # (not the linker: a build system's words, a word ending in "ld")
    ("CMake could not find the package", None),
    ("world: cannot find the answer", None),
])
def test_round20_the_linkers_cannot_find_is_a_failure_class(line, cls):
    assert scanner.generic_class(line) == cls


@pytest.mark.parametrize("engine", ENGINES)
def test_table_is_compiled_once_and_an_edited_rule_afresh(tmp_path, engine):
    """Scanning many logs reuses the compiled table (its patterns overflow re's cache: each log re-parsed them all);
    a rule edited under the same id is a new rule, not the cached one."""
    line = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    first = scan_text(tmp_path, line, engine)
    rule = next(r for r in WIRE if r["id"] == "cuda-arch-mismatch")
    assert scanner.compile_rule(rule) is scanner.compile_rule(dict(rule))      # same text: the same compiled rule
    edited = [dict(r, patterns=["will never match this"]) if r["id"] == "cuda-arch-mismatch" else r for r in WIRE]
    p = tmp_path / "y.log"
    p.write_text(line)
    assert "cuda-arch-mismatch" in ids(first)
    assert "cuda-arch-mismatch" not in ids(scanner.scan(str(p), edited, engine=engine))
    assert "cuda-arch-mismatch" in ids(scan_text(tmp_path, line, engine))


def test_literal_trie_is_compiled_once_per_literal_set(monkeypatch):
    built = []
    real = scanner.trie_regex
    monkeypatch.setattr(scanner, "trie_regex", lambda words: built.append(words) or real(words))
    a = scanner.compiled_trie(["out of memory", "killed", "a literal only this test uses"])
    assert a is scanner.compiled_trie(["killed", "out of memory", "killed", "a literal only this test uses"])
    assert len(built) == 1
    assert a.search("x killed y") and not scanner.compiled_trie(["nvcc"]).search("x killed y")


# (round 42f) text ABOUT an error by what the text is (held-out batches 41 and 42: explainer pages, an essay, pull requests
# and reviews, feature requests, a quoted FAQ, a validation bot's code table, a doc diff), and beside each a user's run in
# the nearest words, which stays a finding
ROUND42F_PAIRS = [
    # a quoted error and the change's plan for it
    ("Compiling on cuda 11.0 brought up errors like\n`nvcc fatal   : Unsupported gpu architecture 'compute_86'` . Disable "
     "unless we have\ncuda 11.1 or greater",
     "Compiling on cuda 11.0 brought up errors like\n`nvcc fatal   : Unsupported gpu architecture 'compute_86'` . How do I "
     "fix it?", "nvcc-unsupported-arch"),
    # an error named as a kind, "a X that occurs when"
    ("This PR fixes a ModuleNotFoundError: No module named 'torch' that occurs when trying to install the package in a "
     "clean environment (e.g., using pip install -e .).",
     "pip install -e . fails with ModuleNotFoundError: No module named 'torch' when I try it in a clean env",
     "python-module-missing"),
    # "instead of ... having it throw"
    ("IMO it would make more sense to call it before say ollama.chat, instead of directly calling ollama.chat and having "
     "it throw a \"httpx.ConnectError: [Errno 61] Connection refused\".",
     "Calling ollama.chat instead of ollama.generate throws httpx.ConnectError: [Errno 61] Connection refused",
     "service-unreachable"),
    # a table of codes and their meanings
    (" | Hex | Dec | Inverted Dec | Symbol | Description | \n | --- | --- | --- | --- | --- | \n | 00000070 | 112 | "
     "-4294967184 | ERROR_DISK_FULL | There is not enough space on the disk. | ",
     "| step | output |\n| --- | --- |\n| build | OSError: [Errno 28] No space left on device |", "no-space-left"),
    # (round fa9) a troubleshooting table: an error column and a what-to-do column; a table of a run's errors has no fix column
    ("| Symptom | Check | Fix |\n|---------|-------|-----|\n| Address already in use | `ss -tlnp` | change the port |",
     "| service | error |\n| --- | --- |\n| api | OSError: [Errno 98] Address already in use |", "address-in-use"),
    # (round fa9) an error message judged for its wording, on the hit's own line; a run's own line under the verdict stays
    ("This error message is confusing.  `Address already in use` does not appear in the code base.",
     "The error message is confusing.\n\n$ tofnd\nError: Address already in use (os error 98)", "address-in-use"),
    # a help centre's title over its byline
    ("Error Code 401 - Incorrect API key provided\nError Code 401 - Incorrect API key provided\nJoshua J. avatar\n"
     "Written by Joshua J.\nUpdated over a week ago",
     "Error Code 401 - Incorrect API key provided\nError Code 401 - Incorrect API key provided\nI checked the key twice.",
     "unauthorized-401"),
    # an explainer's section "What this error means"
    ("What this error means\n401 Incorrect API key provided means the API or AI coding tool rejected the request.",
     "What I ran\n401 Incorrect API key provided", "unauthorized-401"),
    # a page reading the message out to its reader; a story in the third person
    ("You run a build, then the final link step fails with a blunt message: ld cannot find -lcuda. That line tells you "
     "the linker searched every library directory it knows.",
     "I run a build, then the final link step fails with: /usr/bin/ld: cannot find -lcuda", "ld-cudart-missing"),
    ("He pressed Enter to compile. Instead, it spat back a cold rejection: /usr/bin/ld: cannot find -lcuda: no such "
     "file or directory.",
     "I pressed Enter to compile. Instead, it spat back: /usr/bin/ld: cannot find -lcuda: no such file or directory.",
     "ld-cudart-missing"),
    # a purpose clause with the quoted error as its object
    ("This option allowed us to avoid a \"no space left on device\" error when the /tmp directory was too small.",
     "pip failed with a \"no space left on device\" error when the /tmp directory was too small.", "no-space-left"),
    # a general conditional with "then a ... exception occurs"
    ("When using Tomcat if the port is already in use then a \"java.net.BindException: Address already in use: bind\" "
     "exception occurs and the app does not start.",
     "When I start the app with Tomcat a \"java.net.BindException: Address already in use: bind\" exception occurs.",
     "address-in-use"),
    # "usually looks like this:" over an indented quote
    ("This happens only on Windows, whose error log usually looks like this: \n\n    An attempt was made to access a "
     "socket in a way forbidden by its access permissions.",
     "This happens only on Windows, my error log looks like this: \n\n    An attempt was made to access a socket in a "
     "way forbidden by its access permissions.", "port-access-forbidden"),
    # the next heading gives the reason (a tutorial), or the change's test plan
    ("### BUG\n\nEnglish: An attempt was made to access a socket in a way forbidden by its access permissions\n中文: x\n\n"
     "### Reason\n\nThis is because port 54321 is occupied.",
     "### BUG\n\nEnglish: An attempt was made to access a socket in a way forbidden by its access permissions\n中文: x\n\n"
     "### Possible cause\n\nport 54321 may be occupied.", "port-access-forbidden"),
    ("- Live-tested on `kind`: fixture reaches `OOMKilled` / exit `137`\n\n## Test plan\n"
     "- [x] Confirm pod terminates with `reason=OOMKilled` and `exitCode=137`",
     "- the pod reaches `OOMKilled` / exit `137`\n\n## Expected behavior\n- the pod runs", "host-oom-killed"),
    # "This changes the ..." after the reason's sentence; the change told in the next paragraph
    ("with the systemd managed one already started and the startup\nfails with enigmatic EADDRINUSE 10110 stuff. This "
     "changes the\nserver so that it just logs error about it",
     "with the systemd managed one already started the startup\nfails with EADDRINUSE 10110. This makes the\nserver "
     "unusable", "address-in-use"),
    ("Currently, developers does not get information about `OOMKilled` status updates.\n\nThis change introduces the "
     "check and sends a pod error event.",
     "Currently, my pods end with `OOMKilled` status updates.\n\nThis change of limits did not help.", "host-oom-killed"),
    # what a change brings, "should now be a log message"
    ("There should now be a log message `address already in use` when there is a port conflict.",
     "There is now a log message `address already in use` when I start it.", "address-in-use"),
    # a diff hunk's context line
    ("@@ -34,6 +34,12 @@ ddev notifies you about port conflicts with this message:\n Failed to start yoursite: Unable "
     "to listen on required ports, localhost port 80 is in use,\n ```",
     "ddev notifies me about port conflicts with this message:\n Failed to start yoursite: Unable to listen on required "
     "ports, localhost port 80 is in use,", "address-in-use"),
    # a status denied
    ("Pods are not OOMKilled, containers are", "Pods are OOMKilled, containers are", "host-oom-killed"),
    # a reader sent to search, "usually caused by"
    ("If you google this error \u201cCUDA error: no kernel image is available for execution on the device\u201d, you "
     "will find it is usually caused by the mismatched CUDA compute capability and NVIDIA GPU.",
     "I googled this error \u201cCUDA error: no kernel image is available for execution on the device\u201d and found "
     "nothing.", "cuda-arch-mismatch"),
    # each alone: the reader sent to search; the cause told as the rule
    ("If you google this error \u201cCUDA error: no kernel image is available for execution on the device\u201d, you "
     "will find many threads.",
     "I googled this error \u201cCUDA error: no kernel image is available for execution on the device\u201d and found "
     "nothing.", "cuda-arch-mismatch"),
    ("\u201cCUDA error: no kernel image is available for execution on the device\u201d is usually caused by a mismatched "
     "compute capability.",
     "\u201cCUDA error: no kernel image is available for execution on the device\u201d is caused by my old GPU, I think.",
     "cuda-arch-mismatch"),
    # a reviewer's data point for the change
    ("Independent data point supporting this fix: Default 16-way ninja was OOM-killed (FAILED: [code=137]) partway "
     "through the 18 translation units",
     "Default 16-way ninja was OOM-killed (FAILED: [code=137]) partway through the 18 translation units",
     "compile-oom-killed"),
    # (round gfa) the quote is what a change removes, told over it (FENCE_INTRO); a user's own intro over the same quote, a
    # question how to fix it, an attempt to avoid it, stay findings
    ("This fixes the following error when building the image:\n```\nerror: externally-managed-environment\n```",
     "I get the following error when building the image:\n```\nerror: externally-managed-environment\n```",
     "pip-externally-managed"),
    ("w/o this change, gets the following error:\nc++: fatal error: Killed signal terminated program cc1plus",
     "How can I fix the following error:\nc++: fatal error: Killed signal terminated program cc1plus", "compile-oom-killed"),
    ("This is needed to prevent the following error:\n```\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```",
     "I'm trying to avoid the following error:\n```\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```",
     "cuda-oom"),
    ("Error without fix:\n```\nOSError: [Errno 28] No space left on device\n```",
     "Error from the pipeline:\n```\nOSError: [Errno 28] No space left on device\n```", "no-space-left"),
    # ... and a first person over the quote, or a flag the user left out, is the user's own run
    ("Without this change, the build fails with:\n```\nOSError: [Errno 28] No space left on device\n```",
     "Without this patch I get:\n```\nOSError: [Errno 28] No space left on device\n```", "no-space-left"),
    ("Without this, the build would fail with:\n```\nerror: externally-managed-environment\n```",
     "Without this flag, the build fails with:\n```\nerror: externally-managed-environment\n```", "pip-externally-managed"),
    # (the lead's review of stop 48) a user's own voice over the same words: lower-case "i", "we", "still", a plea, and
    # "Solve/Resolve the following error" (a user's request; only a change's "Fix the following error" is taken)
    ("This fixes the following error:\n```\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```",
     "the readme says this should fix the following error but i still get it:\n```\n"
     "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```", "cuda-oom"),
    ("This fixes the following error:\n```\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```",
     "The release notes say it fixes the following error, but after upgrading we get it:\n```\n"
     "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```", "cuda-oom"),
    ("Fix the following error:\n```\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```",
     "Fix the following error on an RTX 4090 (24 GB), please:\n```\n"
     "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```", "cuda-oom"),
    ("Fix the following error:\n```\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```",
     "Solve the following error:\n```\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```", "cuda-oom"),
    ("Fix the following error:\n```\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```",
     "Tried the workaround from #5521, which should fix the following error, still there:\n```\n"
     "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n```", "cuda-oom"),
]


# (the documentation pairs above and round 42f's below, one test: text about an error is no finding, a user's run is)
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("doc,log,entry", DOC_PAIRS + ROUND42F_PAIRS,
                         ids=[f"doc{i}" for i in range(len(DOC_PAIRS))] + [f"r42f-{i}" for i in range(len(ROUND42F_PAIRS))])
def test_text_about_an_error_is_not_a_finding_but_a_users_run_is(tmp_path, engine, doc, log, entry):
    assert entry not in ids(scan_text(tmp_path, doc + "\n", engine))
    assert entry in ids(scan_text(tmp_path, log + "\n", engine, name="y.log"))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("log,entry", [
    # a user's conditional names "the following error", not "then a(n)"
    ("When the model is loaded then the following error occurs: torch.OutOfMemoryError: CUDA out of memory.", "cuda-oom"),
    # "that occurs when I ..." is a user's own run
    ("I get a ModuleNotFoundError: No module named 'torch' that occurs when I run pip install -e .", "python-module-missing"),
    # a regression told of a change ("This change makes ...") is a report, not the change's description
    ("This change makes the build fail with nvcc fatal : Unsupported gpu architecture 'compute_86'", "nvcc-unsupported-arch"),
    # a table without a code and a meaning column (a user's results), an indented log with no hunk header above
    ("| run | result |\n| --- | --- |\n| 1 | OSError: [Errno 28] No space left on device |", "no-space-left"),
    ("  + pip install x\n  OSError: [Errno 28] No space left on device", "no-space-left"),
    # a heading under the quote that is not a reason's or a test plan's
    ("OSError: [Errno 98] Address already in use\n\n## Expected behavior", "address-in-use"),
])
def test_round42f_a_users_run_in_the_nearest_words_stays_a_finding(tmp_path, engine, log, entry):
    assert entry in ids(scan_text(tmp_path, log + "\n", engine))


# (round 45d) The document, not the line (scanner.about_errors, in_run_output): a page about errors (two of an explainer's
# headings, a blog's widget, a pull request's own marker) holds a finding only where a run's output stands; a bug report's
# sections keep the text a run.  Each page is a real one (the corpus near-misses of round 45d); each user's text is the
# same words where a run shows, or under an issue template's heading.
_UNANSWERED = ("What 'Address Already in Use' Means\n"
               "The error 'address already in use' (EADDRINUSE) means a process is trying to bind a socket to an IP address "
               "and port combination that another process already occupies.[1][3]\n"
               "In server contexts this usually happens when your application cannot listen on the desired port because "
               "something else is bound to it.[3][8]\n"
               "Common Causes of the Error\n"
               "Another Instance of Your Server Is Still Running\n")
_PENGUIN = ("Fixing \"Address already in use\" - Port Conflicts\n\n"
            "What You'll Learn\n\n"
            "  \u2022 Why Address already in use (EADDRINUSE) appears\n\n"
            "Quick Summary\n\n"
            "  1. Find who holds it: sudo ss -lntp | grep ':PORT ' (or sudo lsof -i :PORT)\n\n"
            "Typical messages:\n\n"
            "%sError: listen EADDRINUSE: address already in use :::8080\n"
            "bind: Address already in use\n"
            "OSError: [Errno 98] Address already in use\n\n"
            "Errno 98 is the Linux number for EADDRINUSE.\n")
_DEVOPS = ("Skip to content\nDevOps AI ToolKit\n%s\n"
           "GitLab CI Error Guide: 'no space left on device' Runner Disk Exhaustion\n\n"
           "Fix GitLab CI 'no space left on device' errors: prune Docker images and volumes, clear runner build cache and "
           "artifacts, free /tmp, and resolve inode exhaustion.\n\nOverview\n")
_TECHLATEST = ("How to Fix \u201cRuntimeError: CUDA out of Memory\u201d?\n\n\n"
               "  \u2022 It\u2019s really frustrating to get errors such as RuntimeError: CUDA out of Memory. Fortunately, we "
               "have some fixes to make this error go away. \n"
               "How to Fix \u201cRuntimeError: CUDA out of Memory\u201d?\n")
ROUND45D_PAIRS = [
    # two explainer headings; under an issue template's "### Describe the bug" the same words are a user's (REPORT_HEADING)
    (_UNANSWERED, "### Describe the bug\n\n" + _UNANSWERED, "address-in-use"),
    # the page's typical messages (no run) and the same lines under the prompt that ran them (in_run_output)
    (_PENGUIN % "", _PENGUIN % "$ node server.js\n", "address-in-use"),
    # a blog's "N min read" byline (PAGE_WIDGET): without it the title alone is not a page
    (_DEVOPS % "AI for GitLab CI/CD By James Joyner IV \u00b7 \u00b7 9 min read", _DEVOPS % "", "no-space-left"),
    # a fix-it title twice, and the same page with a user's traceback in it (a run's output)
    (_TECHLATEST, _TECHLATEST + "\nTraceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n"
     "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity)\n", "cuda-oom"),
    # a pull request's own marker ("Fixes #N" on its own line) over the error it quotes; without it, a report
    ("The server fails with `OSError: [Errno 98] Address already in use` when it is restarted at once.\n\nFixes #63\n",
     "The server fails with `OSError: [Errno 98] Address already in use` when it is restarted at once.\n",
     "address-in-use"),
    # (round scan8) a pull request template's heading that names the change (kitex#493's); without it, a report
    ("#### What this PR does / why we need it:\n\nthe port 9124 in testcase will cause `address already in use` error\n",
     "the port 9124 in testcase will cause `address already in use` error\n", "address-in-use"),
    # (round scan8) a change's test plan as a commit message's label (dragonwell8#359's); without it, a report
    ("Summary: the test fails because of java.net.BindException: Address already in use\n\nTest Plan: CI pipeline\n",
     "Summary: the test fails because of java.net.BindException: Address already in use\n", "address-in-use"),
    # (round scan8) a Chinese explainer's "developers often run into" over the quote; a user's own "I often run into" is a report
    ("在训练大模型时,开发者经常会遇到这样的报错:\nRuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n",
     "在训练大模型时,我经常会遇到这样的报错:\nRuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n", "cuda-oom"),
    # (round scan8) the change's promise (open62541#5322's); a user's fix that did not hold is a report
    ("Add REUSEPORT for linux. This will get rid of error \"address already in use\" upon binding.\n",
     "I set SO_REUSEPORT. This should fix the error, but I still get OSError: [Errno 98] Address already in use\n",
     "address-in-use"),
    # (round fa3) a change told by its purpose against the error (trl#5197's); a user's own attempt that did not hold is a report
    ("Set CI `PYTORCH_ALLOC_CONF` env variable to avoid OOM:\n\n> torch.OutOfMemoryError: CUDA out of memory. Tried to "
     "allocate 2.60 GiB.\n",
     "I set `PYTORCH_ALLOC_CONF` to avoid OOM but still get:\n\n> torch.OutOfMemoryError: CUDA out of memory. Tried to "
     "allocate 2.60 GiB.\n", "cuda-oom"),
    # (round fa3) an explainer decoding the exit code (the nomadlab page's); a user's report of the same exit is a report
    ("docker ps -a shows it exited with code 137. No stack trace.\n\nExit code 137 means your process was killed from the "
     "outside with SIGKILL.\n",
     "docker ps -a shows it exited with code 137. No stack trace.\n\nI think exit code 137 is a SIGKILL from outside.\n",
     "host-oom-killed"),
    # (round fa4) the change makes the message it quotes clearer, wrapped as a commit message (specter-desktop#1332's); a
    # user's line that says it still gets the error is a report
    ("While starting the server, an error \"[Errno 111] Connection refused\" is\nthrown without specifying any reason. "
     "This commit makes the error\nmessage more descriptive.\n",
     "While starting the server, an error \"[Errno 111] Connection refused\" is\nthrown without specifying any reason. "
     "This commit makes the error\nmessage more descriptive, but I still get it.\n", "service-unreachable"),
    # (round fa5) an explainer's generic reader who may meet the error (dnmtechs' page); the user's own "I often" is a report
    ("When working with sockets, developers may encounter this error:\n\nOSError: [Errno 98] Address already in use\n",
     "When working with sockets, I often encounter this error:\n\nOSError: [Errno 98] Address already in use\n",
     "address-in-use"),
    # (round fa5) a request for a better message (webtorrent#339's); without the request, the same lines are a report
    ("listen EADDRINUSE\n\nI know the port is used, but I think we should give it a better error message.\n",
     "listen EADDRINUSE\n\nI know the port is used, but I think it is a bug.\n", "address-in-use"),
    # (round fa5) a change raising the limit against the OOMKilled it names (openshift/release#67394's); a user's raise that
    # did not hold is a report
    ("bump memory limits\n\nseeing golangci-lint get OOMKilled consistently\n",
     "I bumped the memory limits, but it is still the same\n\nseeing golangci-lint get OOMKilled consistently\n",
     "host-oom-killed"),
    # (round fa6) a change told by the error it resolves (EiffelWebFramework/EWF#58's title); the user's own attempt is a report
    ("Socket: reuse address to resolve the error \"address already in use\"\n",
     "I reused the address to resolve the error \"address already in use\"\n", "address-in-use"),
    # (round fa6) a change that catches the error it names (crynux-node#59's); a user who tried to catch it is a report
    ("update stable-diffusion-task\n\n- update stable-diffusion-task lib to catch RuntimeError: CUDA error: out of memory\n",
     "update stable-diffusion-task\n\n- tried to catch RuntimeError: CUDA error: out of memory\n", "cuda-oom"),
    # (round fa6) a Chinese explainer's quantified reader (mynw.cn/news/579386's); the user's own "我" is a report
    ("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
     "这个错误几乎每个刚接触 GPU 编程的人都会遇到一次甚至多次。\n",
     "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
     "这个错误我每次刚接触新机器都会遇到一次甚至多次。\n", "libcudart-11-missing"),
    # (round fa7) a Japanese explainer inviting its reader to look (openillumi's empty-cache page); a user's own "私" is a report
    ("典型的な例を見てみましょう。\nPyTorchとCUDAを利用した処理中にRuntimeError: CUDA out of memoryが発生。\n",
     "私の環境で例を見てみましょう。\nPyTorchとCUDAを利用した処理中にRuntimeError: CUDA out of memoryが発生。\n", "cuda-oom"),
    # (round fa7) a Chinese explainer's opening question to its reader (the Time-LLM article's); a user asking others is a report
    ("你是否曾在启动Time-LLM分布式训练时遭遇\"Address already in use\"错误?\n",
     "你们有没有在启动Time-LLM分布式训练时遭遇\"Address already in use\"错误?\n", "address-in-use"),
    # (round fa7) a Chinese explainer calling the problem common (mynw.cn/news/560176's); a user's own "我" is a report
    ("一条熟悉的错误提示往往浮出水面:No space left on device。\n\n使用YOLOv8镜像训练时,这个问题尤为常见。\n",
     "一条熟悉的错误提示往往浮出水面:No space left on device。\n\n我使用YOLOv8镜像训练时,这个问题尤为常见。\n", "no-space-left"),
    # (round fa7) an explainer's epithet for the error (zeonedge's Docker guide); a user who keeps getting it is a report
    ("The build reaches step 8 of 12 and then crashes with the dreaded error: no space left on device.\n",
     "My build reaches step 8 of 12 and I keep getting the dreaded error: no space left on device.\n", "no-space-left"),
    # (round fa7) a Chinese article telling what it does (mynw.cn/news/528350's); a user citing another's article is a report
    ("一个训练脚本突然抛出RuntimeError: CUDA out of memory,打断实验进程。本文就从实战角度出发,深入剖析这一常见问题的本质。\n",
     "一个训练脚本突然抛出RuntimeError: CUDA out of memory,打断实验进程。按照这篇文章的方法还是报错。\n", "cuda-oom"),
    # (round fa8) a change rewording the message it names (Paddle#20804's); a user who tried to is a report
    ("Refine error message of system_allocator.cc\n\nExpose other errors except `cudaErrorMemoryAllocation` to users.\n",
     "I tried to refine error message of system_allocator.cc\n\nExpose other errors except `cudaErrorMemoryAllocation` to users.\n",
     "cuda-oom"),
    # (round fa8) a page telling its reader's run in the second person (markaicode's); the same run told as the user's is a report
    ("You're loading a local LLM with PyTorch and it fails:\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n",
     "I'm loading a local LLM with PyTorch and it fails:\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n",
     "cuda-oom"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("page,log,entry", ROUND45D_PAIRS, ids=[str(i) for i in range(len(ROUND45D_PAIRS))])
def test_round45d_a_page_about_an_error_is_no_finding_but_a_run_in_it_is(tmp_path, engine, page, log, entry):
    assert entry not in ids(scan_text(tmp_path, page, engine))
    assert entry in ids(scan_text(tmp_path, log, engine, name="y.log"))


def test_round45d_the_page_is_judged_once_and_only_with_a_hit(tmp_path, monkeypatch):
    calls = []
    real = scanner.about_errors
    monkeypatch.setattr(scanner, "about_errors", lambda path: calls.append(path) or real(path))
    healthy = "INFO step 1 done\n" * 500 + "How to fix it\nWhy it happens\n"
    scan_text(tmp_path, healthy, "python")
    assert calls == []      # no hit: the text is never read as a page
    scan_text(tmp_path, _PENGUIN % "" + _PENGUIN % "", "python", name="z.log")
    assert len(calls) == 1  # several hits: judged once


def test_round45d_page_checks_are_bounded_on_16_kib_lines(tmp_path):
    import time
    lines = ["How to fix " + "a" * 16000, "what " + "x " * 8000 + "means", "#" * 16000, "$" + " " * 16000,
             "File \"" + "a" * 16000, "  at " + "a." * 8000, "a" * 16000 + ".py:1",
             "\u2022 " * 8000, "解决" * 8000, "Fixes #" + "1" * 16000]
    p = tmp_path / "long.log"
    p.write_text("\n".join(lines * 4) + "\n")
    t = time.process_time()
    scanner.about_errors(str(p))
    assert time.process_time() - t < 0.25     # test_pattern_cost's bound (a few ms measured)
    for line in lines:      # a hit with 16 lines before and 4 after, every one 16 KiB (about 30-50 ms measured)
        t = time.process_time()
        scanner.in_run_output([line.encode()] * 16, line, [line.encode()] * 4)
        assert time.process_time() - t < 0.25, line[:20]


# Issue 24 round 46: an app's bracketed source tag before a relayed line (Overworldai/Biome#93's "[ENGINE] " before uv's
# chain, batch 20) is a wrapper; a bracket that is the line's own word (a level, a status, an errno, a counter) is not.
@pytest.mark.parametrize("engine", ENGINES)
def test_round46_a_bracketed_source_tag_is_a_wrapper_prefix(tmp_path, engine):
    lines = ["[ENGINE]   Caused by: operation timed out", "[worker-3] Killed"]
    rep = scan_text(tmp_path, "\n".join(lines) + "\n", engine)
    by = {f["id"]: f for f in rep["findings"]}
    assert set(by) == {"pip-timeout", "host-oom-killed"}, rep
    assert by["pip-timeout"]["text"] == lines[0]        # the report shows the line as written
    assert scanner.unwrap("[build] [lighttpd] Killed") == "Killed"


def test_round46_a_bracket_that_is_the_lines_own_word_stays():
    for line in ("[ERROR] x", "[error] x", "[WARN] x", "[Warning] x", "[emerg] bind() to 0.0.0.0:80 failed", "[FAILED] y",
                 "[notice] A new release of pip", "[Errno 13] Permission denied", "[WinError 10049] x", "[1/4] Resolving",
                 "[E ProcessGroupNCCL.cpp:1] x", "[E] x", "[::]:80 x", "[ENGINE]"):
        assert scanner.unwrap(line) == line, line


# Issue 24 round 46: an HTTP error body that opens a line ({"code":401,"reason":"Unauthorized","message":...}, gpustack#1479
# in batch 16) is the failure as a whole, not a JSON log event: only an object with a log key or a level/time/source key
# beside "message" is unwrapped to its message.
@pytest.mark.parametrize("engine", ENGINES)
def test_round46_an_http_error_body_is_seen_whole(tmp_path, engine):
    body = '{"code":401,"reason":"Unauthorized","message":"Invalid authentication credentials"}'
    assert scanner.unwrap(body) == body
    assert scanner.unwrap('{"message":"Incorrect API key provided","type":"invalid_request_error","code":"x"}')[:1] == "{"
    assert "unauthorized-401" in ids(scan_text(tmp_path, body + "\n", engine))
    # log events keep their message: a level, a time, a source beside "message", or a log key
    for event in ('{"level":"error","message":"Killed"}', '{"timestamp":"2026-01-01T00:00:00Z","message":"Killed"}',
                  '{"severity":"ERROR","message":"Killed"}', '{"message":"Killed","service_name":"x"}',
                  '{"msg":"Killed","code":1}', '{"log":"Killed\\n","stream":"stderr"}'):
        assert scanner.unwrap(event) == "Killed", event


def test_a_page_sentence_is_not_taken_on_a_line_of_doubt_or_in_the_first_person():
    """The change's purpose or promise is a page's sentence; the same words with a question, a doubt or, for a
    purpose, the user's own "I"/"my" tell a run (rounds fa3, fa4: scanner._not_on_doubt)."""
    said = "Set CI `PYTORCH_ALLOC_CONF` env variable to avoid OOM:"
    assert scanner.PAGE_PURPOSE.search(said)
    for told in ("I set CI `PYTORCH_ALLOC_CONF` to avoid OOM:", "Set it in my CI to avoid OOM:",
                 "Set CI `PYTORCH_ALLOC_CONF` to avoid OOM, still:", "Does setting it help to avoid OOM?",
                 "Setting it did not help to avoid OOM:", "It doesn't set anything to avoid OOM:"):
        assert not scanner.PAGE_PURPOSE.search(told), told
    assert scanner.PAGE_BETTER.search("This commit makes the error message more descriptive.")
    for told in ("This commit makes the error message more descriptive, but I still get it.",
                 "This commit makes the error message more descriptive, still.",
                 "This commit makes the error message no longer more descriptive.",
                 "Does this commit make the error message more descriptive?"):
        assert not scanner.PAGE_BETTER.search(told), told
    assert scanner.PAGE_BETTER.search("I think this commit makes the error message more descriptive.")
    # (round fa5) the generic reader's and the raised limit's guards
    assert scanner.PAGE_COMMON.search("developers frequently encounter the [Errno 111] Connection refused error.")
    for told in ("I often encounter the [Errno 111] Connection refused error.", "my users often encounter it:",
                 "we often run into it:", "do users often encounter this error?", "As you can see, it fails:"):
        assert not scanner.PAGE_COMMON.search(told), told
    assert scanner.PAGE_RAISE.search("- Bumped requests 256Mi→512Mi, limits 512Mi→1536Mi.")
    for told in ("I bumped the memory limits:", "Bumped my memory limits:", "Bumped the limits but it is OOMKilled:",
                 "Bumped the limits, still OOMKilled:", "Bumped the limits, not enough:", "Bumped the limits again:",
                 "Even after raising the limits:", "Should we raise the limits?", "Raised the limits, didn't help:",
                 "Despite raising the limits:", "Tried raising the limits:", "Bumped the limits, never enough:",
                 "Bumped the limits, it is no longer enough:"):
        assert not scanner.PAGE_RAISE.search(told), told
    # (round fa6) the fault a change fixes, and a Chinese explainer's quantified reader
    assert scanner.PAGE_FIX_FOR.search("So we add environment `LD_LIBRARY_PATH` to fix this base image bug")
    for told in ("I added `LD_LIBRARY_PATH` to fix this bug", "Added it to my env to fix the error",
                 "Added it to fix the error but it is back", "Added it to fix the error, still failing",
                 "Added it to fix the error, did not work", "Added it to fix the error, it didn't help",
                 "How to fix this error", "Is there a way to fix this error", "Any help to fix this error",
                 "Tried adding it to fix the error", "attemps to fix the problem:", "Please suggest how to resolve the issue",
                 "Is it possible to fix this issue?", "Unable to resolve the issue", "Need a workaround to solve this problem",
                 "Anyone knows what to do to fix this error", "Would appreciate a pointer to fix the error",
                 "Any idea on what to do to fix this error", "Want to fix this error", "Never managed to fix the error"):
        assert not scanner.PAGE_FIX_FOR.search(told), told
    assert scanner.PAGE_CATCH.search("- update stable-diffusion-task lib to catch RuntimeError: CUDA error: out of memory")
    for told in ("The following error occurred when trying to handle this error:", "I added a handler to catch the OOM:",
                 "Wrapped it to catch RuntimeError: CUDA error: out of memory, but it still crashes",
                 "How do I make it to catch RuntimeError?", "It doesn't seem to catch RuntimeError:",
                 "Tried to catch RuntimeError: CUDA error: out of memory", "My code is meant to catch the error:"):
        assert not scanner.PAGE_CATCH.search(told), told
    assert scanner.PAGE_ZH_MANY.search("很多开发者尝试直接拉取镜像却启动失败,报错信息五花八门")
    assert scanner.PAGE_ZH_MANY.search("这个错误几乎每个刚接触 GPU 编程的人都会遇到一次甚至多次。")
    for told in ("我和很多开发者一样启动失败", "看了很多人的方法还是不行", "很多人说升级驱动,仍然报错", "很多用户也遇到了吗？",
                 "依然有很多人报错", "每个节点,都报错", "很多人工智能应用启动失败"):
        assert not scanner.PAGE_ZH_MANY.search(told), told
    # (round fa7) a Japanese explainer's voice and a Chinese explainer's opening question: a user's own run or question is not
    for said in ("具体的なエラーメッセージを見てみましょう。以下のような表示を見たことはありませんか?", "その解決策を探っていきましょう。",
                 "インストールがブロックされて困っていませんか?", "この予期せぬエラーに、思わず頭を抱えてしまった経験、あなたにもありませんか?",
                 "「This environment is externally managed」と出る理由と対処法", "このエラーが発生する主な理由:"):
        assert scanner.PAGE_JA.search(said), said
    for told in ("実行すると以下のエラーが出ました", "何か方法はありませんか?", "このエラーが発生する原因が分かりません",
                 "私の環境で試してみましょう", "僕も見たことはありませんか?", "自分で再インストールしてみましょう"):
        assert not scanner.PAGE_JA.search(told), told
    for said in ("你有没有遇到过这样的场景?", "你是否曾在启动Time-LLM分布式训练时遭遇\"Address already in use\"错误?",
                 "你有没有在运行 PyTorch 或 TensorFlow 的时候,突然蹦出这么一行红字:", "你是否也遇到过这个问题?"):
        assert scanner.PAGE_ZH_ASK.search(said), said
    for told in ("你们有没有遇到过这个问题?", "有没有人遇到过", "你有没有试过重装驱动?", "我想问你有没有遇到过", "你是否安装了CUDA?",
                 "你是否在虚拟环境中安装?"):
        assert not scanner.PAGE_ZH_ASK.search(told), told
    for said in ("尤其是在使用YOLOv8这类集成化镜像进行目标检测任务时,这个问题尤为常见。", "这种情况在部署DeepSeek-OCR时相当常见"):
        assert scanner.PAGE_ZH_COMMON.search(said), said
    for told in ("这个问题很常见吗?", "我知道这个错误很常见,但是升级后仍然报错", "这个问题不常见", "常见的解决方法都试过了"):
        assert not scanner.PAGE_ZH_COMMON.search(told), told
    for said in ("本文就从实战角度出发,深入剖析这一常见问题的本质", "本文将带你从一个工程师的视角,层层拆解这个高频报错",
                 "本文我们将系统梳理解决方法"):
        assert scanner.PAGE_ZH_VOICE.search(said), said
    for told in ("按照这篇文章介绍的方法还是报错", "我参考本文介绍的方法,仍然报错", "本文介绍的方法依然不行", "本文介绍的方法有用吗?",
                 "本文件夹下运行报错"):
        assert not scanner.PAGE_ZH_VOICE.search(told), told
    assert scanner.PAGE_DREAD.search("The build reaches step 8 of 12 and then crashes with the dreaded error: no space left on device.")
    assert scanner.PAGE_DREAD.search('One such error is the infamous "bind: address already in use"')
    for told in ("I keep getting the dreaded OOM:", "Still the infamous error after the upgrade:", "Why the dreaded OOM here?",
                 "Getting the dreaded CUDA out of memory error when loading the model", "Hitting the infamous port clash:",
                 "My server crashes with the notorious error:", "It crashes with the dreaded error again:",
                 "Keeps failing with the dreaded error:", "Running into the infamous bind error", "Seeing the dreaded OOM",
                 "Even with 24 GB, the dreaded OOM:", "It doesn't help, the dreaded OOM:", "Got the dreaded OOM:"):
        assert not scanner.PAGE_DREAD.search(told), told
    # (round fa8) PAGE_REWORD, PAGE_WISH's adjectives of use, PAGE_SCENE, BYLINE's "By <Name> · Last verified"
    for said in ("Refine error message of system_allocator.cc", "**Optimize the error messages of paddle CUDA API.**",
                 "Enhance the error message for nccl when shared memory is insufficient.",
                 "Improve error msg for address in use"):
        assert scanner.PAGE_REWORD.search(said), said
    for told in ("Could you improve the error message?", "I tried to clarify the error message but it still fails:",
                 "My patch improves the error message, but the server still dies:", "Improve error handling for retries",
                 "It doesn't improve the error message:"):
        assert not scanner.PAGE_REWORD.search(told), told
    for said in ("Handle viewer  `Address already in use` exception, provide a proper error message to the users.",
                 "If the startup throws an error due to the port already being in use, user should get a useful error message, like"):
        assert scanner.PAGE_WISH.search(said), said
    for told in ("I ran it with -v to get a useful error message:", "With 0.4 I got a helpful error message, now it crashes:"):
        assert not scanner.PAGE_WISH.search(told), told
    for said in ("You built a solid rig. RTX 5070 Ti, 32GB of system RAM, Windows 11, Ollama.",
                 "Then it started restarting every few hours. You check the logs and see nothing useful.",
                 "You're loading a local LLM or running inference with PyTorch and hit RuntimeError: CUDA out of memory.",
                 "You run pip install and get this:", "You launch vLLM and it crashes during startup or shortly after with:"):
        assert scanner.PAGE_SCENE.search(said), said
    for told in ("You are running out of disk space. The runner will stop working when the machine runs out of disk space.",
                 "CMake 3.30 or higher is required.  You are running version 3.28.3", "You ran out of memory.",
                 "You run it and I get this:", "You run it but it still fails:", "Did You run it with --gpus all?",
                 "if you run it twice you get the error"):
        assert not scanner.PAGE_SCENE.search(told), told
    assert scanner.BYLINE.match("By Fredoline Eruo · Last verified May 6, 2026")
    for told in ("By default the server binds 0.0.0.0 · updated", "By the way, updated the driver and it still fails"):
        assert not scanner.BYLINE.match(told), told


def test_spaced_parts_cjk_script_from_ascii_words_only():
    assert scanner.spaced("报错Port 5000 is in use") == "报错 Port 5000 is in use"
    assert scanner.spaced("出现CUDA out of memory了") == "出现 CUDA out of memory 了"
    assert scanner.spaced("メモリ不足CUDA_ERROR_OUT_OF_MEMORY") == "メモリ不足 CUDA_ERROR_OUT_OF_MEMORY"
    assert scanner.spaced("모델Qwen") == "모델 Qwen"
    # no edge at CJK punctuation, accented Latin, or inside ASCII
    assert scanner.spaced("错误：Port") == "错误：Port"
    assert scanner.spaced("Größe 5 Fehler") == "Größe 5 Fehler"
    assert scanner.spaced("plain ascii line") == "plain ascii line"


@pytest.mark.parametrize("engine", ENGINES)
def test_an_error_glued_to_a_cjk_sentence_is_named_and_shown_as_written(tmp_path, engine):
    # "\b" finds no edge between a CJK character and a Latin letter (both are word characters to re)
    line = "启动时报错Port 5000 is in use by another program. Either identify and stop that program, or start the server with a different port."
    rep = scan_text(tmp_path, line + "\n", engine)
    assert ids(rep) == ["address-in-use"]
    assert rep["findings"][0]["text"] == line


# (the lead's review of stop 48) choices-empty's client word is a word of its own: a module named after the model
# (gpt4v_ocr, openai_ocr) logging a None image is not a reply without choices; the model's name with its version is
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("log,named", [
    ("| ERROR | gpt4v_ocr:load_page:57 - page load failed: 'NoneType' object is not subscriptable", False),
    ("ERROR:openai_ocr.pipeline:crop failed: 'NoneType' object is not subscriptable", False),
    ("[Bug]: api chatgpt3.5 error: TypeError: 'NoneType' object is not subscriptable", True),
    ("OpenAI API error: list index out of range", True),
])
def test_choices_empty_takes_the_client_as_a_word(tmp_path, engine, log, named):
    assert ("choices-empty" in ids(scan_text(tmp_path, log + "\n", engine))) is named


# (the lead's review of stop 49) what the wave's patterns took from healthy runs and users' own reports, and what
# each still names: a docs sentence quoting the 401 message, a runtime that truncates and goes on, CuPy's preload
# warning, another program's "Failed to load the tokenizer.", conda 4.3's "HTTP None None" (as often an SSL failure
# as a timeout), a server's 404 for a route a client probes and falls back from; a refusal is still named when a
# server's start line follows it (the withdrawn retried_by), and a user's own "After this commit, ..." keeps the OOM
# (the withdrawn AFTER_CHANGE veto)
REVIEW49_CUPY = ("C:\\venv\\lib\\site-packages\\cupy\\_environment.py:487: UserWarning: CuPy failed to preload library "
        "(C:\\venv\\nvidia\\cudnn\\bin\\cudnn64_8.dll): FileNotFoundError (Could not find module "
        "'C:\\venv\\nvidia\\cudnn\\bin\\cudnn64_8.dll' (or one of its dependencies). Try using the full path with "
        "constructor syntax.)\n  warnings.warn(msg)\nProcessed 120 pages in 14.2 s")
REVIEW49_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 23.64 GiB "
       "of which 1.10 GiB is free.\n\n")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("log,entry,named", [
    ('"Invalid or missing API key" is returned with status 401 when the Authorization header is absent.',
     "unauthorized-401", False),
    ('{"level":"warn","ts":1721764977.5750027,"caller":"handler/handler.go:23","msg":"Invalid or missing API key",'
     '"receivedAuthHeader":""}', "unauthorized-401", True),
    ("When the prompt is 5000 tokens and the context window is 4096, GPT4All refuses it.",
     "context-length-exceeded", False),
    ("W rkllm: Prompt is 11543 tokens but the model context window is 4096 tokens, truncating to the last 4096 tokens",
     "context-length-exceeded", False),
    ("Prompt is 11543 tokens but the model context window is 4096 tokens.", "context-length-exceeded", True),
    ("GPT-J ERROR: The prompt is2614tokens and the context window is2048!", "context-length-exceeded", True),
    (REVIEW49_CUPY, "libcudart-missing", False),
    ('Traceback (most recent call last):\n  File "/app/ocr_service/loader.py", line 88, in load_tokenizer\n'
     '    raise RuntimeError("Failed to load the tokenizer.") from e\nRuntimeError: Failed to load the tokenizer.',
     "model-arch-unknown", False),
    ("RuntimeError: Failed to load the model config. If the model is a custom model not yet available in the "
     "HuggingFace transformers library, consider setting `trust_remote_code=True` in LLM or using the "
     "`--trust-remote-code` flag in the CLI.", "model-arch-unknown", True),
    ("CondaHTTPError: HTTP None None for url <https://conda.anaconda.org/conda-forge/win-64/repodata.json>\n"
     "Elapsed: None", "pip-timeout", False),
    ('INFO:     172.17.0.1:50412 - "GET /v1/api/tags HTTP/1.1" 404 Not Found\n'
     'INFO:     172.17.0.1:50412 - "GET /v1/models HTTP/1.1" 200 OK', "base-url-wrong", False),
    ('httpx.ConnectError: [Errno 111] Connection refused\n$ ollama serve\ntime=2024-05-01T10:00:00.000+02:00 '
     'level=INFO source=routes.go:1143 msg="Listening on 127.0.0.1:11434 (version 0.1.32)"',
     "service-unreachable", True),
    (REVIEW49_OOM + "After this commit, the same page set runs out of memory on the 24 GB card (it fit before).",
     "cuda-oom", True),
    (REVIEW49_OOM + "With this PR, the server can no longer restart on the same page set; reverting it fixes the crash.",
     "cuda-oom", True),
])
def test_stop49_review_healthy_runs_and_own_reports(tmp_path, engine, log, entry, named):
    assert (entry in ids(scan_text(tmp_path, log + "\n", engine))) is named


# (round hfa50) the safety net's widenings on failures reported clean by batches 119-124 (uv's "... cannot be used" and
# libmamba's tree without their heads, a browser's CORS refusal, Triton's launcher error without RuntimeError, a container's
# entry command that cannot be executed), each a real line of those batches; and healthy lines sharing their words (a
# shell trace's exec, a hint about a package that cannot be used, a fallback; constructed for this test) stay clean
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("log, cls", [
    ("simpletuner[cuda13]==4.4.0 cannot be used.", "resolution-failed"),
    ("   │  └─ pytorch-cuda >=11.8,<11.9 , which conflicts with any installable versions previously reported;",
     "resolution-failed"),
    ("I'm getting an error in the console that says `Access to fetch at 'http://127.0.0.1:11434/api/chat' from origin "
     "'app://obsidian.md' has been blocked by CORS policy: Response to preflight request doesn't pass access control "
     "check`", "cors-blocked"),
    ("exec /usr/bin/entrypoint.sh: no such file or directory", "exec-failed"),
    ("/opt/nvidia/nvidia_entrypoint.sh: line 67: exec: .: cannot execute: Is a directory", "exec-failed"),
    # (the stop-50 review) withdrawn: Triton's launcher error in a title or prose without its exception class (a README
    # quoting "Triton Error [CUDA]: invalid argument"), an entrypoint's "line N: /path: No such file or directory" (a
    # `source` of a missing file the server starts past), a requirement sentence that goes on after "cannot be used"
    ("DeepSeek OCR Triton Error [CUDA] an illegal memory access on vLLM 0.11.2", None),
    ("/docker-entrypoint.sh: line 12: /etc/profile.d/conda.sh: No such file or directory", None),
    ("torch==2.4.1 cannot be used, so pin it in constraints.txt", None),
    ("+ exec /usr/local/bin/python3 -m vllm.entrypoints.openai.api_server --port 8000", None),
    ("hint: pinning torch==2.4.1; xformers cannot be used with this torch build, skipping it", None),
    ("flash_attn cannot be used on this GPU, falling back to SDPA.", None),
    ("Resolved 87 packages in 1.20s", None),
])
def test_hfa50_safety_net_widenings(tmp_path, engine, log, cls):
    assert_only_unrecognised(tmp_path, engine, log, cls)


# (the lead's reviews of stop 50) what this stop's two waves took from healthy runs and users' own reports, held where
# the reviews left them: a pasted commit's trailer, "fixes #N" and a change-verb step above a user's own failure keep
# it (round sfa's page markers withdrawn); a localized "actively refused" poll that retries, an embedding client that
# splits and re-embeds, llama.cpp's empty architecture name (a stub or truncated file), Ollama's GIN 404 before a pull
# that ends later, Triton's launcher error quoted in a README, an entrypoint sourcing a missing file, a glog W line of
# dynamo's fallback, a pytest skip reason and a fallback after a period are not their entries; a Chinese user's own
# "您好，正准备...结果...报错" keeps its finding (PAGE_ZH_SCENE withdrawn).  Lines constructed from the reviews' logs (the
# Ollama GIN lines, the dynamo W prefix and the skip reason are real shapes).
OOM50 = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB "
         "of which 1.06 GiB is free.")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("log,entry,named", [
    ("fix: pin torch\n\nSigned-off-by: Jane Doe <jane@example.com>\n\nWhen I start the server:\n" + OOM50, "cuda-oom", True),
    ("Tried the patch that fixes #123, same error:\n" + OOM50, "cuda-oom", True),
    ("- Pins torch to 2.4.1 in requirements.txt\n- Adds --gpu-memory-utilization 0.85\n\n" + OOM50, "cuda-oom", True),
    ("您好，正准备用 vllm 部署 DeepSeek-OCR，结果启动就报错了，麻烦看一下：\n" + OOM50, "cuda-oom", True),
    ("Erreur : Aucune connexion n'a pu être établie car l'ordinateur cible l'a expressément refusée, nouvelle tentative "
     "dans 2 s\nServeur prêt", "service-unreachable", False),
    ("ollama embed: the input length exceeds the context length (status code: 400); splitting chunk and re-embedding\n"
     "embedded 121 chunks", "context-length-exceeded", False),
    ("llama_model_load: error loading model: error loading model architecture: unknown model architecture: ''",
     "vllm-arch-unsupported", False),
    ("[GIN] 2024/09/06 - 12:03:07 | 404 |     580.375µs |       127.0.0.1 | POST     \"/api/chat\"\n" +
     "\n".join(f"time=2024-09-06T12:03:{10 + i:02d} level=INFO source=download.go:175 msg=\"downloading part\" n={i}"
               for i in range(8)) +
     "\n[GIN] 2024/09/06 - 12:05:40 | 200 |  2m33s |       127.0.0.1 | POST     \"/api/pull\"",
     "served-model-name-mismatch", False),
    ("W0711 17:08:34.348000 76404 torch/_dynamo/convert_frame.py:1280] WON'T CONVERT forward due to: RuntimeError: Found "
     "Tesla P40 which is too old to be supported by the triton GPU compiler, which is used as the backend. Triton only "
     "supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.1", "cuda-arch-mismatch", False),
    ("SKIPPED [1] test/inductor/test_aot_inductor.py:3871: MPS BFloat16 is only supported on MacOS 14+",
     "bf16-unsupported-gpu", False),
    ("BFloat16 is not supported on MPS. Using float16 instead.", "bf16-unsupported-gpu", False),
])
def test_stop50_review_healthy_runs_and_own_reports(tmp_path, engine, log, entry, named):
    assert (entry in ids(scan_text(tmp_path, log + "\n", engine))) is named


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("log", [
    "The engine fails at start-up in the graph warm-up (`Triton Error [CUDA]: invalid argument`) -- a vLLM issue, see "
    "the linked thread.",
    "/docker-entrypoint.sh: line 12: /etc/profile.d/conda.sh: No such file or directory\n"
    "INFO:     Application startup complete.",
])
def test_stop50_review_withdrawn_safety_net_forms_stay_clean(tmp_path, engine, log):
    rep = scan_text(tmp_path, log + "\n", engine)
    assert not rep["findings"] and not rep["unrecognised"], rep


# (round net53) the safety net's access-error: a local inference server's own access line answering a generation route
# with 500/501, or 404/405 to a GET (real lines of batches 75, 107, 116 and 145 and of the corpus's proof threads); the
# healthy answers that share its columns stay clean: a 400 (a bad request the server goes past), a 503 while the model
# loads, a 404 to a POST (Ollama's answer before a client pulls the model), /health, /api/show, /favicon.ico, GET /,
# uvicorn's INFO access line (lines of the benign corpus and real shapes of the same servers)
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("log, cls", [
    ("srv  log_server_r: request: POST /v1/chat/completions 127.0.0.1 500", "access-error"),
    ("srv log_server_r: request: POST /infill 127.0.0.1 501", "access-error"),
    ("[GIN] 2026/03/12 - 13:05:26 | 500 |    8.6428696s |       127.0.0.1 | POST     \"/api/generate\"", "access-error"),
    ("июн 16 17:43:34 ai ollama[3733311]: [GIN] 2024/06/16 - 17:43:34 | 500 |          5m1s |       127.0.0.1 | POST     "
     "\"/api/chat\"", "access-error"),
    ("2024-09-19 11:51:33 [GIN] 2024/09/19 - 08:51:33 | 404 |     193.349µs |      172.17.0.1 | GET      "
     "\"/v1/chat/completions\"", "access-error"),
    ("[GIN] 2024/05/07 - 07:41:07 | **404** |       9.017µs |       127.0.0.1 | GET      \"/api/generate/\"", "access-error"),
    ("srv  log_server_r: request: GET /health 127.0.0.1 503", None),
    ("srv  log_server_r: request: POST /v1/chat/completions 127.0.0.1 503", None),
    ("srv  log_server_r: request: POST /v1/chat/completions 127.0.0.1 400", None),
    ("srv  log_server_r: request: GET /favicon.ico 127.0.0.1 404", None),
    ("[GIN] 2024/09/06 - 12:03:07 | 404 |     580.375µs |       127.0.0.1 | POST     \"/api/chat\"", None),
    ("[GIN] 2025/11/17 - 12:27:55 | 404 |    1.876248ms |   192.168.0.220 | POST     \"/api/show\"", None),
    ("[GIN] 2024/09/06 - 12:03:07 | 400 |     580.375µs |       127.0.0.1 | POST     \"/api/chat\"", None),
    ("[GIN] 2024/09/06 - 12:03:07 | 404 |     580.375µs |       127.0.0.1 | GET      \"/favicon.ico\"", None),
    ("[GIN] 2024/09/06 - 12:03:07 | 500 |     580.375µs |       127.0.0.1 | GET      \"/\"", None),
    ("0.02.879.022 I srv       log_server_response: rid  | GET /v1/models 127.0.0.1:56557 | status 503 | cost 42000.09s", None),
    ("INFO:     127.0.0.1:50290 - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request", None),
])
def test_net53_access_error(tmp_path, engine, log, cls):
    assert_only_unrecognised(tmp_path, engine, log, cls)


# (round net53) the safety net's ntstatus: a Windows process that died or never started, by its NTSTATUS code in hex (real
# lines of batches 116, 130 and 134); a console closed with Ctrl+C (0xc000013a), a zero code and the decimal form's own
# class stay as they were
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("log, cls", [
    ("**error loading llama server\" error=\"llama runner process has terminated: exit status 0xc0000409**", "ntstatus"),
    ("Failed to generate a response: error response: status=500 body=unable to load runner: error waiting for runner to be "
     "ready: llama.cpp terminated unexpectedly: llama.cpp exit status: exit status 0xc0000005", "ntstatus"),
    ("应用程序无法正常启动(0xc0000142)。请单击“确定”关闭应用程序。 ", "ntstatus"),
    ("`exit code: 0xc0000135, STATUS_DLL_NOT_FOUND`", "ntstatus"),
    ("llama runner process has terminated: exit status 0xc000013a", None),
    ("exit code: 0x00000000", None),
    ("runner exited: exit status 0x0", None),
    ("Process finished with exit code -1073741819 (0xC0000005)", "exit-status"),
])
def test_net53_ntstatus(tmp_path, engine, log, cls):
    assert_only_unrecognised(tmp_path, engine, log, cls)


# (round net53) an access line reports that a request failed; a line of another class beside it says why and names the
# block (docker/genai-stack#62's compose lines, batch 121)
@pytest.mark.parametrize("engine", ENGINES)
def test_net53_access_error_gives_the_block_to_its_cause(tmp_path, engine):
    log = ("genai-stack-llm-1         | [GIN] 2023/10/21 - 03:52:30 | 500 |  873.831145ms |      172.20.0.5 | POST     "
           "\"/api/generate\"\n"
           "genai-stack-llm-1         | 2023/10/21 03:52:30 llama.go:438: llama runner stopped with error: signal: "
           "segmentation fault (core dumped)\n")
    rep = scan_text(tmp_path, log, engine)
    assert [u.get("class") for u in rep["unrecognised"]] == ["fatal-signal"]


# (round pn54) the safety net's endpoint-failed: a managed inference endpoint (Amazon SageMaker) that failed, in the
# service's own status words (real lines of batches 146 and 152 and of the corpus's proof threads); the healthy lines of
# the same service stay clean: its /ping access line, an endpoint that passed its check, a sentence about the check
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("log, cls", [
    ("> The primary container for production variant llm-jp-13b-instruct-full-jaster-dolly-oasst-v1 did not pass the "
     "ping health check. Please check CloudWatch logs for this endpoint.", "endpoint-failed"),
    ("Error hosting endpoint - production variant AllTraffic did not pass the ping health check", "endpoint-failed"),
    ("`An error occurred (ModelError) when calling the InvokeEndpoint operation: Received server error (0) from model "
     "with message \"Amazon SageMaker could not get a response from the [ENDPOINT NAME] endpoint.\"`", "endpoint-failed"),
    ("An error occurred (ModelError) when calling the InvokeEndpoint operation: Received server error (500) from primary "
     "and could not load the entire response body.", "endpoint-failed"),
    ("2020-06-08T09:15:51.852+02:00 | 10.32.0.2 - - [08/Jun/2020:07:15:51 +0000] \"GET /ping HTTP/1.1\" 200 3 \"-\" "
     "\"AHC/2.0\"", None),
    ("Endpoint failing after initially passing ping health check", None),
    ("The container passed the ping health check and the endpoint is InService.", None),
    ("INFO - Received server error responses are retried three times", None),
])
def test_pn54_endpoint_failed(tmp_path, engine, log, cls):
    assert_only_unrecognised(tmp_path, engine, log, cls)


# (round pn54) the safety net's heap-corruption: glibc's allocator aborting on a corrupted heap, in its own words (batch
# 154's docling#1949 and the corpus's proof threads), glibc < 2.26's "*** Error in `prog': ..." wrapper too; code and prose
# that name malloc() or free() or a double free stay clean
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("log, cls", [
    ("malloc(): invalid next size (unsorted)", "heap-corruption"),
    ("free(): double free detected in tcache 2", "heap-corruption"),
    ("*** Error in `python': double free or corruption (!prev): 0x0000000001d8e3c0 ***", "heap-corruption"),
    ("corrupted size vs. prev_size", "heap-corruption"),
    ("munmap_chunk(): invalid pointer", "heap-corruption"),
    ("void *p = malloc(n); /* released by free() below */", None),
    ("Fixed a double free in the tokenizer's cleanup path", None),
    ("calls free(): the buffer is released twice otherwise", None),
])
def test_pn54_heap_corruption(tmp_path, engine, log, cls):
    assert_only_unrecognised(tmp_path, engine, log, cls)


# (round net56) error lines in log formats the net did not read: llama.cpp's own timestamped one-letter level (common/log.cpp:
# "%d.%02d.%03d.%03d " then "E "; batch 104's Lemonade and janhq/jan#8273's router), only its E letter (the I, W and D lines
# stay unread); a JSON log event's own level field at error or above, which the JSON unwrapping left behind (pino's 50/60
# (lib/constants.js), the old llama.cpp server's "ERR" (mozilla-ai/llamafile#399), zap's and logrus' words); info levels
# and a body's "level" key that is not a level stay clean
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("log, cls", [
    ("0.00.910.388 E srv load_model: failed to load multimodal model, '/models/mmproj.gguf'", "error-level"),
    ("[llamacpp-router stdout] [52717] 0.00.910.388 E srv load_model: failed to load multimodal model, '/m/mmproj.gguf'",
     "error-level"),
    ("2026-08-02T18:00:30.700371072Z [lemonade-server-app-1] 2026-08-02 18:00:30.700 [Info] (Process) 3.24.432.764 E cmn  "
     "common_init_: could not set up the model", "error-level"),
    ("0.00.869.682 W common_fit_params: failed to fit params to free device memory: was unable to fit model, abort", None),
    ("0.00.024.615 I srv    load_model: loading model 'E:\\LLM\\x.gguf'", None),
    ("12.50 E coli colonies were counted on 3 plates", None),
    ('{"function":"load_model","level":"ERR","line":447,"msg":"unable to load model","timestamp":1714935621}',
     "error-level"),
    ('{"level":50,"time":1752516972565,"pid":10104,"hostname":"host","msg":"runner went away"}', "error-level"),
    ('{"level":60,"time":1752516972565,"msg":"shutting down the worker pool"}', "error-level"),
    ('{"level":"fatal","ts":"2022-07-27T08:01:16.260Z","msg":"discovery stopped"}', "error-level"),
    ('{"level":30,"time":1752516972565,"msg":"runner started"}', None),
    ('{"level":"info","ts":1698250893.6817641,"logger":"setup","msg":"Initializing NVML client"}', None),
    ('{"level":"warn","msg":"slow request, retrying"}', None),
    ('{"msg":"log level set","config":{"level":50}}', None),
])
def test_net56_log_formats(tmp_path, engine, log, cls):
    assert_only_unrecognised(tmp_path, engine, log, cls)


# (round net56) document shapes: a message as a template, x's where a run prints a number (www.rightnowai.co's CUDA error
# guide, "Tried to allocate X.XX GiB"; batch 63's "Input prompt (xxxx tokens)"); a change to documentation told by the change
# (batch 74's "1. Add one paragraph about the error ...", tarantool/cartridge#2090's "Document how to fix ..."); a request
# for a clearer message led by the issue it answers (pouchdb/pouchdb-server#35's "(#34) - better error messages when
# EADDRINUSE").  The same errors as a run prints them keep their entries
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("log, entry", [
    ("RuntimeError: CUDA out of memory. Tried to allocate X.XX GiB cudaMalloc failed: out of memory", None),
    ("RuntimeError: CUDA out of memory. Tried to allocate XX.XX MiB (GPU 0; XX GiB total capacity)", None),
    ("ImportError: libcudart.so.xxx: cannot open shared object file: No such file or directory", None),
    ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity)", "cuda-oom"),
    ("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory", "libcudart-11-missing"),
    ('1. Add one paragraph about the error "listen tcp 127.0.0.1:11434: bind: address already in use" for starting Ollama.',
     None),
    ("Adds a note to the documentation for how to start the application after an `address already in use` error.", None),
    ("Document how to fix 'Address already in use' errors", None),
    ("(#34) - better error messages when EADDRINUSE", None),
    ("OSError: [Errno 98] Address already in use", "address-in-use"),
    ("Adding 3 new layers: OSError: [Errno 98] Address already in use", "address-in-use"),
    ("2024-05-01 12:00:00 ERROR Add a note about the error: OSError: [Errno 98] Address already in use", "address-in-use"),
])
def test_net56_document_shapes(tmp_path, engine, log, entry):
    assert ids(scan_text(tmp_path, log + "\n", engine)) == ([entry] if entry else [])


# Issue 24, stop 58: a C or C++ check macro whose message is an entry's error is the library's source quoted in a thread
# (scanner.CHECK_CALL, beside LOG_CALL); it was bf16-unsupported-gpu's own veto (stop 57) and holds for every entry.
SOURCE_CHECKS = [
    '  TORCH_CHECK(kernel_launched, "cutlassF: no kernel found to launch!");',
    '    AT_ERROR("CUDA out of memory. Tried to allocate ", format_size(alloc_size), " (GPU ", device, ")");',
    '  TORCH_CHECK_VALUE(false, "Bfloat16 is only supported on GPUs with compute capability of at least 8.0");',
    '    PADDLE_ENFORCE_EQ(ok, true, "Out of memory error on GPU %d. Cannot allocate %s memory on GPU");',
    '  TORCH_INTERNAL_ASSERT(false, "CUDA error: no kernel image is available for execution on the device");',
    'CUDA_CHECK(cudaMalloc(&p, n)); // "CUDA error: out of memory"',
]
STILL_NAMED = [
    ('ERROR("CUDA out of memory. Tried to allocate 2.00 GiB")', "cuda-oom"),       # a level, not a macro
    ('CHECK failed: "CUDA out of memory. Tried to allocate 2.00 GiB"', "cuda-oom"),  # glog's report of a check
    ("RuntimeError: cutlassF: no kernel found to launch!", "bf16-unsupported-gpu"),
]


@pytest.mark.parametrize("engine", ENGINES)
def test_stop58_a_check_macro_in_source_quotes_the_error(tmp_path, engine):
    for line in SOURCE_CHECKS:
        rep = scan_text(tmp_path, line + "\n", engine)
        assert not rep["findings"], (line, rep["findings"])
    for line, entry in STILL_NAMED:
        rep = scan_text(tmp_path, line + "\n", engine)
        assert entry in {f["id"] for f in rep["findings"]}, (line, rep)
