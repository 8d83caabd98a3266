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
    ("all:\n  hosts: [gpu1, gpu2]\n", 2, "hosts must be a mapping of host names"),      # Ansible refuses it too
    ("all:\n  hosts:\n    - gpu1: {}\n", 2, "hosts must be a mapping of host names"),
    ("all:\n  hosts:\n    a:\n      ansible_port: \"\u00b2\"\n", 4, "ansible_port must be a port number"),
    ("all:\n  hosts:\n    a:\n      gpu: \"\u00b2\"\n", 4, "gpu must be"),
    ("all:\n  hosts:\n    a:\n      vllm_env: [a, b]\n", 4, "vllm_env must be the path of a venv"),
    ("all:\n  hosts:\n    a:\n      tf_env: 3\n", 4, "tf_env must be the path of a venv"),
    ("all:\n  vars:\n    vllm_env: {a: 1}\n", 3, "vllm_env must be the path of a venv"),
    ("all:\n  hosts:\n    a:\n      vllm_env: \"/opt/v\\nenv\"\n", 4, "vllm_env must be the path of a venv"),
    ("all:\n  hosts:\n    a:\n      tf_env: \"/opt/v\\0env\"\n", 4, "tf_env must be the path of a venv"),
    ("all:\n  hosts:\n    a:\n      model_source: hub\n", 4, "model_source must be hf, modelscope or auto"),
    ("all:\n  hosts:\n    a:\n      installer: conda\n", 4, "installer: 'conda' is not one of auto, uv, pip"),
    ("all:\n  vars:\n    installer: [uv]\n", 3, "installer: ['uv'] is not one of auto"),
    ("all:\n  hosts:\n    a:\n      layout_url: hf-mirror.com/x.tar\n", 4, "layout_url: 'hf-mirror.com/x.tar' is not"),
    ("all:\n  hosts:\n    a:\n      python_install_mirror: ftp://m/x\n", 4, "python_install_mirror: 'ftp://m/x' is"),
    ("all:\n  hosts:\n    a:\n      hf_endpoint: h" + "x" * 2000 + "\n", 4, "hf_endpoint: 'hxxx"),
    ("all:\n  hosts:\n    a:\n      hf_mirror: hf-mirror.com\n", 4, "hf_mirror: 'hf-mirror.com' is not"),
    ("all:\n  hosts:\n    a:\n      modelscope_endpoint: www.modelscope.cn\n", 4, "modelscope_endpoint: 'www.model"),
    ("all:\n  hosts:\n    a:\n      paddle_index_url: /srv/paddle\n", 4, "paddle_index_url: '/srv/paddle' is not"),
    ("all:\n  hosts:\n    a:\n      pip_index_url: mirror.example/simple\n", 4,
     "pip_index_url: 'mirror.example/simple' is not an http(s):// or file:// URL"),
    ("all:\n  hosts:\n    a:\n      pip_extra_index_url: [https://a.example/simple, 'ftp://b']\n", 4,
     "pip_extra_index_url: 'ftp://b' is not"),
    ("all:\n  hosts:\n    a:\n      pip_extra_index_url: https://a.example/simple,b.example/simple\n", 4,
     "pip_extra_index_url: 'b.example/simple' is not"),
    ("all:\n  hosts:\n    a:\n      pip_trusted_host: 'a b/c'\n", 4, "pip_trusted_host: 'b/c' is not a host name"),
    ("all:\n  hosts:\n    a:\n      pip_trusted_host: [ok.example, 'https://bad.example']\n", 4,
     "pip_trusted_host: 'https://bad.example' is not a host name"),
    ("all:\n  hosts:\n    a:\n      hf_endpoint: https://[::1\n", 4, "hf_endpoint: 'https://[::1' is not"),
    ("all:\n  hosts:\n    a:\n      torch_index_url: https://u:secret@:99999/x\n", 4,
     "torch_index_url: 'https://***@:99999/x' is not"),
    # urlsplit's own reason quotes the netloc: credentials masked there too, and a port of any length cut
    ("all:\n  hosts:\n    a:\n      hf_endpoint: \"https://u:s\\u2100secret@hub.example/\"\n", 4,
     "(netloc '***@hub.example' contains invalid characters"),
    ("all:\n  hosts:\n    a:\n      hf_mirror: https://h:" + "9x" * 100 + "/\n", 4, "hf_mirror: 'https://h:9x9x"),
])
def test_bad_inventory_names_file_and_line(tmp_path, text, line, message):
    p = tmp_path / "bad.yml"
    p.write_text(text)
    with pytest.raises(UsageError) as err:
        load_inventory(p)
    assert str(err.value).startswith(f"{p}:{line}: ")
    assert message in str(err.value)
    assert "secret" not in str(err.value) and len(str(err.value)) < 400


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


@pytest.mark.parametrize("depth", [400, 600])      # 600 groups: 1200 levels, past libyaml's 1000
def test_children_hundreds_deep_load(tmp_path, depth):
    lines = ["all:", "  children:"]
    for i in range(depth):
        lines += [f"{'  ' * (2 * i + 2)}g{i}:", f"{'  ' * (2 * i + 3)}children:"]
    lines[-1] = f"{'  ' * (2 * depth + 1)}hosts: {{deep: {{ansible_host: 10.0.0.1}}}}"
    p = tmp_path / "deep.yml"
    p.write_text("\n".join(lines) + "\n")
    inv = load_inventory(p)
    assert inv.hosts["deep"].groups == sorted(f"g{i}" for i in range(depth))
    assert inv.groups["g0"] == ["deep"]


def test_an_alias_dag_loads(tmp_path):
    """40 levels, each group listing the next one twice through YAML aliases: 2**40 paths, 81 groups.
    Walking every path never ends; the load runs in a subprocess so that a regression fails instead of
    hanging the suite."""
    import subprocess
    import sys

    # each level defined where it is first used (a var holding them would be refused: see the alias bomb test)
    text = "{hosts: {leaf: {ansible_host: 10.0.0.2}}}"
    for i in range(40, 0, -1):
        text = f"{{children: {{a{i}: &lvl{i} {text}, b{i}: *lvl{i}}}}}"
    p = tmp_path / "dag.yml"
    p.write_text(f"all:\n  children:\n    top: {text}\n")
    code = ("import sys; from ocrdeploy.inventory import load_inventory; inv = load_inventory(__import__('pathlib')"
            ".Path(sys.argv[1])); print(len(inv.hosts['leaf'].groups))")
    out = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "81", out.stderr


def test_twenty_thousand_hosts(tmp_path):
    p = tmp_path / "big.yml"
    p.write_text("all:\n  children:\n    rack:\n      hosts:\n" +
                 "".join(f"        h{i}:\n" for i in range(20000)))
    inv = load_inventory(p)
    assert len(inv.groups["rack"]) == 20000 and inv.hosts["h19999"].groups == ["rack"]


def test_a_fifo_as_the_inventory_is_refused_at_once(tmp_path):
    import os

    fifo = tmp_path / "inv.yml"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="not a regular file"):
        load_inventory(fifo)


@pytest.mark.parametrize("port", ["abc", "99999", "0"])
def test_ssh_config_port_is_checked(inv, tmp_path, monkeypatch, port):
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f"Host box7\n  HostName 192.0.2.7\n  Port {port}\n")
    monkeypatch.setenv("OCRDEPLOY_SSH_CONFIG", str(cfg))
    with pytest.raises(UsageError, match=f"Host box7: Port '{port}' is not a port number 1-65535"):
        select_hosts(inv, host="box7")


@pytest.mark.parametrize("key,said", [("vllm_env", "vllm_env must be the path of a venv"),
                                      ("hf_mirror", "hf_mirror must be a string, got list"),
                                      ("model_source", "model_source must be a string, got list"),
                                      ("installer", "installer: ['uv', 'uv', "),
                                      ("pip_extra_index_url", "pip_extra_index_url: 'uv' is not an http(s)")])
def test_a_var_given_as_a_long_list_is_one_short_line(tmp_path, key, said):
    p = tmp_path / "bad.yml"
    p.write_text(f"all:\n  hosts:\n    a:\n      {key}: [" + "uv, " * 2000 + "pip]\n")
    with pytest.raises(UsageError) as err:
        load_inventory(p)
    assert str(err.value).startswith(f"{p}:4: ") and said in str(err.value) and len(str(err.value)) < 400


def test_checked_vars_accept_what_users_write(tmp_path):
    """The load-time checks of the URL vars, installer and model_source take what the plans take: a trailing
    slash, a path, file:// indexes, lists and strings of extra indexes, case in installer and model_source,
    underscores in a trusted host, credentials in an index URL, a path with a space as a venv."""
    p = tmp_path / "inv.yml"
    p.write_text("all:\n  vars:\n    model_source: ModelScope\n    installer: UV\n"
                 "    pip_index_url: https://user:tok@mirror.example/simple/\n"
                 "    pip_extra_index_url: https://a.example/simple, file:///srv/wheels\n"
                 "    pip_trusted_host: [devpi_server:3141, '[::1]:3141']\n"
                 "    hf_endpoint: https://hf-mirror.com/\n    layout_url: file:///srv/layout.tar\n"
                 "    python_install_mirror: http://mirror.example:8080/python-build-standalone\n"
                 "  hosts:\n    a:\n      vllm_env: ~/venvs/my vllm\n      hf_mirror: http://[::1]:8080/hub\n"
                 "      installer: ''\n      torch_index_url:\n")
    (h,) = select_hosts(load_inventory(p), host="a")
    from ocrdeploy.models.plan import model_source
    from ocrdeploy.provision.installer import mode
    from ocrdeploy.provision.pip_index import index_urls
    assert model_source(h.vars) == "modelscope" and h.vars["vllm_env"] == "~/venvs/my vllm"
    assert mode(h.vars) == "auto" and mode({"installer": "UV"}) == "uv"
    assert index_urls(h.vars)[1:] == (["https://a.example/simple", "file:///srv/wheels"],
                                      ["devpi_server:3141", "[::1]:3141"])


def test_a_changed_var_check_is_not_skipped_by_the_inventory_cache():
    """The parse cache is keyed on the files whose rules the load applies, the URL and installer checks
    included: a rule changed by an upgrade applies to an inventory cached before it.  Those rules are the
    plans' own (provision reads them from the inventory: one copy, no import of provision here)."""
    from pathlib import Path

    from ocrdeploy.inventory import cache, model, varchecks
    here = Path(cache.__file__).parent
    files = {(here / f).resolve() for f in cache._PARSER_FILES}
    assert all(Path(m.__file__).resolve() in files for m in (model, varchecks))
    import ocrdeploy.provision.installer as inst_mod
    import ocrdeploy.provision.pip_index as pip_mod
    assert (pip_mod.check_url, pip_mod.index_urls, pip_mod.masked, pip_mod.split_url) == (
        varchecks.check_url, varchecks.index_urls, varchecks.masked, varchecks.split_url)
    assert inst_mod.MODES == varchecks.INSTALLER_MODES


@pytest.mark.parametrize("key,value,message", [
    ("installer", "conda", "inventory var installer: 'conda' is not one of auto, uv, pip"),
    ("hf_endpoint", "https://[::1", "inventory var hf_endpoint: 'https://[::1' is not an http(s):// or file:// "
                                    "URL (Invalid IPv6 URL)"),
    ("pip_trusted_host", "a/b", "inventory var pip_trusted_host: 'a/b' is not a host name (host or host:port)"),
])
def test_the_load_says_what_the_plan_says(tmp_path, key, value, message):
    """One rule, one message: the load's line is the plan's, behind the file and line instead of 'inventory var'."""
    from ocrdeploy.provision.installer import mode
    from ocrdeploy.provision.pip_index import check_url, index_urls
    with pytest.raises(UsageError) as plan:
        mode({key: value}) if key == "installer" else index_urls({key: value}) if key.startswith("pip_") \
            else check_url(key, value)
    assert str(plan.value) == message
    p = tmp_path / "bad.yml"
    p.write_text(f"all:\n  hosts:\n    a:\n      {key}: '{value}'\n")
    with pytest.raises(UsageError) as load:
        load_inventory(p)
    assert str(load.value) == f"{p}:4: host 'a': " + message.removeprefix("inventory var ")



def test_a_bad_limit_is_named_as_limit_not_as_host(tmp_path):
    """A pattern given to --limit that selects nothing names --limit in the error (the user typed --limit)."""
    p = tmp_path / "hosts.ini"
    p.write_text("[gpu]\ngpu1\ngpu2\n")
    inv = load_inventory(p)
    for limit, said in (("gpu9*", "--limit: pattern 'gpu9*' matches no host"), (",", "--limit: empty host pattern"),
                        ("gpu1:!", "--limit 'gpu1:!': '!' must be followed")):
        for host in (None, "gpu"):
            with pytest.raises(UsageError) as err:
                select_hosts(inv, host=host, limit=limit)
            assert str(err.value).startswith(said), str(err.value)


def test_a_long_bad_value_is_cut_at_80_characters_in_the_error(tmp_path):
    p = tmp_path / "inv.yml"
    for value, shown in (("m" * 78, "'" + "m" * 78 + "'"), ("m" * 79, "'" + "m" * 79 + "..."),
                         ("m" * 200, "'" + "m" * 79 + "...")):
        p.write_text(f"all:\n  hosts:\n    a:\n      model_source: {value}\n")
        with pytest.raises(UsageError) as err:
            load_inventory(p)
        assert str(err.value).endswith(f"model_source must be hf, modelscope or auto, got {shown}"), str(err.value)


def test_a_host_label_shows_the_port_only_when_it_is_not_22(tmp_path):
    p = tmp_path / "hosts.ini"
    p.write_text("[g]\na ansible_host=10.0.0.1 ansible_user=ubuntu\nb ansible_host=10.0.0.2 ansible_port=23\n"
                 "c ansible_host=10.0.0.3 ansible_port=22\nd:2222 ansible_host=10.0.0.4\n")
    inv = load_inventory(p)
    assert [inv.host(n).label() for n in "abcd"] == [
        "a (ubuntu@10.0.0.1)", "b (10.0.0.2:23)", "c (10.0.0.3)", "d (10.0.0.4:2222)"]
