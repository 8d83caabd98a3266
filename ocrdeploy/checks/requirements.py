"""What a stack needs of a host: the thresholds the preflight checks apply.

Each recipe states its own (recipes.registry); the checks only read them, so the same checks
serve MiniCPM-OCR on CUDA 13, DeepSeek-OCR on CUDA 11.8 and an SDK-only client.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version


@dataclass(frozen=True)
class PythonRule:
    """Which interpreter an environment is created with: the one rule preflight checks and the plan follows.

    spec is a PEP 440 specifier on the interpreter's version.  managed names the minor that
    `uv python install` provides when the host has no interpreter meeting spec (the way the
    DeepSeek-OCR recipe gets its 3.12).  system_first takes the host's own `python3` when it
    meets spec: the guide creates the SDK env with `python3 -m venv`.
    """

    spec: str
    managed: str | None = None
    system_first: bool = False

    @classmethod
    def of(cls, value) -> "PythonRule":
        """A rule from shorthand: '3.13' is that minor exactly, '>=3.10' a specifier."""
        if isinstance(value, PythonRule):
            return value
        text = str(value).strip()
        return cls(text if text[0] in "<>=!~" else f"=={text}.*")

    def accepts(self, version: str | None) -> bool:
        try:
            return SpecifierSet(self.spec).contains(Version(str(version)), prereleases=True)
        except (InvalidSpecifier, InvalidVersion, TypeError):
            return False

    def pick(self, pythons) -> dict | None:
        """The interpreter to create the env with from the facts' `pythons`, or None."""
        ok = [p for p in pythons or [] if self.accepts(p.get("version"))]
        if self.system_first:
            default = [p for p in ok if p.get("default")]
            if default:
                return default[0]
        return max(ok, key=lambda p: Version(p["version"])) if ok else None

    def package(self) -> str:
        """How the guide names the interpreter to install: python3.13, or python3 (>=3.10)."""
        m = re.fullmatch(r"==(\d+\.\d+)(\.\d+)?(\.\*)?", self.spec)
        return f"python{m.group(1)}" if m else f"python3 ({self.spec})"

    def describe(self) -> str:
        m = re.fullmatch(r"==(\d+\.\d+(?:\.\d+)?)(\.\*)?", self.spec)
        return f"Python {m.group(1)}" if m else f"Python {self.spec}"


# The tools venv (hub clients, uv) runs on any interpreter the guide accepts for the SDK.
TOOLS_PYTHON = PythonRule(">=3.10")
# The DeepSeek-OCR notes build their env on Python 3.12.9 (section 1.2 compiles exactly that one): the host's when
# it has that release, else uv's managed CPython 3.12.9, as the MiniCPM-OCR stack gets its 3.13.
DEEPSEEK_PYTHON = PythonRule("==3.12.9", managed="3.12.9")


@dataclass(frozen=True)
class Requirements:
    needs_gpu: bool = True
    min_vram_gib: float = 24.0          # on at least one GPU
    advised_vram_gib: float | None = None
    min_driver: int = 580               # major version
    driver_fallback_floor: int | None = 535  # 535-579: upgrade, or cu126 + own vLLM build
    min_disk_gib: float = 20.0
    # env name -> the PythonRule it is created with (the plan's Venv steps use the same objects)
    pythons: dict = field(default_factory=dict)
    needs_gcc13: bool = False
    needs_github: bool = False          # compiles that fetch from GitHub
    # (up to this many sold GB, mode) rows, smallest first, the last one open (None): a stack that runs in a
    # smaller mode on a smaller card (DeepSeek-OCR) passes the VRAM check on any card with a row, naming it
    vram_modes: tuple = ()
    # what the guide verified the procedure against (the MiniCPM-OCR guide, section 9): (inventory var naming a
    # git checkout, what it is, the commit) and (env, distribution, version); another one is warned about
    verified_commits: tuple = ()
    verified_dists: tuple = ()
