"""Write a large vLLM-like server log for the scanner benchmark (deterministic).

Usage: python bench/gen_vllm_log.py OUT [--mib 512] [--error-dense]

Mostly the lines a busy vLLM OpenAI server prints (engine-core prefixes, ANSI
colours, metrics lines, uvicorn access lines, progress bars rewritten with CR),
with a few hundred real failure lines from the diagnose corpus (tests/fixtures/diagnose/corpus) and
tracebacks spread through it.

--error-dense writes the red team's worst case instead (issue 19, M11): every line an ERROR line
of about 1 KB, as a crash loop leaves for days, half of them the same message with another number,
half with words of their own (distinct unrecognised errors); memory must not grow with it.
"""

import argparse
import random
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

NORMAL = [
    "\x1b[1;36m(APIServer pid=48190)\x1b[0;0m INFO 10-19 12:{m:02d}:{s:02d} [loggers.py:123] Engine 000: Avg prompt "
    "throughput: {a}.{b} tokens/s, Avg generation throughput: {c}.{d} tokens/s, Running: 1 reqs, Waiting: 0 reqs, "
    "GPU KV cache usage: {e}.{f}%, Prefix cache hit rate: 0.0%",
    "\x1b[1;36m(APIServer pid=48190)\x1b[0;0m INFO:     127.0.0.1:{port} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
    "\x1b[1;36m(APIServer pid=48190)\x1b[0;0m INFO:     127.0.0.1:{port} - \"GET /metrics HTTP/1.1\" 200 OK",
    "\x1b[1;36m(EngineCore_DP0 pid=48213)\x1b[0;0m INFO 10-19 12:{m:02d}:{s:02d} [gpu_model_runner.py:2{a:03d}] "
    "Model loading took {c}.{d} GiB and {e}.{f} seconds",
    "\x1b[1;36m(APIServer pid=48190)\x1b[0;0m INFO 10-19 12:{m:02d}:{s:02d} [loggers.py:123] SpecDecoding metrics: "
    "Mean acceptance length: 6.{b}, Accepted throughput: {c}.{d} tokens/s, Drafted throughput: {a}.{b} tokens/s, "
    "Accepted: {c} tokens, Drafted: {a} tokens, Per-position acceptance rate: 0.9{b}, 0.8{d}, 0.7{f}",
    "\x1b[1;36m(APIServer pid=48190)\x1b[0;0m INFO 10-19 12:{m:02d}:{s:02d} [chat_utils.py:560] Detected the chat "
    "template content format to be 'openai'. You can set `--chat-template-content-format` to override this.",
    "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  {a}%|███▋      | {b}/67 [00:0{d}<00:{e:02d}, "
    "{c}.{d}it/s]\rCapturing CUDA graphs (mixed prefill-decode, PIECEWISE):  {c}%|████      | {d}/67",
    "\x1b[1;36m(EngineCore_DP0 pid=48213)\x1b[0;0m WARNING 10-19 12:{m:02d}:{s:02d} [processing.py:{a}] "
    "The image processor of type `MiniCPMOCRImageProcessor` is now loaded as a fast processor by default",
]
TRACEBACK = [
    "\x1b[1;36m(EngineCore_DP0 pid=48213)\x1b[0;0m ERROR 10-19 12:40:00 [core.py:935] Traceback (most recent call last):",
    "\x1b[1;36m(EngineCore_DP0 pid=48213)\x1b[0;0m ERROR 10-19 12:40:00 [core.py:935]   File \"/root/ocr/vllm-ocr-env/lib/python3.13/site-packages/vllm/v1/engine/core.py\", line 926, in run_engine_core",
    "\x1b[1;36m(EngineCore_DP0 pid=48213)\x1b[0;0m ERROR 10-19 12:40:00 [core.py:935]     engine_core.run_busy_loop()",
    "\x1b[1;36m(EngineCore_DP0 pid=48213)\x1b[0;0m ERROR 10-19 12:40:00 [core.py:935] RuntimeError: shape mismatch in sampler",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--mib", type=int, default=512)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--error-dense", action="store_true")
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    if args.error_dense:
        return error_dense(args.out, args.mib * 1024 * 1024, rnd)
    cases = [c for f in sorted((ROOT / "tests" / "fixtures" / "diagnose" / "corpus").glob("*.yaml"))
             for c in (yaml.safe_load(f.read_text()) or {}).get("cases") or [] if "log" in c]
    failures = [line.replace("\\e", "\x1b") for c in cases for line in c["log"].splitlines() if line.strip()]
    target = args.mib * 1024 * 1024
    written = 0
    block = []
    with open(args.out, "wb") as fh:
        while written < target:
            block.clear()
            for _ in range(5000):
                r = rnd.random()
                if r < 0.00004:
                    block.extend(TRACEBACK)
                elif r < 0.0001:
                    block.append(rnd.choice(failures))
                else:
                    tpl = rnd.choice(NORMAL)
                    block.append(tpl.format(m=rnd.randrange(60), s=rnd.randrange(60), a=rnd.randrange(1000),
                                            b=rnd.randrange(10), c=rnd.randrange(100), d=rnd.randrange(10),
                                            e=rnd.randrange(100), f=rnd.randrange(10),
                                            port=rnd.randrange(30000, 60000)))
            data = ("\n".join(block) + "\n").encode("utf-8")
            fh.write(data)
            written += len(data)
    print(f"wrote {written / 2**20:.0f} MiB to {args.out}")


def error_dense_lines(n, rnd, width=1000):
    """n ERROR lines of about `width` bytes: one message with a changing number, and messages of their own."""
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    for i in range(n):
        if i % 2:
            own = " ".join(rnd.choice(words) + rnd.choice(words) for _ in range(4))
            yield f"ERROR {i} worker {own} " + "x" * (width - 40)
        else:
            yield f"ERROR {i} " + "x" * width


def error_dense(out, target, rnd):
    written = 0
    with open(out, "wb") as fh:
        lines = error_dense_lines(1 << 62, rnd)
        while written < target:
            data = ("\n".join(next(lines) for _ in range(5000)) + "\n").encode()
            fh.write(data)
            written += len(data)
    print(f"wrote {written / 2**20:.0f} MiB of ERROR lines to {out}")


if __name__ == "__main__":
    main()
