"""Host patterns as Ansible users write them on --host and --limit.

``gpu1,gpu2`` (names or groups), ``gpu*`` (a glob over host and group names), ``~gpu[0-9]+``
(a regular expression), ``all:!gpu2`` (exclusion), ``a100:&ubuntu`` (intersection).  Terms
are separated by commas, or by colons when there is no comma (Ansible's older form); as in
ansible-core's InventoryManager, the plain terms are taken first, then the ``&`` terms
narrow them, then the ``!`` terms remove hosts.  Unlike Ansible, a term that matches
nothing is an error, not a warning: a typo in ``!gpu2`` must not run on gpu2.
"""

from __future__ import annotations

import fnmatch
import re

from ..errors import UsageError
from . import hostranges

_GLOB = set("*?[")
_COLON_TERMS = re.compile(r"(?:[^\s:\[\]]|\[[^\]]*\])+")


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


def _matcher(term: str, option: str):
    try:
        rx = re.compile(term[1:]) if term.startswith("~") else re.compile(fnmatch.translate(term))
    except re.error as exc:
        raise UsageError(f"{option}: {term!r} is not a valid pattern ({exc})")
    return lambda name: rx.match(name) is not None
