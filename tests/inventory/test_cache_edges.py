"""The parsed-inventory cache at its edges: odd file names, entries damaged inside a valid key, the settle time
and size limits, and how an entry is written (its directory's mode, a stale temporary file, a failed rename,
a reader of the old entry while a new one is written)."""

import json
import os
import subprocess
import sys
import time

import pytest

from ocrdeploy.inventory import cache, load_inventory
from ocrdeploy.inventory import model

INV = """\
all:
  vars: {workdir: /srv/ocr}
  hosts:
    solo: {ansible_host: 10.0.0.9}
  children:
    gpu:
      hosts:
        gpu[1:2]: {ansible_user: ubuntu}
"""


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def written(path, text, age_s=60.0):
    """An inventory last changed ``age_s`` seconds ago."""
    path.write_text(text)
    then = time.time_ns() - int(age_s * 10**9)
    os.utime(path, ns=(then, then))
    return path


def entries():
    d = cache.cache_dir()
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def from_cache_only(monkeypatch):
    def fail(path):
        raise AssertionError(f"{path} parsed again")

    monkeypatch.setattr(model, "_parse", fail)


def test_an_inventory_whose_name_is_not_utf8_is_kept(tmp_path, monkeypatch):
    """A file name of undecodable bytes reaches Python as surrogates; the entry's name must still be made."""
    path = written(tmp_path / os.fsdecode(b"inv-\xff.yml"), INV)
    assert sorted(load_inventory(path).hosts) == ["gpu1", "gpu2", "solo"]
    assert len(entries()) == 1
    from_cache_only(monkeypatch)
    assert load_inventory(path).hosts["solo"].address == "10.0.0.9"


@pytest.mark.parametrize("damage", [
    lambda doc: doc.pop("hosts"),                      # KeyError
    lambda doc: doc.update(hosts=5),                   # TypeError: not a list of pairs
    lambda doc: doc.update(hosts=[["solo"]]),          # ValueError: a pair of one
    lambda doc: doc["hosts"][0].__setitem__(1, {"vars": {}}),   # KeyError inside a host
], ids=["no hosts", "hosts a number", "a host without vars", "a host without groups"])
def test_an_entry_with_the_right_key_and_a_damaged_body_is_a_parse(tmp_path, damage):
    path = written(tmp_path / "inv.yml", INV)
    first = load_inventory(path)
    (name,) = entries()
    entry = cache.cache_dir() / name
    doc = json.loads(entry.read_text())
    damage(doc)
    entry.write_text(json.dumps(doc))
    again = load_inventory(path)
    assert {n: (h.vars, h.groups) for n, h in again.hosts.items()} == \
           {n: (h.vars, h.groups) for n, h in first.hosts.items()}


def test_a_file_changed_a_second_ago_is_not_kept_and_kept_once_settled(tmp_path):
    """SETTLED_NS is two seconds, not two clock ticks: a file a second old may still be rewritten unseen."""
    path = written(tmp_path / "inv.yml", INV, age_s=1.0)
    load_inventory(path)
    assert entries() == []
    written(path, INV, age_s=3.0)
    load_inventory(path)
    assert len(entries()) == 1


def test_an_entry_of_exactly_max_bytes_is_kept_one_byte_more_is_not(tmp_path, monkeypatch):
    path = written(tmp_path / "inv.yml", INV)
    load_inventory(path)
    (name,) = entries()
    size = (cache.cache_dir() / name).stat().st_size            # the JSON text, ASCII: bytes == characters
    (cache.cache_dir() / name).unlink()
    monkeypatch.setattr(cache, "MAX_BYTES", size)
    load_inventory(path)
    assert entries() == [name]
    (cache.cache_dir() / name).unlink()
    monkeypatch.setattr(cache, "MAX_BYTES", size - 1)
    load_inventory(path)
    assert entries() == []


def test_the_entries_directory_is_the_users_alone(tmp_path):
    """Made under the usual umask 022, the directory of entries (proxy passwords inside) is still 0700."""
    path = written(tmp_path / "inv.yml", INV)
    old = os.umask(0o022)
    try:
        load_inventory(path)
    finally:
        os.umask(old)
    assert cache.cache_dir().stat().st_mode & 0o777 == 0o700


def test_a_stale_temporary_file_does_not_spoil_the_entry(tmp_path, monkeypatch):
    """A run that died mid-write left <entry>.<pid>.tmp, longer than the entry; a later run with that pid
    writes a whole entry, not the new text followed by the old tail."""
    path = written(tmp_path / "inv.yml", INV)
    target = cache._entry(cache.identity(path))
    target.parent.mkdir(parents=True)
    stale = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    stale.write_text("x" * 100000)
    load_inventory(path)
    assert entries() == [target.name]
    from_cache_only(monkeypatch)
    assert sorted(load_inventory(path).hosts) == ["gpu1", "gpu2", "solo"]


def test_an_entry_that_cannot_be_put_in_place_leaves_no_temporary_file(tmp_path):
    path = written(tmp_path / "inv.yml", INV)
    target = cache._entry(cache.identity(path))
    (target / "in-the-way").mkdir(parents=True)                  # a non-empty directory where the entry goes
    assert sorted(load_inventory(path).hosts) == ["gpu1", "gpu2", "solo"]
    assert entries() == [target.name]


def test_a_reader_of_the_old_entry_never_sees_half_of_the_new_one(tmp_path):
    """The entry is written beside and renamed over: a run that opened the old entry reads it whole, even
    while another run replaces it (an in-place rewrite would truncate it under the reader)."""
    path = written(tmp_path / "inv.yml", INV)
    load_inventory(path)
    (name,) = entries()
    with open(cache.cache_dir() / name, encoding="utf-8") as old:
        written(path, INV.replace("10.0.0.9", "10.0.0.8"))
        assert load_inventory(path).hosts["solo"].address == "10.0.0.8"
        assert entries() == [name]
        assert "10.0.0.9" in old.read() and "10.0.0.8" in (cache.cache_dir() / name).read_text()


def test_every_module_the_parse_runs_is_a_parser_file(tmp_path):
    """An upgrade of any module that shapes the parse must invalidate the entries: each ocrdeploy.inventory
    module a YAML and an INI parse import is in _PARSER_FILES (cache.py included: it writes the entries)."""
    written(tmp_path / "inv.yml", INV)
    written(tmp_path / "inv.ini", "solo ansible_host=10.0.0.9\n[gpu]\ngpu[1:2] ansible_user=ubuntu\n")
    code = ("import json, sys, os; from pathlib import Path; from ocrdeploy.inventory import load_inventory\n"
            "for n in ('inv.yml', 'inv.ini'): load_inventory(Path(sys.argv[1]) / n)\n"
            "print(json.dumps(sorted({os.path.basename(m.__file__) for k, m in sys.modules.items()\n"
            "              if k.startswith('ocrdeploy.inventory.') and getattr(m, '__file__', None)})))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True,
                         env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))).stdout
    imported = set(json.loads(out))
    assert {"model.py", "yamlfile.py", "inifile.py", "cache.py"} <= imported
    assert imported <= set(cache._PARSER_FILES), imported - set(cache._PARSER_FILES)


def test_what_json_cannot_give_back_inside_a_list_is_not_kept(tmp_path):
    """A YAML date in a list var: the parse is used as it is, and no entry is written (JSON has no date)."""
    path = written(tmp_path / "inv.yml", INV.replace("  vars: {workdir: /srv/ocr}", "  vars: {workdir: /srv/ocr, "
                                                                                     "windows: [2024-01-02, x]}"))
    inv = load_inventory(path)
    assert type(inv.hosts["solo"].vars["windows"][0]).__name__ == "date"
    assert entries() == []
