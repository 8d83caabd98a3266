"""The probe's host facts at their edges, in-process against real files, real git work trees, real
interpreters and real small programs on PATH: the disk of the work dir, passwordless sudo, pyenv shims, a
work tree's git status, small reads, memory, and the early probe's empty request.  Each test here was
written against a mutant of provision/probe.py that the rest of the suite let through."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ocrdeploy.provision import probe

MINOR = "%d.%d" % sys.version_info[:2]
VERSION = "%d.%d.%d" % sys.version_info[:3]


def program(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """The version caches and ~ in the test's own directory: nothing seen by another run answers here."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("UV_PYTHON_INSTALL_DIR", str(tmp_path / "no-uv-pythons"))
    return home


# ------------------------------------------------------------------ disk
def test_the_disk_is_read_at_the_work_dir_itself_or_its_nearest_existing_parent(tmp_path):
    wd = tmp_path / "wd"
    wd.mkdir()
    got = probe._disk(str(wd))
    assert got["exists"] is True and got["disk_path"] == str(wd) and got["disk_path_is_dir"] is True
    st = os.statvfs(str(wd))
    assert got["total"] == st.f_blocks * st.f_frsize
    missing = probe._disk(str(wd / "a" / "b"))
    assert missing["exists"] is False and missing["disk_path"] == str(wd)
    (tmp_path / "file").write_text("x")       # a file where the work dir's parent goes
    blocked = probe._disk(str(tmp_path / "file" / "wd"))
    assert blocked["disk_path"] == str(tmp_path / "file") and blocked["disk_path_is_dir"] is False


# ------------------------------------------------------------------ sudo
@pytest.mark.parametrize("uid, sudo, want", [
    (1000, "exit 0", True),          # passwordless sudo
    (1000, "exit 1", False),         # sudo asks for a password (sudo -n fails)
    (1000, None, False),             # no sudo at all
    (0, "exit 1", True),             # root needs none
])
def test_passwordless_sudo_is_what_sudo_dash_n_answers_for_a_user_and_always_true_for_root(
        tmp_path, monkeypatch, uid, sudo, want):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if sudo is not None:
        program(bin_dir / "sudo", sudo)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr(os, "geteuid", lambda: uid)
    out = {}
    probe._sudo(out)
    assert out["sudo_nopasswd"] is want


# ------------------------------------------------------------------ pythons
def test_a_pyenv_shim_is_resolved_under_pyenv_root_not_the_default_home(tmp_path, monkeypatch, own_cache):
    if MINOR not in probe.PYTHON_MINORS:
        pytest.skip(f"Python {MINOR} is not a minor the probe looks for")
    root = tmp_path / "elsewhere" / "pyenv"
    real = root / "versions" / VERSION / "bin" / f"python{MINOR}"
    real.parent.mkdir(parents=True)
    os.symlink(os.path.realpath(sys.executable), real)
    shim = program(root / "shims" / f"python{MINOR}", "exit 1")       # a shim that fails is not counted
    monkeypatch.setenv("PYENV_ROOT", str(root))
    monkeypatch.setenv("PATH", str(shim.parent))
    assert probe._real_python(str(shim)) == str(real)
    out = {}
    probe._pythons(out)
    assert {"path": str(real), "version": VERSION} in out["pythons"]
    assert not any("/shims/" in p["path"] for p in out["pythons"])


def test_a_shim_with_no_interpreter_behind_it_is_left_out_and_the_rest_still_found(tmp_path, monkeypatch,
                                                                                    own_cache):
    if MINOR not in probe.PYTHON_MINORS:
        pytest.skip(f"Python {MINOR} is not a minor the probe looks for")
    other = next(m for m in probe.PYTHON_MINORS if m != MINOR)
    shims = tmp_path / "pyenv" / "shims"
    program(shims / f"python{other}", "exit 1")        # pyenv root without versions/: nothing behind it
    good = tmp_path / "bin"
    good.mkdir()
    os.symlink(os.path.realpath(sys.executable), good / f"python{MINOR}")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    monkeypatch.setenv("PATH", f"{shims}:{good}")
    out = {}
    probe._pythons(out)
    assert {"path": str(good / f"python{MINOR}"), "version": VERSION} in out["pythons"]
    assert not any(str(tmp_path / "pyenv") in p["path"] for p in out["pythons"])


# ------------------------------------------------------------------ git status
def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                   check=True, capture_output=True)


def test_git_status_tells_a_clean_tree_from_a_changed_one_and_ignores_untracked_files(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "setup.py").write_text("print(1)\n")
    git(repo, "add", "setup.py")
    git(repo, "commit", "-q", "-m", "one")
    assert probe._git_status(str(repo)) == {"dirty": False, "digest": None}
    (repo / "build.log").write_text("untracked\n")
    assert probe._git_status(str(repo)) == {"dirty": False, "digest": None}
    (repo / "setup.py").write_text("print(2)\n")
    first = probe._git_status(str(repo))
    assert first["dirty"] is True and len(first["digest"]) == 16
    (repo / "setup.py").write_text("print(3)\n")
    assert probe._git_status(str(repo))["digest"] != first["digest"]      # the digest is of the change
    assert probe._git_status(str(tmp_path / "not-a-repo")) is None


# ------------------------------------------------------------------ reads, memory
def test_a_small_file_is_read_and_one_over_the_limit_or_missing_is_not(tmp_path):
    small = tmp_path / "state.json"
    small.write_text('{"checks": {}}')
    big = tmp_path / "big"
    big.write_bytes(b"x" * 65537)
    exact = tmp_path / "exact"
    exact.write_bytes(b"y" * 65536)
    assert probe._read_small(str(small)) == '{"checks": {}}'
    assert probe._read_small(str(exact)) == "y" * 65536
    assert probe._read_small(str(big)) is None
    assert probe._read_small(str(tmp_path / "none")) is None
    facts = probe.collect({"workdir": str(tmp_path), "reads": ["@/state.json"], "net_timeout": 0})
    assert facts["reads"] == {"@/state.json": '{"checks": {}}'}


@pytest.mark.skipif(not os.path.exists("/proc/meminfo"), reason="no /proc/meminfo")
def test_memory_total_is_the_kernels_in_bytes():
    assert probe._memory()["total"] == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


# ------------------------------------------------------------------ the early probe
def test_an_empty_request_on_stdin_probes_nothing_and_exits_zero(tmp_path):
    """early_probe.py starts the probe before the run knows its request; a run that does not take it over
    closes its stdin, and the probe ends at once, successfully, printing nothing."""
    got = subprocess.run([sys.executable, probe.__file__, "-"], input="", capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)
    assert (got.returncode, got.stdout) == (0, "")
