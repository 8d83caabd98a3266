"""What a stack needs of a host: the thresholds the preflight checks apply.

Each recipe states its own (recipes.registry); the checks only read them, so the same checks
serve MiniCPM-OCR on CUDA 13, DeepSeek-OCR on CUDA 11.8 and an SDK-only client.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Requirements:
    needs_gpu: bool = True
    min_vram_gib: float = 24.0          # on at least one GPU
    advised_vram_gib: float | None = None
    min_driver: int = 580               # major version
    driver_fallback_floor: int | None = 535  # 535-579: upgrade, or cu126 + own vLLM build
    min_disk_gib: float = 20.0
    # env name -> minimum Python (major, minor)
    pythons: dict = field(default_factory=dict)
    needs_gcc13: bool = False
    needs_github: bool = False          # compiles that fetch from GitHub
    # (up to this many sold GB, mode) rows, smallest first, the last one open (None): a stack that runs in a
    # smaller mode on a smaller card (DeepSeek-OCR) passes the VRAM check on any card with a row, naming it
    vram_modes: tuple = ()
