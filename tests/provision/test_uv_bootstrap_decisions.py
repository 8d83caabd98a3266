"""The uv bootstrap's decisions from facts alone (provision/kinds.py with_uv, UvForPython; installer.choose):
uv is installed only while an install it serves has work, its failure is tolerated only under installer: auto
and only while no managed Python needs it, and the installs it serves then run with pip (or, under
installer: uv, fail saying why).  test_installer.py runs the real uv; these are the decisions' edges."""

import pytest

from ocrdeploy.provision import installer
from ocrdeploy.provision.kinds import ManagedPython, PipInstall, Venv, with_uv
from ocrdeploy.provision.step import StepError


def facts(installed: dict, pythons=()):
    return {"workdir": {"path": "/w"}, "host": {}, "files": {}, "pythons": list(pythons),
            "venvs": {"env1": {"python": "3.12.3", "dists": {k: {"version": v} for k, v in installed.items()}}}}


def wired(v=None, pythons=()):
    steps = [Venv("venv", "env1", ">=3.10"), PipInstall("pins", "env1", ["a==1", "b==2"], after=("venv",))]
    out = with_uv(steps, v or {})
    uv = out[1]
    uv.pythons = list(pythons)
    return out, uv


def test_uv_is_installed_only_while_an_install_it_serves_has_work():
    _, uv = wired()
    first = uv.needs(facts({}), {})
    assert first.needed and "it installs pins" in first.reason
    rerun = uv.needs(facts({"a": "1", "b": "2"}), {})
    assert not rerun.needed and "no install runs with uv" in rerun.reason


def test_a_failed_uv_install_is_tolerated_only_under_auto_and_without_a_managed_python_to_install():
    _, uv = wired()
    assert "run with pip instead" in uv.tolerated_failure(facts({}), {})
    assert uv.tolerated_failure(facts({}), {"installer": "uv"}) is None
    py = ManagedPython("python313", "3.13")
    _, uv = wired(pythons=[py])
    assert py.needs(facts({}), {}).needed
    assert uv.tolerated_failure(facts({}), {}) is None                  # the managed Python needs uv
    here = facts({}, pythons=[{"path": "/usr/bin/python3.13", "version": "3.13.1"}])
    assert "run with pip instead" in uv.tolerated_failure(here, {})


def test_an_install_waits_for_uv_only_where_uv_is_required():
    steps, _ = wired()
    pins = steps[-1]
    assert pins.runs_without("tools-uv", {}) is True                    # auto: pip takes over
    assert pins.runs_without("tools-uv", {"installer": "uv"}) is False
    assert pins.runs_without("venv", {}) is False


def test_when_uv_failed_in_this_run_auto_falls_back_to_pip_and_uv_says_why():
    after = {**facts({}), "run_failed": ["tools-uv"]}
    got = installer.choose(after, {}, bootstrap=True)
    assert got.name == "pip" and "tools-uv failed" in got.why
    with pytest.raises(StepError, match="uv could not be installed in this run"):
        installer.choose(after, {"installer": "uv"}, bootstrap=True)
    assert installer.choose({**facts({}), "run_failed": ["venv"]}, {}, bootstrap=True).name == "uv"


def test_a_pip_conf_spelled_with_underscores_or_unreadable_keeps_pip():
    there = {**facts({}), "files": {installer.UV: {"exists": True}}}
    under = {**there, "reads": {"/etc/pip.conf": "[global]\nextra_index_url = https://m.example/simple\n"}}
    assert installer.choose(under, {}).name == "pip"
    broken = {**there, "reads": {"~/.pip/pip.conf": "index-url = https://m.example/simple\n"}}   # no section
    got = installer.choose(broken, {})
    assert got.name == "pip" and "~/.pip/pip.conf: unreadable" in got.why
    # the host configures nothing when pip is told to read no file, whatever the files say
    off = {**under, "pip_env": ["PIP_CONFIG_FILE=/dev/null"]}
    assert installer.choose(off, {}).name == "uv"
    assert installer.choose({**under, "pip_env": ["PIP_CONFIG_FILE"]}, {}).name == "pip"


def test_a_steps_own_extra_index_gets_pips_best_version_rule_under_uv_too():
    there = {**facts({}), "files": {installer.UV: {"exists": True}}}
    c = installer.install_command(there, {}, "/w/env1/bin/python", ["a==1"], extra=["https://x.example/simple"])
    assert c.argv[:3] == ("/w/.ocrdeploy/tools-env/bin/uv", "pip", "install")
    assert ("--extra-index-url", "https://x.example/simple") == c.argv[5:7]
    assert c.argv[7:9] == ("--index-strategy", "unsafe-best-match")
    # several credentialed extras travel together in one variable, each shown masked
    cred = ["https://u:s3cret@a.example/simple", "https://v:s3cret@b.example/simple"]
    c = installer.install_command(there, {"pip_extra_index_url": cred}, "/w/env1/bin/python", ["a==1"])
    assert c.env["UV_EXTRA_INDEX_URL"] == " ".join(cred) and "s3cret" not in str(c)
