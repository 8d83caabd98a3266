"""The plan `inv models` applies (and the install plans can include): hub clients, then each model."""

from __future__ import annotations

from ..errors import UsageError
from ..provision.plan import Plan
from .catalog import DEFAULT_SET, LAYOUT_URL, MODELS
from .steps import ModelStep, SameRelease, tools_steps

SOURCES = ("hf", "modelscope")


def _yes(value) -> bool:
    return str(value).lower() in ("1", "true", "yes", "on")


def build_models_plan(v: dict, *, names=None, source="hf", from_path=None, manifest=None, rehash=False,
                      layout_url=None, endpoint=None, staged=None) -> Plan:
    """staged: {name: {"lfs", "sizes"}} for models already copied to the host (--via-controller)."""
    names = list(names or DEFAULT_SET)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        raise UsageError(f"unknown model {unknown[0]!r}; known: {', '.join(MODELS)}")
    if source not in SOURCES:
        raise UsageError(f"--source {source!r}: choose hf or modelscope")
    if from_path and len(names) != 1:
        raise UsageError("--from PATH gives one model: name it with --model")
    staged = staged or {}
    hub = any(MODELS[n].kind != "layout" and not from_path and n not in staged for n in names)
    hub_python = v.get("hub_python")
    steps = tools_steps(with_modelscope=source == "modelscope") if hub and not hub_python else []
    after = ("tools-hub-clients",) if steps else ()
    for n in names:
        spec = MODELS[n]
        if n in staged:
            step = ModelStep(spec, "none", manifest=manifest, rehash=rehash, known=staged[n])
        elif from_path:
            step = ModelStep(spec, "local", from_path=from_path, manifest=manifest, rehash=rehash)
        elif spec.kind == "layout":
            step = ModelStep(spec, "url", url=layout_url or v.get("layout_url") or LAYOUT_URL, manifest=manifest,
                             rehash=rehash)
        elif source == "modelscope":
            step = ModelStep(spec, "modelscope", model_id=v.get(spec.ms_var), manifest=manifest, rehash=rehash,
                             after=after, hub_python=hub_python)
        else:
            step = ModelStep(spec, "hf", endpoint=endpoint or v.get("hf_endpoint"), manifest=manifest,
                             rehash=rehash, after=after, hub_python=hub_python)
        steps.append(step)
    pair = [n for n in ("MiniCPM-OCR-1.0", "MiniCPM-OCR-1.0-DSpark") if n in names]
    if "MiniCPM-OCR-1.0-DSpark" in pair:      # a draft coming in (with the main model or alone) meets the rule
        steps.append(SameRelease("MiniCPM-OCR-1.0", "MiniCPM-OCR-1.0-DSpark", after=tuple(f"model:{n}" for n in pair),
                                 allow_unknown=_yes(v.get("allow_unknown_release")), both=len(pair) == 2))
    return Plan("models", steps)
