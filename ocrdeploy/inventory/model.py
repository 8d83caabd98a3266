"""The inventory: which hosts exist, how to reach them, and the vars each one gets.

The file has Ansible's shape so an existing Ansible inventory works unchanged: YAML
(``all:`` with ``hosts:``, ``vars:`` and ``children:``) or INI (``[group]``,
``[group:vars]``, ``[group:children]``, read into the same tree by inifile).  Host
names may be ranges (``node[01:10]``).  Vars
merge in Ansible's order: ``all`` first, then groups from the shallowest to the
deepest (alphabetical among equals), then the host's own vars, the more specific
winning.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from . import hostranges
from .sshargs import SSHArgs, SSHArgsError, parse_ssh_args
from .varchecks import URL_VARS, check_url, index_urls, installer_mode
from .yamlfile import MAX_VALUE_DEPTH, LineDict, TooLarge, YAMLSyntaxError, check_size, load_yaml

LOCAL_NAMES = ("localhost", "local")
PROXY_VARS = ("http_proxy", "https_proxy", "no_proxy")
ENV_VAR = "OCRDEPLOY_INVENTORY"
DEFAULT_FILES = ("inventory.yml", "inventory.yaml", "inventory.ini")
YAML_SUFFIXES = (".yml", ".yaml", ".json")
DEFAULT_WORKDIR = "~/ocrdeploy"

# Vars with a known meaning and the type they must have.  Anything else is kept
# as the user wrote it (recipes may read their own vars).
_INT_VARS = ("ansible_port", "ansible_ssh_port")
_STR_VARS = (
    "ansible_host", "ansible_user", "ansible_ssh_private_key_file", "ansible_connection",
    "ansible_ssh_host", "ansible_ssh_user", "ansible_private_key_file",
    "ansible_python_interpreter", "ansible_become_user",
    "workdir", "sdk_repo", "vllm_src", "transformers_src", "hf_endpoint",
    "http_proxy", "https_proxy", "no_proxy", "known_hosts_file", "pip_index_url", "torch_index_url",
    "paddle_index_url", "hf_mirror", "modelscope_endpoint", "model_source", "layout_url", "python_install_mirror",
    "torch_cuda_arch_list",
)
# A venv the user already has: a path, never a number or a list (YAML reads `vllm_env: 3` as an int and
# `vllm_env: [a, b]` as a list; either reached the install step as a path and failed there, not here)
_PATH_VARS = ("vllm_env", "tf_env")
# Where models come from (the model_source var, --source): defined here, where the inventory checks the var, and read
# by models/plan (the inventory sits below the models in the layout)
MODEL_SOURCES = ("hf", "modelscope", "auto")
SSH_ARG_VARS = ("ansible_ssh_common_args", "ansible_ssh_extra_args")
CONNECTIONS = ("local", "ssh", "paramiko", "paramiko_ssh", "smart")   # smart and paramiko: ssh, through paramiko
MAX_VAR_VALUES = 100_000   # one var, its YAML aliases written out: far beyond any real one, far below a bomb
PASSWORD_VARS = ("ansible_become_password", "ansible_become_pass", "ansible_sudo_pass", "ansible_password",
                 "ansible_ssh_pass")
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0", "")


def as_bool(value) -> bool:
    """Ansible's booleans: True/False, yes/no, true/false, on/off, 1/0 (INI gives strings or bools)."""
    return value is True or (not isinstance(value, bool) and str(value).strip().lower() in _TRUE)


def _is_bool(value) -> bool:
    return value is None or isinstance(value, bool) or str(value).strip().lower() in _TRUE + _FALSE


def _shown(value, limit=80) -> str:
    """A value in an error line, cut: a list of thousands of items is not one line."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def var_problem(key: str, value) -> str | None:
    """What is wrong with one var of a known meaning (the inventory's or a --set one), or None."""
    if key in _INT_VARS:
        if not hostranges.is_port(value):
            return f"{key} must be a port number 1-65535, got {value!r}"
    elif key in _STR_VARS and value is not None and not isinstance(value, (str, int, float)):
        return f"{key} must be a string, got {type(value).__name__}"
    elif key in URL_VARS and value not in (None, ""):
        # the rules the plans apply when they read these vars (varchecks.py), here so that a typo names the
        # inventory file and its line for every command; the value masked and cut
        try:
            index_urls({key: value}, _shown) if key.startswith("pip_") else check_url(key, value, _shown)
        except UsageError as exc:
            return str(exc).removeprefix("inventory var ")
    elif key == "installer" and value not in (None, ""):
        try:
            installer_mode(value, _shown)
        except UsageError as exc:
            return str(exc).removeprefix("inventory var ")
    elif key == "model_source" and value not in (None, ""):
        if str(value).strip().lower() not in MODEL_SOURCES:
            return f"model_source must be {', '.join(MODEL_SOURCES[:-1])} or {MODEL_SOURCES[-1]}, got {_shown(value)}"
    elif key in _PATH_VARS and value is not None and (not isinstance(value, str) or "\x00" in value
                                                      or "\n" in value):
        return f"{key} must be the path of a venv, got {_shown(value)}"
    elif key == "ansible_become" and not _is_bool(value):
        return f"ansible_become must be true or false, got {value!r}"
    elif key == "ansible_become_method" and str(value) != "sudo":
        return (f"ansible_become_method {value!r} is not supported (sudo only, "
                f"as sudo -n: it never waits for a password)")
    elif key in SSH_ARG_VARS and value is not None:
        try:
            parse_ssh_args(str(value))
        except SSHArgsError as exc:
            return f"{key}: {exc}"
    elif key == "gpu" and value is not None and not (
            value == "auto" or (isinstance(value, int) and value >= 0)
            or (isinstance(value, str) and all(p.strip().isascii() and p.strip().isdigit()
                                               for p in value.split(",")))):
        return f"gpu must be 'auto', an index or a comma list of indexes, got {value!r}"
    return None


def connection_problem(connection) -> str | None:
    """An ansible_connection ocrdeploy cannot use, said in one line; None when it can."""
    if connection in (None, "", *CONNECTIONS):
        return None
    return (f"ansible_connection {connection!r} is not "
            f"supported (ocrdeploy runs commands here or over SSH: local, ssh, paramiko or smart)")


@dataclass
class Host:
    """One machine to act on, with its merged vars."""

    name: str
    vars: dict[str, Any] = field(default_factory=dict)
    groups: list[str] = field(default_factory=list)
    source: str = "inventory"  # inventory | ssh_config | implicit

    @property
    def is_local(self) -> bool:
        conn = self.vars.get("ansible_connection")
        if conn == "local":
            return True
        if conn not in (None, "local"):
            return False
        if self.name in LOCAL_NAMES:
            return self._first("ansible_ssh_host", "ansible_host") in (None, "localhost", "127.0.0.1", "::1")
        return False

    @property
    def address(self) -> str:
        return str(self._first("ansible_ssh_host", "ansible_host") or self.name)

    @property
    def explicit_port(self) -> int | None:
        port = self._first("ansible_ssh_port", "ansible_port")
        return int(port) if port else None

    @property
    def port(self) -> int:
        return self.explicit_port or 22

    @property
    def user(self) -> str | None:
        return self._first("ansible_ssh_user", "ansible_user")

    @property
    def key_file(self) -> str | None:
        key = self._first("ansible_ssh_private_key_file", "ansible_private_key_file")
        return os.path.expanduser(key) if key else None

    def _first(self, *names):
        """The first of a connection var's names that is set.  Ansible's ssh plugin lists each as
        (ansible_host, ansible_ssh_host) and the last one defined wins, so the callers ask for the older
        ansible_ssh_* spelling first."""
        return next((self.vars[n] for n in names if self.vars.get(n) not in (None, "")), None)

    @property
    def workdir(self) -> str:
        return str(self.vars.get("workdir") or DEFAULT_WORKDIR)

    @property
    def python_interpreter(self) -> str | None:
        """ansible_python_interpreter for the probe and the host-side helpers; Ansible's 'auto*'
        values mean "find one", which is what happens without it."""
        value = self.vars.get("ansible_python_interpreter")
        if not value or str(value).startswith("auto"):
            return None
        return str(value)

    @property
    def become_user(self) -> str | None:
        """Whom commands run as under ansible_become (root unless ansible_become_user says), else None."""
        if not as_bool(self.vars.get("ansible_become")):
            return None
        return str(self.vars.get("ansible_become_user") or "root")

    @property
    def ssh_args(self) -> SSHArgs:
        """ansible_ssh_common_args and ansible_ssh_extra_args, mapped onto paramiko (see sshargs)."""
        text = " ".join(str(self.vars[k]) for k in SSH_ARG_VARS if self.vars.get(k))
        return parse_ssh_args(text)

    def ignored_settings(self) -> list[str]:
        """Inventory settings this host has that ocrdeploy cannot honour, each with the reason."""
        from .knownhosts import known_hosts

        notes = [] if self.is_local else [f"ssh option {o}" for o in self.ssh_args.ignored] + known_hosts(self).refused
        notes += [f"{k} (ocrdeploy never sends a password: sudo -n, so allow NOPASSWD)"
                  for k in PASSWORD_VARS if self.vars.get(k)]
        return notes

    def proxy_env(self) -> dict:
        """The inventory's http_proxy / https_proxy / no_proxy, as the environment of every command run on the
        host (both spellings: pip, curl and git read the lower case, some tools only the upper)."""
        out = {}
        for name in PROXY_VARS:
            value = self.vars.get(name)
            if value not in (None, ""):
                out[name] = out[name.upper()] = str(value)
        return out

    def label(self) -> str:
        if self.is_local:
            return f"{self.name} (local)"
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port != 22 else ""
        return f"{self.name} ({user}{self.address}{port})"


@dataclass
class Inventory:
    path: Path | None
    hosts: dict[str, Host] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)  # group -> host names

    def host(self, name: str) -> Host:
        """A host by name: the inventory's, else a local one, else an ~/.ssh/config alias."""
        if name in self.hosts:
            return self.hosts[name]
        if name in LOCAL_NAMES:
            return Host(name=name, vars=dict(self._all_vars), groups=[], source="implicit")
        from .sshconfig import host_from_ssh_config

        alias = host_from_ssh_config(name, base_vars=self._all_vars)
        if alias is not None:
            return alias
        where = f"not in {self.path} and" if self.path else "no inventory file, and"
        raise UsageError(f"unknown host {name!r}: {where} no 'Host {name}' in ~/.ssh/config")

    _all_vars: dict = field(default_factory=dict, repr=False)


def find_inventory_path(explicit: str | None = None) -> Path | None:
    """--inventory, then $OCRDEPLOY_INVENTORY, then ./inventory.yml (.yaml, .ini); None when none applies."""
    if explicit:
        path = Path(explicit).expanduser()
        if not path.exists():
            raise UsageError(f"{path}: inventory file not found (given with --inventory)")
        return path
    env = os.environ.get(ENV_VAR)
    if env:
        path = Path(env).expanduser()
        if not path.exists():
            raise UsageError(f"{path}: inventory file not found (from ${ENV_VAR})")
        return path
    for name in DEFAULT_FILES:
        if Path(name).exists():
            return Path(name)
    return None


def is_yaml(path: Path) -> bool:
    """Ansible's rule: .yml/.yaml/.json are YAML; .ini and any other suffix are INI; a file without a
    suffix is tried as YAML first (see _read)."""
    return path.suffix.lower() in YAML_SUFFIXES


def _read(path: Path):
    """The file's tree.  Ansible's yaml plugin also claims files without a suffix and runs before the
    ini plugin, so such a file is YAML when it reads as a YAML mapping, else INI."""
    from .inifile import load_ini

    if is_yaml(path):
        return load_yaml(path, shared_ok=True)
    if not path.suffix:
        try:
            data = load_yaml(path, shared_ok=True)
        except YAMLSyntaxError:
            data = None
        if isinstance(data, dict):
            return data
    return load_ini(path)


def load_inventory(path: Path | None) -> Inventory:
    """The inventory in ``path``: from the cache when the file is unchanged since it last parsed cleanly."""
    from . import cache

    if path is None:
        return Inventory(path=None)
    inv = cache.load(path)
    if inv is None:
        inv = _parse(path)
        cache.save(path, inv)
    return inv


def _parse(path: Path) -> Inventory:
    data = _read(path)
    if data is None:
        return Inventory(path=path)
    if not isinstance(data, dict):
        raise UsageError(f"{path}:1: inventory must be a mapping with an 'all:' group, got {type(data).__name__}")
    parser = _Parser(path)
    if "all" in data and data["all"] is not None and not isinstance(data["all"], dict):
        raise UsageError(f"{path}:{_line(data, 'all')}: 'all' must be a mapping")
    if "all" not in data:
        parser.walk_group("all", None)
    # Top-level groups beside 'all' are children of 'all', read in file order as Ansible's yaml plugin does.
    for name, group in data.items():
        if name == "all":
            parser.walk_group("all", group)
        else:
            if not isinstance(name, str) or not name:
                raise UsageError(f"{path}:{_line(data, name)}: group names must be strings")
            parser.walk_group(name, group, _line(data, name), parent="all")
    return parser.build()


def _line(mapping, key) -> int:
    if isinstance(mapping, LineDict):
        return mapping.line_of(key) or 1
    return 1


class _Parser:
    """Walks the groups without recursion (children thousands deep are fine) and each group's
    mapping once however many parents reach it (YAML aliases can make a DAG whose paths grow
    exponentially); depths, the vars precedence, come from the parent links afterwards."""

    def __init__(self, path: Path):
        self.path = path
        self.group_vars: dict[str, dict] = {}
        self.group_hosts: dict[str, dict] = {}     # group -> {host: None}, an ordered set
        self.host_vars: dict[str, dict] = {}
        self.host_groups: dict[str, dict] = {}
        self.parents: dict[str, dict] = {}
        self.priority: dict[str, int] = {}         # ansible_group_priority; 1 when unset, as in Ansible
        self._seen: set = set()
        self._sizes: dict = {}

    def fail(self, mapping, key, message: str):
        raise UsageError(f"{self.path}:{_line(mapping, key)}: {message}")

    def walk_group(self, name: str, group, parent_line: int = 1, parent: str | None = None):
        """A group and every group below it, depth first with each group's keys in the order written (a
        child group wholly before the key after it), as Ansible's yaml plugin reads them: that order
        decides which of two places setting the same host var wins."""
        stack = [self._enter(name, group, parent_line, parent)]
        while stack:
            child = next(stack[-1], StopIteration)
            if child is StopIteration:
                stack.pop()
            else:
                stack.append(self._enter(*child))

    def _enter(self, name, group, line, parent):
        if parent:
            if self._is_ancestor(name, parent):
                raise UsageError(f"{self.path}:{line}: group {name!r} is its own ancestor")
            self.parents.setdefault(name, {})[parent] = None
        if (name, id(group)) in self._seen:
            return iter(())
        self._seen.add((name, id(group)))
        return self._group(name, group, line)

    def _group(self, name, group, parent_line):
        """One group mapping's vars and hosts, in the order written; yields its children to walk."""
        if group is None:
            group = LineDict()
        if not isinstance(group, dict):
            raise UsageError(f"{self.path}:{parent_line}: group {name!r} must be a mapping")
        for key in group:
            if key not in ("hosts", "vars", "children"):
                self.fail(group, key, f"group {name!r}: unknown key {key!r} (expected hosts, vars or children)")
        self.group_vars.setdefault(name, {})
        self.group_hosts.setdefault(name, {})
        for key in list(group):
            if key == "vars":
                self._vars(name, group)
            elif key == "hosts":
                self._hosts(name, group)
            else:
                children = group.get("children") or {}
                if not isinstance(children, dict):
                    self.fail(group, "children", f"group {name!r}: children must be a mapping of groups")
                for child_name, child in children.items():
                    child_line = _line(children, child_name)
                    if child_name == "all":
                        raise UsageError(f"{self.path}:{child_line}: 'all' cannot be a child group")
                    if not isinstance(child_name, str) or not child_name:
                        raise UsageError(f"{self.path}:{child_line}: group names must be strings")
                    yield child_name, child, child_line, name

    def _vars(self, name, group):
        vars_ = group.get("vars") or {}
        if not isinstance(vars_, dict):
            self.fail(group, "vars", f"group {name!r}: vars must be a mapping")
        self._check_vars(vars_, f"group {name!r}")
        vars_ = dict(vars_)
        if "ansible_group_priority" in vars_:       # Ansible's: it orders groups of one depth, it is no var
            value = vars_.pop("ansible_group_priority")
            try:
                self.priority[name] = int(value)
            except (TypeError, ValueError):
                self.fail(group["vars"], "ansible_group_priority",
                          f"group {name!r}: ansible_group_priority must be a whole number, got {value!r}")
        self.group_vars[name] = {**self.group_vars.get(name, {}), **vars_}

    def _hosts(self, name, group):
        members = self.group_hosts[name]
        hosts = group.get("hosts") or {}
        if not isinstance(hosts, dict):
            self.fail(group, "hosts", f"group {name!r}: hosts must be a mapping of host names to their vars "
                                      f"(`gpu1:` on its own line), not a {type(hosts).__name__}")
        for pattern, hvars in hosts.items():
            if not isinstance(pattern, str) or not pattern:
                self.fail(hosts, pattern, f"group {name!r}: host names must be strings")
            hvars = hvars or {}
            if not isinstance(hvars, dict):
                self.fail(hosts, pattern, f"host {pattern!r}: vars must be a mapping")
            self._check_vars(hvars, f"host {pattern!r}")
            body, port = hostranges.split_port(pattern)       # gpu1:2222, 10.0.0.[1:3]:2200, [2001:db8::2]:2222
            if port is not None and not 1 <= port <= 65535:
                self.fail(hosts, pattern, f"group {name!r}: {pattern!r}: the port must be 1-65535")
            try:
                host_names = hostranges.expand(body)
            except hostranges.RangeError as exc:
                self.fail(hosts, pattern, f"group {name!r}: {exc}")
            for host_name in host_names:
                own = self.host_vars.get(host_name)
                if own is None:
                    # Ansible takes name:port when it makes the host, before the host's vars (ansible_port wins)
                    own = self.host_vars[host_name] = {} if port is None else {"ansible_port": port}
                own.update(hvars)
                self.host_groups.setdefault(host_name, {})[name] = None
                members[host_name] = None

    def _is_ancestor(self, candidate: str, of: str) -> bool:
        seen, todo = set(), [of]
        while todo:
            g = todo.pop()
            if g == candidate:
                return True
            if g in seen:
                continue
            seen.add(g)
            todo.extend(self.parents.get(g, ()))
        return False

    def _check_vars(self, vars_: dict, owner: str):
        for key, value in vars_.items():
            if isinstance(value, (dict, list)):
                try:
                    check_size(value, MAX_VAR_VALUES, MAX_VALUE_DEPTH, memo=self._sizes)
                except TooLarge as exc:
                    self.fail(vars_, key, f"{owner}: {key} {exc}")
            problem = var_problem(key, value)
            if problem:
                self.fail(vars_, key, f"{owner}: {problem}")

    def _depths(self) -> dict[str, int]:
        """A group's depth: its longest path from 'all' (the deeper group's vars win, as in Ansible)."""
        depth: dict[str, int] = {"all": 0}
        for start in self.group_vars:
            stack = [start]
            while stack:
                g = stack[-1]
                if g in depth:
                    stack.pop()
                    continue
                todo = [p for p in self.parents.get(g, ()) if p not in depth]
                if todo:
                    stack.extend(todo)
                    continue
                depth[g] = 1 + max((depth[p] for p in self.parents.get(g, ())), default=-1)
                stack.pop()
        return depth

    def _all_groups(self) -> dict[str, set]:
        """Every group of every host, through the parent links, computed once per group."""
        ancestry: dict[str, set] = {}

        def up(group):
            if group in ancestry:
                return ancestry[group]
            out, todo = set(), [group]
            while todo:
                g = todo.pop()
                if g in out:
                    continue
                out.add(g)
                if g in ancestry and g != group:
                    out |= ancestry[g]
                    continue
                todo.extend(self.parents.get(g, ()))
            ancestry[group] = out
            return out

        return {h: set().union(*(up(g) for g in groups)) | {"all"} for h, groups in self.host_groups.items()}

    def build(self) -> Inventory:
        inv = Inventory(path=self.path)
        inv._all_vars = dict(self.group_vars.get("all", {}))
        depth = self._depths()
        groups_of = self._all_groups()
        for host_name, own in self.host_vars.items():
            groups = groups_of[host_name]
            merged: dict = {}
            for g in sorted(groups, key=lambda g: (depth.get(g, 0), self.priority.get(g, 1), g)):
                merged.update(self.group_vars.get(g, {}))
            merged.update(own)
            shown = groups - {"all"}
            if shown - {"ungrouped"}:      # an explicit [ungrouped] host that is in another group is not ungrouped
                shown.discard("ungrouped")
            inv.hosts[host_name] = Host(name=host_name, vars=merged, groups=sorted(shown))
        members: dict[str, list] = {g: [] for g in self.group_vars}
        for h in inv.hosts:
            for g in groups_of[h]:
                members.setdefault(g, []).append(h)
        inv.groups = {g: members.get(g, []) for g in self.group_vars}
        # Ansible's implicit group: the hosts that belong to no group but 'all'.
        inv.groups["ungrouped"] = [h for h, host in inv.hosts.items() if not set(host.groups) - {"ungrouped"}]
        return inv


def select_hosts(inv: Inventory, host: str | None = None, group: str | None = None,
                 limit: str | None = None) -> list[Host]:
    """Resolve --host PATTERN, --group NAME and --limit PATTERN into hosts, in a stable order.

    Patterns are Ansible's (see patterns.py); without any of the three, the host is localhost.
    """
    from .patterns import resolve

    names: list[str] = []
    if group:
        for g in (s.strip() for s in group.split(",") if s.strip()):
            if g not in inv.groups:
                where = f"in {inv.path}" if inv.path else "(no inventory file)"
                raise UsageError(f"unknown group {g!r} {where}")
            names.extend(inv.groups[g])
    if host:
        names.extend(resolve(inv, host, "--host"))
    if limit:
        allowed = resolve(inv, limit, "--limit")
        names = [n for n in names if n in allowed] if (host or group) else allowed
        if not names:
            raise UsageError(f"--limit {limit!r} leaves none of the selected hosts")
    elif host and not names:
        raise UsageError(f"--host {host!r} selects no host")
    if not names and not group:
        names = ["localhost"]
    hosts = [inv.host(n) for n in dict.fromkeys(names)]  # each once, in order
    for h in hosts:
        problem = connection_problem(h.vars.get("ansible_connection"))
        if problem:
            raise UsageError(f"{_origin(inv, h)}: host {h.name!r}: {problem}")
        key = h.key_file
        if key and not h.is_local:
            if not os.path.isfile(key):
                raise UsageError(f"{_origin(inv, h)}: host {h.name!r}: key file {key} not found")
            if not os.access(key, os.R_OK):
                raise UsageError(f"{_origin(inv, h)}: host {h.name!r}: key file {key} is not readable")
    return hosts


def _origin(inv: Inventory, host: Host) -> str:
    if host.source == "ssh_config":
        return "~/.ssh/config"
    return str(inv.path) if inv.path else "inventory"
