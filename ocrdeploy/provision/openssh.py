"""The system `ssh` client's argv for one read-only command, checking what the paramiko path checks.

A no-op re-run needs one answer from the host (the facts probe).  Through paramiko that costs its
import, a key exchange in Python and fabric's set-up: most of a no-op's time over SSH.  OpenSSH does the
same round trip in C, so the probe goes through it when everything the inventory asks for can be said to
OpenSSH exactly; anything else (a setting with no exact equivalent, a known_hosts line paramiko would
skip and warn about, -vvv) returns None and the caller keeps paramiko.  Host keys are checked as strictly:
StrictHostKeyChecking=yes (accept-new only under --accept-new-host-keys, which records in the same first
file), against exactly the known_hosts files the paramiko path reads, with DNS, KnownHostsCommand,
connection sharing and host-key updates off, so no setting in ~/.ssh/config can loosen or bypass it.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import shlex
import shutil

# what may appear unquoted in an ssh -o value and in a ProxyCommand both ssh's shell and paramiko's
# shlex split the same way; '%' is ssh's token character and stays out of paths
_PLAIN = re.compile(r"[A-Za-z0-9_./:@,+=-]+")
_KEY_TYPES = {"ssh-ed25519", "ssh-rsa", "ssh-dss", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384",
              "ecdsa-sha2-nistp521"}


def _plain(value: str) -> bool:
    return bool(_PLAIN.fullmatch(value)) and not value.startswith("-")


def known_hosts_readable_alike(paths) -> bool:
    """True when every line of these files is one both clients read the same way (host, key type, base64
    key).  A line paramiko cannot read is skipped with a warning on that path (connection.py); a marker
    (@cert-authority, @revoked) paramiko does not know: both keep the paramiko path."""
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except FileNotFoundError:
            continue
        except OSError:
            return False
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.split()
            if len(fields) < 3 or fields[1] not in _KEY_TYPES or fields[0].startswith("@"):
                return False
            try:
                base64.b64decode(fields[2], validate=True)
            except (binascii.Error, ValueError):
                return False
    return True


def ssh_argv(conn) -> list[str] | None:
    """The ssh argv (without the remote command) that reaches conn's host as SSHConnection.open would, or
    None where OpenSSH cannot be told the same thing."""
    from ..inventory.knownhosts import known_hosts
    from ..inventory.sshargs import SSHArgsError, jump_hops

    host, args = conn.host, conn.host.ssh_args
    ssh = shutil.which("ssh")
    if ssh is None or conn.verbosity >= 3:          # -vvv shows paramiko's own log of the connection
        return None
    found = known_hosts(host)
    if not found.paths or not all(_plain(str(p)) for p in found.paths):
        return None
    if not known_hosts_readable_alike(found.paths):
        return None
    if conn.accept_new and not found.record_to.parent.is_dir():
        return None                                 # the paramiko path creates the folder; ssh would not
    user = host.user or args.user
    keys = [k for k in (host.key_file, args.identity_file and os.path.expanduser(args.identity_file)) if k]
    config = os.environ.get("OCRDEPLOY_SSH_CONFIG")
    if any(not _plain(v) for v in (host.address, user or "x", *keys, config or "x")):
        return None
    timeout = args.connect_timeout or conn.connect_timeout
    files = " ".join(str(p) for p in found.paths)
    common = [ssh, "-T", "-x", "-a", "-e", "none",
              "-o", "BatchMode=yes",
              "-o", f"StrictHostKeyChecking={'accept-new' if conn.accept_new else 'yes'}",
              "-o", f"UserKnownHostsFile={files}", "-o", f"GlobalKnownHostsFile={files}",
              "-o", "HashKnownHosts=no", "-o", "UpdateHostKeys=no", "-o", "CheckHostIP=no",
              "-o", "VerifyHostKeyDNS=no", "-o", "KnownHostsCommand=none",
              "-o", "ControlMaster=no", "-o", "ControlPath=none", "-o", "PermitLocalCommand=no",
              "-o", "ClearAllForwardings=yes", "-o", "SendEnv=-*", "-o", "LogLevel=ERROR",
              "-o", f"ConnectTimeout={max(1, int(round(timeout)))}"]
    if config:
        common += ["-F", config]
    for key in keys:
        common += ["-i", key]
    if args.compress:
        common += ["-C"]
    if args.keepalive:
        common += ["-o", f"ServerAliveInterval={int(args.keepalive)}"]
    proxy = None
    if args.proxy_command:
        # paramiko splits it with shlex and runs it without a shell; ssh runs it with $SHELL: the same
        # only for plain words and the tokens both expand (%h %p %r %%)
        stripped = re.sub(r"%[hpr%]", "", args.proxy_command)
        if "%" in stripped or not all(_PLAIN.fullmatch(w) for w in stripped.split()):
            return None
        proxy = args.proxy_command
    elif args.proxy_jump:
        try:
            hops = jump_hops(args.proxy_jump)
        except SSHArgsError:
            return None
        for hop in hops:                            # each hop checked like the host, through the one before
            hop_user = hop.user or user
            if not _plain(hop.host) or (hop_user and not _plain(hop_user)):
                return None
            argv = [*common, "-p", str(hop.port)] + (["-l", hop_user] if hop_user else [])
            if proxy is not None:
                argv += ["-o", f"ProxyCommand={proxy.replace('%', '%%')}"]
            proxy = shlex.join([*argv, "-W", "[%h]:%p", "--", hop.host])
    port = host.explicit_port or args.port or 22
    argv = [*common, "-p", str(port)] + (["-l", user] if user else [])
    if proxy is not None:
        argv += ["-o", f"ProxyCommand={proxy}"]
    return [*argv, "--", host.address]
