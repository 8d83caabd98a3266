"""The step kinds' decisions (provision/kinds.py) from the facts the real probe reads off a real work dir:
venvs made of real pyvenv.cfg and dist-info files, a state file, a directory where a clone goes.  Each test
here was written against a mutant of kinds.py that the rest of the provision suite let through: an
interrupted install taken for a finished one, a recorded check that never runs, a managed Python installed
for an env that stands, apt run without the root it needs, a clone over a directory that is not one."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from ocrdeploy.errors import HostFailed
from ocrdeploy.provision import facts as facts_mod
from ocrdeploy.provision import probe
from ocrdeploy.provision.apply import _request_dict
from ocrdeploy.provision.kinds import (STATE_FILE, AptPackages, GitClone, ManagedPython, PipEditable, PipInstall,
                                       RecordedCheck, Venv, host_state, satisfied, requirement)
from ocrdeploy.provision.step import NotYet, Request, StepError, fingerprint


def facts_for(wd: Path, *steps) -> dict:
    """What one probe run reads for these steps' requests, as the applier asks for it."""
    req = Request()
    for s in steps:
        req.merge(s.request({}))
    return facts_mod.normalise(probe.collect(_request_dict(SimpleNamespace(workdir=str(wd)), req, 0)))


def make_venv(wd: Path, name="env1", python="3.12.3", dists=(), incomplete=(), editable=None) -> Path:
    """A venv as the probe reads it: pyvenv.cfg, bin/python, dist-info dirs (RECORD for a finished install)."""
    root = wd / name
    site = root / "lib" / ("python" + ".".join(python.split(".")[:2])) / "site-packages"
    site.mkdir(parents=True)
    (root / "pyvenv.cfg").write_text(f"home = /usr/bin\nversion = {python}\n")
    (root / "bin").mkdir()
    (root / "bin" / "python").write_text("")
    for spec in ["pip==24.0", *dists]:
        n, _, v = spec.partition("==")
        info = site / f"{n}-{v}.dist-info"
        info.mkdir()
        if n not in incomplete:
            (info / "RECORD").write_text(f"{n}/__init__.py,,\n")
        if editable and n == editable[0]:
            (info / "direct_url.json").write_text(json.dumps({"url": Path(editable[1]).as_uri(),
                                                              "dir_info": {"editable": True}}))
    return root


# ------------------------------------------------------------------ pip
def test_an_interrupted_pin_is_not_satisfied_and_its_dist_info_is_dropped_before_the_install(tmp_path):
    step = PipInstall("pins", "env1", ["torch==2.14.0", "numpy<2"])
    make_venv(tmp_path, dists=["torch==2.14.0", "numpy==1.26.4"], incomplete=["torch"])
    facts = facts_for(tmp_path, step)
    ok, why = satisfied(facts["venvs"]["env1"]["dists"]["torch"], requirement("torch==2.14.0"))
    assert (ok, why) == (False, "torch 2.14.0 incompletely installed (interrupted?)")
    decision = step.needs(facts, {})
    assert decision.needed and "torch 2.14.0 incompletely installed" in decision.reason
    cmds = step.commands(facts, {"installer": "pip"})
    assert len(cmds) == 2 and cmds[0].argv[1] == "-c" and cmds[0].argv[3:] == ("torch",)
    assert "torch==2.14.0" in cmds[1].argv


def test_a_finished_pin_is_satisfied():
    assert satisfied({"version": "2.14.0", "complete": True}, requirement("torch==2.14.0")) == (True,
                                                                                                "torch 2.14.0")


def test_an_editable_install_converges_once_complete_and_an_interrupted_one_is_repaired_first(tmp_path):
    src = tmp_path / "src" / "transformers"
    src.mkdir(parents=True)
    step = PipEditable("feat", "env1", str(src), "transformers", expect_version="5.19.0.dev0", no_deps=True)
    make_venv(tmp_path / "done", dists=["transformers==5.19.0.dev0"], editable=("transformers", str(src)))
    done = facts_for(tmp_path / "done", step)
    decision = step.needs(done, {})
    assert not decision.needed and decision.reason == f"already 5.19.0.dev0 (editable from {src})"
    [install] = step.commands(done, {"installer": "pip"})                # --force: the install alone
    assert install.argv[-3:] == ("--no-deps", "-e", str(src))

    make_venv(tmp_path / "cut", dists=["transformers==5.19.0.dev0"], incomplete=["transformers"],
              editable=("transformers", str(src)))
    cut = facts_for(tmp_path / "cut", step)
    decision = step.needs(cut, {})
    assert decision.needed and decision.reason == "transformers incompletely installed (interrupted?)"
    repair, install = step.commands(cut, {"installer": "pip"})
    assert repair.argv[1] == "-c" and repair.argv[3:] == ("transformers",)
    assert install.argv[-3:] == ("--no-deps", "-e", str(src))


# ------------------------------------------------------------------ recorded checks
def test_a_recorded_check_runs_first_and_again_after_the_packages_change(tmp_path):
    step = RecordedCheck("import-torch", "env1", code="import torch", describe="import torch")
    make_venv(tmp_path, dists=["torch==2.14.0"])
    facts = facts_for(tmp_path, step)
    first = step.needs(facts, {})
    assert first.needed and first.reason == "import torch not run yet"
    state = tmp_path / ".ocrdeploy" / "state.json"
    state.parent.mkdir()
    state.write_text(json.dumps({"checks": {"import-torch": {"fingerprint": fingerprint(facts, "env1"),
                                                             "at": "2026-12-06T10:00:00+0000"}}}))
    again = step.needs(facts_for(tmp_path, step), {})
    assert not again.needed and again.reason == "import torch passed at 2026-12-06T10:00:00+0000 with these packages"
    state.write_text(json.dumps({"checks": {"import-torch": {"fingerprint": "0" * 16, "at": "x"}}}))
    assert step.needs(facts_for(tmp_path, step), {}).needed


def test_the_state_file_is_read_when_it_is_an_object_and_refused_when_it_is_not(tmp_path):
    state = tmp_path / ".ocrdeploy" / "state.json"
    state.parent.mkdir()
    probe_step = RecordedCheck("c", "env1", code="pass")
    state.write_text(json.dumps({"models": {"main": {"path": "/m", "files": {}}}, "checks": {}}))
    assert host_state(facts_for(tmp_path, probe_step)) == {"models": {"main": {"path": "/m", "files": {}}},
                                                           "checks": {}}
    state.write_text("[1, 2]")
    with pytest.raises(HostFailed, match="is corrupt: a JSON list, not an object"):
        host_state(facts_for(tmp_path, probe_step))
    assert facts_for(tmp_path, probe_step)["reads"][STATE_FILE] == "[1, 2]"


# ------------------------------------------------------------------ Python
def a_minor_the_host_lacks(facts) -> str:
    """3.9: older than every minor the probe looks for (probe.PYTHON_MINORS), so never among its pythons."""
    assert "3.9" not in probe.PYTHON_MINORS
    assert not any(p["version"].startswith("3.9.") for p in facts["pythons"])
    return "3.9"


def test_no_managed_python_for_an_env_that_stands_with_its_python(tmp_path):
    minor = a_minor_the_host_lacks(facts_for(tmp_path))
    env = Venv("venv", "env1", minor)
    py = ManagedPython("python", minor, serves=env)
    assert py.needs(facts_for(tmp_path, py), {}).needed                      # no env yet: install it
    make_venv(tmp_path, python=minor + ".4")
    decision = py.needs(facts_for(tmp_path, py), {})
    assert not decision.needed and decision.reason == f"not needed: env1 stands with Python {minor}.4"


def test_a_venv_without_its_python_says_which_pythons_the_host_has(tmp_path):
    facts = facts_for(tmp_path)
    minor = a_minor_the_host_lacks(facts)
    have = ", ".join(p["version"] for p in facts["pythons"])
    assert have, "at least the interpreter running the tests is found"
    with pytest.raises(NotYet, match=f"found: {have}\\)"):
        Venv("venv", "env1", minor).commands(facts, {})
    with pytest.raises(NotYet, match="found: none\\)"):
        Venv("venv", "env1", minor).commands({**facts, "pythons": []}, {})


# ------------------------------------------------------------------ apt
def test_apt_packages_all_present_is_ok_and_a_missing_one_needs_root_or_passwordless_sudo(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "ninja").write_text("")
    (tmp_path / "bin" / "ccache").write_text("")
    step = AptPackages("apt", {"ninja-build": str(tmp_path / "bin" / "ninja"),
                               "ccache": str(tmp_path / "bin" / "ccache")})
    decision = step.needs(facts_for(tmp_path, step), {})
    assert not decision.needed and decision.reason == "present: ninja-build, ccache"

    (tmp_path / "bin" / "ccache").unlink()
    facts = facts_for(tmp_path, step)
    assert step.needs(facts, {}).reason == "missing: ccache"
    apt = {"apt-get": "/usr/bin/apt-get", "add-apt-repository": None}

    def as_user(uid, sudo):
        return {**facts, "host": {**facts["host"], "uid": uid}, "sudo_nopasswd": sudo, "tools": apt}

    for uid, sudo in [(1000, True), (0, False)]:
        cmds = step.commands(as_user(uid, sudo), {})
        assert [c.argv for c in cmds] == [("apt-get", "update"), ("apt-get", "install", "-y", "ccache")]
        assert all(c.sudo for c in cmds)
    with pytest.raises(StepError, match="installing ccache needs root"):
        step.commands(as_user(1000, False), {})


# ------------------------------------------------------------------ git
def test_a_directory_where_the_clone_goes_is_not_taken_for_a_checkout(tmp_path):
    step = GitClone("sdk", "https://git.example/org/sdk.git", "@/sdk")
    assert step.needs(facts_for(tmp_path, step), {}).reason == "not cloned yet (https://git.example/org/sdk.git)"
    (tmp_path / "sdk").mkdir()
    facts = facts_for(tmp_path, step)
    decision = step.needs(facts, {})
    assert decision.needed and decision.reason == "@/sdk exists but is not a git checkout"
    with pytest.raises(StepError, match="is not a git checkout; move it away first"):
        step.commands(facts, {})


def test_a_token_in_the_clone_url_goes_on_stdin_and_every_other_argument_stays(tmp_path):
    step = GitClone("sdk", "https://ci:t0ken@git.example/org/sdk.git", "@/sdk")
    [clone] = step.commands(facts_for(tmp_path, step), {})
    assert not any("t0ken" in a for a in clone.argv) and "t0ken" in clone.stdin
    assert clone.argv[-4:] == ("clone", "--", "https://git.example/org/sdk.git", str(tmp_path / "sdk"))
