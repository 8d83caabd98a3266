"""`install`'s command line read before the program loads, for the facts probe's early start
(provision/early_probe.py).

Only a command line read here without doubt starts anything: `install` with the flags this module knows; an
unknown or combined flag, -v, --help, --facts, --docker or --list-hosts start nothing, so no host is ever reached
that the run itself would not reach.  The hosts are selected and each probe line is built by the same code the
run uses (inventory, SSHConnection, ssh_argv, probe_command); the run takes a started ssh over only when its own
line is the same, word for word.
"""

from __future__ import annotations

# long flags of `install` that take a value, and the boolean ones; nothing here changes which hosts are
# reached or how, except host/group/inventory/limit/forks/connect-timeout/accept-new-host-keys/set
VALUE_FLAGS = frozenset({"host", "group", "inventory", "limit", "forks", "connect-timeout", "recipe", "step",
                         "from", "deps-dir", "installer", "set"})
BOOL_FLAGS = frozenset({"json", "check", "force", "skip-preflight", "accept-new-host-keys", "no-shared-build"})
# invoke's short flags for them (it gives each the first free letter; tests/provision/test_early_probe.py
# holds this table to the install task's real parser, so a new flag that moves one fails there)
SHORT = {"H": "host", "g": "group", "i": "inventory", "l": "limit", "n": "connect-timeout", "r": "recipe",
         "s": "step", "f": "from", "d": "deps-dir", "t": "installer", "e": "set", "j": "json", "c": "check",
         "o": "force", "k": "skip-preflight", "p": "accept-new-host-keys", "b": "no-shared-build"}

def read_install_args(args: list[str]) -> dict | None:
    """The options of `install ARGS` that decide its hosts, or None when the line is not one this module
    reads without doubt (then nothing starts early)."""
    if not args or args[0] != "install":
        return None
    opts: dict = {"set": []}
    words = iter(args[1:])
    for word in words:
        if len(word) == 2 and word[0] == "-" and word[1] in SHORT:
            name, eq, value = SHORT[word[1]], "", ""
        elif word.startswith("--") and word != "--":
            name, eq, value = word[2:].partition("=")
        else:
            return None                         # a combined or unknown short flag, another task's name
        if name in BOOL_FLAGS and not eq:
            opts[name] = True
        elif name in VALUE_FLAGS:
            if not eq:
                value = next(words, None)
                if value is None or value.startswith("-"):
                    return None
            if name == "set":
                opts["set"].append(value)
            elif name in opts:
                return None                     # given twice: invoke's answer is not ours to guess
            else:
                opts[name] = value
        else:
            return None
    return opts


def start(args: list[str]) -> int:
    """The early start of `install ARGS`' probes; 0 for any other command line."""
    opts = read_install_args(args)
    if opts is None:
        return 0
    from ..provision import early_probe

    return early_probe.start(args, opts, lines_for)


def lines_for(opts: dict) -> list:
    """The probe's ssh line for each SSH host of the run's first wave, built as the run builds it."""
    from .options import number, parse_sets
    from ..inventory import find_inventory_path, load_inventory, select_hosts

    path = find_inventory_path(opts.get("inventory"))
    if path is None:
        return []
    hosts = select_hosts(load_inventory(path), host=opts.get("host"), group=opts.get("group"),
                         limit=opts.get("limit"))
    if all(h.is_local for h in hosts):
        return []                               # probed in-process: nothing to start, nothing more to import
    from ..provision.connection import SSHConnection
    from ..provision.facts import probe_command
    from ..provision.openssh import ssh_argv
    from ..provision.session import DEFAULT_FORKS

    overrides = parse_sets(opts["set"] + ([f"installer={opts['installer']}"] if "installer" in opts else []))
    if "deps-dir" in opts:
        overrides["deps_dir"] = opts["deps-dir"]
    forks = number(opts.get("forks"), "forks", DEFAULT_FORKS, whole=True, minimum=1)
    timeout = number(opts.get("connect-timeout"), "connect-timeout", 10, above=0)
    lines = []
    for h in hosts[:int(forks)]:               # the run's first wave: later hosts wait for a free slot anyway
        if h.is_local:
            continue
        h.vars.update(overrides)
        conn = SSHConnection(h, connect_timeout=timeout, accept_new_host_keys=bool(opts.get("accept-new-host-keys")))
        argv = ssh_argv(conn)
        if argv is None:
            continue
        command = conn.prepare(probe_command({"workdir": h.workdir}))
        lines.append((*argv, conn.shell(command)))
    return lines
