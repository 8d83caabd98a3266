"""uv or pip: one place decides and builds the install command (provision/installer.py).

The real-run tests use the real uv wheel from PyPI (downloaded once into ~/.cache/ocrdeploy-uv, like the
engines) served by a local index the test starts (tests/pipindex.py, with basic auth): the bootstrap
installs it with pip into a real tools venv, then the installs run with it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ocrdeploy.errors import UsageError
from ocrdeploy.inventory.model import Host
from ocrdeploy.provision import installer
from ocrdeploy.provision.apply import Applier
from ocrdeploy.provision.connection import LocalConnection
from ocrdeploy.provision.kinds import PipEditable, PipInstall, UvForPython, Venv, with_uv
from ocrdeploy.provision.step import StepError
from pipindex import PipIndex, build_wheel, sdk_repo, uv_wheel

PY = f"{sys.version_info.major}.{sys.version_info.minor}"
FACTS = {"workdir": {"path": "/w"}, "host": {}}
UV_THERE = {**FACTS, "files": {installer.UV: {"exists": True}}}
CRED = "https://ci:t0ken-s3cret@mirror.example.com/simple"


def cmd(facts, v, args=("a==1",), **kw):
    return installer.install_command(facts, v, "/w/env/bin/python", list(args), **kw)


# ---------------------------------------------------------------- the choice and the argv
def test_uv_gets_the_same_pins_flags_and_index_options_as_pip():
    v = {"pip_index_url": "https://m.example/simple", "pip_extra_index_url": "https://x.example/simple",
         "pip_trusted_host": "m.example"}
    args = ["--no-deps", "-e", "/src/t[serving]", "b>=2"]
    uv, pip = cmd(UV_THERE, v, args), cmd(UV_THERE, {**v, "installer": "pip"}, args)
    assert uv.argv == ("/w/.ocrdeploy/tools-env/bin/uv", "pip", "install", "--python", "/w/env/bin/python",
                       "--index-url", "https://m.example/simple", "--extra-index-url", "https://x.example/simple",
                       "--index-strategy", "unsafe-best-match", "--allow-insecure-host", "m.example", *args)
    assert pip.argv == ("/w/env/bin/python", "-m", "pip", "install", "--index-url", "https://m.example/simple",
                        "--extra-index-url", "https://x.example/simple", "--trusted-host", "m.example", *args)
    # a step's own index replaces the main one for both; one index alone keeps uv's default strategy
    own = cmd(UV_THERE, {}, index_url="https://download.pytorch.org/whl/cu118")
    assert own.argv[5:] == ("--index-url", "https://download.pytorch.org/whl/cu118", "a==1")


def test_index_credentials_go_through_uvs_environment_and_show_masked():
    c = cmd(UV_THERE, {"pip_index_url": CRED, "pip_extra_index_url": CRED.replace("simple", "extra")})
    assert c.env == {"UV_INDEX_URL": CRED, "UV_EXTRA_INDEX_URL": CRED.replace("simple", "extra")}
    assert "t0ken" not in str(c) and "t0ken" not in " ".join(c.argv)
    assert "UV_INDEX_URL='https://***@mirror.example.com/simple'" in str(c)
    assert "t0ken" not in c.shell(mask=False)          # run: the secret travels on stdin, not the command line


@pytest.mark.parametrize("facts,v,kw,want,why", [
    (UV_THERE, {"installer": "pip"}, {}, "pip", "installer: pip"),
    (UV_THERE, {}, {"pip_only": "the compile stays"}, "pip", "the compile stays"),
    (FACTS, {}, {}, "pip", "uv is not on the host"),
    (FACTS, {}, {"bootstrap": True}, "uv", "installer: auto"),
    (UV_THERE, {}, {}, "uv", "installer: auto"),
    ({**UV_THERE, "pip_env": ["PIP_FIND_LINKS", "PIP_DEFAULT_TIMEOUT"]}, {}, {}, "pip", "(PIP_FIND_LINKS), which uv"),
    ({**UV_THERE, "reads": {"/etc/pip.conf": "[global]\nextra-index-url = file:///opt/pypi\ntimeout = 60\n"}},
     {}, {}, "pip", "(/etc/pip.conf: extra-index-url)"),
    ({**UV_THERE, "reads": {"/etc/pip.conf": "[global]\ntimeout = 60\n"}}, {}, {}, "uv", "installer: auto"),
    ({**UV_THERE, "pip_env": ["PIP_CONFIG_FILE=/dev/null"], "reads": {"/etc/pip.conf": "[global]\nindex-url = x\n"}},
     {}, {}, "uv", "installer: auto"),
    ({**UV_THERE, "pip_env": ["PIP_CERT"]}, {"installer": "uv"}, {}, "uv", "installer: uv"),
])
def test_which_installer(facts, v, kw, want, why):
    got = installer.choose(facts, v, **kw)
    assert got.name == want and why in got.why, got


def test_installer_uv_without_uv_or_its_bootstrap_says_so_and_a_bad_value_is_one_line():
    with pytest.raises(StepError, match="installer: uv, but /w/.ocrdeploy/tools-env/bin/uv is not there"):
        installer.choose(FACTS, {"installer": "uv"})
    with pytest.raises(UsageError, match="^inventory var installer: 'npm' is not one of auto, uv, pip$"):
        installer.choose(FACTS, {"installer": "npm"})


def test_with_uv_puts_the_bootstrap_first_and_leaves_pip_runs_and_compiles_alone():
    steps = [Venv("venv", "env1", ">=3.10"), PipInstall("pins", "env1", ["a==1"], after=("venv",))]
    wired = with_uv(list(steps), {})
    assert [s.name for s in wired] == ["tools-venv", "tools-uv", "venv", "pins"]
    assert wired[3].after == ("venv", "tools-uv") and wired[3].uv_bootstrap
    assert isinstance(wired[1], UvForPython) and wired[1].installs == [wired[3]]
    assert [s.name for s in with_uv(list(steps), {"installer": "pip"})] == ["venv", "pins"]
    compile_only = [Venv("venv", "env1", ">=3.10"), PipInstall("fa", "env1", ["fa==1"])]
    compile_only[1].pip_only = "compiles"
    assert [s.name for s in with_uv(compile_only, {})] == ["venv", "fa"]


# ---------------------------------------------------------------- real uv against a local index
@pytest.fixture
def index(tmp_path):
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "authpkg", "1.0", {"authpkg/__init__.py": "VALUE = 1\n"})
    build_wheel(wheels, "authpkg", "2.0", {"authpkg/__init__.py": "VALUE = 2\n"})
    # needs a package no index has: only --no-deps installs it
    build_wheel(wheels, "withdep", "1.0", {"withdep/__init__.py": ""}, requires=["nowhere-to-be-found>=1"])
    os.symlink(uv_wheel(), wheels / uv_wheel().name)
    with PipIndex(wheels, auth=("ci", "t0ken-s3cret")) as server:
        yield server


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No pip or uv configuration of this machine reaches the run (a fresh host's)."""
    for k in list(os.environ):
        if k.startswith(("PIP_", "UV_")):
            monkeypatch.delenv(k)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))   # no uv.toml of the user's


def steps():
    return [Venv("venv", "env1", f">={PY}"),
            PipInstall("pins", "env1", ["authpkg==1.0"], after=("venv",)),
            PipInstall("nodeps", "env1", ["withdep==1.0"], no_deps=True, after=("venv",)),
            PipEditable("sdk", "env1", "@/sdk-repo/sdk", "minicpmvocr", no_deps=True, after=("venv",))]


def run(workdir, index, v=None, **kw):
    host = Host("localhost", vars={"workdir": str(workdir), "pip_index_url": index.url_with_auth(), **(v or {})})
    return Applier(LocalConnection(host), host, with_uv(steps(), host.vars), host.vars, **kw).apply()


def installed_by(workdir: Path, env: str, name: str) -> str:
    (info,) = (workdir / env / "lib").glob(f"python*/site-packages/{name}-*.dist-info")
    return (info / "INSTALLER").read_text().strip()


def test_uv_installs_pins_no_deps_and_editable_from_an_index_with_credentials_then_a_rerun_runs_nothing(
        tmp_path, index, clean_env):
    workdir = tmp_path / "wd"
    workdir.mkdir()
    sdk_repo(workdir / "sdk-repo")
    check = run(workdir, index, check=True)
    shown = {r.step: r.commands for r in check.results}
    assert shown["pins"] == [f"env UV_INDEX_URL='http://***@{index.url[7:]}' {workdir}/.ocrdeploy/tools-env/bin/uv "
                             f"pip install --python {workdir}/env1/bin/python authpkg==1.0"]
    assert shown["nodeps"][0].endswith("/env1/bin/python --no-deps withdep==1.0")

    first = run(workdir, index)
    status = {r.step: r.status for r in first.results}
    assert status == dict.fromkeys(["tools-venv", "tools-uv", "venv", "pins", "nodeps", "sdk"], "changed"), \
        [(r.step, r.reason, r.tail) for r in first.results]
    assert installed_by(workdir, ".ocrdeploy/tools-env", "uv") == "pip"     # the bootstrap
    for name in ("authpkg", "withdep", "minicpmvocr"):
        assert installed_by(workdir, "env1", name) == "uv", name
    every = " ".join(c for r in first.results for c in r.commands)
    assert "t0ken-s3cret" not in every and "***@" in every
    assert ("GET", "/simple/authpkg/") in index.requests

    again = run(workdir, index)
    assert {r.status for r in again.results} == {"ok"} and again.commands_run == 0, \
        [(r.step, r.reason) for r in again.results]
    assert dict((r.step, r.reason) for r in again.results)["sdk"].startswith("already 0.2.3 (editable from ")


def test_a_host_whose_pip_is_configured_keeps_pip_and_installs_no_uv(tmp_path, index, clean_env, monkeypatch):
    workdir = tmp_path / "wd"
    workdir.mkdir()
    sdk_repo(workdir / "sdk-repo")
    monkeypatch.setenv("PIP_TRUSTED_HOST", "127.0.0.1")         # uv would not read it: pip stays
    first = run(workdir, index)
    status = {r.step: r.status for r in first.results}
    assert status["tools-venv"] == status["tools-uv"] == "ok" and not (workdir / ".ocrdeploy/tools-env").exists()
    assert {status[s] for s in ("venv", "pins", "nodeps", "sdk")} == {"changed"}, first.results
    for name in ("authpkg", "withdep", "minicpmvocr"):
        assert installed_by(workdir, "env1", name) == "pip", name
    reasons = {r.step: r.reason for r in first.results}
    assert reasons["tools-uv"] == "not needed: no install runs with uv", reasons
    # why: the probe names the variable (names only), whatever this machine's /etc/pip.conf says
    from ocrdeploy.provision.probe import collect
    facts = collect({"workdir": str(workdir), "net_timeout": 0})
    assert installer.pip_config(facts) == ["PIP_TRUSTED_HOST"]
    assert "not needed" in reasons["tools-venv"]


def test_compiles_keep_pip_where_uv_is_there_and_paddle_on_a_cpu_host_follows_the_wiring():
    from ocrdeploy.recipes.cuda_steps import VllmCompile
    from ocrdeploy.recipes.deepseek import FlashAttn
    from ocrdeploy.recipes.minicpm import Paddle

    facts = {**UV_THERE, "files": {**UV_THERE["files"], "/src/vllm": {"exists": True}},
             "network": {"github": "reachable"}, "cpu": {"count": 8}, "memory": {"available": 64 * 2**30},
             "venvs": {"ds": {"dists": {n: {"version": "1"} for n in ("wheel", "ninja", "packaging", "setuptools")}
                                        | {"torch": {"version": "2.6.0"}}}}}
    (compile_,) = VllmCompile("vllm-compile", "vllm-ocr-env", "/src/vllm").commands(facts, {})
    assert compile_.argv[1:] == ("-m", "pip", "install", "-e", ".", "--no-build-isolation", "--progress-bar", "off")
    (fa,) = FlashAttn("ds-flash-attn", "ds").commands(facts, {})
    assert fa.argv[1:4] == ("-m", "pip", "install") and "--no-build-isolation" in fa.argv
    # paddle on a host without GPU installs its CPU twin: with uv too once the plan put uv first
    (paddle,) = [s for s in with_uv([Paddle("sdk-paddle")], {}) if s.name == "sdk-paddle"]
    (cmd,) = paddle.commands({**FACTS, "gpu": {"gpus": []}}, {})
    assert cmd.argv[:3] == ("/w/.ocrdeploy/tools-env/bin/uv", "pip", "install") and cmd.argv[-1] == "paddlepaddle==3.2.1"
