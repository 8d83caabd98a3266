"""A first install of the sdk-only and transformers envs from a local index, with pip and with uv in
the same run (medians), through the commands ocrdeploy builds (provision/installer.install_command).

Usage: python bench/uv_install.py [--repeat 3] [--cache ~/.cache/ocrdeploy-bench-wheels]

Real wheels of the real pins where PyPI has them (paddlex 3.4.2 and its dependencies, pypdfium2,
accelerate, requests, transformers' dependencies, uv), downloaded once into the cache dir (outside the
repository) and served by tests/pipindex.py on 127.0.0.1.  Stand-ins, built here: paddlepaddle-gpu
3.3.0 (a GiB-scale GPU wheel: a 64 MiB wheel of incompressible data stands in), torch 2.14.0 and
torchvision (GPU builds with GiBs of CUDA wheels: 64 MiB and 8 MiB stand-ins), the SDK and
feat-ocr transformers sources (small editable packages; the transformers one requires transformers'
real dependencies).  Every run starts with empty pip and uv caches (a first install on a fresh host);
the venvs are made with `python -m venv` before the clock starts, as the install's venv steps do.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from ocrdeploy.provision import installer  # noqa: E402
from pipindex import PipIndex, build_wheel, sdk_repo  # noqa: E402

REAL = ["paddlex==3.4.2", "pypdfium2>=4", "accelerate", "requests", "uv==0.13.9",
        # feat-ocr transformers' own dependencies (its setup.py install_requires)
        "huggingface-hub>=1.0,<2", "numpy>=1.17", "packaging>=20", "pyyaml>=5.1", "regex!=2019.12.17",
        "tokenizers>=0.22,<=0.23", "safetensors>=0.4.3", "tqdm>=4.27", "typer-slim"]
TF_REQUIRES = ["huggingface-hub>=1.0,<2", "numpy>=1.17", "packaging>=20", "pyyaml>=5.1", "regex!=2019.12.17",
               "tokenizers>=0.22,<=0.23", "safetensors>=0.4.3", "tqdm>=4.27", "typer-slim"]
MIB = 2 ** 20


def clean_env(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", XDG_CONFIG_HOME=str(tmp / "xdg"),
               PIP_CACHE_DIR=str(tmp / "pip-cache"), UV_CACHE_DIR=str(tmp / "uv-cache"))
    return env


def fetch(cache: Path):
    """The real wheels, once (pip download resolves their dependencies for this Python)."""
    stamp = cache / f".done-py{sys.version_info[0]}{sys.version_info[1]}"
    if stamp.exists():
        return
    cache.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    # the stand-ins' names are excluded through a constraint no real version meets
    cons = cache / "no-standins.txt"
    cons.write_text("torch==0.0.0.dev0\n")
    for req in REAL:
        p = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary", ":all:", "-d",
                            str(cache), req, "-c", str(cons)], env=env, capture_output=True, text=True)
        if p.returncode:   # accelerate needs torch: its own wheel without deps, its other deps after
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(cache), req],
                           env=env, check=True)
    for dep in ("psutil", "pyyaml", "numpy", "packaging", "safetensors", "huggingface-hub"):
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", str(cache), dep], env=env, check=True)
    stamp.write_text("")


def stand_ins(dest: Path):
    def blob(mib):
        return os.urandom(mib * MIB)
    build_wheel(dest, "paddlepaddle-gpu", "3.3.0", {"paddle/__init__.py": "", "paddle/libpaddle.so": blob(64)})
    build_wheel(dest, "torch", "2.14.0", {"torch/__init__.py": "__version__ = '2.14.0'\n", "torch/lib.so": blob(64)})
    build_wheel(dest, "torchvision", "0.29.0", {"torchvision/__init__.py": "", "torchvision/lib.so": blob(8)},
                requires=["torch==2.14.0"])


def transformers_src(root: Path) -> Path:
    src = root / "transformers"
    (src / "src" / "transformers").mkdir(parents=True)
    (src / "src" / "transformers" / "__init__.py").write_text("__version__ = '5.19.0.dev0'\n")
    reqs = ", ".join(repr(r) for r in TF_REQUIRES)
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "transformers"\nversion = "5.19.0.dev0"\ndependencies = [{reqs}]\n'
        '[project.optional-dependencies]\nserving = ["requests"]\n'
        '[tool.setuptools.packages.find]\nwhere = ["src"]\n')
    return src


def envs(work: Path, src: dict) -> dict:
    """{env: [install args as the recipe's steps give them]} for sdk-only and transformers."""
    return {
        "sdk-env": [["paddlepaddle-gpu==3.3.0"], ["-e", f"{src['sdk']}[all]"], ["paddlex==3.4.2"], ["pypdfium2>=4"]],
        "tf-ocr-env": [["torch==2.14.0", "torchvision"], ["-e", f"{src['tf']}[serving]"], ["accelerate", "requests"]],
    }


def one_run(which: str, index_url: str, uv: Path, tmp: Path, src: dict) -> dict:
    work = tmp / which
    (work / ".ocrdeploy" / "tools-env" / "bin").mkdir(parents=True)
    os.symlink(uv, work / ".ocrdeploy" / "tools-env" / "bin" / "uv")
    env = clean_env(tmp / f"{which}-caches")
    facts = {"workdir": {"path": str(work)}, "host": {}, "files": {installer.UV: {"exists": True}}}
    v = {"pip_index_url": index_url, "installer": which}
    out = {}
    for name, installs in envs(work, src).items():
        subprocess.run([sys.executable, "-m", "venv", str(work / name)], check=True, env=env)
        python = str(work / name / "bin" / "python")
        start = time.perf_counter()
        for args in installs:
            cmd = installer.install_command(facts, v, python, args)
            assert (cmd.argv[1] == "pip") == (which == "uv"), cmd
            p = subprocess.run(list(cmd.argv), env={**env, **cmd.env}, capture_output=True, text=True)
            if p.returncode:
                raise SystemExit(f"{which}: {' '.join(cmd.argv)} failed:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
        out[name] = time.perf_counter() - start
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(tmp / f"{which}-caches", ignore_errors=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "ocrdeploy-bench-wheels")
    a = ap.parse_args()
    fetch(a.cache)
    with tempfile.TemporaryDirectory(prefix="uv-bench-") as t:
        tmp = Path(t)
        served = tmp / "index"
        served.mkdir()
        for whl in a.cache.glob("*.whl"):
            if not whl.name.startswith(("torch-", "torchvision-", "paddlepaddle")):
                os.symlink(whl, served / whl.name)
        stand_ins(served)
        src = {"sdk": sdk_repo(tmp / "sdk-repo") / "sdk", "tf": transformers_src(tmp)}
        uv_env = tmp / "uv-venv"
        subprocess.run([sys.executable, "-m", "venv", str(uv_env)], check=True)
        subprocess.run([str(uv_env / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--find-links",
                        str(served), "uv"], check=True, env=clean_env(tmp))
        uv = uv_env / "bin" / "uv"
        times = {"pip": [], "uv": []}
        with PipIndex(served) as index:
            for i in range(a.repeat):
                for which in ("pip", "uv") if i % 2 == 0 else ("uv", "pip"):
                    times[which].append(one_run(which, index.url, uv, tmp, src))
                    print(f"run {i + 1} {which}: " + ", ".join(f"{k} {s:.1f} s" for k, s in times[which][-1].items()),
                          flush=True)
    load = os.getloadavg()
    print(f"\nmedians of {a.repeat} (load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, {os.cpu_count()} CPUs)")
    print(f"{'env':<12} {'pip s':>8} {'uv s':>8} {'uv/pip':>8}")
    for name in ("sdk-env", "tf-ocr-env"):
        p = statistics.median(r[name] for r in times["pip"])
        u = statistics.median(r[name] for r in times["uv"])
        print(f"{name:<12} {p:>8.1f} {u:>8.1f} {u / p:>8.2f}")
    p = statistics.median(sum(r.values()) for r in times["pip"])
    u = statistics.median(sum(r.values()) for r in times["uv"])
    print(f"{'both':<12} {p:>8.1f} {u:>8.1f} {u / p:>8.2f}   (target uv <= 0.5x pip)")


if __name__ == "__main__":
    main()
