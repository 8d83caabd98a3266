"""The one result shape of every check."""

from __future__ import annotations

from dataclasses import asdict, dataclass

PASS, WARN, FAIL, SKIP = "pass", "warn", "fail", "skip"


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: str
    message: str
    fix: str | None = None
    value: object = None   # the machine-readable finding (e.g. the CUDA_VISIBLE_DEVICES value)

    def to_dict(self) -> dict:
        return asdict(self)
