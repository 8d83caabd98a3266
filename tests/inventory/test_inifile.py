import pytest

from ocrdeploy.errors import UsageError
from ocrdeploy.inventory import load_inventory, select_hosts
from ocrdeploy.inventory.inifile import literal

INI = """\
# the same inventory as test_model's YAML one, in Ansible's INI form
solo ansible_host=10.0.0.9

[gpu]
gpu1 ansible_host=10.0.0.1 ansible_user=ubuntu   # a comment
gpu2 ansible_host=10.0.0.2 ansible_port=2222

[a100]
gpu2 gpu=1

[gpu:children]
a100

[gpu:vars]
workdir=/data/ocr
gpu=auto

[a100:vars]
workdir = /nvme/ocr

[all:vars]
workdir=/srv/ocr
hf_endpoint=https://hf-mirror.example
"""


@pytest.fixture
def inv(tmp_path):
    p = tmp_path / "hosts.ini"
    p.write_text(INI)
    return load_inventory(p)


def test_ini_merges_vars_like_the_yaml_form(inv):
    solo, gpu1, gpu2 = inv.hosts["solo"], inv.hosts["gpu1"], inv.hosts["gpu2"]
    assert solo.workdir == "/srv/ocr"
    assert gpu1.workdir == "/data/ocr"
    assert gpu2.workdir == "/nvme/ocr"
    assert gpu2.vars["gpu"] == 1 and gpu1.vars["gpu"] == "auto"
    assert gpu1.vars["hf_endpoint"] == "https://hf-mirror.example"
    assert (gpu2.address, gpu2.port, gpu1.user) == ("10.0.0.2", 2222, "ubuntu")
    assert set(gpu2.groups) == {"gpu", "a100"}
    assert inv.groups["ungrouped"] == ["solo"]
    assert [h.name for h in select_hosts(inv, group="gpu")] == ["gpu1", "gpu2"]


def test_ranges_ports_and_group_vars(tmp_path):
    p = tmp_path / "inventory"   # no extension: INI, as in Ansible
    p.write_text("[nodes]\nnode[01:03]:2200 ansible_host=127.0.0.1\nbox[a:b]\n\n[nodes:vars]\ngpu=0\n")
    inv = load_inventory(p)
    assert list(inv.hosts) == ["node01", "node02", "node03", "boxa", "boxb"]
    assert {h.port for n, h in inv.hosts.items() if n.startswith("node")} == {2200}
    assert all(h.vars["gpu"] == 0 for h in inv.hosts.values())


def test_yaml_host_names_expand_ranges_too(tmp_path):
    p = tmp_path / "inv.yml"
    p.write_text("all:\n  hosts:\n    gpu[1:2]:\n      ansible_user: ops\n")
    inv = load_inventory(p)
    assert list(inv.hosts) == ["gpu1", "gpu2"] and inv.hosts["gpu2"].user == "ops"


@pytest.mark.parametrize("text,value", [
    ("2222", 2222), ("'2222'", "2222"), ("True", True), ("/data/ocr", "/data/ocr"),
    ("127.0.0.1,localhost", "127.0.0.1,localhost"), ("[0, 2]", [0, 2]), ("0,2", [0, 2]),
])
def test_values_are_read_as_ansible_reads_them(text, value):
    assert literal(text) == value


@pytest.mark.parametrize("text,line,message", [
    ("[gpu]\na\n[gpu:hosts2]\n", 3, "unknown type 'hosts2'"),
    ("[gpu]\na\n[ gpu ]\n", 3, "invalid section header"),
    ("[gpu]\na b\n", 2, "expected key=value after the host name, got 'b'"),
    ("[gpu]\na x='unclosed\n", 2, "cannot read the host line"),
    ("[gpu:vars]\nnovalue\n[gpu]\na\n", 2, "expected key=value"),
    ("[gpu]\na\n[gpu:children]\nnope\n", 4, "never declared"),
    ("[a100:vars]\nx=1\n", 1, "never declared"),
    ("[gpu]\nn[3:1]\n", 2, "runs backwards"),
    ("[gpu]\na ansible_port=99999\n", 2, "ansible_port must be a port number"),
    ("[gpu]\na\n[gpu:vars]\nansible_port=ssh\n", 4, "ansible_port must be a port number"),
    ("[a:children]\nb\n[b:children]\na\n", 4, "its own ancestor"),
])
def test_bad_ini_names_file_and_line(tmp_path, text, line, message):
    p = tmp_path / "bad.ini"
    p.write_text(text)
    with pytest.raises(UsageError) as err:
        load_inventory(p)
    assert str(err.value).startswith(f"{p}:{line}: "), str(err.value)
    assert message in str(err.value)


def test_the_readme_shows_one_inventory_in_both_formats(tmp_path):
    import re
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme[readme.index("## Inventory"):readme.index("## Output")]
    yaml_text = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    ini_text = re.search(r"```ini\n(.*?)```", section, re.S).group(1)
    (tmp_path / "inventory.yml").write_text(yaml_text)
    (tmp_path / "inventory.ini").write_text(ini_text)
    a, b = load_inventory(tmp_path / "inventory.yml"), load_inventory(tmp_path / "inventory.ini")
    assert list(a.hosts) == list(b.hosts) == ["gpu1", "gpu2", "gpu3"]
    for name in a.hosts:
        assert a.hosts[name].vars == b.hosts[name].vars, name
        assert a.hosts[name].groups == b.hosts[name].groups


def test_the_older_connection_var_names_still_work(tmp_path):
    p = tmp_path / "old.ini"
    p.write_text("[gpu]\nold ansible_ssh_host=10.0.0.5 ansible_ssh_port=2201 ansible_ssh_user=ops "
                 "ansible_private_key_file=/keys/gpu.pem\nnew ansible_host=10.0.0.6 ansible_ssh_host=10.9.9.9\n"
                 "bad ansible_ssh_port=http\n")
    with pytest.raises(UsageError, match=r"old.ini:4: host 'bad': ansible_ssh_port must be a port number"):
        load_inventory(p)
    p.write_text(p.read_text().replace("bad ansible_ssh_port=http\n", ""))
    old, new = load_inventory(p).hosts["old"], load_inventory(p).hosts["new"]
    assert (old.address, old.port, old.user, old.key_file) == ("10.0.0.5", 2201, "ops", "/keys/gpu.pem")
    assert new.address == "10.9.9.9"          # Ansible's ssh: (ansible_host, ansible_ssh_host), the last set wins
