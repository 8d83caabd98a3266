"""Where pip looks for packages: the inventory's mirror vars as pip options, in one place.

`pip_index_url` replaces PyPI, `pip_extra_index_url` adds indexes (a list, or one string
separated by spaces or commas), `pip_trusted_host` lets pip use a plain-http or self-signed
mirror.  A step that needs its own index (DeepSeek-OCR's cu118 torch wheels, paddle's GPU
builds) keeps it, overridable by its own var (`torch_index_url`, `paddle_index_url`), and
still gets the extra indexes and trusted hosts.  Every pip command of every recipe, the
tools venv and the Dockerfile take their options from here.

An index URL may carry credentials (https://user:token@mirror/simple): pip gets them through its
environment, never its command line; wherever a command is shown (--check, logs, errors) they read
as ***.
"""

from __future__ import annotations

from dataclasses import dataclass

# The checks of these vars live in the inventory, which runs them when it is read (a typo: one line naming the
# inventory file and line); the plans run the same ones here.  The names stay importable from this module.
from ..inventory.varchecks import check_url, has_credentials, index_urls, masked, split_url  # noqa: F401  (re-exported)
from .command import Secret

PIP_VARS = ("pip_index_url", "pip_extra_index_url", "pip_trusted_host")
INDEX_VARS = ("torch_index_url", "paddle_index_url")
PYPI = "https://pypi.org/simple/"


def url_arg(url: str) -> str:
    """An index URL as a command argument: a Secret (shown masked) when it carries credentials."""
    return Secret(url, shown=masked(url)) if has_credentials(url) else url


def own_index(v: dict, var: str | None, default: str | None) -> str | None:
    """A step's own index: its var when set, else the recipe's default."""
    if var and v.get(var):
        return check_url(var, v[var])
    return default


@dataclass(frozen=True)
class PipOptions:
    """One pip command's index options: `args` for its command line, `env` for what must not be on it."""
    args: list
    env: dict


def pip_options(v: dict, index_url: str | None = None, extra=()) -> PipOptions:
    """--index-url/--extra-index-url/--trusted-host for one pip command; `index_url` is the step's own.

    An index URL with credentials goes to pip through PIP_INDEX_URL / PIP_EXTRA_INDEX_URL instead (a
    Secret, which the connection hands over on stdin: a command line is world-readable in /proc for
    the whole install).  pip takes PIP_EXTRA_INDEX_URL in place of a pip.conf extra-index-url, and
    --extra-index-url on the command line in addition to it."""
    args, env = index_args(v, index_url, extra)
    return PipOptions(args, env)


def index_args(v: dict, index_url: str | None = None, extra=(), *, env_prefix: str = "PIP",
               trusted_flag: str = "--trusted-host", with_extras=()) -> tuple[list, dict]:
    """The index vars as one installer's arguments and environment: pip's, or uv's (UV_*, --allow-insecure-host;
    installer.py).  Credentials go through `{env_prefix}_INDEX_URL` / `_EXTRA_INDEX_URL`, never argv;
    `with_extras` is added when there is any extra index."""
    index, extras, hosts = index_urls(v)
    args: list = []
    env: dict = {}
    chosen = index_url or index
    if chosen:
        if has_credentials(chosen):
            env[f"{env_prefix}_INDEX_URL"] = url_arg(chosen)
        else:
            args += ["--index-url", chosen]
    secret_extras = []
    for url in [*extra, *extras]:
        if has_credentials(url):
            secret_extras.append(url)
        else:
            args += ["--extra-index-url", url]
    if secret_extras:
        joined = " ".join(secret_extras)
        env[f"{env_prefix}_EXTRA_INDEX_URL"] = Secret(joined, shown=" ".join(masked(u) for u in secret_extras))
    if extra or extras:
        args += list(with_extras)
    for host in hosts:
        args += [trusted_flag, host]
    return args, env
