"""A stand-in for vLLM's source tree, for the shared-build tests and bench/shared_build.py.

vLLM's source cannot build without CUDA and a GPU; this is a package named `vllm` with a real C extension
(`vllm._C`, imported by `from vllm import LLM`) built by setuptools with the real compiler, reached under the
guide's names gcc-13/g++-13.  Its setup.py appends a line to a marker file for every compile, so a test can
count how many ran; a file `oom-above` holding N in the source makes a build with MAX_JOBS > N fail as
an OOM-killed compile does, before compiling.  `functions` pads the C file so that its compile takes a measurable time (the bench).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SETUP_PY = '''
import os
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

MARKER = {marker!r}


class counted(build_ext):
    """Counts each real compile (one line per C file handed to the compiler) in MARKER."""

    def build_extension(self, ext):
        oom = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oom-above")
        if os.path.exists(oom) and int(os.environ.get("MAX_JOBS", "1")) > int(open(oom).read()):
            # as a compile the kernel's OOM killer ended (what `inv diagnose` reads as compile-oom-killed)
            print("gcc: fatal error: Killed signal terminated program cc1", flush=True)
            raise SystemExit(1)
        compile_ = self.compiler.compile

        def compile(sources, *a, **kw):
            with open(MARKER, "a") as fh:
                fh.write(os.getcwd() + "\\n")
            return compile_(sources, *a, **kw)

        self.compiler.compile = compile
        super().build_extension(ext)


setup(name="vllm", version="0.0.1", packages=["vllm"], ext_modules=[Extension("vllm._C", ["csrc/c.c"])],
      cmdclass={{"build_ext": counted}})
'''
C_SOURCE = '''#include <Python.h>
static PyObject *answer(PyObject *self, PyObject *args) { return PyLong_FromLong(42); }
static PyMethodDef methods[] = {{"answer", answer, METH_NOARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_C", NULL, -1, methods};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&mod); }
'''
INIT = "from . import _C\n\n\nclass LLM:\n    answer = _C.answer()\n"


def git(repo, *args):
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo, check=True,
                   capture_output=True)


def make_source(root: Path, marker: Path, functions: int = 0) -> Path:
    """The stand-in vLLM source as a git repository to clone per host (the same commit everywhere)."""
    src = root / "vllm-template"
    (src / "vllm").mkdir(parents=True)
    (src / "csrc").mkdir()
    (src / "setup.py").write_text(SETUP_PY.format(marker=str(marker)))
    pad = "".join(f"double f{i}(double x) {{ double s = 0; for (int k = 0; k < {i % 7 + 3}; k++) "
                  f"s += x * k / (1.0 + {i}); return s; }}\n" for i in range(functions))
    (src / "csrc" / "c.c").write_text(C_SOURCE + pad)
    (src / "vllm" / "__init__.py").write_text(INIT)
    (src / ".gitignore").write_text("build/\n*.egg-info/\n*.so\n")
    # as vLLM's: a PEP 517 backend, so an editable install records a dist-info like vLLM's does
    (src / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools"]\n'
                                        'build-backend = "setuptools.build_meta"\n')
    git(src, "init", "-q")
    git(src, "add", ".")
    git(src, "commit", "-qm", "stand-in vLLM")
    return src


def make_tools(root: Path) -> tuple[Path, Path]:
    """gcc-13/g++-13 on PATH (this machine's gcc under the guide's names) and `wheel` for setuptools' bdist_wheel
    (a .pth in each host's venv points at it: one install for every host)."""
    bin_ = root / "toolbin"
    bin_.mkdir()
    for name, real in (("gcc-13", "gcc"), ("g++-13", "g++")):
        (bin_ / name).symlink_to(subprocess.run(["which", real], capture_output=True, text=True).stdout.strip())
    site = root / "buildtools"
    found = sorted(w for d in ("/opt/wheels", "/opt/pypi/files") for w in Path(d).glob("wheel-*-py3-none-any.whl"))
    if found:                        # a pure-Python wheel is a zip: unpacked, it is importable (pip would be slower)
        import zipfile

        zipfile.ZipFile(found[-1]).extractall(site)
    else:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(site), "wheel"], check=True)
    return bin_, site


def uv_binary(root: Path) -> Path:
    """The real uv (from its PyPI wheel, tests/pipindex.py) unpacked once under root, for make_host(uv=True)."""
    import zipfile

    from pipindex import uv_wheel

    dest = root / "uvbin" / "uv"
    if not dest.exists():
        with zipfile.ZipFile(uv_wheel()) as z:
            member = next(n for n in z.namelist() if n.endswith(".data/scripts/uv"))
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(z.read(member))
        dest.chmod(0o755)
    return dest


def make_host(root: Path, name: str, template: Path, buildtools: Path, uv: Path | None = None) -> dict:
    """A host's work dir with its vllm-ocr-env (the steps before the compile are not what is tested) and its
    own clone of the source; with `uv`, the tools venv's uv too (where the recipe's tools-uv puts it) and
    `installer: uv` (this machine's pip.conf would keep `auto` on pip)."""
    wd = root / name
    env = wd / "vllm-ocr-env"
    # pip and setuptools from the interpreter's own site-packages: a venv without its own pip starts in a second
    subprocess.run(["python3", "-m", "venv", "--without-pip", "--system-site-packages", str(env)], check=True)
    site = next((env / "lib").glob("python3.*")) / "site-packages"
    (site / "buildtools.pth").write_text(str(buildtools) + "\n")
    src = root / f"{name}-src"
    subprocess.run(["git", "clone", "-q", str(template), str(src)], check=True)
    deps = wd / "deps"
    deps.mkdir()
    found = {"workdir": str(wd), "vllm_src": str(src), "deps_dir": str(deps), "sdk_repo": "unused",
             "transformers_src": "unused", "models": "false"}
    if uv is not None:
        tools = wd / ".ocrdeploy" / "tools-env" / "bin"
        tools.mkdir(parents=True)
        (tools / "uv").symlink_to(uv)
        found["installer"] = "uv"
    return found


def clean(vars_):
    """Drop the build trees (git's ignored files), which a build would reuse instead of compiling."""
    for v in vars_.values():
        git(v["vllm_src"], "clean", "-qfdX")


def compiles(marker: Path) -> int:
    return len(marker.read_text().splitlines()) if marker.exists() else 0
