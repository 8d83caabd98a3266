"""(round ent1) two failures that recurred unrecognised in the held-out batches, each with its own entry:
host-memory-too-small (a server or loader refusing a model because the host's free RAM is too small, before anything
is killed) and torch-cpu-only (a CPU-only torch build where CUDA is meant). Each pattern is held by real corpus logs of
its own, and the neighbouring failures keep their entries: the kernel's OOM kill stays host-oom-killed, a ggml CUDA0
buffer stays cuda-oom, a CUDA torch without a driver stays cuda-driver-missing, an xformers wheel built for another
CUDA torch stays flash-attn-undefined-symbol. Real corpus logs only."""

import functools

import pytest

import corpus

SCAN = corpus.Scanner()
CORPUS = corpus.load()


_log = functools.partial(corpus.case_log, CORPUS)
_found = SCAN.findings


# Ollama's scheduler (its 0.2+ and 0.1.4x wordings, through micro-agent, LangChain, the CLI and Continue), LM Studio's
# guardrail (both wordings), ggml's CPU buffer (llama.cpp's and llamafile's compute buffer), oMLX's budget and ceiling
HOST_MEMORY = [("BuilderIO/micro-agent/issues/59", 0), ("ollama/ollama/issues/10256", 0),
               ("linkwarden/linkwarden/issues/974", 0), ("continuedev/continue/issues/3464", 0),
               ("lmstudio-bug-tracker/issues/927", 1), ("lmstudio-bug-tracker/issues/1038", 1),
               ("ggml-org/llama.cpp/issues/10251", 2), ("mozilla-ai/llamafile/issues/501", 2),
               ("jundot/omlx/issues/378", 3), ("jundot/omlx/issues/1735", 3)]
# torch's assertion (a traceback, a title, a Chinese title glued to it), xformers' "(you have X+cpu)", c10's device guard
CPU_TORCH = [("facebookresearch/detectron2/issues/460", 0), ("Comfy-Org/desktop/issues/1647", 0),
             ("X-PLUG/MobileAgent/issues/60", 0), ("open-mmlab/PIA/issues/30", 1),
             ("facebookresearch/xformers/issues/982", 1), ("mlverse/torch/issues/272", 2),
             ("Deep-Learning-and-Scientific-Computing-with-R-torch/issues/16", 2)]
# the neighbours: (entry, thread) whose logs must keep their own entry and never name the new ones
NEIGHBOURS = [("host-oom-killed", "inducer/relate/issues/1383"), ("cuda-oom", "ggml-org/llama.cpp/issues/20431"),
              ("cuda-oom", "ikawrakow/ik_llama.cpp/issues/749"), ("cuda-driver-missing", "facebookresearch/pytorch3d/issues/1259"),
              ("flash-attn-undefined-symbol", "Comfy-Org/ComfyUI-Manager/issues/926")]


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("thread,pattern", HOST_MEMORY)
def test_a_load_refused_for_host_ram_is_host_memory_too_small(engine, thread, pattern):
    assert pattern in SCAN.alone(_log("host-memory-too-small", thread), engine, "host-memory-too-small")


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("thread,pattern", CPU_TORCH)
def test_a_cpu_only_torch_asked_for_cuda_is_torch_cpu_only(engine, thread, pattern):
    assert pattern in SCAN.alone(_log("torch-cpu-only", thread), engine, "torch-cpu-only")


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("entry,thread", NEIGHBOURS)
def test_the_neighbours_keep_their_entries(engine, entry, thread):
    found = _found(_log(entry, thread), engine)
    assert entry in found, found
    assert not {"host-memory-too-small", "torch-cpu-only"} & set(found), found


@pytest.mark.parametrize("engine", corpus.ENGINES)
def test_a_refusal_and_a_cpu_torch_in_one_log_are_two_failures(engine):
    log = _log("host-memory-too-small", "ollama/ollama/issues/10256") + _log("torch-cpu-only",
                                                                             "facebookresearch/detectron2/issues/460")
    assert set(_found(log, engine)) == {"host-memory-too-small", "torch-cpu-only"}
