"""Host names that stand for several hosts, as Ansible writes them: ``node[1:3]``,
``node[01:10]`` (zero-padded), ``node[a:c]``, an optional step (``[1:9:2]``) and several
ranges in one name.  Both inventory formats expand them the same way, here.
"""

from __future__ import annotations

import re
import string

MAX_HOSTS = 10000  # one typo ([1:1000000]) must not stall the run building a million hosts

_PORT = re.compile(r"^((?:[^:\[\]]|\[[^\]]*\])+):([0-9]+)$")
_BRACKETED_PORT = re.compile(r"^\[([^\[\]]+)\]:([0-9]+)$")


def is_port(value) -> bool:
    """1-65535, given as a whole number or as ASCII digits (no sign, no space, no other script's digits)."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535


class RangeError(ValueError):
    """A range that cannot be expanded; the message says why, the caller says where."""


def split_port(pattern: str) -> tuple[str, int | None]:
    """``name:2222`` -> (name, 2222), ``[2001:db8::2]:2222`` -> (2001:db8::2, 2222), as Ansible's
    parse_address reads a host entry; a colon inside a range or a bare IPv6 address is not a port."""
    m = _BRACKETED_PORT.match(pattern)
    if m and ":" in m.group(1) and not _is_range(m.group(1)):
        return m.group(1), int(m.group(2))
    m = _PORT.match(pattern)
    if not m or ":" in re.sub(r"\[[^\]]*\]", "", m.group(1)):
        return pattern, None
    return m.group(1), int(m.group(2))


def _is_range(spec: str) -> bool:
    """[1:3], [a:c], [01:10:2]: a range, not an IPv6 address."""
    return re.fullmatch(r"[0-9]*:[0-9]+(?::[0-9]+)?|[A-Za-z]:[A-Za-z](?::[0-9]+)?", spec) is not None


def expand(pattern: str) -> list[str]:
    """Every host name a pattern stands for, in order; a name without brackets is itself."""
    names = _expand(pattern)
    if len(names) > MAX_HOSTS:
        raise RangeError(f"{pattern!r} expands to {len(names)} hosts (at most {MAX_HOSTS})")
    return names


def _expand(pattern: str) -> list[str]:
    start = pattern.find("[")
    if start < 0:
        if "]" in pattern:
            raise RangeError(f"{pattern!r}: ']' without '['")
        return [pattern]
    end = pattern.find("]", start)
    if end < 0:
        raise RangeError(f"{pattern!r}: '[' without ']'")
    head, spec, tail = pattern[:start], pattern[start + 1:end], pattern[end + 1:]
    out: list[str] = []
    for item in _items(spec, pattern):
        out.extend(_expand(head + item + tail))
        if len(out) > MAX_HOSTS:
            break
    return out


def _items(spec: str, pattern: str) -> list[str]:
    parts = spec.split(":")
    if len(parts) not in (2, 3):
        raise RangeError(f"{pattern!r}: a range is [begin:end] or [begin:end:step], got [{spec}]")
    begin, end = parts[0] or "0", parts[1]
    step_text = parts[2] if len(parts) == 3 else "1"
    if not end:
        raise RangeError(f"{pattern!r}: the range [{spec}] has no end")
    if not step_text.isdigit() or int(step_text) < 1:
        raise RangeError(f"{pattern!r}: the step of [{spec}] must be a whole number >= 1")
    step = int(step_text)
    letters = string.ascii_letters
    if len(begin) == 1 and len(end) == 1 and begin in letters and end in letters:
        i, j = letters.index(begin), letters.index(end)
        if i > j:
            raise RangeError(f"{pattern!r}: the range [{spec}] runs backwards")
        return list(letters[i:j + 1:step])
    if not (begin.isdigit() and end.isdigit()):
        raise RangeError(f"{pattern!r}: [{spec}] is neither a number range nor a letter range")
    if int(begin) > int(end):
        raise RangeError(f"{pattern!r}: the range [{spec}] runs backwards")
    width = 0
    if len(begin) > 1 and begin.startswith("0"):
        if len(end) != len(begin):
            raise RangeError(f"{pattern!r}: a zero-padded range needs begin and end of the same width, "
                             f"got [{spec}]")
        width = len(begin)
    count = (int(end) - int(begin)) // step + 1
    if count > MAX_HOSTS:
        raise RangeError(f"{pattern!r} expands to {count} hosts (at most {MAX_HOSTS})")
    return [str(n).zfill(width) for n in range(int(begin), int(end) + 1, step)]
