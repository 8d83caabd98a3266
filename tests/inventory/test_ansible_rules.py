"""Inventories read as ansible-core 2.19 reads them: the rows of the Ansible conformance report
(../shared/reports/ansible-conformance-2026-12-01.md, causes A1-A11 and C1) where ocrdeploy differed.
Each expected value is what Ansible printed there; the files are the report's own."""

import pytest

from ocrdeploy.errors import UsageError
from ocrdeploy.inventory import load_inventory, select_hosts


def load(tmp_path, name, text, monkeypatch=None):
    p = tmp_path / name
    p.write_text(text)
    return load_inventory(p)


def names(inv, pattern):
    return sorted(h.name for h in select_hosts(inv, host=pattern))


def test_yaml_host_port_keys_are_split_a1(tmp_path):
    inv = load(tmp_path, "58-hostport.yml", """\
all:
  hosts:
    gpu1:2222:
    10.0.0.[11:13]:2200:
      ansible_user: ubuntu
  children:
    g:
      hosts:
        gpu2:2223:
          ansible_port: 2400
""")
    assert sorted(inv.hosts) == ["10.0.0.11", "10.0.0.12", "10.0.0.13", "gpu1", "gpu2"]
    assert (inv.hosts["gpu1"].address, inv.hosts["gpu1"].port) == ("gpu1", 2222)
    assert (inv.hosts["10.0.0.12"].address, inv.hosts["10.0.0.12"].port) == ("10.0.0.12", 2200)
    assert inv.hosts["gpu2"].port == 2400            # an explicit ansible_port wins over name:port
    assert names(inv, "gpu1") == ["gpu1"] and names(inv, "g") == ["gpu2"]


def test_ipv6_with_a_port_in_both_formats_a2(tmp_path):
    ini = load(tmp_path, "24-hostport.ini", "[v6]\n2001:db8::1\n[2001:db8::2]:2222 x=1\nfe80::3\n[ssh]\ngpu1:2201\n")
    assert sorted(ini.hosts) == ["2001:db8::1", "2001:db8::2", "fe80::3", "gpu1"]
    assert ini.hosts["2001:db8::2"].port == 2222 and ini.hosts["2001:db8::2"].vars["x"] == 1
    assert ini.hosts["2001:db8::1"].port == 22 and ini.hosts["gpu1"].port == 2201
    assert names(ini, "2001:db8::1") == ["2001:db8::1"]
    yml = load(tmp_path, "26-ipv6.yml", 'all:\n  hosts:\n    2001:db8::1:\n    "[2001:db8::2]:2222":\n')
    assert yml.hosts["2001:db8::2"].port == 2222 and yml.hosts["2001:db8::1"].port == 22
    with pytest.raises(UsageError, match=r"bad.ini:2: invalid section header '\[my group\]"):
        load(tmp_path, "bad.ini", "h1\n[my group]  # a typo is still one\n")


def test_a_merge_key_may_be_overridden_a3(tmp_path):
    inv = load(tmp_path, "56-dag.yml", """\
all:
  vars:
    defaults: &defaults
      ansible_user: deploy
      ansible_port: 2200
  hosts:
    w1:
      <<: *defaults
      ansible_port: 2201
""")
    assert (inv.hosts["w1"].user, inv.hosts["w1"].port) == ("deploy", 2201)
    with pytest.raises(UsageError, match="dup.yml:4: invalid YAML: duplicate key 'ansible_port'"):
        load(tmp_path, "dup.yml", "all:\n  vars:\n    ansible_port: 1\n    ansible_port: 2\n")


def test_a_yaml_file_without_a_suffix_is_yaml_a4(tmp_path):
    inv = load(tmp_path, "59-yaml-noext", "all:\n  hosts:\n    y1:\n      ansible_host: 10.10.0.1\n"
                                          "  children:\n    web:\n      hosts:\n        y2:\n")
    assert names(inv, "all") == ["y1", "y2"] and names(inv, "web") == ["y2"]
    ini = load(tmp_path, "69-ini-noext", "[web]\nw1 ansible_host=10.0.0.1\nw2\n")   # an INI one stays INI
    assert names(ini, "web") == ["w1", "w2"]
    one = load(tmp_path, "hosts", "h1 ansible_port=2222\n")      # a scalar to YAML: INI
    assert one.hosts["h1"].port == 2222


def test_the_ansible_ssh_spelling_wins_a5(tmp_path):
    inv = load(tmp_path, "30-ssh-legacy.ini", """\
[old]
o2 ansible_host=10.2.0.2 ansible_ssh_host=10.2.0.22 ansible_port=22 ansible_ssh_port=2222 ansible_ssh_user=old
[old:vars]
ansible_user=new
""")
    o2 = inv.hosts["o2"]
    assert (o2.address, o2.port, o2.user) == ("10.2.0.22", 2222, "old")


def test_group_priority_orders_groups_of_one_depth_a6(tmp_path):
    inv = load(tmp_path, "13-priority.ini", "[a]\nh1\n[b]\nh1\n[a:vars]\nansible_group_priority=10\nv=a\n"
                                            "[b:vars]\nv=b\n")
    assert inv.hosts["h1"].vars["v"] == "a" and "ansible_group_priority" not in inv.hosts["h1"].vars
    with pytest.raises(UsageError, match="p.yml:5: group 'a': ansible_group_priority must be a whole number"):
        load(tmp_path, "p.yml", "all:\n  children:\n    a:\n      vars:\n        ansible_group_priority: high\n")


def test_host_vars_from_several_lines_apply_in_line_order_a7(tmp_path):
    inv = load(tmp_path, "14b-line-order.ini", "[web]\nh1 x=1\n[db]\nh1 x=2\n[web]\nh1 x=3\n")
    assert inv.hosts["h1"].vars["x"] == 3
    inv = load(tmp_path, "14-multigroup-order.ini", "[parent:children]\ndb\nweb\n[web]\nh1 x=web\n[db]\nh1 x=db\n")
    assert inv.hosts["h1"].vars["x"] == "db"


def test_a_second_line_for_a_host_merges_its_vars(tmp_path):
    """A second line of one host adds to its vars, the later value winning (mutation: replace them)."""
    inv = load(tmp_path, "h.ini", "[g]\nh1 a=1 b=1\nh1 b=2\n[other]\nh1 c=3\n")
    assert {k: inv.hosts["h1"].vars[k] for k in "abc"} == {"a": 1, "b": 2, "c": 3}


def test_yaml_places_apply_in_the_order_written_a8(tmp_path):
    inv = load(tmp_path, "53-children-first.yml", """\
all:
  children:
    g1:
      hosts:
        h1: {x: from_g1}
  hosts:
    h1: {x: from_all_hosts}
g2:
  hosts:
    h2: {x: from_g2}
all2: {}
""".replace("all2: {}\n", "") + "\n")
    assert inv.hosts["h1"].vars["x"] == "from_all_hosts"
    inv = load(tmp_path, "top.yml", "g2:\n  hosts:\n    h2: {x: from_g2}\nall:\n  hosts:\n    h2: {x: from_all}\n")
    assert inv.hosts["h2"].vars["x"] == "from_all"


def test_a_name_that_is_host_and_group_a9(tmp_path, capsys):
    inv = load(tmp_path, "29-host-like-group.ini", "[web]\nw1\n[db]\ndb1\n[ops]\ndb\nweb\n[ws]\nws1\n")
    assert names(inv, "db") == ["db"]                       # a plain term: the host
    assert names(inv, "all:!db") == ["db", "w1", "web", "ws1"]   # after ! or &: the group
    assert names(inv, "all:&db") == ["db1"]
    assert "'db' is both a host and a group; in '!db' it means the group" in capsys.readouterr().err


def test_nested_tuples_become_lists_a10(tmp_path):
    inv = load(tmp_path, "09-literal-hostline.ini", "[g]\nh2 x=\"[1, (2, 3)]\" s=\"{'a': (1, {2})}\"\n")
    assert inv.hosts["h2"].vars["x"] == [1, [2, 3]] and inv.hosts["h2"].vars["s"] == {"a": [1, [2]]}


def test_ungrouped_is_not_shown_for_a_host_in_another_group_a11(tmp_path):
    inv = load(tmp_path, "18b-ungrouped-explicit.ini", "[ungrouped]\nu1\nu2\n[web]\nu2\n")
    assert inv.hosts["u2"].groups == ["web"] and inv.hosts["u1"].groups == ["ungrouped"]


def test_positions_in_a_group_c1(tmp_path):
    inv = load(tmp_path, "32.ini", "[webservers]\nweb01\nweb02\nweb03\n[node]\nnode1\nnode2\nnode3\n")
    assert names(inv, "webservers[0]") == ["web01"] and names(inv, "webservers[-1]") == ["web03"]
    assert names(inv, "webservers[1:2]") == ["web02", "web03"] and names(inv, "webservers[1:]") == ["web02", "web03"]
    assert names(inv, "node[1:2]") == ["node1", "node2"]    # hosts of that range exist: the inventory's range
    with pytest.raises(UsageError, match="group 'webservers' has 3 hosts, none at that position"):
        names(inv, "webservers[7]")


def test_list_hosts_shows_the_split_port_a1():
    """--list-hosts once showed `ubuntu@10.0.0.11:2200` for a host named 10.0.0.11:2200 on port 22."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).parents[2]
    inv = root / "tests" / "fixtures" / "ansible" / "inventories" / "58-hostport.yml"
    env = {k: v for k, v in os.environ.items() if k != "OCRDEPLOY_INVENTORY"}
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "facts", "--inventory", str(inv), "-H", "all",
                        "--list-hosts", "--json"], capture_output=True, text=True, cwd=root, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    rows = {r["name"]: (r["address"], r["port"]) for r in json.loads(p.stdout)["hosts"]}
    assert rows["gpu1"] == ("gpu1", 2222) and rows["10.0.0.13"] == ("10.0.0.13", 2200)
