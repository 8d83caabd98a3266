"""Models as steps of a plan: download + verify on the host, skipped while the verified files
are untouched, and the main/draft same-release rule."""

from __future__ import annotations

import json
from pathlib import Path

from ..provision.command import Command, Script, remote_python
from ..provision.kinds import STATE_FILE, TOOLS_ENV, PipInstall, Venv, host_state, venv_python
from ..provision.step import Decision, NotYet, Request, Step, StepError, absolute, wd
from . import hostside
from .catalog import ModelSpec

PROBE_TIMEOUT = 5.0   # seconds for each source's probe under source: auto
HASH_CACHE = wd(".ocrdeploy/hash-cache.json")
RELEASE_FIELDS = hostside.RELEASE_FIELDS


def state(facts) -> dict:
    return host_state(facts)


def tools_steps(with_modelscope=False) -> list[Step]:
    # modelscope 1.38 is the first to read MODELSCOPE_ENDPOINT; modelscope-hub 0.5 has the checked per-file download
    pins = ["huggingface-hub>=0.24"] + (["modelscope>=1.38", "modelscope-hub>=0.5"] if with_modelscope else [])
    return [Venv("tools-venv", TOOLS_ENV, ">=3.10"),
            PipInstall("tools-hub-clients", TOOLS_ENV, pins, after=("tools-venv",))]


class ModelStep(Step):
    progress = "bytes"

    def __init__(self, spec: ModelSpec, source: str, *, endpoint=None, model_id=None, from_path=None,
                 url=None, manifest=None, rehash=False, after=(), hub_python=None, known=None, candidates=None):
        self.spec, self.source = spec, source
        self.name = f"model:{spec.name}"
        self.dest = wd(f"models/{spec.name}")
        self.endpoint, self.model_id, self.from_path, self.url = endpoint, model_id, from_path, url
        self.manifest, self.rehash, self.after = manifest, rehash, after
        self.hub_python = hub_python      # an interpreter that already has the hub clients
        self.known = known or {}          # {"lfs": ..., "sizes": ...} learnt elsewhere (--via-controller)
        self.candidates = candidates or []  # source "auto": the sources to probe, in order

    def request(self, v):
        return Request(reads={STATE_FILE}, dirs={self.dest})

    def needs(self, facts, v):
        if self.source == "local":       # asked for by name: never "already verified" while the source may differ
            rec = (state(facts).get("models") or {}).get(self.spec.name)
            return Decision(True, f"copy from {self.from_path} and verify" + (" again" if rec else ""))
        return self.verify(facts, v)

    def verify(self, facts, v):
        """Verified and untouched since: the state's record and the directory's listing agree."""
        rec = (state(facts).get("models") or {}).get(self.spec.name)
        listing = (facts.get("dirs") or {}).get(self.dest)
        if not rec:
            if listing:
                return Decision(True, "present but not verified")
            return Decision(True, "not downloaded")
        if listing is None:
            return Decision(True, "verified before, but the directory is gone")
        changed = [n for n, key in rec.get("files", {}).items() if listing.get(n) != key]
        if changed:
            return Decision(True, f"changed since verified: {', '.join(sorted(changed)[:3])}"
                                  f"{' ...' if len(changed) > 3 else ''}")
        how = "; ".join(f"{n} sha256 checked against {', '.join(src)}"
                        for n, src in (rec.get("checked_against") or {}).items()) or "required files present"
        served = f" from {rec['source']}" if rec.get("source") else ""
        return Decision(False, f"verified {rec.get('verified_at')}{served} ({how})")

    def job(self, facts) -> dict:
        repo = self.spec.hf_repo if self.source in ("hf", "auto") else None
        spec = {"name": self.spec.name, "kind": self.spec.kind, "repo": repo,
                "required": list(self.spec.required), "weight": self.spec.weight}
        job = {"spec": spec, "dest": absolute(facts, self.dest), "source": self.source}
        if self.source == "hf":
            job["endpoint"] = self.endpoint
        elif self.source == "modelscope":
            if not self.model_id:
                raise StepError(f"no ModelScope id for {self.spec.name}: set {self.spec.ms_var} in the inventory")
            job["model_id"] = self.model_id
            job["endpoint"] = self.endpoint
        elif self.source == "auto":
            job["candidates"] = self.candidates
            job["probe_timeout"] = PROBE_TIMEOUT
        elif self.source == "url":
            job["url"] = self.url
        elif self.source == "local":
            job["from"] = absolute(facts, self.from_path)
        if self.manifest:
            job["manifest"] = absolute(facts, self.manifest)
        job.update(self.known)
        return job

    def commands(self, facts, v):
        request = {"models": [self.job(facts)], "cache": absolute(facts, HASH_CACHE),
                   "state": absolute(facts, STATE_FILE), "rehash": self.rehash}
        source = Path(hostside.__file__).read_text(encoding="utf-8")
        if self.source in ("hf", "modelscope", "auto"):
            # the hub clients live in the tools venv (or an interpreter the user names)
            python = self.hub_python or venv_python(facts, TOOLS_ENV)
            return [Command([python, "-c", Script(source, "model fetch+verify"), json.dumps(request)])]
        return [remote_python(source, json.dumps(request), "model fetch+verify", show_argument=True)]


def release_ids(manifest: dict | None) -> dict:
    return {k: manifest[k] for k in RELEASE_FIELDS if manifest and manifest.get(k) is not None}


def same_release(main: dict | None, draft: dict | None, allow_unknown=False) -> tuple[bool | None, str]:
    """The guide's rule (section 3.4): the DSpark draft comes from the same release as the main model.

    main/draft are the verified models' records (state.json).  (None, why) when one is not verified;
    (False, why) when their release_manifest.json fields differ, or when they share none, so that no one
    can tell: a main model without a release manifest is verified against the hub's digests but then
    fails this rule unless the host var allow_unknown_release is set, which accepts only that case,
    never a draft whose manifest names another release."""
    if not main or not draft:
        return None, "main or draft not verified yet"
    a, b = release_ids(main.get("manifest")), release_ids(draft.get("manifest"))
    common = sorted(set(a) & set(b))
    if not common:
        why = (f"cannot tell whether the draft comes from the main model's release: their "
               f"release_manifest.json share no identifier field (looked for {', '.join(RELEASE_FIELDS)}; main "
               f"has {', '.join(sorted(a)) or 'none'}, draft has {', '.join(sorted(b)) or 'none'})")
        return (True, why + "; accepted because allow_unknown_release is set") if allow_unknown else (False, why)
    differ = [k for k in common if str(a[k]) != str(b[k])]
    if differ:
        return False, ("draft from another release: " + ", ".join(
            f"{k} main={a[k]!r} draft={b[k]!r}" for k in differ) + " (the DSpark draft must come from the "
            "same release as the main model)")
    return True, f"same release (compared {', '.join(f'{k}={a[k]!r}' for k in common)})"


class SameRelease(Step):
    """The DSpark draft must come from the same release as the main model (the guide, section 3.4).

    It runs whenever either model is fetched: a draft copied alone (--from) is compared with the main
    model already verified on the host."""

    judges_after = True


    def __init__(self, main: str, draft: str, after=(), allow_unknown=False, both=True):
        self.name, self.main, self.draft, self.after = "same-release", main, draft, after
        self.allow_unknown, self.both = allow_unknown, both

    def request(self, v):
        return Request(reads={STATE_FILE})

    def compare(self, facts):
        models = state(facts).get("models") or {}
        return same_release(models.get(self.main), models.get(self.draft), self.allow_unknown)

    def needs(self, facts, v):
        ok, why = self.compare(facts)
        if ok:
            return Decision(False, why)
        if ok is None and not self.both:
            return Decision(False, "the other model is not verified on this host yet: checked when both are "
                                   "(and by inv serve --dspark)")
        return Decision(True, why)

    def commands(self, facts, v):
        ok, why = self.compare(facts)
        raise (NotYet if ok is None else StepError)(why)
