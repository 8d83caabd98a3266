"""Nothing in an inventory turns host-key checking off: every spelling of /dev/null, a symlink to it, a
device, a FIFO or a directory is dropped and said, and OpenSSH's several-files form is read whole
(red team 2026-12-01, M1)."""

import os
from pathlib import Path

import pytest

from ocrdeploy.inventory import load_inventory
from ocrdeploy.inventory.knownhosts import known_hosts


def host(tmp_path, monkeypatch, **vars_):
    monkeypatch.setenv("OCRDEPLOY_KNOWN_HOSTS", str(tmp_path / "env_known_hosts"))
    inv = tmp_path / "inv.ini"
    inv.write_text("h ansible_host=10.0.0.1 " + " ".join(f"{k}={v}" for k, v in vars_.items()) + "\n")
    return load_inventory(inv).hosts["h"]


@pytest.fixture
def odd_paths(tmp_path):
    link = tmp_path / "null-link"
    link.symlink_to("/dev/null")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return {"/dev/null": "/dev/null", "/dev//null": "/dev//null", "/dev/./null": "/dev/./null",
            "symlink": str(link), "fifo": str(fifo), "dir": str(tmp_path), "device": "/dev/zero"}


@pytest.mark.parametrize("kind", ["/dev/null", "/dev//null", "/dev/./null", "symlink", "fifo", "dir", "device"])
def test_known_hosts_file_that_is_no_file_is_dropped_and_said(tmp_path, monkeypatch, odd_paths, kind):
    h = host(tmp_path, monkeypatch, known_hosts_file=odd_paths[kind])
    found = known_hosts(h)
    assert found.paths == [tmp_path / "env_known_hosts"]         # the next place in line, a real file
    assert any(n.startswith(f"known_hosts_file {odd_paths[kind]} (") for n in h.ignored_settings()), h.ignored_settings()


@pytest.mark.parametrize("kind", ["/dev//null", "symlink", "fifo", "device"])
def test_user_known_hosts_file_in_the_ssh_args_every_form(tmp_path, monkeypatch, odd_paths, kind):
    real = tmp_path / "kh_real"
    args = f"'-o \"UserKnownHostsFile={odd_paths[kind]} {real}\"'"     # OpenSSH's several-files form
    h = host(tmp_path, monkeypatch, ansible_ssh_common_args=args)
    assert known_hosts(h).paths == [real]                        # the real one is read (and records new keys)
    assert f"ssh option -o UserKnownHostsFile={odd_paths[kind]} (" in " | ".join(h.ignored_settings())
    h = host(tmp_path, monkeypatch, ansible_ssh_common_args=f"'-o UserKnownHostsFile={odd_paths[kind]}'")
    assert known_hosts(h).paths == [tmp_path / "env_known_hosts"]


def test_every_file_of_the_several_files_form_is_read(tmp_path, monkeypatch):
    h = host(tmp_path, monkeypatch, ansible_ssh_common_args=f"'-o \"UserKnownHostsFile=~/a {tmp_path}/b\"'")
    assert known_hosts(h).paths == [Path(os.path.expanduser("~/a")), tmp_path / "b"]


def test_the_environment_and_the_default_are_checked_too(tmp_path, monkeypatch):
    monkeypatch.setenv("OCRDEPLOY_KNOWN_HOSTS", "/dev//null")
    monkeypatch.setenv("HOME", str(tmp_path))
    found = known_hosts(None)
    assert found.paths == [tmp_path / ".ssh" / "known_hosts"]
    assert found.refused == ["$OCRDEPLOY_KNOWN_HOSTS=/dev//null (it is /dev/null: host keys are always verified)"]
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "known_hosts").symlink_to("/dev/null")
    assert known_hosts(None).paths == []      # nothing left: the connection refuses (test_connection_hostkeys)


def test_a_local_host_takes_no_known_hosts_file_from_ssh_args_it_never_uses(tmp_path, monkeypatch):
    h = host(tmp_path, monkeypatch, ansible_connection="local",
             ansible_ssh_common_args=f"'-o UserKnownHostsFile={tmp_path}/kh'")
    assert h.is_local and known_hosts(h).paths == [tmp_path / "env_known_hosts"]
    h = host(tmp_path, monkeypatch, known_hosts_file=f"{tmp_path}/own", ansible_ssh_common_args=(
        f"'-o UserKnownHostsFile={tmp_path}/kh'"))
    assert known_hosts(h).paths == [tmp_path / "own"]       # the inventory's own setting comes first
