"""Where the start of one vLLM CPU instance on the tests' tiny model goes (tests/tinymodel.py), as `inv serve
--gpu none` starts it: the wall time to ready, and the vLLM log's own milestones (first log line = torch and
vLLM imported, weights loaded, compile / warm-up done, the API server up), for each variant of the options a
test may pay or not.

    .venv/bin/python bench/router_instance_start.py [eager|default|O0 ...]

Needs the vLLM CPU engine venv (.ci/run installs it; tests/engines.py finds it).  Run it under the engine
lock (flock /tmp/ocrdeploy-engine.lock ...) on a shared machine, and give `uptime` with the figures.
"""

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from engines import engine_env, free_port  # noqa: E402
from tinymodel import make_tiny_llama  # noqa: E402

MILESTONES = {"imported": r"non-default args", "weights loaded": r"Loading weights took|Model loading took",
              "compiled / warmed up": r"init engine .* took|Compilation finished|torch.compile took",
              "api up": r"Starting vLLM (API|server)|Application startup complete"}
VARIANTS = {"default": [], "eager": ["--enforce-eager"], "O0": ["-O0"]}
KEEP = Path(os.environ["KEEP_LOGS"]) if os.environ.get("KEEP_LOGS") else None    # a folder to copy the logs to


def run(variant: str, tiny: Path, work: Path) -> dict:
    env_dir = engine_env("vllm")
    port = free_port()
    log = work / f"{variant}.log"
    argv = [str(env_dir / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server", "--model", str(tiny),
            "--served-model-name", "minicpm-ocr", "--host", "127.0.0.1", "--port", str(port),
            "--max-model-len", "2048", *VARIANTS[variant]]
    env = {"PATH": f"{env_dir}/bin:/usr/bin:/bin", "VLLM_CPU_KVCACHE_SPACE": "1", "HOME": str(work),
           "HF_HUB_OFFLINE": "1"}
    t0 = time.monotonic()
    with open(log, "w") as out:
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    seen = {}
    try:
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", trust_env=False, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if p.poll() is not None:
                raise SystemExit(f"{variant}: exited {p.returncode}: {log.read_text()[-2000:]}")
            text = log.read_text(errors="replace")
            for k, pat in MILESTONES.items():
                if k not in seen and re.search(pat, text):
                    seen[k] = time.monotonic() - t0
            time.sleep(0.2)
        ready = time.monotonic() - t0
        t1 = time.monotonic()
        r = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", trust_env=False, timeout=300, json={
            "model": "minicpm-ocr", "max_tokens": 4, "messages": [{"role": "user", "content": "Say OK."}]})
        first = time.monotonic() - t1
        return {"variant": variant, "ready_s": round(ready, 1), "first_request_s": round(first, 2),
                "status": r.status_code, **{k: round(v, 1) for k, v in seen.items()}}
    finally:
        p.terminate()
        p.wait(60)
        if KEEP:
            (KEEP / log.name).write_text(log.read_text(errors="replace"))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        tiny = make_tiny_llama(Path(d) / "tiny")
        for v in sys.argv[1:] or ["eager", "default"]:
            print(run(v, tiny, Path(d)), flush=True)
            print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
