"""How the MiniCPM-OCR services are started (the MiniCPM-OCR guide, section 4), in one place.

The served name lives here and is what the SDK is told to ask for (`--model`);
changing it changes both ends together.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace

from ..provision.command import Secret

SERVED_NAME = "minicpm-ocr"
DEFAULT_PORT = 18499
DSPARK_TOKENS = 15
# The per-request processor options the SDK's vLLM config sends (and the server's default, section 4.1);
# a server without --trust-request-mm-kwargs answers 400 to a request carrying them.
MM_PROCESSOR_KWARGS = {"downsample_mode": "4x"}
API_KEY_ENV = "VLLM_API_KEY"      # read by vLLM's OpenAI server (0.8.5 included) like --api-key


def _json(value) -> str:
    return json.dumps(value, separators=(",", ":"))


@dataclass(frozen=True)
class Tuning:
    """The guide's remedies for a vLLM start (section 8), as serve options.

    None keeps the guide's value of section 4 (0.85, 40960, one sequence for DSpark).  The
    same values are kept in the service record, so `inv diagnose --fix` restarts a service
    with exactly one of them changed.
    """

    gpu_memory_utilization: float | None = None   # OOM: 0.7; another process on the card
    max_model_len: int | None = None              # OOM: 16384
    max_num_seqs: int | None = None
    enforce_eager: bool = False                   # a CUDA graph capture that keeps failing
    flashinfer_sampler: bool = True               # False: VLLM_USE_FLASHINFER_SAMPLER=0 (drivers < 580)
    cuda: bool = True                             # False (--gpu none): a CPU build, no FLASH_ATTN backends
    speculative_config: dict | None = None        # the user's --speculative-config, in place of DSpark's

    def changed(self, **change) -> "Tuning":
        return replace(self, **change)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> "Tuning":
        known = {k: v for k, v in (data or {}).items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def env(self) -> dict:
        """What the server's environment gets beside CUDA_VISIBLE_DEVICES."""
        return {} if self.flashinfer_sampler else {"VLLM_USE_FLASHINFER_SAMPLER": "0"}


GUIDE = Tuning()


def vllm_dspark(python: str, main: str, draft: str | None, port: int, host: str, *, tuning: Tuning = GUIDE) -> list[str]:
    """Section 4.1: the DSpark-accelerated server, flag for flag.

    Without CUDA (tuning.cuda False: a CPU build of vLLM) the two FLASH_ATTN backends go: they exist only
    on GPUs.  A user's own speculative config replaces the DSpark one (for those without the draft).
    """
    spec = tuning.speculative_config or {"method": "dspark", "model": draft, "num_speculative_tokens": DSPARK_TOKENS,
                                         "enable_adaptive_verification": False}
    argv = _vllm(python, main, port, host, tuning) + [
            "--max-num-batched-tokens", "40960",
            "--max-num-seqs", str(tuning.max_num_seqs or 1)]
    if tuning.cuda:
        argv += ["--attention-backend", "FLASH_ATTN", "--mm-encoder-attn-backend", "FLASH_ATTN"]
    argv += ["--mm-processor-kwargs", _json(MM_PROCESSOR_KWARGS),
             "--gpu-memory-utilization", _utilization(tuning),
             "--trust-request-mm-kwargs",
             "--speculative-config", _json(spec),
             "--default-chat-template-kwargs", _json({"enable_thinking": False})]
    return _common(argv, tuning)


def vllm_standard(python: str, main: str, port: int, host: str, *, tuning: Tuning = GUIDE) -> list[str]:
    """Section 4.2: no speculative decoding (unless the user gives a speculative config of their own);
    --limit-mm-per-prompt for multi-image requests.  Nothing in it is CUDA-only."""
    argv = _vllm(python, main, port, host, tuning) + [
            "--limit-mm-per-prompt", json.dumps({"image": 36}, separators=(",", ":")),
            "--gpu-memory-utilization", _utilization(tuning),
            "--trust-request-mm-kwargs"]
    if tuning.max_num_seqs:
        argv += ["--max-num-seqs", str(tuning.max_num_seqs)]
    if tuning.speculative_config:
        argv += ["--speculative-config", _json(tuning.speculative_config)]
    return _common(argv, tuning)


def transformers_served_name(main: str) -> str:
    """transformers serve DIR pins DIR: a request naming anything else gets a 400 ("Server is pinned to
    'DIR'"), so the name a client must send is the directory exactly as the server was given it."""
    return main


def transformers_serve(transformers_bin: str, main: str, port: int, host: str) -> list[str]:
    """Section 4.3 (the guide binds 0.0.0.0; we bind what --public says)."""
    return [transformers_bin, "serve", main, "--port", str(port), "--host", host, "--continuous-batching"]


def _utilization(tuning):
    return f"{tuning.gpu_memory_utilization:g}" if tuning.gpu_memory_utilization else "0.85"


def _vllm(python, main, port, host, tuning):
    """What both vLLM forms share: the model, the served name, where to listen, the context length."""
    return [python, "-m", "vllm.entrypoints.openai.api_server", "--model", main, "--served-model-name", SERVED_NAME,
            "--host", host, "--port", str(port), "--max-model-len", str(tuning.max_model_len or 40960)]


def _common(argv, tuning):
    if tuning.enforce_eager:
        argv.append("--enforce-eager")
    return argv


def key_env(api_key) -> dict:
    """The server's API key as vLLM's VLLM_API_KEY, never as --api-key: a command line is readable by
    every local user (/proc/PID/cmdline), a process's environment only by its owner."""
    return {API_KEY_ENV: Secret(api_key)} if api_key else {}
