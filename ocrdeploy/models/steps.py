"""Models as steps of a plan: download + verify on the host, skipped while the verified files
are untouched, and the main/draft same-release rule."""

from __future__ import annotations

import json
from pathlib import Path

from ..provision.command import Command, Script, remote_python
from ..provision.kinds import STATE_FILE, TOOLS_ENV, PipInstall, Venv, venv_python
from ..provision.step import Decision, NotYet, Request, Step, StepError, absolute, wd
from . import hostside
from .catalog import ModelSpec

HASH_CACHE = wd(".ocrdeploy/hash-cache.json")
RELEASE_FIELDS = hostside.RELEASE_FIELDS


def state(facts) -> dict:
    text = (facts.get("reads") or {}).get(STATE_FILE)
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return {}


def tools_steps(with_modelscope=False) -> list[Step]:
    pins = ["huggingface-hub>=0.24"] + (["modelscope>=1.15"] if with_modelscope else [])
    return [Venv("tools-venv", TOOLS_ENV, ">=3.10"),
            PipInstall("tools-hub-clients", TOOLS_ENV, pins, after=("tools-venv",))]


class ModelStep(Step):
    progress = "bytes"

    def __init__(self, spec: ModelSpec, source: str, *, endpoint=None, model_id=None, from_path=None,
                 url=None, manifest=None, rehash=False, after=(), hub_python=None, known=None):
        self.spec, self.source = spec, source
        self.name = f"model:{spec.name}"
        self.dest = wd(f"models/{spec.name}")
        self.endpoint, self.model_id, self.from_path, self.url = endpoint, model_id, from_path, url
        self.manifest, self.rehash, self.after = manifest, rehash, after
        self.hub_python = hub_python      # an interpreter that already has the hub clients
        self.known = known or {}          # {"lfs": ..., "sizes": ...} learnt elsewhere (--via-controller)

    def request(self, v):
        return Request(reads={STATE_FILE}, dirs={self.dest})

    def needs(self, facts, v):
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
        return Decision(False, f"verified {rec.get('verified_at')} ({how})")

    def job(self, facts) -> dict:
        spec = {"name": self.spec.name, "kind": self.spec.kind, "repo": self.spec.hf_repo,
                "required": list(self.spec.required), "weight": self.spec.weight}
        job = {"spec": spec, "dest": absolute(facts, self.dest), "source": self.source}
        if self.source == "hf":
            job["endpoint"] = self.endpoint
        elif self.source == "modelscope":
            if not self.model_id:
                raise StepError(f"no ModelScope id for {self.spec.name}: set {self.spec.ms_var} in the inventory")
            job["model_id"] = self.model_id
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
        if self.source in ("hf", "modelscope"):
            # the hub clients live in the tools venv (or an interpreter the user names)
            python = self.hub_python or venv_python(facts, TOOLS_ENV)
            return [Command([python, "-c", Script(source, "model fetch+verify"), json.dumps(request)])]
        return [remote_python(source, json.dumps(request), "model fetch+verify", show_argument=True)]


def release_ids(manifest: dict | None) -> dict:
    return {k: manifest[k] for k in RELEASE_FIELDS if manifest and manifest.get(k) is not None}


class SameRelease(Step):
    """The DSpark draft must come from the same release as the main model (seed 000 3.4)."""

    def __init__(self, main: str, draft: str, after=()):
        self.name, self.main, self.draft, self.after = "same-release", main, draft, after

    def request(self, v):
        return Request(reads={STATE_FILE})

    def compare(self, facts):
        models = state(facts).get("models") or {}
        m, d = models.get(self.main), models.get(self.draft)
        if not m or not d:
            return None, "main or draft not verified yet"
        a, b = release_ids(m.get("manifest")), release_ids(d.get("manifest"))
        common = sorted(set(a) & set(b))
        if not common:
            return False, (f"cannot tell whether {self.draft} comes from the release of {self.main}: their "
                           f"release_manifest.json share no identifier field (looked for "
                           f"{', '.join(RELEASE_FIELDS)}; main has {', '.join(sorted(a)) or 'none'}, draft has "
                           f"{', '.join(sorted(b)) or 'none'})")
        differ = [k for k in common if str(a[k]) != str(b[k])]
        if differ:
            return False, ("draft from another release: " + ", ".join(
                f"{k} main={a[k]!r} draft={b[k]!r}" for k in differ) + " (the DSpark draft must come from the "
                "same release as the main model)")
        return True, f"same release (compared {', '.join(f'{k}={a[k]!r}' for k in common)})"

    def needs(self, facts, v):
        ok, why = self.compare(facts)
        if ok:
            return Decision(False, why)
        return Decision(True, why)

    def commands(self, facts, v):
        ok, why = self.compare(facts)
        raise (NotYet if ok is None else StepError)(why)
