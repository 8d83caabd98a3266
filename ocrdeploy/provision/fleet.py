"""One build per identical fleet: hosts whose build inputs match share the wheel one of them builds.

A step that can build a wheel says what goes into it (`Step.build_inputs`, from facts).  After every host
has read its facts, the hosts whose inputs hash alike form a group and the first of them in the run's
host order builds; the controller fetches the wheel, checks its sha256 against the builder's, copies it to
the others over their existing connections, and each checks the sha256 again on arrival before installing.
The hosts run in parallel as before: a follower waits at its build step for the builder's wheel (or its
failure, which fails the follower with the builder's finding instead of N identical failures).  A builder
that ends its run without building (an earlier step failed, the host went away) hands the build to the next
host of its group.  A follower whose inputs at build time differ from the builder's builds its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass, field


def inputs_key(inputs: dict) -> str:
    """A short, stable name for a set of build inputs (the wheel's directory on every host)."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()[:16]


def host_ranges(names) -> str:
    """gpu2, gpu3, gpu4, gpu7 -> 'gpu2..gpu4, gpu7': runs of one prefix with consecutive numbers."""
    parts, run = [], []

    def split(name):
        m = re.fullmatch(r"(.*?)(\d+)", name)
        return (m.group(1), int(m.group(2)), len(m.group(2))) if m else (name, None, 0)

    def flush():
        if len(run) >= 3:
            parts.append(f"{run[0]}..{run[-1]}")
        else:
            parts.extend(run)
        run.clear()

    for name in names:
        if run:
            prefix, num, width = split(run[-1])
            p, n, w = split(name)
            if not (num is not None and p == prefix and n == num + 1 and (w == width or not str(n).startswith("0"))):
                flush()
        run.append(name)
    flush()
    return ", ".join(parts)


def file_sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class Wheel:
    name: str             # the wheel's file name (pip's, with the version and tags)
    sha256: str
    local: str            # the controller's copy
    inputs: dict          # the builder's inputs when it built


@dataclass
class Group:
    step: str
    key: str
    members: list                       # host names, in the run's order
    inputs: dict
    left: set = field(default_factory=set)
    builder: str | None = None
    building: bool = False              # the builder has started the build: it is the group's only one
    shown: bool = False                 # --check: the builder has shown the build in its plan, which stands
    built_by: str | None = None
    wheel: Wheel | None = None
    failure: str | None = None
    installed: list = field(default_factory=list)
    own: list = field(default_factory=list)      # members that built their own (inputs differed at build time)

    def to_dict(self) -> dict:
        return {"step": self.step, "key": self.key, "hosts": list(self.members), "builder": self.built_by or self.builder,
                "installed_from_wheel": list(self.installed), "built_own": list(self.own),
                "wheel": self.wheel.name if self.wheel else None, "sha256": self.wheel.sha256 if self.wheel else None,
                "failure": self.failure, "inputs": self.inputs}

    def summary(self) -> str:
        if self.failure:
            return f"{self.step}: build on {self.built_by or self.builder} failed ({self.failure}); " \
                   f"not installed on {host_ranges([m for m in self.members if m != (self.built_by or self.builder)])}"
        if self.wheel is None:
            return f"{self.step}: not built (no host of {host_ranges(self.members)} reached the build)"
        line = f"{self.step}: built on {self.built_by}"
        if self.installed:
            line += f", installed from wheel on {host_ranges(self.installed)}"
        if self.own:
            line += f"; built their own (inputs differed): {host_ranges(self.own)}"
        return line


@dataclass
class Role:
    kind: str                  # "build" or "install"
    group: Group

    @property
    def others(self) -> list:
        return [m for m in self.group.members if m != self.group.builder]


class SharedBuilds:
    """The controller's side of shared builds for one run over `hosts` (names, in order)."""

    def __init__(self, hosts):
        self.order = list(hosts)
        self._cond = threading.Condition()
        self._planned: dict[str, dict] = {}       # host -> {step: key}
        self._gone: set[str] = set()
        self._groups: dict[tuple, Group] = {}
        self._tmp = tempfile.mkdtemp(prefix="ocrdeploy-wheels-")

    # ---------------------------------------------------------------- planning (a barrier)
    def plan(self, host: str, inputs: dict) -> None:
        """Register this host's inputs per shareable step ({step: inputs}) and wait until every host of the
        run has registered or ended, so that the groups and their builders are the same whoever comes first."""
        with self._cond:
            self._planned[host] = {step: inputs_key(i) for step, i in inputs.items()}
            for step, i in inputs.items():
                key = self._planned[host][step]
                g = self._groups.get((step, key))
                if g is None:
                    self._groups[(step, key)] = Group(step, key, [host], i)
                else:
                    g.members.append(host)
            self._cond.notify_all()
            self._cond.wait_for(self._all_known)
            for g in self._groups.values():
                g.members.sort(key=self.order.index)
                if g.builder is None:
                    g.builder = next((m for m in g.members if m not in g.left), None)

    def _all_known(self) -> bool:
        return all(h in self._planned or h in self._gone for h in self.order)

    def role(self, host: str, step: str) -> Role | None:
        """This host's part in a shared build of `step`: None when it builds alone (no group of two)."""
        with self._cond:
            key = (self._planned.get(host) or {}).get(step)
            g = self._groups.get((step, key))
            if g is None or len(g.members) < 2:
                return None
            return Role("build" if g.builder == host else "install", g)

    # ---------------------------------------------------------------- the build
    def wait(self, host: str, group: Group) -> str:
        """A follower at its build step: blocks until the wheel is there ("wheel"), the build failed ("failed"),
        or this host has become the builder ("build")."""
        with self._cond:
            self._cond.wait_for(lambda: group.wheel is not None or group.failure is not None or group.builder == host)
            if group.wheel is not None:
                return "wheel"
            return "failed" if group.failure is not None else "build"

    def shown(self, host: str, group: Group) -> str:
        """--check: the builder shows the build in its plan.  A check run builds nothing, so its end is no
        reason to hand the build over: the others' plans name the same builder as its own, whichever host
        ends first.  Returns the builder's name, read under the lock."""
        with self._cond:
            if group.builder == host:
                group.shown = True
            return group.builder

    def building(self, host: str, group: Group):
        """The builder starts its build: from now on its end, however it comes (Ctrl-C, a lost connection),
        fails the group instead of handing the build to a follower, which would start a second compile."""
        with self._cond:
            group.building = True

    def publish(self, host: str, group: Group, wheel: Wheel):
        with self._cond:
            group.wheel, group.built_by = wheel, host
            self._cond.notify_all()

    def fail(self, host: str, group: Group, finding: str):
        with self._cond:
            group.failure, group.built_by = finding, host
            self._cond.notify_all()

    def interrupt(self, host: str):
        """Ctrl-C: every build not yet done fails, so no follower is handed one (it would start a second
        compile while the run ends)."""
        with self._cond:
            for g in self._groups.values():
                if g.wheel is None and g.failure is None:
                    g.failure, g.built_by = f"interrupted (Ctrl-C on {host}) before the shared build ended", g.builder
            self._cond.notify_all()

    def installed(self, host: str, group: Group, own: bool = False):
        with self._cond:
            names = group.own if own else group.installed
            names.append(host)
            names.sort(key=lambda h: self.order.index(h) if h in self.order else len(self.order))

    def leave(self, host: str, group: Group | None = None):
        """The host is done (its run ended), or — with `group` — it builds on its own instead: a builder that
        leaves before its build started (an earlier step failed) hands the build to the next host still in the
        group; one that leaves during its build (interrupted, its connection lost) fails the group."""
        with self._cond:
            groups = [group] if group else list(self._groups.values())
            if group is None:
                self._gone.add(host)
            for g in groups:
                if host not in g.members:
                    continue
                g.left.add(host)
                if g.builder == host and g.wheel is None and g.failure is None:
                    if g.building:
                        g.failure, g.built_by = f"the build on {host} ended without a wheel (interrupted?)", host
                    elif not g.shown:
                        g.builder = next((m for m in g.members if m not in g.left), None)
            self._cond.notify_all()

    # ---------------------------------------------------------------- the copy
    def built_sum(self, conn, group: Group, remote: str) -> tuple[str, str]:
        """The wheel's name and the sha256 the builder computed right after building it (`sha256sum`'s
        line, written beside the wheel), fetched like the wheel: one wheel, or an error."""
        local = os.path.join(self._tmp, group.key, ".sha256")
        os.makedirs(os.path.dirname(local), exist_ok=True)
        conn.get(remote, local)
        with open(local, encoding="utf-8", errors="replace") as fh:
            found = [line.split(None, 1) for line in fh if line.strip()]
        if len(found) != 1 or len(found[0]) != 2:
            raise OSError(f"expected one wheel in {os.path.dirname(remote)}, found {len(found)}")
        sha, name = found[0]
        return name.strip().lstrip("*"), sha

    def fetch(self, conn, group: Group, remote: str, name: str, sha256: str, inputs: dict) -> Wheel:
        """The builder's wheel to the controller, refused unless its sha256 is the one the builder computed."""
        local = os.path.join(self._tmp, group.key, name)
        os.makedirs(os.path.dirname(local), exist_ok=True)
        conn.get(remote, local)
        got = file_sha256(local)
        if got != sha256:
            os.unlink(local)
            raise WheelMismatch(f"the wheel fetched from the builder has sha256 {got}, the builder computed {sha256}")
        return Wheel(name, sha256, local, inputs)

    def groups(self) -> list[Group]:
        return [g for g in self._groups.values() if len(g.members) >= 2]

    def summary(self) -> list[str]:
        return [g.summary() for g in self.groups()]

    def close(self):
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class WheelMismatch(Exception):
    """A copy of the shared wheel whose sha256 is not the builder's: refused."""
