"""Ansible's INI inventory, read into the same shape the YAML file has.

``[group]`` sections hold host lines (``name[:port] key=value ...``), ``[group:vars]``
one ``key=value`` per line, ``[group:children]`` group names; lines before any section
are ungrouped hosts; ``#`` and ``;`` start comments.  Values go through
``ast.literal_eval`` the way ansible-core's ini plugin does (``ansible_port=2222`` is a
number, ``"2222"`` a string, anything that is not a literal stays as written).  The
result is the YAML loader's tree (LineDicts remembering each key's line), so both
formats share one parser, one set of checks and one way to merge vars.
"""

from __future__ import annotations

import ast
import re
import shlex
import warnings
from pathlib import Path

from ..errors import UsageError
from . import hostranges
from .yamlfile import LineDict, read_text

_SECTION = re.compile(r"^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:[#;].*)?$")
_GROUP_NAME = re.compile(r"^([^:\]\s]+)\s*(?:[#;].*)?$")


def literal(text: str):
    """A value as Ansible's ini plugin reads it: a Python literal when it is one, else the text."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    if isinstance(value, (bytes, complex)) or value is Ellipsis:
        return text
    return _lists(value)


def _lists(value):
    """Tuples and sets become lists at every depth, as ansible-core's ini plugin makes them (JSON's types)."""
    if isinstance(value, (tuple, set, frozenset, list)):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


def _sub(node: LineDict, key: str, line: int) -> LineDict:
    """node[key], made (remembering its line) the first time a group, hosts, vars or children is named."""
    if key not in node:
        sub = LineDict()
        sub.line = line
        node[key] = sub
        node.key_lines[key] = line
    return node[key]


def load_ini(path: Path) -> LineDict:
    """The inventory as ``{"all": {"vars": ..., "hosts": ..., "children": {group: ...}}}``."""
    text = read_text(path, "an INI inventory")
    groups = LineDict()       # every group named in the file, by name
    declared: set[str] = set()  # groups with a [name] or [name:children] section
    pending: dict[str, tuple[int, str]] = {}  # group -> (line, why it must be declared)
    group, kind = "all", "hosts"  # host lines before any section are ungrouped hosts of 'all'
    seen_hosts: dict[str, LineDict] = {}  # each host's vars, one dict for all its lines (see _host_line)

    def fail(line: int, message: str):
        raise UsageError(f"{path}:{line}: {message}")

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        m = _SECTION.match(line)
        if m:
            group, kind = m.group(1), m.group(2) or "hosts"
            if kind not in ("hosts", "vars", "children"):
                fail(number, f"section [{group}:{kind}] has an unknown type {kind!r} "
                             f"(expected [{group}], [{group}:vars] or [{group}:children])")
            _sub(groups, group, number)
            if kind == "vars" and group != "all":
                pending.setdefault(group, (number, f"section [{group}:vars] is for a group never declared"))
            else:
                declared.add(group)
            continue
        if line.startswith("[") and re.sub(r"\s[#;].*$", "", line).rstrip().endswith("]"):  # [2001:db8::2]:2222: a host
            fail(number, f"invalid section header {line!r} (no spaces inside the brackets; [name], "
                         f"[name:vars] or [name:children])")
        node = _sub(groups, group, number)
        if kind == "hosts":
            _host_line(path, number, line, _sub(node, "hosts", number), seen_hosts)
        elif kind == "vars":
            key, sep, value = line.partition("=")
            if not sep or not key.strip():
                fail(number, f"[{group}:vars]: expected key=value, got {line!r}")
            vars_ = _sub(node, "vars", number)
            vars_[key.strip()] = literal(value.strip())
            vars_.key_lines[key.strip()] = number
        else:
            m = _GROUP_NAME.match(line)
            if not m:
                fail(number, f"[{group}:children]: expected a group name, got {line!r}")
            child = m.group(1)
            children = _sub(node, "children", number)
            children[child] = None
            children.key_lines[child] = number
            _sub(groups, child, number)
            pending.setdefault(child, (number, f"[{group}:children] names group {child!r}, never declared"))
    for name, (number, message) in pending.items():
        if name not in declared:
            fail(number, message)

    all_node = groups.pop("all", None) or LineDict()
    if groups:
        children = all_node.setdefault("children", LineDict())
        all_node.key_lines.setdefault("children", 1)
        for name, node in groups.items():
            if children.get(name) is None:  # [all:children] names it; its own sections fill it
                children[name] = node
                children.key_lines[name] = groups.key_lines[name]
    top = LineDict({"all": all_node})
    top.line, top.key_lines = 1, {"all": 1}
    return top


def _host_line(path: Path, number: int, line: str, hosts: LineDict, seen: dict):
    """One host line.  Ansible sets a host's vars line by line, the later line winning whatever its
    section, so every section that lists the host shares one dict that each of its lines updates; the
    ``:port`` counts where the host first appears (Ansible makes the host there), ansible_port= always."""
    try:
        tokens = shlex.split(line, comments=True)
    except ValueError as exc:
        raise UsageError(f"{path}:{number}: cannot read the host line ({exc})")
    pattern, vars_ = tokens[0], LineDict()
    vars_.line = number
    for token in tokens[1:]:
        key, sep, value = token.partition("=")
        if not sep or not key:
            raise UsageError(f"{path}:{number}: expected key=value after the host name, got {token!r}")
        vars_[key] = literal(value)
        vars_.key_lines[key] = number
    name, port = hostranges.split_port(pattern)
    if name in seen:   # the same host on another line: Ansible merges them, the later line winning
        seen[name].update(vars_)
        seen[name].key_lines.update(vars_.key_lines)
    else:
        if port is not None:
            vars_.setdefault("ansible_port", port)
            vars_.key_lines.setdefault("ansible_port", number)
        seen[name] = vars_
    if name not in hosts:
        hosts[name] = seen[name]
        hosts.key_lines[name] = number
