"""The step contract: what a unit of installation must say about itself.

A step names the facts it reads (`request`), decides from facts alone whether
it has work to do (`needs`, pure), says exactly which commands that work is
(`commands`, pure: argument lists), and is judged after running by re-read
facts (`verify`).  "changed" is derived from a non-empty plan that ran and
verified; "ok" always means the facts show the state is right, which is why
an interrupted run can never leave a step reported ok that is not.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass, field

from .command import Command

OK, CHANGED, FAILED, SKIPPED = "ok", "changed", "failed", "skipped"


class StepError(Exception):
    """The step cannot even plan its commands (a missing input); it fails without running anything."""


class NotYet(StepError):
    """An input an earlier step of the plan creates is not there yet (in --check: decided after that step)."""


@dataclass
class Decision:
    needed: bool
    reason: str


@dataclass
class Request:
    paths: set = field(default_factory=set)
    venvs: set = field(default_factory=set)
    git: set = field(default_factory=set)
    globs: set = field(default_factory=set)
    reads: set = field(default_factory=set)
    dirs: set = field(default_factory=set)
    git_status: set = field(default_factory=set)   # work trees whose uncommitted changes matter (runs git)
    imports: list = field(default_factory=list)

    def merge(self, other: "Request") -> "Request":
        self.paths |= other.paths
        self.venvs |= other.venvs
        self.git |= other.git
        self.globs |= other.globs
        self.reads |= other.reads
        self.dirs |= other.dirs
        self.git_status |= other.git_status
        names = {i["name"] for i in self.imports}
        self.imports.extend(i for i in other.imports if i["name"] not in names)
        return self


class Step:
    """Base class; subclasses implement needs() and commands()."""

    name: str = "step"
    after: tuple = ()
    progress: str | None = None       # "ninja": read [N/M] lines from the log into a progress bar
    timeout: float = 6 * 3600
    # True when the step's "ok" is a judgement of what the steps it comes after made (a recorded check
    # of a venv's packages): in --check it is not called ok while one of those would change
    judges_after: bool = False

    def request(self, vars_: dict) -> Request:
        return Request()

    def verify_request(self, vars_: dict) -> Request:
        return self.request(vars_)

    def needs(self, facts: dict, vars_: dict) -> Decision:
        raise NotImplementedError

    def commands(self, facts: dict, vars_: dict) -> list[Command]:
        raise NotImplementedError

    def verify(self, facts: dict, vars_: dict) -> Decision:
        """After running, on re-read facts: passes (needed=False) when they show no work left."""
        return self.needs(facts, vars_)

    def retry(self, attempt: int, findings: list[str], facts: dict, vars_: dict,
              wheel_dir: str | None = None) -> list[Command] | None:
        """Commands for another attempt after a failure, or None (default: no retry).  `wheel_dir`: the
        failure was a shared build's wheel build (a step with build_inputs), which retries into it."""
        return None

    # shared builds (fleet.py): a step that compiles can build a wheel once for the hosts whose inputs match
    def runs_without(self, dep: str, vars_: dict) -> bool:
        """Whether this step still runs when `dep` (one of its `after`) did not succeed: an install that
        would have used uv falls back to pip when uv could not be installed (installer: auto)."""
        return False

    def tolerated_failure(self, facts: dict, vars_: dict) -> str | None:
        """Why this step's failure does not fail the run (None: it does), e.g. uv's install under
        installer: auto, where every install it serves runs with pip instead."""
        return None

    def build_inputs(self, facts: dict, vars_: dict) -> dict | None:
        """What its build depends on, from facts (None: this step is never shared)."""
        return None

    def wheel_commands(self, facts: dict, vars_: dict, wheel_dir: str) -> list[Command]:
        """Build the wheel into wheel_dir (on the builder), the build last: the applier empties wheel_dir
        before it and hashes the wheel after it, in the same command."""
        raise NotImplementedError

    def wheel_install_commands(self, facts: dict, vars_: dict, wheel: str) -> list[Command]:
        """Install the wheel at this path on the host (every host of the group, the builder included)."""
        raise NotImplementedError

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}>"


# ------------------------------------------------------------------ fact helpers

def wd(rel: str) -> str:
    """A path relative to the host's work dir, as the probe understands it."""
    return "@/" + rel.lstrip("/")


def absolute(facts: dict, path: str) -> str:
    """A request path ('@/x', '~/x', '/x') as an absolute path on the host."""
    if path == "@" or path.startswith("@/"):
        return posixpath.join(facts["workdir"]["path"], path[2:])
    if path.startswith("~"):
        home = facts["host"].get("home") or "~"
        return home + path[1:]
    return path


def venv(facts: dict, name: str) -> dict | None:
    """A venv's facts: top-level ones under the work dir are found by name, nested ones
    ('.ocrdeploy/tools-env') are asked for explicitly (see venv_request)."""
    venvs = facts.get("venvs") or {}
    return venvs.get(name) or venvs.get(wd(name))


def venv_request(name: str) -> set:
    return {wd(name)} if "/" in name else set()


def norm(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


def dist(facts: dict, venv_name: str, dist_name: str) -> dict | None:
    v = venv(facts, venv_name)
    if not v:
        return None
    return v["dists"].get(norm(dist_name))


def file_fact(facts: dict, path: str) -> dict:
    return (facts.get("files") or {}).get(path) or {"exists": False}


def fingerprint(facts: dict, venv_name: str) -> str | None:
    """What is installed in a venv, as a short hash: a check recorded for one fingerprint is stale for another."""
    v = venv(facts, venv_name)
    if not v:
        return None
    text = "\n".join(f"{n}=={d['version']}{'@e' if d.get('editable') else ''}" for n, d in sorted(v["dists"].items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
