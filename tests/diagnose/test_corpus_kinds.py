"""Every kind of variation issue 24 names has real cases in the corpus, told apart by what their text shows.

The corpus is where a pattern proves it reads a failure and not one wording. The issue lists the kinds
of wording a table fitted to its first examples misses: another tool in the same role, another platform
or version, a wrapper around the tool's line, an entry's second symptom. This keeps at least MIN real
cases (copied from public threads, with their source) of each, so that widening or trimming a pattern is
always checked against them.
"""

import re

import pytest

import corpus

MIN = 3
KINDS = {
    # another tool in the same role
    "uv": r"(?m)^\s*(?:×|x) |\buv (?:pip|sync|add|venv)\b|Because .* we can conclude",
    "conda or mamba": r"(?i)\bconda\b|\bmamba\b|libmamba|UnsatisfiableError|PackagesNotFoundError",
    "a setup.py build": r"setup\.py|bdist_wheel|build_ext",
    "a kernel log": r"(?m)^\[\s*\d+\.\d+\]|kernel: |NVRM:|Xid",
    "another OpenAI-compatible client": r"openai-node|\bhttpx\b|litellm|langchain|status code \(no body\)"
                                        r"|APIConnectionError|AuthenticationError",
    # another platform or version
    "Windows": r"WinError|[A-Z]:\\|\.dll\b|\.exe\b",
    "CUDA 11, 12 or 13 names": r"\.so\.1[123]\b|cu1[123]\d|cuda[-_ ]?1[123]",
    "vLLM's V0 and V1 engines": r"EngineCore|engine_core|AsyncLLMEngine|LLMEngine|MQLLMEngine",
    "Paddle": r"(?i)paddle",
    "a flash-attn build": r"(?i)flash[-_]attn|flash_attention",
    # inside a wrapper
    "a container build or run": r"(?m)^#\d+ \d+\.\d+ |^\S+\s+\| |docker|podman|compose",
    "an orchestrator or scheduler": r"(?i)kubectl|\bpod/|slurm|srun|sbatch|OOMKilled|ray::|\(pid=\d+",
    "another language": r"[\u4e00-\u9fff]|Fehler|erreur|ошибка|エラー",
    # an entry's second symptom
    "an error enum": r"cuda[A-Z]\w+|CUDA_ERROR_\w+|NCCL_\w+|cudnnStatus|CUBLAS_STATUS",
    "a numeric error code": r"(?i)cuda error:? \d+|error (?:code )?\d{1,3}\b",
    "pip's summary line": r"(?m)^(?:ERROR: )?Failed to build|Failed building wheel|subprocess-exited-with-error"
                          r"|metadata-generation-failed",
}
# the safety net's classes for a fatal end a harmless finding must not hide
NET_CLASSES = ("fatal-signal", "exit-status", "nvml-error", "cuda-error", "memory-refused")

DATA = corpus.load()
REAL = [(c, corpus.text_of(c).decode("utf-8", "replace")) for c in DATA["cases"] if corpus.is_real(c)]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_of_variation_has_real_cases(kind):
    rx = re.compile(KINDS[kind])
    hits = [c for c, text in REAL if rx.search(text)]
    assert len(hits) >= MIN, (kind, [c.get("source") for c in hits])
    assert all(c.get("source") or c.get("file") for c in hits)


def test_the_safety_net_has_real_unnamed_failures_of_each_fatal_class():
    classes = [u.get("class") for u in DATA["unrecognised"]]
    for cls in NET_CLASSES:
        assert classes.count(cls) >= 2, cls
