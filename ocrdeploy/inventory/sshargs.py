"""ansible_ssh_common_args read as OpenSSH would, kept where paramiko can do the same.

Ansible passes these words to the ssh binary; ocrdeploy speaks SSH through paramiko, so
each option is either mapped (a jump host, a proxy command, a timeout, a key, keep-alives,
compression, agent forwarding, a known_hosts file) or listed in ``ignored`` with the reason,
which is printed when the host is connected to or listed.  Nothing is dropped silently, and
nothing here can turn host-key checking off.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from . import hostranges

_WHY_IGNORED = {
    "controlmaster": "one connection per host is opened and reused for the whole run anyway",
    "controlpersist": "one connection per host is opened and reused for the whole run anyway",
    "controlpath": "one connection per host is opened and reused for the whole run anyway",
    "stricthostkeychecking": "host keys are always verified; --accept-new-host-keys records new ones",
    "loglevel": "use -vvv for connection debugging",
    "serveralivecountmax": "paramiko has no such setting",
    "gssapiauthentication": "paramiko's GSSAPI needs extra packages; key authentication is used",
    "passwordauthentication": "ocrdeploy never sends a password",
    "preferredauthentications": "paramiko tries the given key, then the agent and ~/.ssh keys",
}
_FLAG_OPTS = {"-4": None, "-6": None, "-q": None, "-T": None, "-t": None, "-n": None, "-N": None, "-x": None}


@dataclass
class SSHArgs:
    proxy_jump: str | None = None
    proxy_command: str | None = None
    connect_timeout: float | None = None
    known_hosts_files: list[str] = field(default_factory=list)    # OpenSSH reads each; new keys go to the first
    identity_file: str | None = None
    port: int | None = None
    user: str | None = None
    keepalive: int | None = None
    compress: bool = False
    forward_agent: bool = False
    ignored: list[str] = field(default_factory=list)


class SSHArgsError(ValueError):
    pass


@dataclass
class Hop:
    user: str | None
    host: str
    port: int


def jump_hops(spec: str | None) -> list[Hop]:
    """ProxyJump / -J as OpenSSH reads it: ``[user@]host[:port]`` or ``ssh://[user@]host[:port]``, an
    IPv6 address in brackets (``user@[::1]:2222``), several hops comma-separated; SSHArgsError otherwise."""
    hops = []
    for part in (spec or "").split(","):
        part = part.strip()
        if not part:
            continue
        text = part[len("ssh://"):] if part.startswith("ssh://") else part
        user, _, rest = text.rpartition("@")
        if rest.startswith("["):
            host, close, tail = rest[1:].partition("]")
            if not close or (tail and not tail.startswith(":")):
                raise SSHArgsError(f"jump host {part!r}: expected [address]:port")
            port = tail[1:] if tail else ""
        else:
            host, _, port = rest.partition(":")
            if ":" in port:
                raise SSHArgsError(f"jump host {part!r}: an IPv6 address is written in brackets, [{rest}]")
        if not host or any(c.isspace() or not c.isprintable() for c in host + user):
            raise SSHArgsError(f"jump host {part!r}: not [user@]host[:port]")
        if port and not hostranges.is_port(port):
            raise SSHArgsError(f"jump host {part!r}: the port {port!r} is not a number 1-65535")
        hops.append(Hop(user or None, host, int(port or 22)))
    return hops


def parse_ssh_args(text: str) -> SSHArgs:
    """Map the words of ansible_ssh_common_args; a malformed option is an SSHArgsError."""
    try:
        words = shlex.split(text or "")
    except ValueError as exc:
        raise SSHArgsError(f"cannot split {text!r} ({exc})")
    out = SSHArgs()
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word in ("-o", "-J", "-i", "-p", "-l", "-F"):
            if i >= len(words):
                raise SSHArgsError(f"{word} needs a value")
            value, i = words[i], i + 1
        elif len(word) > 2 and word[:2] in ("-o", "-J", "-i", "-p", "-l", "-F"):
            word, value = word[:2], word[2:]
        else:
            value = None
        if word == "-o":
            _option(out, value)
        elif word == "-J":
            out.proxy_jump = value
        elif word == "-i":
            out.identity_file = value
        elif word == "-p":
            out.port = _port(value, "-p")
        elif word == "-l":
            out.user = value
        elif word == "-C":
            out.compress = True
        elif word == "-A":
            out.forward_agent = True
        elif word == "-F":
            out.ignored.append(f"-F {value} (set $OCRDEPLOY_SSH_CONFIG to use another ssh_config)")
        elif word in _FLAG_OPTS:
            out.ignored.append(f"{word} (no meaning for paramiko)")
        else:
            out.ignored.append(f"{word} (not an option ocrdeploy knows)")
    return out


def _option(out: SSHArgs, text: str):
    key, sep, value = text.partition("=")
    if not sep:
        key, _, value = text.partition(" ")
    key, value = key.strip(), value.strip()
    if not key or not value:
        raise SSHArgsError(f"-o {text!r}: expected Key=Value")
    low = key.lower()
    shown = f"-o {key}={value}"
    if low == "proxyjump":
        out.proxy_jump = None if value.lower() == "none" else value
    elif low == "proxycommand":
        out.proxy_command = None if value.lower() == "none" else value
    elif low == "connecttimeout":
        out.connect_timeout = float(_number(value, shown))
    elif low == "userknownhostsfile":      # knownhosts.py refuses /dev/null and any other non-file
        out.known_hosts_files = value.split()
    elif low == "identityfile":
        out.identity_file = value
    elif low == "port":
        out.port = _port(value, shown)
    elif low == "user":
        out.user = value
    elif low == "serveraliveinterval":
        out.keepalive = _number(value, shown)
    elif low == "compression":
        out.compress = value.lower() == "yes"
    elif low == "forwardagent":
        out.forward_agent = value.lower() == "yes"
    else:
        why = _WHY_IGNORED.get(f"{low}={value.lower()}") or _WHY_IGNORED.get(low) or "paramiko cannot do it"
        out.ignored.append(f"{shown} ({why})")


def _port(value: str, what: str) -> int:
    if not hostranges.is_port(value):
        raise SSHArgsError(f"{what}: expected a port number 1-65535, got {value!r}")
    return int(value)


def _number(value: str, what: str) -> int:
    if not value.isdigit():
        raise SSHArgsError(f"{what}: expected a whole number, got {value!r}")
    return int(value)
