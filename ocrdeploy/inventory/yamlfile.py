"""YAML loading that remembers line numbers, so input errors can point at the line.

PyYAML only reports positions for syntax errors; a bad port three levels deep
would otherwise be reported without a location.  Mappings are loaded as
``LineDict``, which records the 1-based line of each key.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from ..errors import UsageError


class LineDict(dict):
    """A dict that knows on which line each of its keys was written."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.key_lines: dict = {}
        self.line: int | None = None

    def line_of(self, key) -> int | None:
        return self.key_lines.get(key, self.line)


class _FastLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """SafeLoader's rules with libyaml's parser where PyYAML has it (an inventory of thousands of hosts:
    10x faster); libyaml stops at 1000 levels of nesting, where the pure-Python loader takes over."""


class _DeepLoader(yaml.SafeLoader):
    """The pure-Python parser: no nesting limit but the interpreter's recursion limit."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    result = LineDict()
    result.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark,
                "found an unhashable key", key_node.start_mark)
        if key in result:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = key_node.start_mark.line + 1
    return result


_DeepLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_FastLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_text(path: Path, what: str = "a YAML file") -> str:
    """A text file's content; any problem reading it is a UsageError naming the file."""
    try:
        if path.exists() and not path.is_dir() and not path.is_file():     # a FIFO would block forever
            raise UsageError(f"{path}: not a regular file, expected {what}")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: file not found")
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, expected {what}")
    except PermissionError:
        raise UsageError(f"{path}: not readable (permission denied)")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})")


def load_yaml(path: Path):
    """Load a YAML file; any problem is a UsageError naming the file and line."""
    text = read_text(path)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))     # groups nested some thousand levels deep
    try:
        try:
            return yaml.load(text, Loader=_FastLoader)  # noqa: S506 - SafeLoader subclass
        except yaml.MarkedYAMLError as exc:
            if "maximum nesting depth" not in str(exc.problem):
                raise
            return yaml.load(text, Loader=_DeepLoader)  # noqa: S506 - SafeLoader subclass
    except RecursionError:
        raise UsageError(f"{path}: groups nested too deeply to read")
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "invalid YAML"
        raise UsageError(f"{path}{where}: invalid YAML: {problem}")
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: invalid YAML: {exc}")
    finally:
        sys.setrecursionlimit(limit)
