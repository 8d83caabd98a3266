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


def link_target(target: str, cu: str, libcuda: str | None = None) -> str:
    """What a link of LINKS must point to on this host."""
    return target.format(cu=cu, libcuda=libcuda or DEFAULT_LIBCUDA)


def link_commands(cu: str, missing, libcuda: str | None = None) -> list[Command]:
    """ln commands for the named links to (re)make (paths under cu13), each after its parent exists."""
    cmds = []
    for rel, target in LINKS:
        if rel not in missing:
            continue
        tgt = link_target(target, cu, libcuda)
        parent = posixpath.dirname(rel)
        if parent and parent != "lib64" and parent != "lib":
            cmds.append(Command(["mkdir", "-p", f"{cu}/{parent}"]))
        cmds.append(Command(["ln", "-sfn" if rel == "lib64" else "-sf", tgt, f"{cu}/{rel}"]))
    return cmds


def repair_command(cu13: str, libcuda: str | None = None) -> Command:
    """The whole repair as one guarded command, for when no facts were read (diagnose --fix): each link is
    made where nothing is, re-pointed where it points elsewhere (`ln -sf`, as the guide), and a real file
    is kept; nvvm/bin/cicc only when bin/cicc exists to point at."""
    lines = ['CU=$1; LIBCUDA=$2',
             '[ -d "$CU" ] || { echo "no CUDA prefix at $CU (are the nvidia-cuda-* packages installed?)" >&2; exit 1; }',
             'link() { p="$CU/$1"; if [ -L "$p" ]; then [ "$(readlink "$p")" = "$2" ] && return 0; '
             'elif [ -e "$p" ]; then return 0; fi; mkdir -p "$(dirname "$p")" && ln "$3" "$2" "$p"; }']
    for rel, target in LINKS:
        tgt = target.replace("{cu}", "$CU").replace("{libcuda}", "$LIBCUDA")
        call = f'link "{rel}" "{tgt}" -{"sfn" if rel == "lib64" else "sf"}'
        if rel == "nvvm/bin/cicc":
            call = f'[ ! -e "{tgt}" ] || {call}'
        lines.append(call)
    return Command(["sh", "-c", Script("\n".join(lines) + "\n", "cu13 link repair"), "sh", cu13,
                    libcuda or DEFAULT_LIBCUDA])
