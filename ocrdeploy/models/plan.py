"""The plan `inv models` applies (and the install plans can include): hub clients, then each model.

Where a model comes from: `hf` (hf_endpoint, e.g. the seed's https://hf-mirror.com), `modelscope`
(modelscope_endpoint, ids in ms_main / ms_draft / ms_deepseek / ms_layout), or `auto`: the configured
hub, then hf_mirror, then ModelScope, each after a short probe from the host, the first that
answers serving the model (the layout model starts with its tarball URL).
"""

from __future__ import annotations

from ..errors import UsageError
from ..inventory.model import MODEL_SOURCES as SOURCES
from ..provision.pip_index import check_url
from ..provision.plan import Plan
from .catalog import DEFAULT_SET, LAYOUT_URL, MODELS
from .steps import ModelStep, SameRelease, tools_steps

HF_DEFAULT, HF_MIRROR, MS_DEFAULT = "https://huggingface.co", "https://hf-mirror.com", "https://www.modelscope.cn"


def _yes(value) -> bool:
    return str(value).lower() in ("1", "true", "yes", "on")


def model_source(v: dict, source=None) -> str:
    chosen = str(source or v.get("model_source") or "hf").strip().lower()       # HF, ModelScope: as installer reads
    if chosen not in SOURCES:
        raise UsageError(f"model source {chosen!r} (--source or the model_source var): choose hf, modelscope or auto")
    return chosen


def _url(v, var, override=None, flag=None):
    """The var's URL, checked; an option's value (`override`, given as `flag`) wins and is named by it."""
    if override:
        return check_url(flag or var, override)
    value = v.get(var)
    return check_url(var, value) if value else None


def candidates(spec, v, endpoint, layout_url) -> list[dict]:
    """source: auto, in order: the layout's tarball, the configured hub, the mirror, ModelScope."""
    out = [{"source": "url", "url": layout_url}] if spec.kind == "layout" else []
    hubs = []
    for e in (_url(v, "hf_endpoint", endpoint, "--endpoint") or HF_DEFAULT, _url(v, "hf_mirror") or HF_MIRROR):
        if spec.hf_repo and e not in hubs:
            hubs.append(e)
    out += [{"source": "hf", "endpoint": e} for e in hubs]
    ms_id = v.get(spec.ms_var) or spec.ms_repo
    if ms_id:
        out.append({"source": "modelscope", "endpoint": _url(v, "modelscope_endpoint"), "model_id": ms_id})
    return out


def build_models_plan(v: dict, *, names=None, source=None, from_path=None, manifest=None, rehash=False,
                      layout_url=None, endpoint=None, staged=None) -> Plan:
    """staged: {name: {"lfs", "sizes"}} for models already copied to the host (--via-controller)."""
    names = list(dict.fromkeys(names or DEFAULT_SET))     # --model X --model X: one step, not a duplicate name
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        raise UsageError(f"unknown model {unknown[0]!r}; known: {', '.join(MODELS)}")
    source = model_source(v, source)
    if from_path and len(names) != 1:
        raise UsageError("--from PATH gives one model: name it with --model")
    staged = staged or {}
    hub = any((MODELS[n].kind != "layout" or source != "hf") and not from_path and n not in staged for n in names)
    hub_python = v.get("hub_python")
    steps = tools_steps(with_modelscope=source != "hf") if hub and not hub_python else []
    after = ("tools-hub-clients",) if steps else ()
    for n in names:
        spec = MODELS[n]
        if n in staged:
            step = ModelStep(spec, "none", manifest=manifest, rehash=rehash, known=staged[n])
        elif from_path:
            step = ModelStep(spec, "local", from_path=from_path, manifest=manifest, rehash=rehash)
        elif source == "auto":
            layout = _url(v, "layout_url", layout_url, "--layout-url") or LAYOUT_URL
            step = ModelStep(spec, "auto", candidates=candidates(spec, v, endpoint, layout), manifest=manifest,
                             rehash=rehash, after=after, hub_python=hub_python)
        elif spec.kind == "layout" and source == "hf":
            step = ModelStep(spec, "url", url=_url(v, "layout_url", layout_url, "--layout-url") or LAYOUT_URL,
                             manifest=manifest, rehash=rehash)
        elif source == "modelscope":
            step = ModelStep(spec, "modelscope", model_id=v.get(spec.ms_var) or spec.ms_repo,
                             endpoint=_url(v, "modelscope_endpoint"), manifest=manifest, rehash=rehash,
                             after=after, hub_python=hub_python)
        else:
            step = ModelStep(spec, "hf", endpoint=_url(v, "hf_endpoint", endpoint, "--endpoint"), manifest=manifest,
                             rehash=rehash, after=after, hub_python=hub_python)
        steps.append(step)
    pair = [n for n in ("MiniCPM-OCR-1.0", "MiniCPM-OCR-1.0-DSpark") if n in names]
    if "MiniCPM-OCR-1.0-DSpark" in pair:      # a draft coming in (with the main model or alone) meets the rule
        steps.append(SameRelease("MiniCPM-OCR-1.0", "MiniCPM-OCR-1.0-DSpark", after=tuple(f"model:{n}" for n in pair),
                                 allow_unknown=_yes(v.get("allow_unknown_release")), both=len(pair) == 2))
    return Plan("models", steps)
