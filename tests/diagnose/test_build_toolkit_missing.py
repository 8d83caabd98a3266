"""(round bld55) nvcc-not-found for a BUILD that finds no toolkit (the lead's ruling: not only vLLM at start), and
ld-cudart-missing for TensorFlow's Bazel configure that finds no libcuda / libcudart where the toolkit layout puts them.
Each new pattern is held by its corpus cases (real threads, and the derived wordings of two build tools), each
alternative by a line of its own, and each near-miss stays quiet: dropping a pattern, an alternative or the condition
that keeps a quoted sentence out fails here."""

import functools

import pytest

import corpus

SCAN = corpus.Scanner()
CORPUS = corpus.load()

_log = functools.partial(corpus.case_log, CORPUS)


# (entry, thread, pattern): the corpus cases of the round, each through its own pattern and naming its entry alone
CASES = [
    ("nvcc-not-found", "thu-ml/SageAttention/issues/179", 17),
    ("nvcc-not-found", "NVIDIA/apex/issues/990", 18),
    ("nvcc-not-found", "EleutherAI/gpt-neox/issues/559", 18),
    ("ld-cudart-missing", "tensorflow/tensorflow/issues/29797", 9),
]


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("entry,thread,pattern", CASES)
def test_a_build_without_its_toolkit_is_named(engine, entry, thread, pattern):
    assert pattern in SCAN.alone(_log(entry, thread), engine, entry)


def _derived(entry, head):
    return next(c["log"] for c in CORPUS["cases"] if c.get("entry") == entry and c.get("derived", "").startswith(head))


# the derived wordings (derived.yaml): Legion's runtime.mk and cudarc's build.rs
@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("head,pattern", [("StanfordLegion/legion", 17), ("coreylowman/cudarc", 19)])
def test_a_build_tools_own_words_are_named(engine, head, pattern):
    assert pattern in SCAN.alone(_derived("nvcc-not-found", head), engine, "nvcc-not-found")


# (line, entry, pattern): each alternative alone, one line
WORDINGS = [
    # p17: the toolkit root asked for by name, at the line's start or after an exception's name; Legion's make variable
    ("RuntimeError: Cannot find CUDA_HOME. CUDA must be available to build the package.", "nvcc-not-found", 17),
    ("      RuntimeError: Cannot find CUDA_HOME. CUDA must be available to build the package.", "nvcc-not-found", 17),
    ("Hi, when i ./ffcompile.sh alexnet, I got legion/runtime/runtime.mk:287: *** CUDA variable is not defined, "
     "aborting build.  Stop. How can I sovle this error?", "nvcc-not-found", 17),
    # p18: the probe's frame (with and without a leading underscore, "print" for "in" as one retelling has it), and its
    # source line under the frame
    ('  File "setup.py", line 17, in get_cuda_bare_metal_version', "nvcc-not-found", 18),
    ('     File "/mnt/nvme0n1/phuongnam/sskd/apex/setup.py", line 17, print get_cuda_bare_metal_version',
     "nvcc-not-found", 18),
    ('How to fix the TypeError in "gpt-neox/megatron/fused_kernels/setup.py", line 11, in _get_cuda_bare_metal_version',
     "nvcc-not-found", 18),
    ('    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)',
     "nvcc-not-found", 18),
    ('    [cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True', "nvcc-not-found", 18),
    # p19: Rust's io::Error for nvcc, debug and display forms
    ('19.99   Failed to execute `nvcc`: Os { code: 2, kind: NotFound, message: "No such file or directory" }',
     "nvcc-not-found", 19),
    ("  Failed to execute `nvcc`: No such file or directory (os error 2)", "nvcc-not-found", 19),
    # ld-cudart-missing p9: the driver's stub and the runtime, one path or a list
    ("No library found under: /usr/lib64/stubs/libcuda.so", "ld-cudart-missing", 9),
    ("No library found under: /usr/local/cuda/lib64/libcudart.so.10.1", "ld-cudart-missing", 9),
]


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("line,entry,pattern", WORDINGS)
def test_each_alternative_names_its_entry(engine, line, entry, pattern):
    assert pattern in SCAN.alone(line + "\n", engine, entry)


# lines that must stay quiet for these entries
QUIET = [
    # a sentence quoting the setup.py's error (a feature request), not the error's own line
    ("安装vllm会提示 `Cannot find CUDA_HOME. CUDA must be available to build the package`", "nvcc-not-found"),
    # torch's notice that it found a toolkit root, and the probe that succeeded
    ("No CUDA runtime is found, using CUDA_HOME='/usr'", "nvcc-not-found"),
    ("from /public/software/cuda-10.1/bin", "nvcc-not-found"),
    # a setup.py quoted as source: its def line names the probe but is no traceback frame
    ("def get_cuda_bare_metal_version(cuda_dir):", "nvcc-not-found"),
    # a diff of the probe's source line
    ('+    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)',
     "nvcc-not-found"),
    # Rust's NotFound for another program
    ('Failed to execute `cmake`: Os { code: 2, kind: NotFound, message: "No such file or directory" }', "nvcc-not-found"),
    # TensorFlow's configure finding no cuDNN, and its runtime loader's dlopen of the driver
    ("No library found under: /usr/local/cuda/lib64/libcudnn.so.7", "ld-cudart-missing"),
    ("I tensorflow/stream_executor/dso_loader.cc:105] Couldn't open CUDA library libcuda.so.1. LD_LIBRARY_PATH: "
     "/usr/local/cuda/lib64", "ld-cudart-missing"),
]


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("line,entry", QUIET)
def test_near_misses_stay_quiet(engine, line, entry):
    assert entry not in SCAN.findings(line + "\n", engine)


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("thread,entry", [("NVIDIA/apex/issues/995", "nvcc-not-found"),
                                          ("microsoft/SpareNet/issues/34", "nvcc-not-found"),
                                          ("tensorflow/tensorflow/issues/6233", "ld-cudart-missing")])
def test_the_rounds_corpus_near_misses_stay_quiet(engine, thread, entry):
    log = next(n["log"] for n in CORPUS["near_misses"] if thread in n["source"])
    assert entry not in SCAN.findings(log, engine)
