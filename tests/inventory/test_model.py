import pytest

from ocrdeploy.errors import UsageError
from ocrdeploy.inventory import find_inventory_path, load_inventory, select_hosts

INV = """\
all:
  vars:
    workdir: /srv/ocr
    hf_endpoint: https://hf-mirror.example
  hosts:
    solo:
      ansible_host: 10.0.0.9
  children:
    gpu:
      vars:
        workdir: /data/ocr
        gpu: auto
      hosts:
        gpu1:
          ansible_host: 10.0.0.1
          ansible_user: ubuntu
        gpu2:
          ansible_host: 10.0.0.2
          ansible_port: 2222
      children:
        a100:
          vars:
            workdir: /nvme/ocr
          hosts:
            gpu2:
              gpu: 1
"""


@pytest.fixture
def inv(tmp_path):
    p = tmp_path / "inventory.yml"
    p.write_text(INV)
    return load_inventory(p)


def test_vars_merge_in_ansible_order(inv):
    solo, gpu1, gpu2 = inv.hosts["solo"], inv.hosts["gpu1"], inv.hosts["gpu2"]
    assert solo.workdir == "/srv/ocr"
    assert gpu1.workdir == "/data/ocr"            # group beats all
    assert gpu2.workdir == "/nvme/ocr"            # child group beats parent group
    assert gpu2.vars["gpu"] == 1                  # host var beats every group
    assert gpu1.vars["gpu"] == "auto"
    assert gpu1.vars["hf_endpoint"] == "https://hf-mirror.example"
    assert (gpu2.address, gpu2.port, gpu1.user) == ("10.0.0.2", 2222, "ubuntu")
    assert set(gpu2.groups) == {"gpu", "a100"}


def test_selection(inv):
    assert [h.name for h in select_hosts(inv, host="gpu2,gpu1")] == ["gpu2", "gpu1"]
    assert [h.name for h in select_hosts(inv, host="all")] == ["solo", "gpu1", "gpu2"]
    assert [h.name for h in select_hosts(inv, group="gpu")] == ["gpu1", "gpu2"]
    assert [h.name for h in select_hosts(inv, group="a100")] == ["gpu2"]
    local = select_hosts(inv)
    assert [h.name for h in local] == ["localhost"] and local[0].is_local
    assert select_hosts(inv, host="local")[0].is_local


def test_unknown_host_and_group(inv, tmp_path, monkeypatch):
    monkeypatch.setenv("OCRDEPLOY_SSH_CONFIG", str(tmp_path / "none"))
    with pytest.raises(UsageError, match="unknown host 'nope'"):
        select_hosts(inv, host="nope")
    with pytest.raises(UsageError, match="unknown group 'h100'"):
        select_hosts(inv, group="h100")


def test_ssh_config_alias_fallback(inv, tmp_path, monkeypatch):
    cfg = tmp_path / "ssh_config"
    cfg.write_text("Host box7\n  HostName 192.0.2.7\n  Port 2200\n  User ops\n\nHost *\n  ServerAliveInterval 30\n")
    monkeypatch.setenv("OCRDEPLOY_SSH_CONFIG", str(cfg))
    (h,) = select_hosts(inv, host="box7")
    assert (h.address, h.port, h.user, h.source) == ("192.0.2.7", 2200, "ops", "ssh_config")
    assert h.workdir == "/srv/ocr"  # all-group vars still apply
    with pytest.raises(UsageError):  # only the wildcard matches: still unknown
        select_hosts(inv, host="box8")


@pytest.mark.parametrize("text,line,message", [
    ("all:\n  hosts:\n    a:\n      ansible_port: 70000\n", 4, "ansible_port must be a port number"),
    ("all:\n  hosts:\n    a:\n      ansible_port: ssh\n", 4, "ansible_port must be a port number"),
    ("all:\n  hosts:\n    a: [1, 2]\n", 3, "vars must be a mapping"),
    ("all:\n  hosts:\n    a:\n  bogus: 1\n", 4, "unknown key 'bogus'"),
    ("all:\n  hosts:\n    a:\n      gpu: many\n", 4, "gpu must be"),
    ("all:\n  hosts: {a: {x: 1}\n", 3, "invalid YAML"),
    ("all:\n  hosts:\n    a:\n    a:\n", 4, "duplicate key"),
    ("- just\n- a list\n", 1, "must be a mapping"),
])
def test_bad_inventory_names_file_and_line(tmp_path, text, line, message):
    p = tmp_path / "bad.yml"
    p.write_text(text)
    with pytest.raises(UsageError) as err:
        load_inventory(p)
    assert str(err.value).startswith(f"{p}:{line}: ")
    assert message in str(err.value)


def test_unreadable_key_file(tmp_path):
    p = tmp_path / "inv.yml"
    p.write_text(f"all:\n  hosts:\n    a:\n      ansible_ssh_private_key_file: {tmp_path}/missing_key\n")
    with pytest.raises(UsageError, match="key file .*missing_key not found"):
        select_hosts(load_inventory(p), host="a")


def test_inventory_lookup_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OCRDEPLOY_INVENTORY", raising=False)
    assert find_inventory_path(None) is None
    (tmp_path / "inventory.yml").write_text("all: {}\n")
    assert find_inventory_path(None).name == "inventory.yml"
    env_inv = tmp_path / "env.yml"
    env_inv.write_text("all: {}\n")
    monkeypatch.setenv("OCRDEPLOY_INVENTORY", str(env_inv))
    assert find_inventory_path(None) == env_inv
    assert find_inventory_path(str(tmp_path / "inventory.yml")).name == "inventory.yml"
    with pytest.raises(UsageError, match="inventory file not found"):
        find_inventory_path(str(tmp_path / "nope.yml"))


def test_top_level_groups_and_local_connection(tmp_path):
    p = tmp_path / "inv.yml"
    p.write_text("gpus:\n  hosts:\n    g1:\n      ansible_connection: local\n      workdir: /x\n")
    inv = load_inventory(p)
    (h,) = select_hosts(inv, group="gpus")
    assert h.is_local and h.workdir == "/x"
