"""The directory layout repair of the pip CUDA 13 packages (seed 000 section 3.2).

The nvidia-* wheels install one prefix, site-packages/nvidia/cu13, with lib/
(libcudart.so.13, libnvrtc.so.13 only: no unversioned links, no lib64/), while
the vLLM build and CMake expect a CUDA_HOME laid out like a toolkit.  LINKS is
the one description of that repair: the install step turns it into commands for
the links the facts show missing, the diagnose remedy into a guarded script.  A
link is only made where nothing is there, so a real file (nvvm/bin/cicc ships in
the nvvm wheel) is never replaced by a link.
"""

from __future__ import annotations

import posixpath

from ..provision.command import Command, Script

DEFAULT_LIBCUDA = "/usr/lib/x86_64-linux-gnu/libcuda.so.1"

# (path under cu13, link target; {cu} is the prefix, {libcuda} the host's libcuda.so.1)
LINKS = (
    ("nvvm/bin/cicc", "{cu}/bin/cicc"),
    ("lib64", "lib"),
    ("lib/libcudart.so", "{cu}/lib/libcudart.so.13"),
    ("lib/libnvrtc.so", "{cu}/lib/libnvrtc.so.13"),
    ("lib64/stubs/libcuda.so", "{libcuda}"),
)


def cu13_prefix(venv: str, python_minor: str = "3.13") -> str:
    return f"{venv}/lib/python{python_minor}/site-packages/nvidia/cu13"


def link_commands(cu: str, missing, libcuda: str | None = None) -> list[Command]:
    """ln commands for the named missing links (paths under cu13), each after its parent exists."""
    cmds = []
    for rel, target in LINKS:
        if rel not in missing:
            continue
        tgt = target.format(cu=cu, libcuda=libcuda or DEFAULT_LIBCUDA)
        parent = posixpath.dirname(rel)
        if parent and parent != "lib64" and parent != "lib":
            cmds.append(Command(["mkdir", "-p", f"{cu}/{parent}"]))
        cmds.append(Command(["ln", "-sfn" if rel == "lib64" else "-sf", tgt, f"{cu}/{rel}"]))
    return cmds


def repair_command(cu13: str, libcuda: str | None = None) -> Command:
    """The whole repair as one guarded command, for when no facts were read (diagnose --fix)."""
    lines = ['CU=$1; LIBCUDA=$2',
             '[ -d "$CU" ] || { echo "no CUDA prefix at $CU (are the nvidia-cuda-* packages installed?)" >&2; exit 1; }']
    for rel, target in LINKS:
        tgt = target.replace("{cu}", "$CU").replace("{libcuda}", "$LIBCUDA")
        parent = posixpath.dirname(rel)
        guard = f'[ -e "$CU/{rel}" ] || [ -L "$CU/{rel}" ]'
        if rel == "nvvm/bin/cicc":
            guard = f'[ -e "$CU/{rel}" ] || [ ! -e "{tgt}" ]'
        mk = f'mkdir -p "$CU/{parent}" && ' if parent not in ("", "lib", "lib64") else ""
        if rel.startswith("lib64/"):
            mk = f'mkdir -p "$CU/{parent}" && '
        lines.append(f'{guard} || {{ {mk}ln -{"sfn" if rel == "lib64" else "sf"} "{tgt}" "$CU/{rel}"; }}')
    return Command(["sh", "-c", Script("\n".join(lines) + "\n", "cu13 link repair"), "sh", cu13,
                    libcuda or DEFAULT_LIBCUDA])
