"""Host patterns as Ansible users write them on --host and --limit.

``gpu1,gpu2`` (names or groups), ``gpu*`` (a glob over host and group names), ``~gpu[0-9]+``
(a regular expression), ``all:!gpu2`` (exclusion), ``a100:&ubuntu`` (intersection).  Terms
are separated by commas, or by colons when there is no comma (Ansible's older form); as in
ansible-core's InventoryManager, the plain terms are taken first, then the ``&`` terms
narrow them, then the ``!`` terms remove hosts.  Unlike Ansible, a term that matches
nothing is an error, not a warning: a typo in ``!gpu2`` must not run on gpu2.

A name that is both a host and a group means the host as a plain term and the group after
``!`` or ``&`` (Ansible's _evaluate_patterns shortcut covers plain terms only), with a warning.
``group[0]``, ``group[-1]`` are positions in a group's host list, as in Ansible; ``group[i:j]``
too, unless it names hosts of the inventory (``node[1:3]``: the inventory's range).
"""

from __future__ import annotations

import fnmatch
import re
import sys

from ..errors import UsageError
from . import hostranges

_GLOB = set("*?[")
_COLON_TERMS = re.compile(r"(?:[^\s:\[\]]|\[[^\]]*\])+")
_SUBSCRIPT = re.compile(r"(.+)\[(?:(-?[0-9]+)|([0-9]+):([0-9]*))\]")


def split_pattern(text: str, known=()) -> list[str]:
    text = text.strip()
    if "," in text:
        terms = text.split(",")
    elif text in known or ":" not in text.replace("::", ""):
        terms = [text]
    else:
        terms = _COLON_TERMS.findall(text)
    return [t.strip() for t in terms if t.strip()]


def order_terms(terms: list[str]) -> list[str]:
    plain = [t for t in terms if t[0] not in "!&"]
    return (plain or ["all"]) + [t for t in terms if t[0] == "&"] + [t for t in terms if t[0] == "!"]


def resolve(inv, text: str, option: str = "--host") -> list[str]:
    """The host names ``text`` selects from ``inv``, in inventory order, each once."""
    terms = split_pattern(text, known=inv.hosts)
    if not terms:
        raise UsageError(f"{option}: empty host pattern")
    names: dict[str, None] = {}  # ordered, and O(1) to test: inventories of thousands of hosts
    for term in order_terms(terms):
        op, body = (term[0], term[1:]) if term[0] in "!&" else ("", term)
        if not body:
            raise UsageError(f"{option} {text!r}: {op!r} must be followed by a host or group")
        if op and body in inv.hosts and body in inv.groups:
            sys.stderr.write(f"warning: {body!r} is both a host and a group; in {term!r} it means the group "
                             f"(as in Ansible)\n")
            found = set(inv.groups[body])
        else:
            found = set(_one_term(inv, body, option)) if op else _one_term(inv, body, option)
        if op == "!":
            names = {n: None for n in names if n not in found}
        elif op == "&":
            names = {n: None for n in names if n in found}
        else:
            names.update(dict.fromkeys(found))
    return list(names)


def _one_term(inv, term: str, option: str) -> list[str]:
    where = str(inv.path) if inv.path else "no inventory file"
    if term in ("all", "*"):
        if not inv.hosts:
            raise UsageError(f"{option} {term}: no hosts ({where})")
        return list(inv.hosts)
    if term in inv.hosts:
        return [term]
    if term in inv.groups:
        return list(inv.groups[term])
    m = _SUBSCRIPT.fullmatch(term) if not term.startswith("~") else None
    if m and m.group(1) in inv.groups:
        picked = _subscript(inv, m, option)
        if picked is not None:
            return picked
    if "[" in term and not term.startswith("~"):
        try:  # node[1:3] means the inventory's range, not a glob class of '1', ':' and '3'
            names = hostranges.expand(term)
        except hostranges.RangeError:
            names = None  # gpu[12]: a glob
        if names:
            return [n for name in names for n in _one_term(inv, name, option)]
    if term.startswith("~") or _GLOB & set(term):
        matcher = _matcher(term, option)
        found: dict[str, None] = {}
        for group, members in inv.groups.items():
            if group != "all" and matcher(group):
                found.update(dict.fromkeys(members))
        found.update(dict.fromkeys(h for h in inv.hosts if matcher(h)))
        if not found:
            raise UsageError(f"{option}: pattern {term!r} matches no host or group in {where}")
        return list(found)
    inv.host(term)  # localhost, an ~/.ssh/config alias, or the one-line "unknown host" error
    return [term]


def _subscript(inv, m, option: str) -> list[str] | None:
    """group[N], group[-N], group[i:j] (j included), group[i:] as Ansible's _apply_subscript reads them;
    None for a group[i:j] whose range names hosts of the inventory (then it is that range)."""
    group, index, start, end = m.groups()
    members = inv.groups[group]
    if index is None:
        try:
            if all(n in inv.hosts for n in hostranges.expand(m.group(0))):
                return None
        except hostranges.RangeError:
            pass
        last = int(end) if end else len(members) - 1
        picked = members[int(start):last + 1]
    else:
        i = int(index)
        picked = [members[i]] if -len(members) <= i < len(members) else []
    if not picked:
        raise UsageError(f"{option}: {m.group(0)!r}: group {group!r} has {len(members)} hosts, none at that position")
    return picked


def _matcher(term: str, option: str):
    try:
        rx = re.compile(term[1:]) if term.startswith("~") else re.compile(fnmatch.translate(term))
    except re.error as exc:
        raise UsageError(f"{option}: {term!r} is not a valid pattern ({exc})")
    return lambda name: rx.match(name) is not None
