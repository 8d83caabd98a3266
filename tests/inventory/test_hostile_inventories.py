"""Inventories and ssh configs as a hostile or careless user writes them (red team 2026-12-01: M17, M18,
L1, L12, L17): each is one clear line or works, never a traceback, a hang or gigabytes of memory."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ocrdeploy.errors import UsageError
from ocrdeploy.inventory import Inventory, load_inventory, select_hosts

ROOT = Path(__file__).parents[2]

BOMB = textwrap.dedent("""\
    all:
      vars:
        a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
        b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
        c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
        d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
        e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
        f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
        g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
        h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]
      hosts:
        gpu1:
          ansible_ssh_common_args: *h
    """)


def cli(args, **env):
    e = dict(os.environ, COLUMNS="200", **env)
    e.pop("OCRDEPLOY_INVENTORY", None)
    return subprocess.run([sys.executable, "-m", "ocrdeploy", *args], capture_output=True, text=True, cwd=ROOT,
                          env=e, timeout=60)


def test_a_yaml_alias_bomb_is_one_line_at_once(tmp_path):
    """1 KB, 10**8 values once expanded: before, --list-hosts ran past 60 s at 4.2 GB."""
    inv = tmp_path / "bomb.yml"
    inv.write_text(BOMB)
    assert inv.stat().st_size < 1024
    p = cli(["facts", "--inventory", str(inv), "-H", "gpu1", "--list-hosts"])
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert p.stderr.strip().splitlines()[-1] == (
        f"error: {inv}:7: group 'all': e stands for more than 100000 values once its YAML aliases are expanded")


def test_deep_or_self_holding_values_are_refused(tmp_path):
    deep = tmp_path / "deep.yml"
    deep.write_text("all:\n  hosts:\n    h:\n      v: " + "[" * 150 + "]" * 150 + "\n")
    with pytest.raises(UsageError, match=r"deep.yml:4: host 'h': v is nested more than 100 levels deep"):
        load_inventory(deep)
    loop = tmp_path / "loop.yml"
    loop.write_text("all:\n  hosts:\n    h:\n      v: &x [1, *x]\n")
    with pytest.raises(UsageError, match=r"loop.yml:4: invalid YAML: found unconstructable recursive node"):
        load_inventory(loop)
    from ocrdeploy.inventory.yamlfile import TooLarge, check_size

    x = [1]
    x.append(x)
    with pytest.raises(TooLarge, match="holds itself"):
        check_size({"v": x})


def test_other_yaml_reads_are_bounded_too(tmp_path):
    from ocrdeploy.inventory.yamlfile import load_yaml

    rules = tmp_path / "rules.yml"
    rules.write_text(BOMB.replace("all:\n", "rules:\n", 1))
    with pytest.raises(UsageError, match="rules.yml: the document stands for more than 1000000 values"):
        load_yaml(rules)
    rules.write_text("rules: " + "[" * 300 + "]" * 300 + "\n")
    with pytest.raises(UsageError, match="rules.yml: the document is nested more than 200 levels deep"):
        load_yaml(rules)


def test_a_bom_before_the_first_ini_section(tmp_path):
    p = tmp_path / "bom.ini"
    p.write_bytes(b"\xef\xbb\xbf[g]\nh1 ansible_port=2222\n")
    assert load_inventory(p).groups["g"] == ["h1"]


def test_the_unknown_host_line_reads_well_without_an_inventory(tmp_path, monkeypatch):
    monkeypatch.setenv("OCRDEPLOY_SSH_CONFIG", str(tmp_path / "none"))
    with pytest.raises(UsageError) as err:
        select_hosts(Inventory(path=None), host="x")
    assert str(err.value) == "unknown host 'x': no inventory file, and no 'Host x' in ~/.ssh/config"


@pytest.mark.parametrize("kind", ["docker", "chroot", "winrm", "community.docker.docker"])
def test_a_connection_ocrdeploy_has_not_refuses_that_host(tmp_path, kind):
    p = tmp_path / "c.ini"
    p.write_text(f"[c]\nbox ansible_connection={kind}\nplain\nviassh ansible_connection=ssh\n"
                 f"viapm ansible_connection=paramiko\nhere ansible_connection=local\n")
    inv = load_inventory(p)
    with pytest.raises(UsageError, match=rf"c.ini: host 'box': ansible_connection '{kind}' is not supported"):
        select_hosts(inv, host="c")
    assert [h.name for h in select_hosts(inv, host="c:!box")] == ["plain", "viassh", "viapm", "here"]
    assert select_hosts(inv, host="here")[0].is_local and not select_hosts(inv, host="viapm")[0].is_local


MATCHES = """\
Host al8
  HostName 10.1.1.8
  Port 2208
Match host *.corp.example
  User admin
Match localnetwork 192.0.2.0/24
  User nobody-here
Match exec "test -e /nonexistent-ocrdeploy" host al8
  User not-this-one
Host other
  HostName 10.9.9.9
"""


def test_match_blocks_in_ssh_config(tmp_path):
    cfg = tmp_path / "ssh_config"
    cfg.write_text(MATCHES)
    inv = tmp_path / "inv.ini"
    inv.write_text("[g]\nh1\n")
    p = cli(["facts", "--inventory", str(inv), "-H", "al8,other", "--list-hosts", "--json"], OCRDEPLOY_SSH_CONFIG=str(cfg))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert "10.1.1.8" in p.stdout and "2208" in p.stdout and "nobody-here" not in p.stdout
    assert p.stderr.count("skipped Match block(s) paramiko cannot evaluate: 'Match localnetwork 192.0.2.0/24' "
                          "(localnetwork)\n") == 1          # said once; the exec block is evaluated, not skipped
    p = cli(["facts", "--inventory", str(inv), "-H", "typo", "--list-hosts"], OCRDEPLOY_SSH_CONFIG=str(cfg))
    assert p.returncode == 2 and "unknown host 'typo'" in p.stderr and "Traceback" not in p.stderr
