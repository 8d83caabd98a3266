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
