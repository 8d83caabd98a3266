"""Commands are argument lists; this is the one place they become shell text.

Every part is quoted with shlex.quote, so no value from an inventory, a path or a
flag is ever pasted into a shell string.  Secrets are masked when a command is
shown (dry runs, logs, errors) but passed unmasked when it runs.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..errors import UsageError
from .probe import mask_url


class Secret(str):
    """A string that is shown as *** (or as its `shown` form, e.g. a URL with only its password
    hidden) in every printed command."""

    def __new__(cls, text: str, shown: str = "***"):
        obj = super().__new__(cls, text)
        obj.shown = shown
        return obj


class Script(str):
    """Program text passed as one argument (sh -c, python -c); shown by its label, run in full."""

    def __new__(cls, text: str, label: str):
        obj = super().__new__(cls, text)
        obj.label = label
        return obj


@dataclass(frozen=True)
class Command:
    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    sudo: bool = False
    stdin: str | None = None      # what the command reads (a credential: never on its command line)

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None,
                 cwd: str | None = None, sudo: bool = False, stdin: str | None = None):
        if isinstance(argv, str):
            raise TypeError("Command takes a list of arguments, not a shell string")
        object.__setattr__(self, "argv", tuple(a if isinstance(a, (Secret, Script)) else str(a) for a in argv))
        object.__setattr__(self, "env", dict(env or {}))
        object.__setattr__(self, "cwd", cwd)
        object.__setattr__(self, "sudo", sudo)
        object.__setattr__(self, "stdin", stdin)

    def shell(self, mask: bool = False, sudo_prefix: Sequence[str] = ("sudo", "-n")) -> str:
        return to_shell(self.argv, env=self.env, cwd=self.cwd,
                        sudo=sudo_prefix if self.sudo else None, mask=mask)

    def __str__(self) -> str:
        return self.shell(mask=True)


def _q(part, mask: bool) -> str:
    """One shell word; masked for display: secrets as '***', scripts by their label, credentials in
    URLs (a token in a git URL, a proxy password) as ***."""
    if mask and isinstance(part, Secret):
        return shlex.quote(part.shown)
    if mask and isinstance(part, Script):
        return f"<{part.label}>"
    return shlex.quote(mask_url(str(part)) if mask else str(part))


def _check_name(key: str):
    if not key or not key.replace("_", "a").isalnum() or key[0].isdigit():
        raise ValueError(f"bad environment variable name {key!r}")


def secret_env(env: Mapping[str, str] | None) -> dict:
    """The environment values that are secrets: they travel on the command's stdin, never its argv."""
    return {k: v for k, v in (env or {}).items() if isinstance(v, Secret)}


def secret_input(env: Mapping[str, str] | None) -> str:
    """What the command's stdin starts with: one line per secret, read and exported by to_shell's
    reader before the command itself starts (and reads the rest of stdin, if it has any)."""
    lines = []
    for key, value in secret_env(env).items():
        if "\n" in value or "\0" in value:
            raise UsageError(f"environment variable {key}: a secret cannot hold a line break or NUL")
        lines.append(f"{value}\n")
    return "".join(lines)


def to_shell(argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | None = None,
             sudo: Sequence[str] | None = None, mask: bool = False) -> str:
    """The shell text of a command.  A command line is readable by every local user (/proc/PID/cmdline)
    for as long as the command runs; a process's environment only by its owner.  So a secret in `env`
    is never written here as K=V: unmasked, the text starts a small sh that reads the secrets from stdin
    (secret_input, in the same order), exports them and execs the command, under sudo too.  Masked (for
    showing) it reads as the plain env form with the value hidden."""
    parts: list[str] = []
    if sudo:
        parts.extend(_q(p, mask) for p in sudo)
    env = dict(env or {})
    hidden = {} if mask else secret_env(env)
    plain = {k: v for k, v in env.items() if k not in hidden}
    for key in env:
        _check_name(key)
    if plain:
        parts.append("env")
        parts.extend(f"{key}={_q(value, mask)}" for key, value in plain.items())
    if hidden:
        names = list(hidden)
        reader = " && ".join(f"IFS= read -r {k}" for k in names)
        parts += ["sh", "-c", shlex.quote(f"{reader} && export {' '.join(names)} && exec \"$@\""), "sh"]
    parts.extend(_q(a, mask) for a in argv)
    text = " ".join(parts)
    if cwd:
        text = f"cd {_q(cwd, mask)} && {text}"
    return text


PYTHON_ENV = "OCRDEPLOY_PYTHON"  # the host's ansible_python_interpreter, set by the connection

# The inventory's ansible_python_interpreter when the connection set one (and nothing else then:
# Ansible fails when the named interpreter is missing), else the host's system Python first: a
# pyenv/conda shim found on PATH costs a shell script per call.
# The interpreter is a command line as Ansible takes it ("/usr/bin/env python3" included): split into
# words without globbing; with env in front, the program env would run is the one that must exist.
_PYTHON_LAUNCH = ('if [ -n "${OCRDEPLOY_PYTHON:-}" ]; then src=$1; arg=$2; set -f; set -- $OCRDEPLOY_PYTHON; '
                  'set +f; want=$1; case "$1" in */env|env) [ "$#" -gt 1 ] && want=$2;; esac; '
                  'command -v "$1" >/dev/null 2>&1 && command -v "$want" >/dev/null 2>&1 || '
                  '{ echo "ansible_python_interpreter $OCRDEPLOY_PYTHON: not found on this host" >&2; exit 127; }; '
                  'exec "$@" %s-c "$src" "$arg"; fi; '
                  'for p in /usr/bin/python3 /usr/local/bin/python3 python3 python; do '
                  'if command -v "$p" >/dev/null 2>&1; then exec "$p" %s-c "$1" "$2"; fi; done; shift 2; ')
_NO_PYTHON = 'echo "no python3 on this host" >&2; exit 127'


class PythonCommand(Command):
    """A stdlib-only helper run by the host's Python; the connection names the interpreter."""

    def with_python(self, python: str | None) -> "PythonCommand":
        if not python:
            return self
        return PythonCommand(self.argv, env={**self.env, PYTHON_ENV: python}, cwd=self.cwd, sudo=self.sudo,
                             stdin=self.stdin)


def remote_python(source: str, argument: str, label: str, fallback: str | None = None,
                  fallback_args=(), show_argument: bool = False, stdin: str | None = None,
                  site: bool = True) -> PythonCommand:
    """One command that runs a stdlib-only Python script with the host's python3 and one argument.

    Without any Python it runs the POSIX-sh `fallback` (with `fallback_args`), or fails saying so.
    The fallback travels in the environment so that the command stays a plain argument list.
    site=False starts the interpreter with -S: no site module, so no site-packages scan and no .pth files
    run (a distribution's or pyenv's); a script that may import a third-party module keeps the default.
    """
    flags = "" if site else "-S "
    launch = _PYTHON_LAUNCH % (flags, flags) + ('eval "$FALLBACK"' if fallback else _NO_PYTHON)
    env = {"FALLBACK": Script(fallback, "sh fallback")} if fallback else None
    arg = argument if show_argument else Script(argument, f"{label} input")
    return PythonCommand(["sh", "-c", Script(launch, "find python3"), "sh", Script(source, label), arg,
                          *fallback_args], env=env, stdin=stdin)
