"""The `ocrdeploy` console command: the same tasks as `inv`, from any directory."""

from __future__ import annotations

import sys
import types


# What invoke takes at import time from modules that only a path a plain run never takes uses:
# unittest.mock (with asyncio, ssl, ...) for MockContext, which only tests build, and invoke's vendored
# PyYAML (about twenty modules) for reading an invoke.yaml config file, which our users do not have.
# Together they were about half of invoke's import, and a fifth of a no-op `ocrdeploy install`'s CPU time.
_DEFERRED = {"unittest.mock": "Mock", "invoke.vendor.yaml": "safe_load"}


def _deferred(module: str, name: str):
    """A stand-in for module.name that imports the real module the first time it is called."""

    def call(*args, **kwargs):
        import importlib

        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = name
    return call


def _import_invoke_deferring():
    """Import invoke with the modules of _DEFERRED imported only when first used.

    invoke has no option to skip them, so for the length of its import a small module stands in for
    each in sys.modules, holding the one name invoke takes (`from unittest.mock import Mock`,
    `from .vendor import yaml` then `yaml.safe_load`); the stand-ins leave sys.modules right after,
    so a later import of either gets the real module, and the deferred name imports it when called.
    tests/test_cli.py checks the edges: MockContext still mocks, an invoke.yaml still loads, the real
    modules afterwards.  An invoke whose vendored parts were unbundled by a distribution imports the
    system's lexicon and yaml instead and never looks at the stand-ins."""
    if "invoke" in sys.modules:
        return
    stand_ins = {}
    for module, name in _DEFERRED.items():
        if module not in sys.modules:
            stand_ins[module] = types.ModuleType(module, "stand-in while invoke is imported (ocrdeploy.cli)")
            setattr(stand_ins[module], name, _deferred(module, name))
    sys.modules.update(stand_ins)
    try:
        import invoke  # noqa: F401
    finally:
        for module, stand_in in stand_ins.items():
            if sys.modules.get(module) is stand_in:
                del sys.modules[module]


_import_invoke_deferring()

from invoke import Collection, Exit, ParseError, Program  # noqa: E402

from . import __version__  # noqa: E402
from .tasks import ns  # noqa: E402


def namespace_for(args: list[str]) -> Collection:
    """The collection a run needs: only the named task when the command line starts with one.

    invoke builds a parser context for every task of the collection and deep-copies them all on each
    parse (Parser's ParseMachine), which for our fifteen tasks with their many flags was about a tenth of
    a no-op `install` (cProfile).  A run of one task parses against that task alone; its flags, --help and
    exit codes are the same.  Every task named anywhere on the line is kept (`ocrdeploy facts preflight`
    runs both, as before): invoke only ever recognises a task by its name as a word.  Anything else (no
    task first: a core flag such as --list, --complete or -h) gets the whole collection, as `inv` does."""
    words = {a.replace("_", "-") for a in args}
    if args and args[0].replace("_", "-") in ns.tasks:
        some = Collection()
        for name, task in ns.tasks.items():
            if name in words:
                some.add_task(task, name=name)
        return some
    return ns


class _Program(Program):
    """invoke's Program with a command line it cannot parse (an option no task knows, a flag without its value)
    as exit 2, a usage error, as README's exit codes say; invoke exits 1 there, which a script reads as 'a check
    failed'.  The message is invoke's own ("No idea what '--nope' is!")."""

    def parse_core(self, argv):
        try:
            super().parse_core(argv)
        except ParseError as exc:
            raise Exit(str(exc), code=2) from None

    def parse_tasks(self):
        try:
            super().parse_tasks()
        except ParseError as exc:
            raise Exit(str(exc), code=2) from None


def main(argv: list[str] | None = None):
    argv = list(sys.argv if argv is None else argv)
    program = _Program(namespace=namespace_for(argv[1:]), version=__version__, name="ocrdeploy",
                      binary="ocrdeploy")
    program.run(argv)
