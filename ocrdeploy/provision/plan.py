"""A plan: the ordered steps of a recipe, with dependencies, and the selection a run makes."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError
from .step import Request, Step


@dataclass
class Plan:
    name: str
    steps: list[Step]

    def __post_init__(self):
        names = [s.name for s in self.steps]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"plan {self.name}: duplicate step names {sorted(dup)}")
        seen = set()
        for s in self.steps:
            for dep in s.after:
                if dep not in seen:
                    raise ValueError(f"plan {self.name}: {s.name} depends on {dep!r}, which is not before it")
            seen.add(s.name)

    def names(self) -> list[str]:
        return [s.name for s in self.steps]

    def select(self, step: str | None = None, from_: str | None = None) -> list[Step]:
        if step and from_:
            raise UsageError("--step and --from exclude each other")
        for wanted, flag in ((step, "--step"), (from_, "--from")):
            if wanted and wanted not in self.names():
                raise UsageError(f"{flag} {wanted!r}: no such step in recipe {self.name} "
                                 f"(steps: {', '.join(self.names())})")
        if step:
            return [s for s in self.steps if s.name == step]
        if from_:
            return self.steps[self.names().index(from_):]
        return list(self.steps)

    def request(self, steps, vars_) -> Request:
        req = Request()
        for s in steps:
            req.merge(s.request(vars_))
        return req
