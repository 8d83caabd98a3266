"""The serve argv against the guide's own commands (tests/fixtures/guide/serve-commands.txt), flag by flag."""

import json
import shlex
from pathlib import Path

import pytest

from ocrdeploy.services import argv as serving

GUIDE = Path(__file__).parents[1] / "fixtures" / "guide" / "serve-commands.txt"
MAIN, DRAFT = "./models/MiniCPM-OCR-1.0", "./models/MiniCPM-OCR-1.0-DSpark"
DSPARK_ONLY = ("--max-num-batched-tokens", "--max-num-seqs", "--attention-backend", "--mm-encoder-attn-backend",
               "--mm-processor-kwargs", "--speculative-config", "--default-chat-template-kwargs")


def guide_commands() -> dict:
    out, name, buf = {}, None, ""
    for line in GUIDE.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            name, buf = line[3:].strip(), ""
        elif name and not line.startswith("#"):
            buf += line.rstrip("\\").strip() + " "
            if not line.endswith("\\"):
                out[name] = shlex.split(buf)
    return out


def flags(argv) -> dict:
    """{--flag: value or True}; JSON values compared as data (the guide writes {"image": 36} with a space)."""
    out, i = {}, 0
    while i < len(argv):
        a = str(argv[i])
        if a.startswith("--"):
            nxt = str(argv[i + 1]) if i + 1 < len(argv) else None
            value = nxt if nxt is not None and not nxt.startswith("--") else True
            out[a] = json.loads(value) if isinstance(value, str) and value[:1] in "{[" else value
            i += 1 if value is True else 2
        else:
            i += 1
    return out


@pytest.mark.parametrize("backend", ["dspark", "standard", "transformers"])
def test_argv_is_the_guides_flag_for_flag(backend):
    guide = guide_commands()[backend]
    if backend == "dspark":
        ours = serving.vllm_dspark("python", MAIN, DRAFT, 18499, "127.0.0.1")
    elif backend == "standard":
        ours = serving.vllm_standard("python", MAIN, 18499, "127.0.0.1")
    else:
        ours = serving.transformers_serve("transformers", MAIN, 18499, "0.0.0.0")
    g, o = flags(guide), flags(ours)
    if backend != "transformers":
        assert guide[1:4] == ["python", "-m", "vllm.entrypoints.openai.api_server"] == ours[:3]
        assert o.pop("--host") == "127.0.0.1"    # loopback unless --public; the guide relies on vLLM's default
    else:
        assert guide[:3] == ours[:3]
    assert o == g


def test_dspark_only_flags_are_absent_from_the_standard_argv():
    standard = flags(serving.vllm_standard("python", MAIN, 18499, "127.0.0.1"))
    assert [f for f in DSPARK_ONLY if f in standard] == []
    assert "--limit-mm-per-prompt" in standard and "--trust-request-mm-kwargs" in standard


def test_tuning_changes_exactly_its_flags():
    t = serving.Tuning(gpu_memory_utilization=0.7, max_model_len=16384, max_num_seqs=4, enforce_eager=True,
                       flashinfer_sampler=False)
    for ours, base in ((serving.vllm_dspark("python", MAIN, DRAFT, 1, "h", tuning=t),
                        serving.vllm_dspark("python", MAIN, DRAFT, 1, "h")),
                       (serving.vllm_standard("python", MAIN, 1, "h", tuning=t),
                        serving.vllm_standard("python", MAIN, 1, "h"))):
        o, b = flags(ours), flags(base)
        assert (o.pop("--gpu-memory-utilization"), o.pop("--max-model-len"), o.pop("--max-num-seqs"),
                o.pop("--enforce-eager")) == ("0.7", "16384", "4", True)
        for f in ("--gpu-memory-utilization", "--max-model-len", "--max-num-seqs"):
            b.pop(f, None)
        assert o == b                        # nothing else moved
    assert t.env() == {"VLLM_USE_FLASHINFER_SAMPLER": "0"} and serving.GUIDE.env() == {}
    assert serving.Tuning.from_dict(t.to_dict()) == t


def test_the_key_is_never_an_argument():
    """The API key goes to vLLM as VLLM_API_KEY in its environment, never on the command line."""
    assert serving.key_env("k") == {"VLLM_API_KEY": "k"} and serving.key_env(None) == {}
    assert not any("--api-key" in str(a) for a in serving.vllm_dspark("/py", "/m", "/d", 1, "0.0.0.0"))
