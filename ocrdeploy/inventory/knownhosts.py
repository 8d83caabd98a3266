"""Which known_hosts files a host's keys are checked against, and which settings are refused.

known_hosts_file, else ansible_ssh_common_args' UserKnownHostsFile (OpenSSH's several-files
form: each is read, new keys are recorded in the first), else $OCRDEPLOY_KNOWN_HOSTS, else
~/.ssh/known_hosts.  A path that resolves to /dev/null, a device, a FIFO or a directory
would turn checking off (every key "new" and recorded nowhere) or hang, so it is dropped,
whatever its spelling (``/dev//null``, a symlink), and said with the other ignored settings.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

ENV_VAR = "OCRDEPLOY_KNOWN_HOSTS"
DEFAULT = "~/.ssh/known_hosts"


@dataclass
class KnownHosts:
    paths: list[Path]                                  # read in order; new keys go to paths[0]
    refused: list[str] = field(default_factory=list)   # "SETTING PATH (why)", for the ignored settings

    @property
    def record_to(self) -> Path:
        return self.paths[0]


def refusal(path: str | os.PathLike) -> str | None:
    """Why ``path`` cannot hold host keys (None when it can: a regular file, or none yet to create)."""
    real = os.path.realpath(os.path.expanduser(str(path)))
    if real == os.devnull:
        return "it is /dev/null: host keys are always verified"
    if os.path.lexists(real) and not os.path.isfile(real):
        return "not a regular file: host keys are always verified against a file"
    return None


def known_hosts(host=None) -> KnownHosts:
    refused: list[str] = []

    def usable(setting: str, values) -> list[Path]:
        kept = []
        for value in values:
            why = refusal(value)
            if why:
                refused.append(f"{setting.format(value)} ({why})")
            else:
                kept.append(Path(os.path.expanduser(str(value))))
        return kept

    paths: list[Path] = []
    if host is not None and host.vars.get("known_hosts_file"):
        paths = usable("known_hosts_file {}", [host.vars["known_hosts_file"]])
    elif host is not None and not host.is_local and host.ssh_args.known_hosts_files:
        paths = usable("ssh option -o UserKnownHostsFile={}", host.ssh_args.known_hosts_files)
    if not paths and os.environ.get(ENV_VAR):
        paths = usable(f"${ENV_VAR}={{}}", [os.environ[ENV_VAR]])
    if not paths:
        paths = usable("{}", [DEFAULT])
    return KnownHosts(paths, refused)
