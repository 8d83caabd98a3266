"""How the MiniCPM-OCR services are started (seed 000 section 4), in one place.

The served name lives here and is what the SDK is told to ask for (`--model`);
changing it changes both ends together.
"""

from __future__ import annotations

import json

from ..provision.command import Secret

SERVED_NAME = "minicpm-ocr"
DEFAULT_PORT = 18499
DSPARK_TOKENS = 15


def vllm_dspark(python: str, main: str, draft: str, port: int, host: str, *, enforce_eager=False,
                api_key=None, gpu_memory_utilization="0.85") -> list[str]:
    """Seed 4.1: the DSpark-accelerated server, flag for flag."""
    argv = _vllm(python, main, port, host) + [
            "--max-num-batched-tokens", "40960",
            "--max-num-seqs", "1",
            "--attention-backend", "FLASH_ATTN",
            "--mm-encoder-attn-backend", "FLASH_ATTN",
            "--mm-processor-kwargs", json.dumps({"downsample_mode": "4x"}, separators=(",", ":")),
            "--gpu-memory-utilization", str(gpu_memory_utilization),
            "--trust-request-mm-kwargs",
            "--speculative-config", json.dumps({"method": "dspark", "model": draft,
                                                "num_speculative_tokens": DSPARK_TOKENS,
                                                "enable_adaptive_verification": False}, separators=(",", ":")),
            "--default-chat-template-kwargs", json.dumps({"enable_thinking": False}, separators=(",", ":"))]
    return _common(argv, enforce_eager, api_key)


def vllm_standard(python: str, main: str, port: int, host: str, *, enforce_eager=False, api_key=None,
                  gpu_memory_utilization="0.85") -> list[str]:
    """Seed 4.2: no speculative decoding; --limit-mm-per-prompt for multi-image requests."""
    argv = _vllm(python, main, port, host) + [
            "--limit-mm-per-prompt", json.dumps({"image": 36}, separators=(",", ":")),
            "--gpu-memory-utilization", str(gpu_memory_utilization),
            "--trust-request-mm-kwargs"]
    return _common(argv, enforce_eager, api_key)


def transformers_serve(transformers_bin: str, main: str, port: int, host: str) -> list[str]:
    """Seed 4.3 (the seed binds 0.0.0.0; we bind what --public says)."""
    return [transformers_bin, "serve", main, "--port", str(port), "--host", host, "--continuous-batching"]


def _vllm(python, main, port, host):
    """What both vLLM forms share: the model, the served name, where to listen, the context length."""
    return [python, "-m", "vllm.entrypoints.openai.api_server", "--model", main, "--served-model-name", SERVED_NAME,
            "--host", host, "--port", str(port), "--max-model-len", "40960"]


def _common(argv, enforce_eager, api_key):
    if enforce_eager:
        argv.append("--enforce-eager")
    if api_key:
        argv += ["--api-key", Secret(api_key)]
    return argv
