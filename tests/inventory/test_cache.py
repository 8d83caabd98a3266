"""The parsed-inventory cache (inventory/cache.py): a hit is the parse it stands for, anything changed parses again."""

import os
import subprocess
import sys
import time

import pytest

from ocrdeploy.errors import UsageError
from ocrdeploy.inventory import cache, load_inventory
from ocrdeploy.inventory import model

YAML_INV = """\
all:
  vars:
    workdir: /srv/ocr
    http_proxy: http://user:secret@proxy:3128
    nested: {a: [1, 2.5, true, null], b: {"c": "d"}}
  hosts:
    solo:
      ansible_host: 10.0.0.9
  children:
    gpu:
      vars: {workdir: /data/ocr, gpu: auto}
      hosts:
        gpu[1:3]:
          ansible_user: ubuntu
        gpu2: {ansible_port: 2222}
"""

INI_INV = """\
solo ansible_host=10.0.0.9
[gpu]
gpu[1:2] ansible_user=ubuntu
gpu2 ansible_port=2222
[gpu:vars]
workdir=/data/ocr
"""


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def settled(path, text):
    """Write an inventory as a user's file is: last changed a while ago (a fresh one is not kept)."""
    path.write_text(text)
    past = time.time_ns() - 60 * 10**9
    os.utime(path, ns=(past, past))
    return path


def parsed(path):
    """A parse that cannot come from the cache."""
    return model._parse(path)


def shape(inv):
    return (str(inv.path), {n: (h.name, h.vars, h.groups, h.source) for n, h in inv.hosts.items()},
            list(inv.hosts), inv.groups, inv._all_vars)


def no_parse(monkeypatch):
    def fail(path):
        raise AssertionError(f"{path} parsed again")

    monkeypatch.setattr(model, "_parse", fail)


@pytest.mark.parametrize("name,text", [("inv.yml", YAML_INV), ("inv.ini", INI_INV)])
def test_a_cached_inventory_is_the_parse_it_stands_for(tmp_path, monkeypatch, name, text):
    path = settled(tmp_path / name, text)
    first = load_inventory(path)
    assert shape(first) == shape(parsed(path))
    no_parse(monkeypatch)
    again = load_inventory(path)
    assert shape(again) == shape(first)
    assert list(again.hosts["gpu2"].vars) == list(first.hosts["gpu2"].vars)      # the vars' order too
    assert again.hosts["gpu2"].port == 2222 and again.hosts["solo"].address == "10.0.0.9"


def test_the_entry_is_the_users_alone(tmp_path):
    path = settled(tmp_path / "inv.yml", YAML_INV)
    load_inventory(path)
    (entry,) = cache.cache_dir().iterdir()
    assert entry.stat().st_mode & 0o077 == 0           # it holds the proxy's password
    assert "secret" in entry.read_text()


def test_an_edited_inventory_is_read_again(tmp_path):
    path = settled(tmp_path / "inv.yml", YAML_INV)
    assert load_inventory(path).hosts["solo"].address == "10.0.0.9"
    st = path.stat()
    path.write_text(YAML_INV.replace("10.0.0.9", "10.0.0.8"))      # same size, same inode
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))            # and the old mtime: only ctime tells
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    assert load_inventory(path).hosts["solo"].address == "10.0.0.8"


def test_a_replaced_inventory_is_read_again(tmp_path):
    path = settled(tmp_path / "inv.yml", YAML_INV)
    load_inventory(path)
    other = settled(tmp_path / "new.yml", YAML_INV.replace("10.0.0.9", "10.0.0.7"))
    os.replace(other, path)                                         # an editor's save: a new inode
    assert load_inventory(path).hosts["solo"].address == "10.0.0.7"


def test_a_file_changed_just_now_is_not_kept(tmp_path):
    """Its mtime could stay the same through another write in the same clock tick."""
    path = tmp_path / "inv.yml"
    path.write_text(YAML_INV)
    load_inventory(path)
    assert not cache.cache_dir().exists() or not any(cache.cache_dir().iterdir())


def test_an_inventory_with_an_error_is_never_kept(tmp_path):
    path = settled(tmp_path / "inv.yml", YAML_INV.replace("ansible_port: 2222", "ansible_port: 99999"))
    errors = []
    for _ in range(2):
        with pytest.raises(UsageError) as exc:
            load_inventory(path)
        errors.append(str(exc.value))
    assert errors[0] == errors[1] and "ansible_port must be a port number" in errors[0]
    assert not cache.cache_dir().exists() or not any(cache.cache_dir().iterdir())


def test_what_json_cannot_give_back_is_not_kept(tmp_path, monkeypatch):
    """A YAML date, a set, a non-string key: the next run parses the file and gets them again."""
    path = settled(tmp_path / "inv.yml", YAML_INV.replace("    workdir: /srv/ocr\n", "    workdir: /srv/ocr\n    since: 2024-01-02\n"))
    first = load_inventory(path)
    assert not cache.cache_dir().exists() or not any(cache.cache_dir().iterdir())
    assert shape(load_inventory(path)) == shape(first)
    assert type(first.hosts["solo"].vars["since"]).__name__ == "date"
    for value in ({1: "a"}, {"a": {1, 2}}, {"a": float("nan")}, {"a": b"x"}):
        assert not cache._exact(value), value
    assert cache._exact({"a": [1, 2.5, None, True, {"b": "c"}]})


def test_a_damaged_entry_is_a_parse(tmp_path):
    path = settled(tmp_path / "inv.yml", YAML_INV)
    load_inventory(path)
    (entry,) = cache.cache_dir().iterdir()
    entry.write_text('{"key": 1')
    assert shape(load_inventory(path)) == shape(parsed(path))


def test_a_changed_parser_parses_again(tmp_path, monkeypatch):
    """An upgrade of ocrdeploy (its parser's files) or of the entry's format: the old entries are not used."""
    parser_file = tmp_path / "model.py"
    settled(parser_file, "# the parser\n")
    monkeypatch.setattr(cache, "_PARSER_FILES", (*cache._PARSER_FILES, str(parser_file)))
    path = settled(tmp_path / "inv.yml", YAML_INV)
    load_inventory(path)
    assert cache.load(path) is not None
    parser_file.write_text("# the parser, upgraded\n")
    assert cache.load(path) is None
    load_inventory(path)
    assert cache.load(path) is not None
    monkeypatch.setattr(cache, "FORMAT", cache.FORMAT + 1)
    assert cache.load(path) is None


def test_a_no_op_reads_no_yaml(tmp_path):
    """The point of the cache: with an unchanged inventory, PyYAML is not even imported."""
    path = settled(tmp_path / "inv.yml", YAML_INV)
    load_inventory(path)
    code = ("import sys; from pathlib import Path; from ocrdeploy.inventory import load_inventory; "
            f"inv = load_inventory(Path({str(path)!r})); print(sorted(inv.hosts), 'yaml' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))).stdout
    assert out.strip() == "['gpu1', 'gpu2', 'gpu3', 'solo'] False"
