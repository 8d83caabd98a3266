"""Rules over several lines, and the safety net that keeps error-looking logs from passing as clean."""

import pytest

from ocrdeploy.diagnose import scanner
from ocrdeploy.diagnose.table import parse_rules

ENGINES = ["grep", "python"] + (["hyperscan"] if scanner.hyperscan is not None else [])
CAPTURE = "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  37%|███▋      | 25/67 [03:00<05:02]"
DEATH = "Engine core proc EngineCore_DP0 died unexpectedly, shutting down client."
RULE = parse_rules([{
    "id": "capture-death", "stage": "start", "patterns": ["died unexpectedly"],
    "preceded_by": ["Capturing CUDA graphs"], "within": 5, "reset_by": ["Graph capturing finished"],
    "cause": "c", "fix": "f"}, {
    "id": "header", "stage": "install", "patterns": ["dependency resolver"],
    "followed_by": ["vllm 0\\.8\\.5"], "within": 2, "cause": "c", "fix": "f"}], "t.yaml", "t")
WIRE = [r.to_dict() for r in RULE]


def ids(tmp_path, lines, engine, name="m.log", rules=WIRE):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    rep = scanner.scan(str(p), rules, engine=engine)
    return {f["id"]: f["first_line"] for f in rep["findings"] + rep["harmless"]}, rep


@pytest.mark.parametrize("engine", ENGINES)
def test_preceded_by_within_n_lines(tmp_path, engine):
    filler = [f"INFO step {i}" for i in range(3000)]
    assert ids(tmp_path, filler + [CAPTURE, "INFO a", DEATH], engine)[0] == {"capture-death": 3003}
    # the capture line 5 lines up counts, 6 lines up does not
    assert "capture-death" in ids(tmp_path, [CAPTURE] + ["INFO x"] * 4 + [DEATH], engine)[0]
    assert "capture-death" not in ids(tmp_path, [CAPTURE] + ["INFO x"] * 5 + [DEATH], engine)[0]
    # a death without a capture before it, or after a finished capture, is not this rule
    assert ids(tmp_path, filler + [DEATH], engine)[0] == {}
    assert ids(tmp_path, [CAPTURE, "INFO Graph capturing finished in 41 secs", DEATH], engine)[0] == {}


@pytest.mark.parametrize("engine", ENGINES)
def test_followed_by_within_n_lines(tmp_path, engine):
    head = "ERROR: pip's dependency resolver does not currently take into account all the packages"
    ok = "vllm 0.8.5+cu118 requires tokenizers>=0.21.1, but you have tokenizers 0.20.3 which is incompatible."
    assert ids(tmp_path, [head, "x", ok], engine)[0] == {"header": 1}
    assert ids(tmp_path, [head, "x", "y", ok], engine)[0] == {}
    assert ids(tmp_path, [ok, head], engine)[0] == {}


@pytest.mark.parametrize("engine", ENGINES)
def test_neighbours_are_read_across_chunk_borders_and_in_gz(tmp_path, engine):
    import gzip

    lines = ["INFO " + "z" * 200] * 60000 + [CAPTURE, DEATH]      # > 8 MiB: several chunks
    p = tmp_path / "big.log.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("\n".join(lines) + "\n")
    rep = scanner.scan(str(p), WIRE, engine=engine)
    assert [(f["id"], f["first_line"]) for f in rep["findings"]] == [("capture-death", 60002)]


GENERIC = [
    ("CMake Error at CMakeLists.txt:63 (find_package):", "cmake-error"),
    ("nvcc fatal   : A single input file is required for a non-link phase when an outputfile is specified",
     "nvcc-fatal"),
    ("../../src/neural/encoder.cc:116:14: error: 'X' is not a member of 'Y'", "compiler-error"),
    ("Killed", "build-killed"),
    ("ninja: build stopped: subcommand failed.", "build-killed"),
    ("FAILED: [code=1] CMakeFiles/install.util", "failed"),
    ("KeyError: 'shard_7'", "exception"),
    ("(EngineCore pid=1) ERROR 12-01 07:42:58 [core.py:1] something went wrong", "error-level"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("line,cls", GENERIC)
def test_safety_net_classes(tmp_path, engine, line, cls):
    found, rep = ids(tmp_path, ["INFO start", line, "INFO end"], engine, rules=[])
    assert [u["class"] for u in rep["unrecognised"]] == [cls]


@pytest.mark.parametrize("engine", ENGINES)
def test_quiet_levels_are_not_errors(tmp_path, engine):
    """vLLM's healthy fd-limit warning names an OSError; a warning is not an error line."""
    warn = ("(APIServer pid=1) WARNING 12-01 07:41:25 [system_utils.py:255] Found ulimit of 20000 and failed to "
            "automatically increase with error current limit exceeds maximum limit. This can cause fd limit errors "
            "like `OSError: [Errno 24] Too many open files`. Consider increasing with ulimit -n")
    _, rep = ids(tmp_path, [warn, "INFO: 127.0.0.1:1 - \"GET /v1/models HTTP/1.1\" 500 Internal Server Error"], engine,
                 rules=[])
    assert rep["unrecognised"] == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_long_traceback_is_explained_by_its_exception_line(tmp_path, engine):
    rules = parse_rules([{"id": "k", "stage": "start", "patterns": ["KnownError: boom"], "cause": "c",
                          "fix": "f"}], "t", "t")
    frames = [f'  File "/x/m{i}.py", line {i}, in f{i}' for i in range(60)]
    lines = ["ERROR:    Exception in ASGI application", "Traceback (most recent call last):"] + frames + [
        "KnownError: boom"]
    _, rep = ids(tmp_path, lines, engine, rules=[r.to_dict() for r in rules])
    assert [f["id"] for f in rep["findings"]] == ["k"] and rep["unrecognised"] == []
    lines[-1] = "OtherError: boom"
    _, rep = ids(tmp_path, lines, engine, rules=[r.to_dict() for r in rules])
    assert [(u["first_line"], u["block"]) for u in rep["unrecognised"]] == [(63, [1, 63])]


def test_a_killed_flash_attn_build_gets_its_own_fix_not_the_vllm_compiles(tmp_path):
    """Issue 20 item 10: pip building flash-attn from source, its nvcc killed (the wheel line as dots.ocr#77 shows
    it, nvcc's command line as flash-attention#1418 shows it); vLLM's own compile keeps compile-oom-killed."""
    from ocrdeploy.diagnose.engine import wire_rules
    from ocrdeploy.diagnose.table import load_table

    builtin = wire_rules(load_table())
    nvcc = ("[2/85] /home/zhangz/cuda/cuda-12.2/bin/nvcc --generate-dependencies-with-compile --dependency-output "
            "/tmp/pip-install-sukldczv/flash-attn_cd141d5ea1a243cbbe601fdc5298daca/build/temp.linux-x86_64-cpython-310/"
            "csrc/flash_attn/src/flash_bwd_hdim128_fp16_causal_sm80.o.d")
    kill = "nvcc error   : 'cicc' died due to signal 9 (Kill signal)"
    found, _ = ids(tmp_path, ["Building wheels for collected packages: flash-attn",
                              "  Building wheel for flash-attn (setup.py) ... -", nvcc] + ["x"] * 30 + [kill],
                   "python", rules=builtin)
    assert "flash-attn-build-oom" in found and "compile-oom-killed" not in found, found
    found, _ = ids(tmp_path, ["[12/410] Building CUDA object CMakeFiles/_C.dir/csrc/attention/paged_attention_v1.cu.o",
                              kill], "python", name="v.log", rules=builtin)
    assert "compile-oom-killed" in found and "flash-attn-build-oom" not in found, found


HARMLESS = ("WARNING 10-19 11:03:12 [flashinfer.py:88] FlashInfer precompiled kernels not found for sm_120; falling back "
            "to JIT compilation (first start is slower).")


@pytest.mark.parametrize("fatal,cls", [
    ("Segmentation fault (core dumped)", "fatal-signal"),
    ("Aborted (core dumped)", "fatal-signal"),
    ("worker exited with code 139", "exit-status"),
    ("[Mon Dec  1 07:00:00 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.", "kernel-gpu"),
    ("[Mon Dec  1 07:00:00 2026] NVRM: GPU at PCI:0000:3b:00: GPU has fallen off the bus.", "kernel-gpu"),
])
def test_the_safety_net_is_never_switched_off_by_a_harmless_entry(tmp_path, fatal, cls):
    """Issue 24: a log whose only finding is harmless exits 3 when a fatal end stands in it, and a harmless entry
    on the same line does not absorb it."""
    from ocrdeploy.diagnose.engine import exit_code, wire_rules
    from ocrdeploy.diagnose.table import load_table

    builtin = wire_rules(load_table())
    for lines in ([HARMLESS, "INFO x", "INFO y", "INFO z", "INFO w", fatal], [HARMLESS + " " + fatal]):
        found, rep = ids(tmp_path, lines, "python", rules=builtin)
        assert "flashinfer-precompiled-missing" in found
        assert [u["class"] for u in rep["unrecognised"]] == [cls], (lines, rep["unrecognised"])
        assert exit_code([rep]) == 3


def test_an_unrecognised_failure_names_the_nearest_entries_without_claiming_one(tmp_path):
    from ocrdeploy.diagnose.engine import annotate, exit_code, fix_context, scan_local
    from ocrdeploy.diagnose.table import load_table

    rules = load_table()
    p = tmp_path / "u.log"
    p.write_text("RuntimeError: CUDA error: no kernel image is available for execution on the device (hipErrorNoBinary)\n")
    reps = annotate(scan_local([str(p)], [r for r in rules if r.id != "cuda-arch-mismatch"]), rules, fix_context())
    (u,) = reps[0]["unrecognised"]
    assert u["looks_like"][0] == "cuda-arch-mismatch" and reps[0]["findings"] == [] and exit_code(reps) == 3


@pytest.mark.parametrize("foreign,cls", [
    ("Traceback (most recent call last):", "traceback"),
    ("CMake Error at CMakeLists.txt:12 (find_package):", "cmake-error"),
    ("nvcc fatal   : A single input file is required for a non-link phase when an outputfile is specified", "nvcc-fatal"),
])
def test_a_harmless_entry_never_absorbs_another_kind_of_error_on_its_line(tmp_path, foreign, cls):
    """Issue 24: the harmless entry explains its own words; an error of another kind on the same line stays a
    finding of the safety net (exit 3), and the line alone stays harmless (exit 0)."""
    from ocrdeploy.diagnose.engine import exit_code, wire_rules
    from ocrdeploy.diagnose.table import load_table

    builtin = wire_rules(load_table())
    found, rep = ids(tmp_path, [HARMLESS], "python", rules=builtin)
    assert "flashinfer-precompiled-missing" in found and exit_code([rep]) == 0
    found, rep = ids(tmp_path, [HARMLESS + " " + foreign], "python", rules=builtin)
    assert "flashinfer-precompiled-missing" in found
    assert [u["class"] for u in rep["unrecognised"]] == [cls] and exit_code([rep]) == 3


def test_a_warning_entry_does_not_explain_the_error_lines_around_it(tmp_path):
    """Issue 24: only a known error explains the error lines next to it; a warning (pip retried a download) beside
    an error no entry names leaves the log unrecognised (exit 3), not clean."""
    from ocrdeploy.diagnose.engine import exit_code, wire_rules
    from ocrdeploy.diagnose.table import load_table

    builtin = wire_rules(load_table())
    retry = ("WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection "
             "broken by 'ProtocolError('Connection aborted.')': /simple/torch/")
    # (round in57: with "(from versions: none)" after pip's retries the index never answered, pip-timeout's; a listed
    # version is an index that answered, an error no entry names)
    error = "ERROR: Could not find a version that satisfies the requirement torch==9.9 (from versions: 1.0.0, 2.0.0)"
    found, rep = ids(tmp_path, [retry, error], "python", rules=builtin)
    assert "pip-retrying" in found and [u["class"] for u in rep["unrecognised"]] == ["compiler-error"]
    assert exit_code([rep]) == 3


def test_a_kill_is_named_before_the_error_word_and_an_exit_status_after_it():
    """What killed a process is the more telling class ("error: ... oom-kill event" is a memory kill); a compiler's
    "error: command ... failed with exit code 255" stays a compiler error (held-out batch 1 scores it so)."""
    assert scanner.generic_class("slurmstepd: error: Detected 1 oom-kill event(s) in step 3495064.0 cgroup.") == "kernel-gpu"
    assert scanner.generic_class("error: command '/opt/conda/bin/nvcc' failed with exit code 255") == "compiler-error"
    assert scanner.generic_class("worker exited with code 139") == "exit-status"


ON_LINE = [r.to_dict() for r in parse_rules([{
    "id": "in-build", "stage": "compile", "patterns": ["Killed"], "preceded_by": ["(?i)build", "^#\\d+ "],
    "within": 3, "context_on_line": True, "cause": "c", "fix": "f"}, {
    "id": "plain", "stage": "compile", "patterns": ["Killed"], "preceded_by": ["(?i)build"], "within": 3,
    "cause": "c", "fix": "f"}], "t.yaml", "t")]


@pytest.mark.parametrize("engine", ENGINES)
def test_context_on_line_lets_the_line_be_its_own_context(tmp_path, engine):
    """Issue 24: "g++: fatal error: Killed signal terminated program cc1plus" needs no build line before it; a
    BuildKit prefix (seen on the line as written, before unwrap) counts; without the flag the line is not enough."""
    assert ids(tmp_path, ["INFO x", "build step Killed"], engine, rules=ON_LINE)[0] == {"in-build": 2}
    assert ids(tmp_path, ["INFO x", "#8 245.6 Killed"], engine, rules=ON_LINE)[0] == {"in-build": 2}
    assert ids(tmp_path, ["building", "Killed"], engine, rules=ON_LINE)[0] == {"in-build": 2, "plain": 2}
    assert ids(tmp_path, ["model loaded", "Killed"], engine, rules=ON_LINE)[0] == {}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_bare_kill_is_a_compile_only_inside_a_build(tmp_path, engine):
    """Batch 3's false alarm: a bare `Killed` after a model was loading is the host's memory (host-oom-killed),
    the same line after a compile line is compile-oom-killed."""
    from ocrdeploy.diagnose.engine import wire_rules
    from ocrdeploy.diagnose.table import load_table

    builtin = wire_rules(load_table())
    found, _ = ids(tmp_path, ["Refiner unloaded.", "model_type EPS", "Killed"], engine, rules=builtin)
    assert set(found) == {"host-oom-killed"}, found
    found, _ = ids(tmp_path, ["[ 12/300] Building CUDA object csrc/x.cu.o", "Killed"], engine, rules=builtin)
    assert set(found) == {"compile-oom-killed"}, found
    found, _ = ids(tmp_path, ["    Last State:  Terminated", "      Exit Code:    137"], engine, rules=builtin)
    assert set(found) == {"host-oom-killed"}, found


@pytest.mark.parametrize("line,cls", [
    ("[Bug]: 段错误 (核心已转储)", "fatal-signal"),
    ("foo.c:40:1: error fatal: bar.h: No existe el fichero o el directorio", "compiler-error"),
    ("foo.c:1:10: schwerwiegender Fehler: bar.h: Datei oder Verzeichnis nicht gefunden", "compiler-error"),
    ("foo.c:1:10: 致命错误：bar.h：没有那个文件或目录", "compiler-error"),
    ("Sat Jan 25 09:40:15 2020 Out of memory: Kill process 1039 (netifd) score 2 or sacrifice child", "kernel-gpu"),
])
def test_the_safety_net_knows_other_languages_and_older_wordings(line, cls):
    assert scanner.generic_class(line) == cls


def test_a_bare_kill_after_the_flash_attn_extensions_nvcc_line_is_its_build(tmp_path):
    """A Docker build of flash-attn shows no pip wheel line, only nvcc's flags naming the extension (the line as
    flash-attention#734 prints it); the same kill after another extension's flags is not flash-attn's."""
    from ocrdeploy.diagnose.engine import wire_rules
    from ocrdeploy.diagnose.table import load_table

    builtin = wire_rules(load_table())
    flags = ("--expt-extended-lambda --use_fast_math -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 "
             "--threads 4 -DTORCH_API_INCLUDE_EXTENSION_H '-DPYBIND11_COMPILER_TYPE=\"_gcc\"' "
             "-DTORCH_EXTENSION_NAME={} -D_GLIBCXX_USE_CXX11_ABI=1")
    found, _ = ids(tmp_path, [flags.format("flash_attn_2_cuda"), "Killed"], "python", rules=builtin)
    assert "flash-attn-build-oom" in found and "host-oom-killed" not in found, found
    found, _ = ids(tmp_path, [flags.format("_C"), "Killed"], "python", name="v.log", rules=builtin)
    assert "flash-attn-build-oom" not in found, found


def test_the_wheel_downloads_error_line_counts_only_after_a_github_url(tmp_path):
    """setup.py's download error names no host ("error: <urlopen error ...>", LongLoRA#43 as pip prints it): it is
    github-fetch-failed only within a few lines after "Guessing wheel URL: https://github.com/..."; alone, or after
    a line that names another host, it is a network error of something else."""
    from ocrdeploy.diagnose.engine import wire_rules
    from ocrdeploy.diagnose.table import load_table

    builtin = wire_rules(load_table())
    guess = ("      Guessing wheel URL:  https://github.com/Dao-AILab/flash-attention/releases/download/v2.3.1.post1/"
             "flash_attn-2.3.1.post1+cu117torch2.0cxx11abiFALSE-cp39-cp39-linux_x86_64.whl")
    error = "      error: <urlopen error [Errno -2] Name or service not known>"
    found, _ = ids(tmp_path, ["      running bdist_wheel", guess, error], "python", rules=builtin)
    assert "github-fetch-failed" in found, found
    found, _ = ids(tmp_path, ["      running bdist_wheel", error], "python", name="a.log", rules=builtin)
    assert "github-fetch-failed" not in found, found
    found, _ = ids(tmp_path, [guess] + ["      running build"] * 7 + [error], "python", name="b.log", rules=builtin)
    assert "github-fetch-failed" not in found, found


def test_a_warning_level_line_quoting_ptxas_is_not_a_triton_failure(tmp_path):
    """TensorFlow falls back to the driver when its ptxas does not know the card and says so at glog's W level
    (tensorflow#46933); the same ptxas words at ERROR level, or with no level, are Triton's failure."""
    from ocrdeploy.diagnose.engine import wire_rules
    from ocrdeploy.diagnose.table import load_table

    builtin = wire_rules(load_table())
    quote = ("W tensorflow/stream_executor/gpu/asm_compiler.cc:235] Your CUDA software stack is old. We fallback to the "
             "NVIDIA driver for some compilation. Update your CUDA version to get the best performance. The ptxas error "
             "was: ptxas fatal   : Value 'sm_86' is not defined for option 'gpu-name'")
    found, rep = ids(tmp_path, ["2021-02-04 08:52:12.943009: " + quote], "python", rules=builtin)
    assert found == {} and rep["unrecognised"] == [], (found, rep["unrecognised"])
    found, _ = ids(tmp_path, ["ptxas fatal   : Value 'sm_86' is not defined for option 'gpu-name'"], "python",
                   name="e.log", rules=builtin)
    assert "triton-compile-failed" in found, found


VETO = [r.to_dict() for r in parse_rules([{
    "id": "port", "stage": "start", "patterns": [r"\[WinError 10013\]"],
    "reset_by": [r'^\s*File "[^"]*socket\.py", line \d+, in __init__\s*$'], "within": 2,
    "cause": "c", "fix": "f"}], "t.yaml", "t")]


@pytest.mark.parametrize("engine", ENGINES)
def test_reset_by_without_preceded_by_vetoes_from_the_lines_just_before(tmp_path, engine):
    """Without preceded_by the line alone counts, unless one of the `within` lines before it matches reset_by."""
    err = "PermissionError: [WinError 10013] An attempt was made to access a socket"
    frame = '  File "socket.py", line 232, in __init__'
    assert "port" in ids(tmp_path, [err], engine, rules=VETO)[0]
    assert "port" in ids(tmp_path, ['  File "server.py", line 9, in bind', err], engine, rules=VETO)[0]
    assert "port" not in ids(tmp_path, [frame, err], engine, name="a.log", rules=VETO)[0]
    assert "port" not in ids(tmp_path, [frame, "    _socket.socket.__init__(self)", err], engine, name="b.log",
                             rules=VETO)[0]
    # past `within` lines the frame no longer speaks for this line
    assert "port" in ids(tmp_path, [frame, "x", "y", err], engine, name="c.log", rules=VETO)[0]


def test_the_lead_of_an_unrecognised_line_reads_the_lines_shown_around_it(tmp_path):
    """A bare "failed to load all models" names no library; the allocator's line above it does (Triton's onnxruntime
    backend, triton-inference-server/server#5661's shape): the lead comes from both, still without a finding."""
    from ocrdeploy.diagnose.engine import annotate, exit_code, fix_context, scan_local
    from ocrdeploy.diagnose.table import load_table

    rules = load_table()
    p = tmp_path / "u.log"
    p.write_text("I0419 14:01:46.9 1 model_lifecycle.cc:459] loading: ocr:1\n"
                 "I0419 14:01:47.0 1 ocr.cc:12] no kernel image is available for execution on the device (sm_61)\n"
                 "error: creating server: Internal - failed to load all models\n")
    reps = annotate(scan_local([str(p)], [r for r in rules if r.id != "cuda-arch-mismatch"]), rules, fix_context())
    (u,) = reps[0]["unrecognised"]
    assert u["text"].startswith("error: creating server")
    assert "cuda-arch-mismatch" in u["looks_like"] and reps[0]["findings"] == [] and exit_code(reps) == 3


RETRIED = [r.to_dict() for r in parse_rules([{
    "id": "proxy-502", "stage": "client", "patterns": ["status code 502"], "retried_by": ["(?i)\\bretrying\\b"],
    "cause": "c", "fix": "f"}], "t.yaml", "t")]


@pytest.mark.parametrize("engine", ENGINES)
def test_retried_by_lets_a_retried_attempt_pass_and_keeps_the_last_failure(tmp_path, engine):
    """(stop 48) A client's failure it retries at once ("... status code 502." then "Retrying (1/3)") is not the run's
    end; the last failure of a run that never recovers has no retry after it and counts.  The retry line stands among
    the next scanner.RETRY_WITHIN lines (3), not further."""
    fail, retry = "ERROR - Ollama call failed with status code 502.", "INFO - Retrying (1/3)"
    assert ids(tmp_path, [fail, retry, "INFO - page 5 extracted"], engine, rules=RETRIED)[0] == {}
    assert ids(tmp_path, [fail, retry, fail, retry, fail], engine, rules=RETRIED)[0] == {"proxy-502": 5}
    assert ids(tmp_path, [fail, "x", "y", retry], engine, rules=RETRIED)[0] == {}
    assert ids(tmp_path, [fail, "x", "y", "z", retry], engine, rules=RETRIED)[0] == {"proxy-502": 1}
    # a retry BEFORE the failure is no retry of it
    assert ids(tmp_path, [retry, fail, "INFO - done"], engine, rules=RETRIED)[0] == {"proxy-502": 2}


@pytest.mark.parametrize("engine", ENGINES)
def test_builtin_client_entries_pass_a_retried_attempt(tmp_path, engine):
    """The review of stop 48: an OCR app's LM Studio call without choices retried and then fine was choices-empty (exit
    1); an Ollama client's 502 retried was local-proxy-failed.  The same lines without the retry keep their entry."""
    from ocrdeploy.diagnose.engine import wire_rules
    from ocrdeploy.diagnose.table import load_table

    builtin = wire_rules(load_table())
    for fail, entry in (("[ocr] LM Studio request failed: list index out of range", "choices-empty"),
                        ("2025-06-01 12:00:01,000 - app - ERROR - Ollama call failed with status code 502.",
                         "local-proxy-failed")):
        assert entry not in ids(tmp_path, [fail, "[ocr] retry 1/3", "[ocr] page 3 ok"], engine, rules=builtin)[0]
        assert entry in ids(tmp_path, [fail, "[ocr] giving up"], engine, rules=builtin)[0]
