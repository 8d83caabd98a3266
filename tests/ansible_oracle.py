"""Run by ansible-core's own interpreter (OCRDEPLOY_TEST_ANSIBLE_ENV/bin/python): what Ansible makes of each
inventory and pattern, as JSON on stdout.  It uses what `ansible-inventory --list` and `ansible PATTERN
--list-hosts [-l LIMIT]` use (InventoryManager.list_hosts after subset(), VariableManager.get_vars), in one
process: 46 files x 240 patterns through the CLIs would take minutes.  The connection is Ansible's ssh rule:
the last defined of (ansible_host, ansible_ssh_host), (ansible_port, ansible_ssh_port), (ansible_user,
ansible_ssh_user); port 22 when unset.

usage: python ansible_oracle.py DIR PATTERNS.json > recorded.json
(the test imports ``plain`` from here: ansible is imported only when this runs as a script)
"""

import json
import os
import sys


def plain(value):
    """JSON's types, with a tuple or a set marked (the A10 check sees them)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, set)):
        return {"__type__": type(value).__name__, "items": [plain(v) for v in value]}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return str(value)


def last(vars_, *names):
    found = [vars_[n] for n in names if vars_.get(n) not in (None, "")]
    return found[-1] if found else None


def one(path, patterns):
    from ansible import constants as C
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.manager import VariableManager

    loader = DataLoader()
    try:
        inv = InventoryManager(loader=loader, sources=[path])
    except Exception as exc:  # noqa: BLE001 - Ansible refuses the file: that is the answer
        return {"error": f"{type(exc).__name__}: {exc}"}
    vm = VariableManager(loader=loader, inventory=inv)
    hosts = {}
    for h in inv.get_hosts("all"):
        v = {k: val for k, val in vm.get_vars(host=h, include_hostvars=False, stage="all").items()
             if k not in C.INTERNAL_STATIC_VARS and k not in ("inventory_file", "inventory_dir")}
        hosts[h.name] = {
            "groups": sorted(g.name for g in h.get_groups() if g.name != "all"),
            "address": str(last(v, "ansible_host", "ansible_ssh_host") or h.name),
            "port": str(last(v, "ansible_port", "ansible_ssh_port") or 22),
            "user": last(v, "ansible_user", "ansible_ssh_user"),
            "vars": plain({k: val for k, val in v.items() if not k.startswith("group_names")
                           and k not in ("groups", "inventory_hostname", "inventory_hostname_short")}),
        }
    selections = []
    for pattern, limit in patterns:
        inv.clear_pattern_cache()
        try:
            inv.subset(limit)
            picked = sorted(h.name for h in inv.list_hosts(pattern or "all"))
        except Exception as exc:  # noqa: BLE001
            picked = {"error": f"{type(exc).__name__}: {exc}"}
        inv.subset(None)
        selections.append([pattern, limit, picked])
    return {"hosts": hosts, "selections": selections}


def main():
    os.environ.setdefault("ANSIBLE_INVENTORY_UNPARSED_FAILED", "1")
    os.environ.setdefault("ANSIBLE_LOCALHOST_WARNING", "0")
    os.environ.setdefault("ANSIBLE_INVENTORY_ENABLED", "yaml,ini")   # ansible-inventory's default list, less scripts
    from ansible import release

    folder, patterns_file = sys.argv[1], sys.argv[2]
    patterns = json.load(open(patterns_file, encoding="utf-8"))["patterns"]
    out = {"source": f"ansible-core {release.__version__}, tests/ansible_oracle.py", "files": {}}
    for name in sorted(os.listdir(folder)):
        out["files"][name] = one(os.path.join(folder, name), patterns.get(name, []))
    json.dump(out, sys.stdout, indent=1, sort_keys=True, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
