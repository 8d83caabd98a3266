"""The directory layout repair of the pip CUDA 13 packages (seed 000 section 3.2).

The nvidia-* wheels install one prefix, site-packages/nvidia/cu13, with lib/
(libcudart.so.13, libnvrtc.so.13 only: no unversioned links, no lib64/), while
the vLLM build and CMake expect a CUDA_HOME laid out like a toolkit.  Every
link is created only where nothing is there yet, so a real file (nvvm/bin/cicc
ships in the nvvm wheel) is never replaced by a link.
"""

from __future__ import annotations

from ..provision.command import Command

DEFAULT_LIBCUDA = "/usr/lib/x86_64-linux-gnu/libcuda.so.1"

_REPAIR = r"""CU=$1; LIBCUDA=$2
[ -d "$CU" ] || { echo "no CUDA prefix at $CU (are the nvidia-cuda-* packages installed?)" >&2; exit 1; }
if [ ! -e "$CU/nvvm/bin/cicc" ] && [ -e "$CU/bin/cicc" ]; then
  mkdir -p "$CU/nvvm/bin" && ln -sf "$CU/bin/cicc" "$CU/nvvm/bin/cicc"
fi
[ -e "$CU/lib64" ] || [ -L "$CU/lib64" ] || ln -sfn lib "$CU/lib64"
[ -e "$CU/lib/libcudart.so" ] || ln -sf "$CU/lib/libcudart.so.13" "$CU/lib/libcudart.so"
[ -e "$CU/lib/libnvrtc.so" ] || ln -sf "$CU/lib/libnvrtc.so.13" "$CU/lib/libnvrtc.so"
mkdir -p "$CU/lib64/stubs"
[ -e "$CU/lib64/stubs/libcuda.so" ] || ln -sf "$LIBCUDA" "$CU/lib64/stubs/libcuda.so"
"""


def cu13_prefix(venv: str, python_minor: str = "3.13") -> str:
    return f"{venv}/lib/python{python_minor}/site-packages/nvidia/cu13"


def repair_command(cu13: str, libcuda: str | None = None) -> Command:
    """One command that creates every missing link; the paths travel as quoted arguments."""
    return Command(["sh", "-c", _REPAIR, "sh", cu13, libcuda or DEFAULT_LIBCUDA])
