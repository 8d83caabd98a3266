"""Reusable step kinds: apt packages, venvs, pip pins, editable installs, git clones and
recorded checks (the CUDA layout and the vLLM compile are in recipes.cuda_steps).

Each decides from facts only; the commands are argument lists.  Paths are written
relative to the work dir ('@/...') in requests and made absolute from facts.
"""

from __future__ import annotations

import json
import re

from packaging.version import InvalidVersion, Version

from ..checks.requirements import PythonRule
from ..errors import HostFailed
from . import installer
from .command import Command, Script, Secret
from .installer import TOOLS_ENV
from .pip_index import own_index, pip_options, url_arg
from .step import (Decision, NotYet, Request, Step, StepError, absolute, dist, file_fact, fingerprint, venv,
                   venv_request, wd)

STATE_FILE = wd(".ocrdeploy/state.json")


def host_state(facts: dict) -> dict:
    """The host's state file (verified models, passed checks) as read by the probe, checked.

    Every command that plans from it reads it here; a file that is not what ocrdeploy writes
    (truncated, a list, binary, a model entry that is not an object) fails the host with one
    line that names the file and how to recover, instead of a traceback in whoever reads it."""
    text = (facts.get("reads") or {}).get(STATE_FILE)
    if not text:
        return {}
    path = absolute(facts, STATE_FILE)
    try:
        state = json.loads(text)
        problem = _state_problem(state)
    except ValueError as exc:
        problem = f"not JSON ({exc})"
    if problem:
        raise HostFailed((facts.get("host") or {}).get("hostname") or "host",
                         f"{path} is corrupt: {problem}. Move it aside (mv {path} {path}.bad) and run "
                         f"`inv models` again: it re-verifies the models and records them (install re-runs "
                         f"its recorded checks)")
    return state


def _state_problem(state) -> str | None:
    if not isinstance(state, dict):
        return f"a JSON {type(state).__name__}, not an object"
    for section in ("models", "checks"):
        entries = state.get(section, {})
        if not isinstance(entries, dict):
            return f"{section!r} is a {type(entries).__name__}, not an object"
        for name, entry in entries.items():
            if not isinstance(entry, dict):
                return f"{section}[{name!r}] is a {type(entry).__name__}, not an object"
            if section == "models" and not isinstance(entry.get("path"), str):
                return f"models[{name!r}] has no path"
            for key in ("files", "checked_against", "sha256"):
                if not isinstance(entry.get(key, {}), (dict, type(None))):
                    return f"{section}[{name!r}][{key!r}] is not an object"
    return None


def venv_python(facts, venv_name):
    return absolute(facts, wd(f"{venv_name}/bin/python"))


# ------------------------------------------------------------------ apt
class AptPackages(Step):
    """Debian packages, each proven present by a file (no dpkg query needed); PPA for gcc-13 on Ubuntu."""

    def __init__(self, name, packages: dict, ppa: str | None = None, ppa_for=(), after=()):
        self.name, self.packages, self.ppa, self.ppa_for, self.after = name, dict(packages), ppa, tuple(ppa_for), after

    def request(self, v):
        return Request(paths=set(self.packages.values()))

    def missing(self, facts):
        return [p for p, proof in self.packages.items() if not file_fact(facts, proof)["exists"]]

    def needs(self, facts, v):
        missing = self.missing(facts)
        if not missing:
            return Decision(False, "present: " + ", ".join(self.packages))
        return Decision(True, "missing: " + ", ".join(missing))

    def commands(self, facts, v):
        missing = self.missing(facts)
        if not (facts.get("tools") or {}).get("apt-get"):
            raise StepError(f"apt-get not found; install {', '.join(missing)} with the system's package manager")
        if facts["host"].get("uid") != 0 and not facts.get("sudo_nopasswd"):
            raise StepError(f"installing {', '.join(missing)} needs root: configure passwordless sudo or install "
                            f"them by hand")
        env = {"DEBIAN_FRONTEND": "noninteractive"}
        cmds = []
        os_id = ((facts["host"].get("os") or {}).get("id"))
        if self.ppa and os_id == "ubuntu" and any(p in self.ppa_for for p in missing):
            if not (facts.get("tools") or {}).get("add-apt-repository"):
                cmds.append(Command(["apt-get", "install", "-y", "software-properties-common"], env=env, sudo=True))
            cmds.append(Command(["add-apt-repository", "-y", self.ppa], env=env, sudo=True))
        cmds.append(Command(["apt-get", "update"], env=env, sudo=True))
        cmds.append(Command(["apt-get", "install", "-y", *missing], env=env, sudo=True))
        return cmds


# ------------------------------------------------------------------ venv
class Venv(Step):
    """A venv made with the interpreter its PythonRule picks from the host's (the rule preflight checks)."""

    def __init__(self, name, venv_name, python, after=()):
        self.name, self.venv_name, self.after = name, venv_name, after
        self.rule = PythonRule.of(python)
        self.serves: list = []     # set for the tools venv: made only while one of these has work

    def _served_work(self, facts, v) -> bool:
        return any(_has_work(s, facts, v) for s in self.serves)

    def request(self, v):
        return Request(paths={wd(f"{self.venv_name}/bin/python")}, venvs=venv_request(self.venv_name))

    def needs(self, facts, v):
        ve = venv(facts, self.venv_name)
        if not ve and self.serves and not self._served_work(facts, v):
            return Decision(False, f"not needed: {self.venv_name} does not exist and no step that uses it has work")
        if not ve:
            return Decision(True, f"{self.venv_name} does not exist")
        if not self.rule.accepts(ve.get("python")):
            return Decision(True, f"{self.venv_name} has Python {ve.get('python')}, want {self.rule.describe()}: "
                                  f"recreate")
        if not file_fact(facts, wd(f"{self.venv_name}/bin/python"))["exists"]:
            return Decision(True, f"{self.venv_name} is broken (no bin/python): recreate")
        pip = ve["dists"].get("pip")
        if not pip or not pip.get("complete"):
            return Decision(True, f"{self.venv_name} has no complete pip (interrupted creation?): recreate")
        return Decision(False, f"exists with Python {ve.get('python')}")

    def commands(self, facts, v):
        interp = self.rule.pick(facts.get("pythons"))
        if interp is None:
            have = ", ".join(p["version"] for p in facts.get("pythons") or []) or "none"
            how = (f"an earlier step installs a managed {self.rule.managed} with uv" if self.rule.managed else
                   f"install {self.rule.package()}")
            # NotYet: an earlier step may install it (a managed Python through uv)
            raise NotYet(f"no {self.rule.describe()} on the host (found: {have}); {how}")
        path = absolute(facts, wd(self.venv_name))
        recreate = venv(facts, self.venv_name) is not None
        return [Command([interp["path"], "-m", "venv", *(["--clear"] if recreate else []), path])]


class ManagedPython(Step):
    """A Python minor for an env: the host's when it has one, else a standalone CPython from
    `uv python install` (no root, nothing of the system touched; the probe finds it next run).
    Not needed either while the env it serves stands as it should: a venv made once with an
    interpreter that is not on this login's PATH (another user's pyenv, a conda base) needs none."""

    def __init__(self, name, minor, after=(), serves: Venv | None = None):
        self.name, self.minor, self.after, self.serves = name, minor, after, serves
        self.rule = PythonRule.of(minor)

    def request(self, v):
        return self.serves.request(v) if self.serves else Request()

    def needs(self, facts, v):
        have = self.rule.pick(facts.get("pythons"))
        if have:
            return Decision(False, f"Python {have['version']} at {have['path']}")
        if self.serves and not self.serves.needs(facts, v).needed:
            return Decision(False, f"not needed: {self.serves.venv_name} stands with Python "
                                   f"{venv(facts, self.serves.venv_name).get('python')}")
        return Decision(True, f"no Python {self.minor}: install a managed one with uv")

    def commands(self, facts, v):
        # uv downloads the build from GitHub (python-build-standalone); python_install_mirror points it elsewhere
        mirror = own_index(v, "python_install_mirror", None)
        return [Command([absolute(facts, wd(f"{TOOLS_ENV}/bin/uv")), "python", "install", self.minor],
                        env={"UV_PYTHON_INSTALL_MIRROR": url_arg(mirror)} if mirror else None)]


def _has_work(step, facts, v) -> bool:
    """A served step's own decision; one that cannot even decide (its input is missing) counts as work."""
    try:
        return step.needs(facts, v).needed
    except StepError:
        return True


# ------------------------------------------------------------------ pip
# A pin as the recipes write them: a name, maybe extras, then comma-separated `OP VERSION` clauses.
_SIMPLE_PIN = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*"
                         r"(?:\[\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\s*,\s*[A-Za-z0-9]"
                         r"(?:[A-Za-z0-9._-]*[A-Za-z0-9])?)*)?\s*\])?\s*"
                         r"((?:===|==|!=|<=|>=|~=|<|>)\s*[A-Za-z0-9.*+!_-]+"
                         r"(?:\s*,\s*(?:===|==|!=|<=|>=|~=|<|>)\s*[A-Za-z0-9.*+!_-]+)*)?\s*")


class Pin:
    """A requirement of the simple form, read without packaging.requirements.

    packaging.requirements brings its PEP 508 tokenizer, markers and packaging.tags (with platform,
    logging and subprocess): about a third of a local no-op's import time, for pins that are a name and
    version clauses.  Such a line is matched here and its clauses handed to packaging.specifiers (which
    still judges them); anything else (markers, URLs, parentheses, an invalid line) goes to packaging's
    Requirement, which then parses it or raises its InvalidRequirement.  tests/provision/test_kinds_pins.py
    checks that both readings agree on name, extras and specifier."""

    __slots__ = ("name", "extras", "specifier", "marker", "url")

    def __init__(self, name, extras, specifier):
        self.name, self.extras, self.specifier, self.marker, self.url = name, extras, specifier, None, None

    def __str__(self):
        extras = f"[{','.join(sorted(self.extras))}]" if self.extras else ""
        return f"{self.name}{extras}{self.specifier}"

    def __repr__(self):
        return f"<Pin('{self}')>"


def requirement(line: str):
    """A Pin for a simple line, else packaging's Requirement (a ValueError for an invalid line)."""
    m = _SIMPLE_PIN.fullmatch(line)
    if m:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            spec = SpecifierSet(m.group(3) or "")
        except InvalidSpecifier:
            pass
        else:
            extras = {e.strip() for e in m.group(2).split(",")} if m.group(2) else set()
            return Pin(m.group(1), extras, spec)
    from packaging.requirements import Requirement

    return Requirement(line)


def satisfied(d: dict | None, req) -> tuple[bool, str]:
    if d is None:
        return False, f"{req.name} not installed"
    if not d.get("complete", True):
        return False, f"{req.name} {d['version']} incompletely installed (interrupted?)"
    if req.specifier:
        try:
            if not req.specifier.contains(Version(d["version"]), prereleases=True):
                return False, f"{req.name} {d['version']} installed, want {req.specifier}"
        except InvalidVersion:
            return False, f"{req.name} has an unreadable version {d['version']!r}"
    return True, f"{req.name} {d['version']}"


class PipInstall(Step):
    """pip install of pinned requirements (through installer.py: uv or pip), from the inventory's index
    (pip_index.py) or the step's own `index_url`, which its `index_var` overrides."""

    pip_only: str | None = None     # why this step keeps pip whatever the installer var says
    uv_bootstrap = False            # with_uv: a step before this one installs uv

    def __init__(self, name, venv_name, requirements, index_url=None, extra_index_urls=(), no_deps=False,
                 after=(), reason=None, index_var=None):
        self.name, self.venv_name, self.after = name, venv_name, after
        try:
            self.reqs = [requirement(r) for r in requirements]
        except ValueError as exc:        # packaging's InvalidRequirement
            raise ValueError(f"{name}: {exc}")
        self.raw = list(requirements)
        self.index_url, self.extra_index_urls, self.no_deps = index_url, tuple(extra_index_urls), no_deps
        self.index_var = index_var
        self.why = reason

    def request(self, v):
        return Request(venvs=venv_request(self.venv_name)).merge(installer.request())

    def installer(self, facts, v) -> installer.Choice:
        return installer.choose(facts, v, pip_only=self.pip_only, bootstrap=self.uv_bootstrap)

    def runs_without(self, dep, v):
        return dep == "tools-uv" and self.uv_bootstrap and installer.mode(v) == "auto"

    def needs(self, facts, v):
        results = [satisfied(dist(facts, self.venv_name, r.name), r) for r in self.reqs]
        bad = [msg for ok, msg in results if not ok]
        note = f" ({self.why})" if self.why else ""
        if bad:
            return Decision(True, "; ".join(bad) + note)
        return Decision(False, "already " + ", ".join(msg for _, msg in results) + note)

    def pip_options(self, v):
        return pip_options(v, own_index(v, self.index_var, self.index_url), self.extra_index_urls)

    def pip_command(self, facts, v, *more, env=None, cwd=None) -> Command:
        """`pip install ...more` (uv's or pip's, installer.py) with this step's index options."""
        return installer.install_command(facts, v, venv_python(facts, self.venv_name), more,
                                         index_url=own_index(v, self.index_var, self.index_url),
                                         extra=self.extra_index_urls, env=env, cwd=cwd, pip_only=self.pip_only,
                                         bootstrap=self.uv_bootstrap)

    def commands(self, facts, v):
        broken = [r.name for r in self.reqs if not (dist(facts, self.venv_name, r.name) or {}).get("complete", True)]
        repair = [_drop_unrecorded(venv_python(facts, self.venv_name), *broken)] if broken else []
        return repair + [self.pip_command(facts, v, *(["--no-deps"] if self.no_deps else []), *self.raw)]


class UvForPython(PipInstall):
    """uv in the tools venv (installed with pip: it is the installer), needed only while one of the managed
    Pythons it serves is to be installed or one of the installs it serves is to run with uv."""

    pip_only = "uv is installed with pip"

    def __init__(self, name, venv_name, pythons: list[ManagedPython], after=()):
        super().__init__(name, venv_name, [installer.UV_PIN], after=after)
        self.pythons = list(pythons)
        self.installs: list = []        # with_uv: the steps that install with uv

    def request(self, v):
        req = super().request(v)
        for p in [*self.pythons, *self.installs]:
            req = req.merge(p.request(v))
        return req

    def _uv_work(self, facts, v) -> list[str]:
        out = []
        for s in self.installs:
            try:
                if s.installer(facts, v).name == "uv" and _has_work(s, facts, v):
                    out.append(s.name)
            except StepError:
                pass
        return out

    def tolerated_failure(self, facts, v):
        """installer: auto asks for uv where it helps, not at any price: when it cannot be installed (a mirror
        without it, an old pip), the installs it serves run with pip, unless a managed Python needs uv."""
        if installer.mode(v) != "auto" or any(p.needs(facts, v).needed for p in self.pythons):
            return None
        return "uv could not be installed: the installs it serves run with pip instead (installer: auto)"

    def needs(self, facts, v):
        decisions = [p.needs(facts, v) for p in self.pythons]
        installs = self._uv_work(facts, v)
        if not any(d.needed for d in decisions) and not installs:
            why = [d.reason for d in decisions] + (["no install runs with uv"] if self.installs else [])
            return Decision(False, "not needed: " + "; ".join(why))
        have = super().needs(facts, v)
        if installs and have.needed:
            return Decision(True, f"{have.reason}; it installs {', '.join(installs)}")
        return have


def with_uv(steps: list, v: dict) -> list:
    """The steps of a run with uv's bootstrap in front: the tools venv and uv in it, each needed only while
    a step it serves has work (a re-run where everything stands installs no uv), and every install that
    may use uv after them, so it runs with uv (or is skipped when uv could not be installed: --check shows
    uv for it).  installer: pip changes nothing; neither does a run without installs."""
    if installer.mode(v) == "pip":
        return steps
    installs = [s for s in steps if isinstance(s, (PipInstall, PipEditable)) and not s.pip_only]
    if not installs:
        return steps
    by = {s.name: s for s in steps}
    tools_venv = by.get("tools-venv") or Venv("tools-venv", TOOLS_ENV, ">=3.10")
    uv = by.get("tools-uv")
    if not isinstance(uv, UvForPython):     # a recipe's plain uv install (or none) becomes the bootstrap
        uv = UvForPython("tools-uv", TOOLS_ENV, [], after=("tools-venv",))
    uv.installs = installs
    for s in installs:
        s.uv_bootstrap = True
        s.after = tuple(dict.fromkeys((*s.after, "tools-uv")))
    rest = [s for s in steps if s.name not in ("tools-venv", "tools-uv")]
    tools_venv.serves = [s for s in [uv, *rest] if "tools-venv" in s.after]
    return [tools_venv, uv, *rest]


class ExistingEnv(Step):
    """A venv the user already has (an inventory var such as vllm_env): proven to hold its package, never
    changed.  It stands where the recipe would build an env, so the plan says why nothing is built."""

    def __init__(self, name, var, path, dists, after=()):
        self.name, self.var, self.path, self.dists, self.after = name, var, str(path), tuple(dists), after

    def request(self, v):
        return Request(venvs={self.path})

    def needs(self, facts, v):
        found = (facts.get("venvs") or {}).get(self.path)
        if not found:
            raise StepError(f"inventory var {self.var}: {self.path} is not a venv on this host (no pyvenv.cfg)")
        have = [(n, found["dists"][n]["version"]) for n in self.dists if n in (found.get("dists") or {})]
        if not have:
            raise StepError(f"inventory var {self.var}: {self.path} holds none of {', '.join(self.dists)}")
        return Decision(False, f"{self.var} is set: {self.path} is your own env ({have[0][0]} {have[0][1]}); "
                               f"install leaves it alone")

    def commands(self, facts, v):
        return []


def editable_source(d: dict | None) -> str | None:
    """The source dir of an editable install: pip writes it to direct_url.json as a file URL, so a space
    in the path reads %20 there (PEP 610)."""
    src = (d or {}).get("source")
    if src and src.startswith("file://"):
        from urllib.parse import unquote, urlsplit

        return unquote(urlsplit(src).path)
    return src


_DROP_UNRECORDED = """import os, re, shutil, sys, sysconfig
want = set(re.sub(r"[-_.]+", "-", n).lower() for n in sys.argv[1:])
for site in sorted(set(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))):
    for entry in os.listdir(site) if os.path.isdir(site) else ():
        path = os.path.join(site, entry)
        name = re.sub(r"[-_.]+", "-", entry[:-len(".dist-info")].partition("-")[0]).lower()
        if entry.endswith(".dist-info") and name in want and not os.path.exists(os.path.join(path, "RECORD")):
            shutil.rmtree(path)
            print("removed %s (no RECORD: an interrupted install)" % path)
"""


def _drop_unrecorded(python: str, *names) -> Command:
    """An interrupted pip install leaves a dist-info without RECORD: pip then answers a plain install
    "Requirement already satisfied" and refuses --force-reinstall ("Cannot uninstall ..., RECORD file not
    found"), so the step would never converge.  Without that dist-info the next install is a fresh one
    over the files it left."""
    return Command([python, "-c", Script(_DROP_UNRECORDED, "drop dist-info without RECORD"), *names])


class PipEditable(Step):
    """pip install -e <path> (from a user's source tree), optionally --no-deps and at an expected version."""

    pip_only: str | None = None
    uv_bootstrap = False
    installer = PipInstall.installer
    runs_without = PipInstall.runs_without

    def __init__(self, name, venv_name, src: str, dist_name: str, expect_version=None, extras=None,
                 no_deps=False, after=(), src_var=None):
        self.name, self.venv_name, self.src, self.dist_name = name, venv_name, src, dist_name
        self.expect_version, self.extras, self.no_deps, self.after = expect_version, extras, no_deps, after
        self.src_var = src_var

    def request(self, v):
        return Request(paths={self.src}, venvs=venv_request(self.venv_name)).merge(installer.request())

    def needs(self, facts, v):
        d = dist(facts, self.venv_name, self.dist_name)
        want_src = absolute(facts, self.src).rstrip("/")
        if d is None:
            return Decision(True, f"{self.dist_name} not installed")
        if not d.get("editable"):
            if self.expect_version and d["version"] != self.expect_version:
                return Decision(True, f"reads {d['version']}, not {self.expect_version}: another install "
                                      f"overwrote the editable build; re-applying with --no-deps")
            return Decision(True, f"{self.dist_name} {d['version']} installed from the index, not editable from "
                                  f"{want_src}")
        have_src = (editable_source(d) or "").rstrip("/")
        if have_src and have_src != want_src:
            return Decision(True, f"editable from {have_src}, want {want_src}")
        if self.expect_version and d["version"] != self.expect_version:
            return Decision(True, f"reads {d['version']}, want {self.expect_version}")
        if not d.get("complete", True):
            return Decision(True, f"{self.dist_name} incompletely installed (interrupted?)")
        return Decision(False, f"already {d['version']} (editable from {want_src})")

    def commands(self, facts, v):
        if not file_fact(facts, self.src)["exists"]:
            var = f" ({self.src_var})" if self.src_var else ""
            error = NotYet if self.src.startswith("@/") else StepError  # under the work dir: a clone makes it
            raise error(f"source {absolute(facts, self.src)}{var} not found on the host")
        target = absolute(facts, self.src) + (f"[{self.extras}]" if self.extras else "")
        python = venv_python(facts, self.venv_name)
        d = dist(facts, self.venv_name, self.dist_name)
        repair = [_drop_unrecorded(python, self.dist_name)] if d is not None and not d.get("complete", True) else []
        args = [*(["--no-deps"] if self.no_deps else []), "-e", target]
        return repair + [installer.install_command(facts, v, python, args, pip_only=self.pip_only,
                                                   bootstrap=self.uv_bootstrap)]


# ------------------------------------------------------------------ git
# git asks its credential helper with the action as argument; this one answers `get` from fd 3, where
# _GIT_WITH_CREDENTIALS puts the command's stdin (git's own stdin becomes /dev/null)
_GIT_HELPER = '!f() { test "$1" = get && cat <&3; }; f'
_GIT_WITH_CREDENTIALS = 'exec 3<&0 </dev/null; exec "$@"'


def split_credentials(url: str) -> tuple[str, str | None]:
    """(the URL without user:token@, git's credential text or None).  A token in a clone URL would sit
    on git's command line (readable by every local user in /proc) and in .git/config for good; given
    on stdin to a one-shot credential helper, neither ever holds it."""
    from urllib.parse import unquote, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url, None
    if parts.scheme not in ("http", "https") or "@" not in parts.netloc:
        return url, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    clean = urlunsplit((parts.scheme, hostport, parts.path, parts.query, parts.fragment))
    return clean, f"username={unquote(user)}\npassword={unquote(password)}\n"


class GitClone(Step):
    def __init__(self, name, url, dest, commit=None, after=()):
        self.name, self.url, self.dest, self.commit, self.after = name, url, dest, commit, after

    def _git(self, *args) -> Command:
        clean, credentials = split_credentials(self.url)
        if credentials is None:
            return Command(["git", *args])
        args = [clean if a == self.url else a for a in args]
        return Command(["sh", "-c", Script(_GIT_WITH_CREDENTIALS, "credentials on stdin"), "git", "git",
                        "-c", "credential.helper=", "-c", Script(f"credential.helper={_GIT_HELPER}", "helper"),
                        *args], stdin=Secret(credentials))

    def request(self, v):
        return Request(git={self.dest}, paths={self.dest})

    def needs(self, facts, v):
        head = (facts.get("git") or {}).get(self.dest)
        if not head:
            if file_fact(facts, self.dest)["exists"]:
                return Decision(True, f"{self.dest} exists but is not a git checkout")
            return Decision(True, f"not cloned yet ({self.url})")
        if self.commit and not (head.get("commit") or "").startswith(self.commit):
            return Decision(True, f"at {(head.get('commit') or '?')[:10]}, want {self.commit}")
        return Decision(False, f"cloned at {(head.get('commit') or '?')[:10]}")

    def commands(self, facts, v):
        dest = absolute(facts, self.dest)
        head = (facts.get("git") or {}).get(self.dest)
        cmds = []
        if not head:
            if file_fact(facts, self.dest)["exists"]:
                raise StepError(f"{dest} exists and is not a git checkout; move it away first")
            cmds.append(self._git("clone", "--", self.url, dest))   # a URL starting with - is no option
        elif self.commit:
            cmds.append(self._git("-C", dest, "fetch", "--all", "--tags"))
        if self.commit:
            cmds.append(Command(["git", "-C", dest, "checkout", "--detach", self.commit]))
        return cmds


# ------------------------------------------------------------------ recorded checks
_RECORD = r"""import json, os, sys, tempfile, time
path, key, fp, result = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
try:
    with open(path) as fh:
        state = json.load(fh)
except (OSError, ValueError):
    state = {}
if not isinstance(state, dict) or not isinstance(state.get("checks", {}), dict):
    state = {"models": state.get("models")} if isinstance(state, dict) and isinstance(state.get("models"), dict) else {}
state.setdefault("checks", {})[key] = {"fingerprint": fp, "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                                        "result": result[-2000:]}
os.makedirs(os.path.dirname(path), exist_ok=True)
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".state-")
with os.fdopen(fd, "w") as fh:
    json.dump(state, fh, indent=2, sort_keys=True)
os.replace(tmp, path)
"""

_CHECK_OUTPUT = r"""import json, subprocess, sys
argv, expected = json.loads(sys.argv[1]), json.loads(sys.argv[2])
proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
print(proc.stdout)
missing = [e for e in expected if e not in proc.stdout]
if proc.returncode or missing:
    sys.exit("check failed: exit code %d; missing from the output: %s" % (proc.returncode, ", ".join(missing) or "-"))
"""



def recorded(facts: dict, key: str) -> dict | None:
    return (host_state(facts).get("checks") or {}).get(key)


class RecordedCheck(Step):
    """A slow probe (an import, a CLI's output) run once per environment state and recorded.

    It runs when the venv's packages differ from those it last passed with (the
    fingerprint of their names and versions), so a no-op re-run never pays for it.
    """

    judges_after = True

    def __init__(self, name, venv_name, code=None, argv=None, expect=(), after=(), describe=None):
        self.name, self.venv_name, self.code, self.argv, self.expect = name, venv_name, code, argv, tuple(expect)
        self.after, self.describe = after, describe or name

    def request(self, v):
        return Request(reads={STATE_FILE}, venvs=venv_request(self.venv_name))

    def needs(self, facts, v):
        fp = fingerprint(facts, self.venv_name)
        if fp is None:
            return Decision(True, f"{self.venv_name} does not exist yet")
        rec = recorded(facts, self.name)
        if rec and rec.get("fingerprint") == fp:
            return Decision(False, f"{self.describe} passed at {rec.get('at')} with these packages")
        if rec:
            return Decision(True, f"packages changed since {self.describe} last passed: run it again")
        return Decision(True, f"{self.describe} not run yet")

    def commands(self, facts, v):
        py = venv_python(facts, self.venv_name)
        fp = fingerprint(facts, self.venv_name)
        if fp is None:
            raise NotYet(f"{self.venv_name} does not exist yet")
        if self.code:
            check = Command([py, "-c", Script(self.code, f"check: {self.describe}")], cwd="/")
        else:
            argv = [absolute(facts, a) if a.startswith("@/") else a for a in self.argv]
            check = Command([py, "-c", Script(_CHECK_OUTPUT, "run and expect"), json.dumps(argv),
                             json.dumps(list(self.expect))], cwd="/")
        state = absolute(facts, STATE_FILE)
        return [check, Command([py, "-c", Script(_RECORD, "record check"), state, self.name, fp, self.describe],
                               cwd="/")]
