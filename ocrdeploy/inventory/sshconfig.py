"""Fall back to ~/.ssh/config: a name the inventory does not know may be an ssh alias.

Only an explicit ``Host`` entry counts (not a ``*`` wildcard), so a typo in a host
name is still reported as unknown instead of becoming a connection attempt.

paramiko evaluates ``Match`` host, originalhost, user, localuser, exec, all, canonical and
final (exec runs, as it does under OpenSSH); a block with any other criterion (localnetwork,
tagged, version, ...) would be applied as if it matched, so it is skipped, and said once.
The connections use the same filtered config (``load_ssh_config``).
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import sys
from pathlib import Path

from . import hostranges

ENV_VAR = "OCRDEPLOY_SSH_CONFIG"
_EVALUATED = {"all", "canonical", "final", "exec", "host", "originalhost", "user", "localuser"}
_NO_ARGUMENT = {"all", "canonical", "final"}
_said: set = set()


def ssh_config_path() -> Path:
    return Path(os.environ.get(ENV_VAR) or "~/.ssh/config").expanduser()


def _unevaluated(criteria: str) -> list[str]:
    """The Match criteria paramiko would take as matched without testing them."""
    try:
        words = shlex.split(criteria)        # Match exec "test -f x" host y: the quoted command is one word
    except ValueError:
        words = criteria.split()
    out, i = [], 0
    while i < len(words):
        word = words[i].lstrip("!").lower()
        i += 1 if word in _NO_ARGUMENT else 2
        if word not in _EVALUATED:
            out.append(word)
    return out


def load_ssh_config(path: Path | None = None):
    """The ssh config as paramiko reads it, less the Match blocks it cannot evaluate; None when there is
    none or it cannot be read."""
    import paramiko

    path = path or ssh_config_path()
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    kept, skipping, skipped = [], False, []
    for line in text.splitlines():
        m = re.match(r"\s*(\w+)\s*(?:=\s*|\s)(.*)$", line)
        keyword = m.group(1).lower() if m else ""
        if keyword in ("host", "match"):
            odd = _unevaluated(m.group(2)) if keyword == "match" else []
            skipping = bool(odd)
            if odd:
                skipped.append(f"'{line.strip()}' ({', '.join(odd)})")
        if not skipping:
            kept.append(line)
    if skipped and str(path) not in _said:
        _said.add(str(path))
        sys.stderr.write(f"warning: {path}: skipped Match block(s) paramiko cannot evaluate: {'; '.join(skipped)}\n")
    try:
        return paramiko.SSHConfig.from_text("\n".join(kept))
    except paramiko.ssh_exception.ConfigParseError:
        return None


def _explicit_names(config) -> list[str]:
    """The names of the Host lines (paramiko's get_hostnames() fails on a Match block: KeyError 'host')."""
    return [name for entry in config._config for name in entry.get("host", ())]


def host_from_ssh_config(name: str, base_vars: dict | None = None):
    from .model import Host  # local import: model imports us lazily too

    path = ssh_config_path()
    config = load_ssh_config(path)
    if config is None:
        return None
    explicit = any(fnmatch.fnmatchcase(name, pattern) for pattern in _explicit_names(config)
                   if not pattern.startswith("!") and not any(c in pattern for c in "*?"))
    if not explicit:
        return None
    found = config.lookup(name)
    hvars = dict(base_vars or {})
    hvars["ansible_host"] = found.get("hostname", name)
    if "port" in found:
        port = found["port"]
        if not hostranges.is_port(port):
            from ..errors import UsageError

            raise UsageError(f"{path}: Host {name}: Port {port!r} is not a port number 1-65535")
        hvars["ansible_port"] = int(port)
    if "user" in found:
        hvars["ansible_user"] = found["user"]
    if found.get("identityfile"):
        hvars["ansible_ssh_private_key_file"] = found["identityfile"][0]
    return Host(name=name, vars=hvars, groups=[], source="ssh_config")
