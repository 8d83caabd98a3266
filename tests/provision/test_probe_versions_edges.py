"""The probe's version cache at its edges: a binary replaced with its size and mtime kept (a package's
files carry the package's mtime), entries that are not what the cache writes, a run that learns nothing new,
and the interpreters' side (_pythons), which has a cache of its own."""

import json
import os
import sys

import pytest

from ocrdeploy.provision import probe
from test_probe_versions import bindir, compiler, compilers, runs  # noqa: F401 - bindir is a fixture

MINOR = "%d.%d" % sys.version_info[:2]
VERSION = "%d.%d.%d" % sys.version_info[:3]


def cache_file(tmp_path, kind="compilers"):
    return tmp_path / "cache" / "ocrdeploy" / f"probe-{kind}.json"


def test_a_binary_replaced_with_its_size_and_mtime_kept_is_asked_again(bindir):
    gcc = compiler(bindir, "gcc", "13.2.0")
    assert compilers()["gcc"]["version"] == "13.2.0"
    st = gcc.stat()
    new = compiler(bindir, "gcc.new", "13.2.1")
    new.write_text(new.read_text().replace("gcc.new", "gcc"))          # the same script as gcc's, another version
    os.utime(new, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(new, gcc)                                                # only the inode tells
    assert (gcc.stat().st_size, gcc.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert compilers()["gcc"]["version"] == "13.2.1"
    assert runs(bindir, "gcc") == 2


@pytest.mark.parametrize("version", [None, 13, ["13.2.0"]])
def test_an_entry_whose_version_is_not_text_is_asked_again(bindir, tmp_path, version):
    compiler(bindir, "gcc", "13.2.0")
    compilers()
    doc = json.loads(cache_file(tmp_path).read_text())
    doc[str(bindir / "gcc")]["version"] = version                       # the key still matches
    cache_file(tmp_path).write_text(json.dumps(doc))
    assert compilers()["gcc"]["version"] == "13.2.0"
    assert runs(bindir, "gcc") == 2


@pytest.mark.parametrize("text", ["[]", '"gcc"', "13"])
def test_a_cache_that_is_not_a_mapping_is_no_cache(bindir, tmp_path, text):
    compiler(bindir, "gcc", "13.2.0")
    cache_file(tmp_path).parent.mkdir(parents=True)
    cache_file(tmp_path).write_text(text)
    assert compilers()["gcc"]["version"] == "13.2.0"
    assert json.loads(cache_file(tmp_path).read_text())[str(bindir / "gcc")]["version"] == "13.2.0"


def test_a_run_that_learns_nothing_writes_nothing(bindir, tmp_path):
    compiler(bindir, "gcc", "13.2.0")
    compilers()
    before = cache_file(tmp_path).stat()
    compilers()
    after = cache_file(tmp_path).stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.fixture
def python_here(bindir, tmp_path, monkeypatch):
    """This interpreter on PATH as python3.X, behind a script that counts its runs; no uv interpreters."""
    if MINOR not in probe.PYTHON_MINORS:
        pytest.skip(f"the probe does not look for python{MINOR}")
    monkeypatch.setenv("UV_PYTHON_INSTALL_DIR", str(tmp_path / "no-uv"))
    path = bindir / f"python{MINOR}"
    path.write_text(f'#!/bin/sh\necho run >> "{bindir}/python.runs"\nexec "{sys.executable}" "$@"\n')
    path.chmod(0o755)
    return path


def pythons() -> dict:
    out = {}
    probe._pythons(out)
    return {p["path"]: p["version"] for p in out["pythons"]}


def test_an_unchanged_interpreter_is_asked_once(python_here, bindir):
    assert pythons()[str(python_here)] == VERSION
    assert pythons()[str(python_here)] == VERSION
    assert runs(bindir, "python") == 1


def test_an_interpreters_version_ignores_the_users_python_environment(python_here, tmp_path, monkeypatch):
    """PYTHONPATH with a sitecustomize that prints (a user's, or a virtualenv hook's): the version the
    interpreter reports is still just its version."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("print('sitecustomize ran')\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    assert pythons()[str(python_here)] == VERSION
