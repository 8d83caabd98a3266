"""Numeric options, parsed here and not by invoke.

Invoke converts an option's value with the type of its default, so `--connect-timeout 2.5`
(an int default) or `--grace abc` ended in a ValueError traceback, and `--timeout nan` was
taken.  The tasks give these options no typed default; each command reads them through
`number`, which allows fractions where they make sense and says in one line what is wrong.
--set KEY=VALUE is read here too: the install run and its early probe start (provision/early_probe.py) read
it alike.
"""

from __future__ import annotations

import math

from ..errors import UsageError


LARGEST = 1e9         # about 31 years of seconds: any count or timeout a run can mean, below threading.TIMEOUT_MAX


def number(value, option: str, default, *, above=None, minimum=None, maximum=None, whole=False):
    """`value` (a string from the command line, or None for `default`) as a finite number."""
    if value is None:
        value = default
    try:
        if isinstance(value, bool):
            raise ValueError
        n = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"--{option} must be a {'whole ' if whole else ''}number, got {value!r}")
    if not math.isfinite(n):
        raise UsageError(f"--{option} must be a finite number, got {value!r}")
    if maximum is None and abs(n) > LARGEST:
        # finite but past what a timeout can be (threading's waits and time_t overflow: --network-timeout 1e300
        # printed thread tracebacks and reported every source closed)
        raise UsageError(f"--{option} must be at most {LARGEST:g}, got {value!r}")
    if whole:
        if n != int(n):
            raise UsageError(f"--{option} must be a whole number, got {value!r}")
        n = int(n)
    if above is not None and not n > above:
        raise UsageError(f"--{option} must be > {above:g}, got {value!r}")
    if minimum is not None and maximum is not None and not minimum <= n <= maximum:
        raise UsageError(f"--{option} must be between {minimum:g} and {maximum:g}, got {value!r}")
    if minimum is not None and n < minimum:
        raise UsageError(f"--{option} must be at least {minimum:g}, got {value!r}")
    if maximum is not None and n > maximum:
        raise UsageError(f"--{option} must be at most {maximum:g}, got {value!r}")
    return n


def api_key(value):
    """--api-key: None or the key as given.  A line break or another control character cannot travel in an
    Authorization header: a server started with it requires what no client can send (serve then waited
    its whole timeout for a readiness that never came), and a client sending it failed as 'not ready'."""
    if value is not None and any(not c.isprintable() for c in str(value)):
        raise UsageError("--api-key holds a line break or another control character: an HTTP header cannot "
                         "carry it (give the key on one line)")
    return value


def parse_sets(sets) -> dict:
    """--set KEY=VALUE items as a dict of host vars (the last of a key wins), each checked as the
    inventory checks the same var (a port, a boolean, ssh args, a gpu, a connection)."""
    import re

    from ..inventory.model import connection_problem, var_problem
    from ..inventory.varchecks import URL_VARS, masked

    out = {}
    for item in sets:
        if "=" not in item:
            raise UsageError(f"--set {item!r}: expected KEY=VALUE")
        key, value = item.split("=", 1)
        if not key.isidentifier():
            raise UsageError(f"--set {item!r}: {key!r} is not a variable name")
        problem = var_problem(key, value) or (connection_problem(value) if key == "ansible_connection" else None)
        if problem:
            if key in URL_VARS:     # the item as written, each URL's credentials as *** (as the problem shows them)
                item = f"{key}=" + re.sub(r"[^\s,]+", lambda m: masked(m.group()), value)
            raise UsageError(f"--set {item!r}: {problem}")
        out[key] = value
    return out
