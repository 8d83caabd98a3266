"""A parsed inventory kept as JSON, so that a re-run with an unchanged file reads JSON, not YAML or INI.

Parsing (PyYAML's import, the parse, the checks of every var) was a tenth of a no-op `install`.  Only an
inventory that parsed cleanly is kept: a file with an error is parsed again on every run, so each error
message is the parser's own.  The entry is used only when everything it depends on is unchanged: the
file's identity (its path, size, mtime_ns, ctime_ns, inode and device, as the probe keys interpreter
versions) and the parser's own source files (an upgrade re-parses); a file changed in the last two
seconds is not kept (see save).  Anything JSON would not give back
exactly (a YAML date, bytes, a set, a key that is not a string, a NaN) is not kept; nor is a cache that
cannot be read or written, which costs a parse and nothing else.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from pathlib import Path

FORMAT = 1
MAX_BYTES = 32 * 2**20          # an inventory of many thousands of hosts; past this, parse it each time
SETTLED_NS = 2 * 10**9          # a file changed this recently is not kept (see save)
# (varchecks.py: the rules of the URL vars and installer that model.var_problem applies; an upgrade that changes one
# must re-check an inventory cached before it)
_PARSER_FILES = ("model.py", "yamlfile.py", "inifile.py", "hostranges.py", "sshargs.py", "varchecks.py", "cache.py")
_JSON_SCALARS = (str, int, bool, type(None))


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ocrdeploy" / "inventories"


def _stamp(st: os.stat_result) -> list:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def identity(path: Path) -> list | None:
    """What the entry of ``path`` must match to be used; None when the file cannot be looked at."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        real = os.path.realpath(path)
        code = [_stamp(os.stat(os.path.join(here, name))) for name in _PARSER_FILES]
        return [FORMAT, real, _stamp(os.stat(real)), code]
    except OSError:
        return None


def _entry(key: list) -> Path:
    # the file name only spreads entries; the key inside decides (a crc32 clash is a miss, never a wrong hit)
    return cache_dir() / f"{zlib.crc32(key[1].encode('utf-8', 'surrogatepass')):08x}.json"


def load(path: Path):
    """The Inventory parsed from ``path`` before, or None (no entry, a stale one, an unreadable one)."""
    from .model import Host, Inventory

    key = identity(path)
    if key is None:
        return None
    try:
        with open(_entry(key), encoding="utf-8") as fh:
            doc = json.load(fh)
        if not isinstance(doc, dict) or doc.get("key") != key:
            return None
        inv = Inventory(path=path, groups=doc["groups"])
        inv._all_vars = doc["all_vars"]
        inv.hosts = {name: Host(name=name, vars=h["vars"], groups=h["groups"], source=h["source"])
                     for name, h in doc["hosts"]}
        return inv
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _exact(value) -> bool:
    """True when JSON gives ``value`` back equal and of the same types (no recursion: vars nest 100 deep)."""
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, dict):
            if not all(type(k) is str for k in v):
                return False
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
        elif isinstance(v, float):
            if v != v or v in (float("inf"), float("-inf")):
                return False
        elif type(v) not in _JSON_SCALARS:
            return False
    return True


def save(path: Path, inv) -> bool:
    """Keep a cleanly parsed inventory for the next run; False when it is not kept."""
    key = identity(path)
    if key is None:
        return False
    # A file's times advance in clock ticks of a few ms: written again within the tick it was kept in, it
    # would keep its identity with new content.  Kept only once it has not changed for SETTLED_NS, any later
    # write gets a later mtime (git's "racy" index entries, the same way).
    if time.time_ns() - key[2][1] < SETTLED_NS:
        return False
    doc = {"key": key, "all_vars": inv._all_vars, "groups": inv.groups,
           "hosts": [[name, {"vars": h.vars, "groups": h.groups, "source": h.source}] for name, h in inv.hosts.items()]}
    if not _exact(doc):
        return False
    text = json.dumps(doc, separators=(",", ":"))
    if len(text) > MAX_BYTES:
        return False
    target = _entry(key)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # the vars may hold a proxy's credentials: readable by the user alone, as the inventory should be
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, target)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
