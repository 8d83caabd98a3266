"""The probe's loader (facts.PROBE_LOADER) at its edges: the folder of kept code, what the probe's own
commands inherit, and kept files that are damaged, of another shape, or that cannot be put in place."""

import marshal
import os

import pytest

from ocrdeploy.provision import facts as facts_mod
from test_facts import kept_code, run_probe_command

PLANTED = compile("print('@@KEPT CODE RAN')", "<planted>", "exec")


def probed(tmp_path, cache) -> dict:
    return facts_mod.parse_probe_output("h", run_probe_command(tmp_path, cache), "", 0)


def test_the_folder_of_kept_code_is_the_users_alone(tmp_path):
    old = os.umask(0o022)
    try:
        probed(tmp_path, tmp_path / "cache")
    finally:
        os.umask(old)
    assert (tmp_path / "cache" / "ocrdeploy").stat().st_mode & 0o777 == 0o700


def test_the_probes_commands_do_not_inherit_its_source(tmp_path, monkeypatch):
    """The source travels in the environment to the loader only: every command the probe starts (here a
    compiler it asks for its version) would otherwise carry the whole probe in its environment."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "gcc").write_text(f'#!/bin/sh\nenv > "{tmp_path}/gcc.env"\necho 13.2.0\n')
    (bindir / "gcc").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    assert probed(tmp_path, tmp_path / "cache")["compilers"]["gcc"]["version"] == "13.2.0"
    seen = (tmp_path / "gcc.env").read_text()
    assert "XDG_CACHE_HOME=" in seen and facts_mod.PROBE_SOURCE_VAR not in seen


def plant(path, obj):
    path.unlink()
    path.write_bytes(obj if isinstance(obj, bytes) else marshal.dumps(obj))
    path.chmod(0o600)


def test_a_kept_file_that_is_not_marshal_data_is_compiled_around(tmp_path):
    """A file cut short or scribbled on: the probe compiles its source and runs, as with no cache."""
    cache = tmp_path / "cache"
    probed(tmp_path, cache)
    plant(kept_code(cache), b"\x00\xffgarbage")
    for _ in range(2):
        assert probed(tmp_path, cache)["probe"]["kind"] == "python"


@pytest.mark.parametrize("kind", ["a number", "a list", "a 1-tuple"])
def test_a_kept_file_of_another_shape_is_compiled_again_and_replaced(tmp_path, kind):
    """Only the (source, code) tuple the loader writes is used; anything else is replaced by one."""
    cache = tmp_path / "cache"
    probed(tmp_path, cache)
    path = kept_code(cache)
    source = marshal.loads(path.read_bytes())[0]
    plant(path, {"a number": 5, "a list": [source, PLANTED], "a 1-tuple": (source,)}[kind])
    out = run_probe_command(tmp_path, cache)
    assert "@@KEPT CODE RAN" not in out and facts_mod.parse_probe_output("h", out, "", 0)["probe"]["kind"] == "python"
    kept = marshal.loads(path.read_bytes())
    assert type(kept) is tuple and kept[0] == source


def test_a_folder_where_the_kept_code_goes_is_compiled_around(tmp_path):
    """Opened, it is no file to load; the probe compiles its source and runs, and leaves nothing beside it."""
    cache = tmp_path / "cache"
    probed(tmp_path, cache)
    path = kept_code(cache)
    path.unlink()
    (path / "in-the-way").mkdir(parents=True)                  # a non-empty folder where the file goes
    for _ in range(2):
        assert probed(tmp_path, cache)["probe"]["kind"] == "python"
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []
