"""Fall back to ~/.ssh/config: a name the inventory does not know may be an ssh alias.

Only an explicit ``Host`` entry counts (not a ``*`` wildcard), so a typo in a host
name is still reported as unknown instead of becoming a connection attempt.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

ENV_VAR = "OCRDEPLOY_SSH_CONFIG"


def ssh_config_path() -> Path:
    return Path(os.environ.get(ENV_VAR) or "~/.ssh/config").expanduser()


def host_from_ssh_config(name: str, base_vars: dict | None = None):
    from .model import Host  # local import: model imports us lazily too

    path = ssh_config_path()
    if not path.is_file():
        return None
    import paramiko

    try:
        config = paramiko.SSHConfig.from_path(str(path))
    except (OSError, paramiko.ssh_exception.ConfigParseError):
        return None
    explicit = any(fnmatch.fnmatchcase(name, pattern) for pattern in config.get_hostnames()
                   if not pattern.startswith("!") and not any(c in pattern for c in "*?"))
    if not explicit:
        return None
    found = config.lookup(name)
    hvars = dict(base_vars or {})
    hvars["ansible_host"] = found.get("hostname", name)
    if "port" in found:
        port = found["port"]
        if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
            from ..errors import UsageError

            raise UsageError(f"{path}: Host {name}: Port {port!r} is not a port number 1-65535")
        hvars["ansible_port"] = int(port)
    if "user" in found:
        hvars["ansible_user"] = found["user"]
    if found.get("identityfile"):
        hvars["ansible_ssh_private_key_file"] = found["identityfile"][0]
    return Host(name=name, vars=hvars, groups=[], source="ssh_config")
