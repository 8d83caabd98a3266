"""YAML loading that remembers line numbers, so input errors can point at the line.

PyYAML only reports positions for syntax errors; a bad port three levels deep
would otherwise be reported without a location.  Mappings are loaded as
``LineDict``, which records the 1-based line of each key.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from ..errors import UsageError


class LineDict(dict):
    """A dict that knows on which line each of its keys was written."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.key_lines: dict = {}
        self.line: int | None = None

    def line_of(self, key) -> int | None:
        return self.key_lines.get(key, self.line)


MAX_EXPANDED = 1_000_000   # values a document (or one inventory var) stands for once its aliases are written out
MAX_VALUE_DEPTH = 100      # lists and mappings inside one var
MAX_DOC_DEPTH = 200        # a document that is not an inventory (an inventory's groups may nest thousands deep)


class YAMLSyntaxError(UsageError):
    """The text is not YAML at all (an inventory without a suffix is then read as INI)."""


class TooLarge(ValueError):
    """A value that stands for too much once its aliases are expanded, or is nested too deep."""


def check_size(value, limit: int = MAX_EXPANDED, max_depth: int | None = None, memo: dict | None = None) -> int:
    """How many values ``value`` is once every alias is written out (a TooLarge beyond ``limit``, or
    deeper than ``max_depth``, or holding itself).  Each shared object is sized once, without recursion,
    so a 1 KB alias bomb costs its few distinct nodes, not the 10**8 that str() or a walk would visit;
    ``memo`` carries the sizes from one call to the next (one anchor under many hosts)."""
    sizes: dict[int, tuple[int, int]] = {} if memo is None else memo   # id -> (expanded values, depth)
    open_: set[int] = set()
    stack = [(value, False)]
    while stack:
        obj, done = stack.pop()
        if id(obj) in sizes or not isinstance(obj, (dict, list)):
            continue
        items = [*obj.keys(), *obj.values()] if isinstance(obj, dict) else obj
        if not done:
            if id(obj) in open_:
                raise TooLarge("holds itself (a recursive YAML alias)")
            open_.add(id(obj))
            stack.append((obj, True))
            stack.extend((c, False) for c in items if isinstance(c, (dict, list)) and id(c) not in sizes)
            continue
        total = 1 + sum(sizes.get(id(c), (1, 0))[0] for c in items)
        depth = 1 + max((sizes.get(id(c), (1, 0))[1] for c in items), default=0)
        if total > limit:
            raise TooLarge(f"stands for more than {limit} values once its YAML aliases are expanded")
        if max_depth is not None and depth > max_depth:
            raise TooLarge(f"is nested more than {max_depth} levels deep")
        sizes[id(obj)] = (total, depth)
        open_.discard(id(obj))
    return sizes.get(id(value), (1, 0))[0]


@functools.cache
def _loaders():
    """(fast, deep): SafeLoader's rules with libyaml's parser where PyYAML has it (an inventory of thousands of
    hosts: 10x faster; libyaml stops at 1000 levels of nesting) and the pure-Python parser (no nesting limit
    but the interpreter's recursion limit), both loading mappings as LineDict.  Made on first use: PyYAML's
    import is a tenth of a no-op run, which reads a cached inventory (inventory/cache.py) and no YAML."""
    import yaml

    def construct_mapping(loader, node) -> LineDict:
        explicit = sum(1 for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge")
        loader.flatten_mapping(node)            # the merged (<<) pairs first, then the ones written here
        merged = len(node.value) - explicit
        result = LineDict()
        result.line = node.start_mark.line + 1
        written: set = set()
        for index, (key_node, value_node) in enumerate(node.value):
            key = loader.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    "found an unhashable key", key_node.start_mark)
            if index >= merged:     # a key written here overrides a merged one (YAML's merge), never another written one
                if key in written:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r}", key_node.start_mark)
                written.add(key)
            result[key] = loader.construct_object(value_node, deep=True)
            result.key_lines[key] = key_node.start_mark.line + 1
        return result

    fast = type("_FastLoader", (getattr(yaml, "CSafeLoader", yaml.SafeLoader),), {})
    deep = type("_DeepLoader", (yaml.SafeLoader,), {})
    for loader in (fast, deep):
        loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return fast, deep


def read_text(path: Path, what: str = "a YAML file") -> str:
    """A text file's content; any problem reading it is a UsageError naming the file."""
    try:
        if path.exists() and not path.is_dir() and not path.is_file():     # a FIFO would block forever
            raise UsageError(f"{path}: not a regular file, expected {what}")
        return path.read_text(encoding="utf-8-sig")      # a BOM first (Windows editors) is no content
    except FileNotFoundError:
        raise UsageError(f"{path}: file not found")
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, expected {what}")
    except PermissionError:
        raise UsageError(f"{path}: not readable (permission denied)")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})")


def load_yaml(path: Path, shared_ok: bool = False):
    """Load a YAML file; any problem is a UsageError naming the file and line.  Unless ``shared_ok``
    (an inventory, whose groups may form an alias DAG its parser visits once each, and which bounds
    each var itself), a document that stands for more than MAX_EXPANDED values, or nests deeper than
    MAX_DOC_DEPTH, is refused."""
    data = _load(path)
    if not shared_ok:
        try:
            check_size(data, max_depth=MAX_DOC_DEPTH)
        except TooLarge as exc:
            raise UsageError(f"{path}: the document {exc}")
    return data


def _load(path: Path):
    import yaml

    fast, deep = _loaders()
    text = read_text(path)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))     # groups nested some thousand levels deep
    try:
        try:
            return yaml.load(text, Loader=fast)  # noqa: S506 - SafeLoader subclass
        except yaml.MarkedYAMLError as exc:
            if "maximum nesting depth" not in str(exc.problem):
                raise
            return yaml.load(text, Loader=deep)  # noqa: S506 - SafeLoader subclass
    except RecursionError:
        raise UsageError(f"{path}: nested too deeply to read")
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "invalid YAML"
        raise YAMLSyntaxError(f"{path}{where}: invalid YAML: {problem}")
    except yaml.YAMLError as exc:
        raise YAMLSyntaxError(f"{path}: invalid YAML: {exc}")
    finally:
        sys.setrecursionlimit(limit)
