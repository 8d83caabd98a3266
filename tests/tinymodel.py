"""A tiny random Llama for the real-engine tests: made here, in the standard library, in well under a second.

Why this shape: vLLM's CPU attention refuses head_dim 16 and takes 64 (hidden 128, 2 heads);
max_position_embeddings 65536 lets the seed's `--max-model-len 40960` start as written; bf16
weights let vLLM's `--dtype auto` pick the CPU's fast path without a --dtype flag the seed
does not give.  The tokenizer is a byte-level BPE learned from a few lines, so any text
(and any image placeholder the chat template writes) tokenizes without a hub.
"""

from __future__ import annotations

import json
import random
import re
import struct
from pathlib import Path

HIDDEN, HEADS, LAYERS, INTERMEDIATE = 128, 2, 2, 256
MAX_POSITIONS = 65536
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
CORPUS = """Document OCR turns a scanned page into text, tables and formulas.
The quick brown fox jumps over the lazy dog; the service answers in markdown.
| name | value |\n| --- | --- |\n| alpha | 1 |\n$$E = mc^2$$ and $\\frac{a}{b}$.
MiniCPM-OCR serves on port 18499; vLLM lists minicpm-ocr in /v1/models.
"""
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}"
    "{% for p in m['content'] %}{% if p['type'] == 'text' %}{{ p['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n{% endif %}{% endif %}")
_PRETOKEN = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")


def byte_alphabet() -> dict[int, str]:
    """GPT-2's printable stand-ins for the 256 bytes (what a ByteLevel pre-tokenizer emits)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


def learn_bpe(text: str, merges: int = 160) -> tuple[dict[str, int], list[str]]:
    alphabet = byte_alphabet()
    words: dict[tuple, int] = {}
    for piece in _PRETOKEN.findall(text):
        w = tuple(alphabet[b] for b in piece.encode("utf-8"))
        words[w] = words.get(w, 0) + 1
    vocab = {alphabet[b]: i for i, b in enumerate(range(256))}
    rules = []
    for _ in range(merges):
        pairs: dict[tuple, int] = {}
        for w, n in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] = pairs.get((a, b), 0) + n
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], p))
        if pairs[best] < 2:
            break
        rules.append(f"{best[0]} {best[1]}")
        vocab[best[0] + best[1]] = len(vocab)
        merged = {}
        for w, n in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + n
        words = merged
    return vocab, rules


def tokenizer_json(vocab: dict[str, int], merges: list[str]) -> dict:
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    added = [{"id": len(vocab) + i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, s in enumerate(SPECIALS)]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
            "pre_tokenizer": byte_level, "post_processor": byte_level, "decoder": byte_level,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "ignore_merges": False, "vocab": vocab, "merges": merges}}


def _bf16(values) -> bytes:
    """float -> bfloat16 bytes (the upper half of the float32, little-endian)."""
    raw = struct.pack(f"<{len(values)}f", *values)
    return b"".join(raw[i + 2:i + 4] for i in range(0, len(raw), 4))


def write_safetensors(path: Path, tensors: dict[str, tuple[list[int], bytes]]) -> None:
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, (shape, data) in tensors.items():
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(blob)))
        fh.write(blob)
        for _, data in tensors.values():
            fh.write(data)


def llama_weights(vocab_size: int, seed: int) -> dict[str, tuple[list[int], bytes]]:
    rng = random.Random(seed)

    def normal(*shape):
        n = 1
        for s in shape:
            n *= s
        return list(shape), _bf16([rng.gauss(0.0, 0.02) for _ in range(n)])

    def ones(n):
        return [n], _bf16([1.0] * n)

    t = {"model.embed_tokens.weight": normal(vocab_size, HIDDEN)}
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        for proj in ("q", "k", "v", "o"):
            t[p + f"self_attn.{proj}_proj.weight"] = normal(HIDDEN, HIDDEN)
        t[p + "mlp.gate_proj.weight"] = normal(INTERMEDIATE, HIDDEN)
        t[p + "mlp.up_proj.weight"] = normal(INTERMEDIATE, HIDDEN)
        t[p + "mlp.down_proj.weight"] = normal(HIDDEN, INTERMEDIATE)
        t[p + "input_layernorm.weight"] = ones(HIDDEN)
        t[p + "post_attention_layernorm.weight"] = ones(HIDDEN)
    t["model.norm.weight"] = ones(HIDDEN)
    t["lm_head.weight"] = normal(vocab_size, HIDDEN)
    return t


def make_tiny_llama(dest: Path, *, max_positions: int = MAX_POSITIONS, seed: int = 0) -> Path:
    """Write a complete model directory (config, weights, tokenizer, chat template) to `dest`."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    vocab, merges = learn_bpe(CORPUS)
    tok = tokenizer_json(vocab, merges)
    n_tokens = len(vocab) + len(SPECIALS)
    vocab_size = -(-n_tokens // 64) * 64
    ids = {s: len(vocab) + i for i, s in enumerate(SPECIALS)}
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": HIDDEN,
              "intermediate_size": INTERMEDIATE, "num_attention_heads": HEADS, "num_key_value_heads": HEADS,
              "head_dim": HIDDEN // HEADS, "num_hidden_layers": LAYERS, "vocab_size": vocab_size,
              "max_position_embeddings": max_positions, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
              "hidden_act": "silu", "tie_word_embeddings": False, "dtype": "bfloat16",
              "torch_dtype": "bfloat16", "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
              "pad_token_id": ids["<|endoftext|>"]}
    files = {
        "config.json": config,
        "generation_config.json": {"bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
                                   "pad_token_id": ids["<|endoftext|>"]},
        "tokenizer.json": tok,
        "tokenizer_config.json": {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": max_positions,
                                  "bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
                                  "add_bos_token": False, "clean_up_tokenization_spaces": False},
        "special_tokens_map.json": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
    }
    for name, doc in files.items():
        (dest / name).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (dest / "chat_template.jinja").write_text(CHAT_TEMPLATE, encoding="utf-8")
    write_safetensors(dest / "model.safetensors", llama_weights(vocab_size, seed))
    return dest


if __name__ == "__main__":
    import sys

    print(make_tiny_llama(Path(sys.argv[1])))
