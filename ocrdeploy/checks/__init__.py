"""Preflight and post-install checks: pure functions of facts and a recipe's requirements."""

from .result import CheckResult, PASS, WARN, FAIL, SKIP
from .preflight import run_preflight_checks, free_gpu

__all__ = ["CheckResult", "PASS", "WARN", "FAIL", "SKIP", "run_preflight_checks", "free_gpu"]
