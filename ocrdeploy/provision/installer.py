"""Which installer runs a package install, and its command line: pip, or `uv pip install` where uv
keeps pip's semantics.  Every install command of every step is built here (`install_command`).

uv installs the same pins several times faster (parallel downloads, one shared cache, no bytecode
pass), but it is not pip in everything, so the choice (`installer`: auto, uv or pip) follows facts:

- uv reads none of pip's configuration: a host whose pip.conf or PIP_* environment names an index,
  find-links, a certificate or constraints would get other packages from uv, so `auto` keeps pip
  there (the inventory's pip_* vars are given to either installer explicitly);
- with more than one index uv takes a package from the first index that has it; pip takes the best
  version across all of them: uv gets `--index-strategy unsafe-best-match`, which is pip's rule;
- credentials in an index URL go through the environment (UV_INDEX_URL / UV_EXTRA_INDEX_URL, as
  pip's PIP_INDEX_URL), never the command line; trusted hosts become `--allow-insecure-host`;
- steps that compile (the vLLM build, flash-attn) stay with pip (`pip_only`): the compile takes the
  time, not the install, and the diagnose table reads pip's build output;
- uv itself is installed with pip into the tools venv, so venvs stay made by `python -m venv` (with
  pip in them, which Venv checks and the guide's own commands use): `uv venv` seeds no pip.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..inventory.varchecks import INSTALLER_MODES as MODES, installer_mode  # noqa: F401  (MODES: re-exported)
from .command import Command
from .pip_index import index_args, pip_options
from .step import Request, StepError, absolute, file_fact, wd

TOOLS_ENV = ".ocrdeploy/tools-env"     # ocrdeploy's own venv on the host: hub clients, uv
UV = wd(f"{TOOLS_ENV}/bin/uv")
UV_PIN = "uv>=0.5"                     # --allow-insecure-host, --index-strategy, UV_EXTRA_INDEX_URL
# pip's configuration files (user, site-wide, XDG) and the keys in them that change where packages come
# from or how they are resolved: what uv would not see
PIP_CONFIG_FILES = ("/etc/pip.conf", "/etc/xdg/pip/pip.conf", "~/.config/pip/pip.conf", "~/.pip/pip.conf")
PIP_SOURCE_KEYS = ("index-url", "extra-index-url", "find-links", "no-index", "trusted-host", "cert",
                   "client-cert", "proxy", "constraint", "only-binary", "no-binary", "pre")
PIP_SOURCE_ENV = tuple("PIP_" + k.upper().replace("-", "_") for k in PIP_SOURCE_KEYS) + ("PIP_CONFIG_FILE",)


def mode(v: dict) -> str:
    """The inventory's `installer` var (or --installer), checked (by the rule the inventory load applies)."""
    return installer_mode(v.get("installer"))


def request() -> Request:
    """What the choice reads: the tools venv's uv, pip's configuration files (the PIP_* names come with
    every probe as `pip_env`)."""
    return Request(paths={UV}, reads=set(PIP_CONFIG_FILES))


def pip_config(facts: dict) -> list[str]:
    """Where the host configures pip's sources, as 'file: key' and env var names; [] when nowhere."""
    names = facts.get("pip_env") or ()
    found = [name for name in names if name in PIP_SOURCE_ENV]
    if "PIP_CONFIG_FILE=/dev/null" in names:      # pip reads no configuration file then
        return found
    for path in PIP_CONFIG_FILES:
        text = (facts.get("reads") or {}).get(path)
        if not text:
            continue
        import configparser     # only for a host with a pip.conf: a no-op elsewhere never reads one

        parser = configparser.RawConfigParser(strict=False)
        try:
            parser.read_string(text)
        except configparser.Error:
            found.append(f"{path}: unreadable")      # pip would read what it can: uv would read none of it
            continue
        keys = sorted({k for s in parser.sections() for k in parser[s] if k.replace("_", "-") in PIP_SOURCE_KEYS})
        if keys:
            found.append(f"{path}: {', '.join(keys)}")
    return found


def uv_present(facts: dict) -> bool:
    return bool(file_fact(facts, UV)["exists"])


@dataclass(frozen=True)
class Choice:
    name: str          # "uv" or "pip"
    why: str


def choose(facts: dict, v: dict, *, pip_only: str | None = None, bootstrap: bool = False) -> Choice:
    """uv or pip for one install.  `bootstrap`: a step before this one installs uv (kinds.with_uv wired
    it); without one, uv is used only where it already is on the host."""
    m = mode(v)
    if m == "pip":
        return Choice("pip", "installer: pip")
    if pip_only:
        return Choice("pip", pip_only)
    conf = pip_config(facts) if m == "auto" else []
    if conf:
        return Choice("pip", f"the host configures pip ({'; '.join(conf)}), which uv does not read")
    if bootstrap and not uv_present(facts) and "tools-uv" in (facts.get("run_failed") or ()):
        if m == "uv":
            raise StepError("installer: uv, but uv could not be installed in this run (tools-uv failed)")
        return Choice("pip", "uv could not be installed in this run (tools-uv failed): pip instead")
    if uv_present(facts) or bootstrap:
        return Choice("uv", f"installer: {m}")
    if m == "uv":
        raise StepError(f"installer: uv, but {absolute(facts, UV)} is not there and no step of this run installs it")
    return Choice("pip", "uv is not on the host")


def _uv_index(v: dict, index_url: str | None, extra=()) -> tuple[list, dict]:
    """pip_index's index vars in uv's words: the same URLs, credentials through UV_*, and pip's rule for
    several indexes (the best version over every index)."""
    return index_args(v, index_url, extra, env_prefix="UV", trusted_flag="--allow-insecure-host",
                      with_extras=["--index-strategy", "unsafe-best-match"])


def install_command(facts, v: dict, python: str, args, *, index_url=None, extra=(), env=None, cwd=None,
                    pip_only: str | None = None, bootstrap: bool = False, pip_flags=()) -> Command:
    """`python -m pip install ...` or `uv pip install --python python ...` with the inventory's index
    options (a step's own `index_url` first), `args` (pins, --no-deps, -e, -r, --no-build-isolation)
    the same for both.  `pip_flags` only pip understands (--progress-bar off).  No facts (a command
    outside a plan): pip."""
    which = choose(facts, v, pip_only=pip_only, bootstrap=bootstrap) if facts is not None else Choice("pip", "")
    if which.name == "uv":
        opts, secret = _uv_index(v, index_url, extra)
        argv = [absolute(facts, UV), "pip", "install", "--python", python, *opts, *args]
    else:
        o = pip_options(v, index_url, extra)
        argv, secret = [python, "-m", "pip", "install", *o.args, *args, *pip_flags], o.env
    return Command(argv, env={**(env or {}), **secret}, cwd=cwd)
