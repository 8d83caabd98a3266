"""(round in56) the install families widened by key tokens in stop 56: torch-cpu-only takes torch's collect_env
"CUDA used to build PyTorch: Could not collect" (the lead's ruling; a CUDA build's version on that line, or a CPU
machine's "None", stays quiet) and ONNX Runtime's CPU-only package asked for CUDAExecutionProvider; flash-attn-undefined-
symbol takes Windows' "DLL load failed while importing <compiled CUDA extension>" whatever reason follows (Triton's own
cuda_utils helper is not taken); pip-hash-mismatch takes conda's checksum mismatch and its corrupted package in the
cache (libarchive's InvalidArchiveError on a valid tarball is not taken); python-version-unsupported takes a pip too new
for the Python that runs it (its own SyntaxError frame). Real corpus logs only."""

import functools

import pytest

import corpus

SCAN = corpus.Scanner()
CORPUS = corpus.load()
_log = functools.partial(corpus.case_log, CORPUS)

CASES = [("torch-cpu-only", "pytorch/pytorch/issues/44303", 4), ("torch-cpu-only", "pytorch/pytorch/issues/49325", 4),
         ("torch-cpu-only", "SunOner/sunone_aimbot/issues/195", 5),
         ("torch-cpu-only", "s9roll7/animatediff-cli-prompt-travel/issues/206", 5),
         ("torch-cpu-only", "breezedeus/Pix2Text/issues/65", 5),
         ("flash-attn-undefined-symbol", "oobabooga/textgen/issues/4344", 7),
         ("flash-attn-undefined-symbol", "kijai/ComfyUI-WanVideoWrapper/issues/169", 7),
         ("flash-attn-undefined-symbol", "oobabooga/textgen/issues/4554", 7),
         ("pip-hash-mismatch", "facebook/prophet/issues/2678", 6), ("pip-hash-mismatch", "conda/conda/issues/5772", 6),
         ("pip-hash-mismatch", "reshamas/fastai_deeplearn_part1/issues/25", 6),
         ("pip-hash-mismatch", "hyperdimensional-computing/torchhd/issues/34", 6),
         ("python-version-unsupported", "pypa/pypa.io/issues/67", 22),
         ("python-version-unsupported", "pypa/get-pip/issues/94", 22),
         ("python-version-unsupported", "pypa/pip/issues/9520", 22)]
# near-misses: (thread, the entry it must not name)
QUIET = [("pytorch/pytorch/issues/77520", "torch-cpu-only"),
         ("lum3on/comfyui_HiDream-Sampler/issues/135", "flash-attn-undefined-symbol"),
         ("conda/conda-package-handling/issues/71", "pip-hash-mismatch"),
         ("pytorch/pytorch/issues/25164", "python-version-unsupported")]


def _near_miss(thread):
    return next(n["log"] for n in CORPUS["near_misses"] if thread in n["source"])


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("entry,thread,pattern", CASES)
def test_the_family_is_named_by_its_key_tokens(engine, entry, thread, pattern):
    assert pattern in SCAN.alone(_log(entry, thread), engine, entry)


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("thread,entry", QUIET)
def test_the_neighbours_stay_quiet(engine, thread, entry):
    assert entry not in SCAN.findings(_near_miss(thread), engine)


@pytest.mark.parametrize("engine", corpus.ENGINES)
def test_a_cpu_machines_collect_env_is_not_a_cpu_only_torch_on_a_gpu(engine):
    # collect_env's "None" (no CUDA piece found at all) beside "No CUDA" fields: the thread's own lines with the build
    # line set as a CPU-only machine prints it (torch/utils/collect_env.py pretty_str)
    log = _log("torch-cpu-only", "pytorch/pytorch/issues/49325").replace("Could not collect\nROCM", "None\nROCM")
    assert "CUDA used to build PyTorch: None" in log
    assert "torch-cpu-only" not in SCAN.findings(log, engine)
