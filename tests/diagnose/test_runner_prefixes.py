"""Issue 24, stop 58: the prefixes launchers and process managers put before every line of the processes they run.

Wrapping every recognised real case of the corpus and of batches 190-212 in one runner's prefix
(bench/diagnose_wrapped.py) lost 2.8-3.9% of them for Ray's and vLLM's process tags, torchrun's rank tee, pm2,
Jenkins' and bracketed timestamps and a markdown quote: the patterns anchored at a line's start and the levels read
there.  scanner.WRAPPER now strips them; the cases below are real corpus cases whose patterns are anchored.
"""

from __future__ import annotations

import pytest

import corpus
from ocrdeploy.diagnose import scanner

DATA = corpus.load()
SCAN = corpus.Scanner()
ENGINES = corpus.ENGINES


def scan_text(log: str, engine: str) -> dict:
    return SCAN.scan({"log": log}, engine)

PREFIXES = [
    ("(RayWorkerWrapper pid=3524, ip=10.0.0.5) ", "Ray's actor tag with its node"),
    ("(_AsyncLLMEngine pid=10245) ", "vLLM 0.4's engine actor"),
    ("(APIServer pid=1) ", "vLLM V1's API server"),
    ("(VllmWorker rank=0 pid=63590) ", "vLLM V1's multiprocessing worker"),
    ("(VllmWorker TP0 pid=406) ", "vLLM 0.10's worker"),
    ("(ServeReplica:default:VLLMDeployment pid=648, ip=10.42.6.166) ", "a Ray Serve replica"),
    ("(pid=77) ", "a Ray task"),
    ("(worker1, rank=1, pid=2345, ip=10.0.0.2) ", "SkyPilot's node tag"),
    ("(raylet) ", "Ray's node manager"),
    ("[rank0]: ", "torchrun's per-rank tee"),
    ("[default0]:", "torchrun's tee before torch 2.2"),
    ("0|vllm     | ", "pm2"),
    ("[2026-12-07T10:00:00.123Z] ", "Jenkins' timestamper, ISO"),
    ("10:00:00 ", "Jenkins' timestamper, its default"),
    ("[10:00:00.123] ", "a bracketed time"),
    ("[2026-12-07 10:00:00,123] ", "a bracketed date and time"),
    ("> ", "a markdown quote"),
]

# real corpus cases whose entries' patterns read the start of the line or the lines around it
CASES = [
    ("cudart-cmake-notfound", "openMVG/openMVG/issues/2204"),       # CMake's block, three lines
    ("github-fetch-failed", "JIA-Lab-research/LongLoRA/issues/43"),  # pip's box around setup.py's output
    ("pip-timeout", "mvilanova/intervals-mcp-server/issues/23"),     # uv's tree of causes
    ("python-version-unsupported", "conda/conda/issues/5662"),       # conda's conflict report
    ("flash-attn-undefined-symbol", "krrish94/chamferdist/issues/27"),  # a bare torch-ABI symbol
]


@pytest.mark.parametrize("prefix,what", PREFIXES, ids=[p[1] for p in PREFIXES])
def test_unwrap_strips_a_runners_prefix(prefix, what):
    assert scanner.unwrap(prefix + "ERROR: Could not find a version") == "ERROR: Could not find a version", what
    # under the wrappers known before (compose, an ISO time): layers of them
    assert scanner.unwrap("api-1  | 2026-12-07T10:00:00Z " + prefix + "Killed") == "Killed", what


def test_a_runners_prefix_keeps_the_lines_indentation_where_the_tool_wrote_it():
    assert scanner.unwrap("[rank0]:   File \"x.py\", line 1, in <module>") == "  File \"x.py\", line 1, in <module>"
    assert scanner.unwrap("[default3]:Traceback (most recent call last):") == "Traceback (most recent call last):"
    assert scanner.unwrap("(APIServer pid=1)   File \"x.py\", line 1") == "  File \"x.py\", line 1"
    assert scanner.unwrap(">    × python setup.py bdist_wheel did not run successfully.") == \
        "   × python setup.py bdist_wheel did not run successfully."


def test_what_opens_a_tools_own_line_is_not_taken_for_a_runners_prefix():
    for line in ("(most recent call last) x", "(ok) done", "(base) $ pip install x", "(venv) C:\\> python x.py",
                 "(pid 77) killed", ">>> import torch", ">> x", "->x", "10:00 x", "[1/4] Resolving",
                 "(EngineCore_DP0 pid 7) x", "12:34:56:78 x", "[10:00:00 ERROR]: Could not load plugin",
                 "WARNING  | x", "info | x"):
        assert scanner.unwrap(line) == line, line


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("entry,thread", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("prefix,what", PREFIXES, ids=[p[1] for p in PREFIXES])
def test_real_cases_under_a_runners_prefix_are_still_named(engine, entry, thread, prefix, what):
    log = corpus.case_log(DATA, entry, thread)
    wrapped = "".join(prefix + line + "\n" for line in log.splitlines())
    found = {f["id"] for f in scan_text(wrapped, engine)["findings"]}
    assert entry in found, (what, thread, found)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_failed_download_that_opens_the_line_is_not_a_download_at_load(engine):
    """git-lfs's "Error downloading object: ...: Smudge error: ..." quoted with "> ": hub-unreachable, not the
    warning that the model is being downloaded while it loads (the quote mark had hidden the looseness)."""
    line = ('> Error downloading object: float16/params_shard_1.bin (0fb70c2): Smudge error: Error downloading '
            'float16/params_shard_1.bin (0fb70c297b47): batch response: Post "https://huggingface.co/mlc-ai/x.git/'
            'info/lfs/objects/batch": dial tcp: lookup huggingface.co: no such host')
    rep = scan_text(line + "\n", engine)
    assert {f["id"] for f in rep["findings"]} == {"hub-unreachable"}, rep
    rep = scan_text("Downloading (…)model.safetensors from https://huggingface.co/x/y 40%\n", engine)
    assert {f["id"] for f in rep["findings"]} == {"model-download-at-load"}, rep


@pytest.mark.parametrize("engine", ENGINES)
def test_a_level_column_after_a_time_is_the_lines_level_not_a_service(engine):
    """A logging format's "%(asctime)s %(levelname)-8s | %(message)s" with a time alone: once the time is taken as a
    runner's, "WARNING  | " must not be taken for a compose service, or the warning's words read as an error."""
    for line in ("10:00:00 WARNING  | ModuleNotFoundError: No module named 'flash_attn'",
                 "[10:00:00] INFO     | Retrying: RuntimeError: engine core failed to respond",
                 "2026-12-07 10:00:00 WARNING  | ModuleNotFoundError: No module named 'flash_attn'"):
        rep = scan_text(line + "\n", engine)
        assert not rep["findings"] and not rep["unrecognised"], (line, rep)
    rep = scan_text("10:00:00 vllm-1  | Killed\n", engine)
    assert {f["id"] for f in rep["findings"]} == {"host-oom-killed"}, rep
