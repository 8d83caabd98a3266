"""Every step converges: after it ran, a re-run finds nothing to do, and a step whose commands "succeed"
without making the host what it should be is a failure.  Real venvs, real pip installs from a local index
(tests/pipindex.py), a real editable install, under a work dir with a space in its path."""

import sys
from pathlib import Path

import pytest

from ocrdeploy.inventory.model import Host
from ocrdeploy.provision.apply import Applier
from ocrdeploy.provision.command import Command
from ocrdeploy.provision.connection import LocalConnection
from ocrdeploy.provision.kinds import PipEditable, PipInstall, Venv
from ocrdeploy.provision.plan import Plan
from ocrdeploy.provision.step import Decision, Request, Step
from pipindex import PipIndex, build_wheel, sdk_repo

PY = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture
def index(tmp_path):
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "authpkg", "1.0", {"authpkg/__init__.py": "VALUE = 1\n"})
    with PipIndex(wheels) as server:
        yield server


def apply(workdir: Path, index, steps, **kw):
    host = Host("localhost", vars={"workdir": str(workdir), "pip_index_url": index.url})
    run = Applier(LocalConnection(host), host, steps, host.vars, **kw).apply()
    return {r.step: r.status for r in run.results}, {r.step: r.reason for r in run.results}


def plan():
    return Plan("small", [
        Venv("venv", "env1", f">={PY}"),
        PipInstall("pins", "env1", ["authpkg==1.0"], after=("venv",)),
        PipEditable("sdk", "env1", "@/My SDK/sdk", "minicpmvocr", no_deps=True, after=("venv",)),
    ]).steps


def dist_info(workdir: Path, name: str) -> Path:
    (found,) = (workdir / "env1" / "lib").glob(f"python*/site-packages/{name}-*.dist-info")
    return found


def test_a_work_dir_with_a_space_and_an_interrupted_install_converge(tmp_path, index, monkeypatch):
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    workdir = tmp_path / "My Models" / "wd"
    workdir.mkdir(parents=True)
    sdk_repo(workdir / "My SDK")
    status, reason = apply(workdir, index, plan())
    assert status == {"venv": "changed", "pins": "changed", "sdk": "changed"}, reason
    # M6: pip writes the editable source as file:///.../My%20Models/...; read back, it is the same dir
    status, reason = apply(workdir, index, plan())
    assert status == {"venv": "ok", "pins": "ok", "sdk": "ok"}, reason
    assert reason["sdk"] == f"already 0.2.3 (editable from {workdir}/My SDK/sdk)"

    # M16: a pip install interrupted between METADATA and RECORD, --force or not
    for force in (False, True):
        for name in ("authpkg", "minicpmvocr"):
            (dist_info(workdir, name) / "RECORD").unlink()
        status, reason = apply(workdir, index, plan(), force=force)
        assert status == {"venv": "changed" if force else "ok", "pins": "changed", "sdk": "changed"}, reason
        if not force:
            assert "incompletely installed" in reason["pins"] and "incompletely installed" in reason["sdk"]
        assert (dist_info(workdir, "authpkg") / "RECORD").is_file()
        assert (dist_info(workdir, "minicpmvocr") / "RECORD").is_file()
        status, reason = apply(workdir, index, plan())
        assert status == {"venv": "ok", "pins": "ok", "sdk": "ok"}, reason


class StaysNeeded(Step):
    """A step whose command exits 0 but changes nothing its needs() reads."""

    def __init__(self, name, after=()):
        self.name, self.after = name, after

    def request(self, v):
        return Request()

    def needs(self, facts, v):
        return Decision(True, "the marker is still missing")

    def commands(self, facts, v):
        return [Command(["true"])]


def test_a_step_that_ran_but_did_not_do_its_job_fails_and_its_dependants_are_skipped(tmp_path, index):
    status, reason = apply(tmp_path / "wd", index, [StaysNeeded("first"), StaysNeeded("second", after=("first",))])
    assert status == {"first": "failed", "second": "skipped"}
    assert reason == {"first": "ran, but verification failed: the marker is still missing",
                      "second": "not run: first did not succeed"}


def test_a_repository_url_that_looks_like_an_option_is_a_repository_to_git(tmp_path, index):
    """L14: `git clone -- URL DEST`; without the `--`, git would parse --upload-pack=... as its option."""
    from ocrdeploy.provision.kinds import GitClone

    canary = tmp_path / "CANARY"
    url = f"--upload-pack=touch {canary};"
    status, reason = apply(tmp_path / "wd", index, [GitClone("clone", url, "@/src")])
    assert status == {"clone": "failed"}
    assert "git clone -- '--upload-pack=" in reason["clone"], reason
    log = next((tmp_path / "wd" / ".ocrdeploy" / "logs").rglob("clone.log")).read_text()
    assert f"repository '{url}' does not exist" in log and not canary.exists()
