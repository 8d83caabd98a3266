"""The probe's version cache: an unchanged compiler or interpreter is not started again; a changed one is.

The compilers are small real executables (sh scripts that print a version and count their runs), on PATH
as gcc and g++ would be."""

import os
import time

import pytest

from ocrdeploy.provision import probe


@pytest.fixture
def bindir(tmp_path, monkeypatch):
    d = tmp_path / "bin"
    d.mkdir()
    monkeypatch.setenv("PATH", str(d))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return d


def compiler(bindir, name, version, rc=0):
    path = bindir / name
    path.write_text(f'#!/bin/sh\necho run >> "{bindir}/{name}.runs"\n[ "$1" = -dumpfullversion ] || exit 9\n'
                    f"echo {version}\nexit {rc}\n")
    path.chmod(0o755)
    return path


def runs(bindir, name) -> int:
    f = bindir / f"{name}.runs"
    return len(f.read_text().splitlines()) if f.exists() else 0


def compilers() -> dict:
    out = {}
    probe._compilers(out)
    return out["compilers"]


def test_an_unchanged_compiler_is_asked_once(bindir):
    compiler(bindir, "gcc", "13.2.0")
    compiler(bindir, "g++-13", "13.3.0")
    first = compilers()
    assert first["gcc"] == {"path": str(bindir / "gcc"), "version": "13.2.0"}
    assert first["g++-13"]["version"] == "13.3.0" and first["g++"] is None and first["gcc-13"] is None
    assert compilers() == first
    assert (runs(bindir, "gcc"), runs(bindir, "g++-13")) == (1, 1)


def test_a_changed_compiler_is_asked_again(bindir):
    gcc = compiler(bindir, "gcc", "13.2.0")
    assert compilers()["gcc"]["version"] == "13.2.0"
    st = gcc.stat()
    compiler(bindir, "gcc", "13.10.1")                         # rewritten in place: another size, the same mtime
    os.utime(gcc, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert compilers()["gcc"]["version"] == "13.10.1"
    (bindir / "gcc").unlink()
    compiler(bindir, "gcc", "13.10.2")                         # reinstalled: another inode and mtime, same size
    later = time.time() + 5
    os.utime(bindir / "gcc", (later, later))
    assert compilers()["gcc"]["version"] == "13.10.2"
    assert runs(bindir, "gcc") == 3


def test_a_failing_compiler_is_asked_every_time(bindir):
    compiler(bindir, "gcc", "13.2.0", rc=1)
    assert compilers()["gcc"] == {"path": str(bindir / "gcc"), "version": None}
    assert compilers()["gcc"]["version"] is None
    assert runs(bindir, "gcc") == 2


def test_a_removed_compiler_is_gone_and_forgotten(bindir):
    compiler(bindir, "gcc", "13.2.0")
    compiler(bindir, "g++", "13.2.0")
    compilers()
    (bindir / "gcc").unlink()
    assert compilers()["gcc"] is None
    cache = probe._VersionCache("probe-compilers.json")
    assert list(cache.seen) == [str(bindir / "g++")]


def test_a_damaged_cache_is_no_cache(bindir, tmp_path):
    compiler(bindir, "gcc", "13.2.0")
    compilers()
    (tmp_path / "cache" / "ocrdeploy" / "probe-compilers.json").write_text('{"%s": {"key": 1' % (bindir / "gcc"))
    assert compilers()["gcc"]["version"] == "13.2.0"
    (tmp_path / "cache" / "ocrdeploy" / "probe-compilers.json").write_text('{"%s": {"key": 1}}' % (bindir / "gcc"))
    assert compilers()["gcc"]["version"] == "13.2.0"
    assert runs(bindir, "gcc") == 3
