"""Shared builds (provision/fleet.py): one compile per identical fleet, on real sshd lab hosts.

vLLM's source cannot build here (it needs CUDA and a GPU), so a tiny package named `vllm` with a real C
extension stands in for it (tests/standin_vllm.py): `pip wheel`/`pip install -e` really compile it with the
host's gcc (reached as gcc-13, the name the guide's build environment uses), and its setup.py counts every
compile in a marker file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from ocrdeploy.provision.fleet import SharedBuilds, host_ranges, inputs_key
from standin_vllm import clean, compiles, git, make_host, make_source, make_tools, uv_binary

ROOT = Path(__file__).parents[2]

def run(args, env=None):
    e = dict(os.environ, COLUMNS="200")
    e.pop("OCRDEPLOY_INVENTORY", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "ocrdeploy", "install", *args], capture_output=True, text=True,
                          env=e, cwd=ROOT, timeout=600)


def make_fleet(lab, tmp_path, uv: bool):
    """Three lab hosts gpu1..gpu3, each with its own work dir and source clone (with `uv`: the real uv in
    each tools venv and `installer: uv`); returns (inventory, marker, hosts' vars, run args, env)."""
    marker = tmp_path / "compiles.log"
    template = make_source(tmp_path, marker)
    bin_, buildtools = make_tools(tmp_path)
    uv_bin = uv_binary(tmp_path) if uv else None
    hosts, vars_ = {}, {}
    for i in (1, 2, 3):
        name = f"gpu{i}"
        h = lab.start(name, f"127.0.0.{40 + i}", path_prefix=str(bin_))
        vars_[name] = make_host(tmp_path, name, template, buildtools, uv=uv_bin)
        hosts[name] = lab.inventory_entry(h, **vars_[name])
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    base = ["--inventory", str(inv), "--host", "gpu1,gpu2,gpu3", "--recipe", "dspark", "--step", "vllm-compile", "--skip-preflight"]
    return inv, marker, vars_, base, {"OCRDEPLOY_KNOWN_HOSTS": str(lab.known_hosts)}


@pytest.fixture
def fleet(lab, tmp_path):
    """The built wheel installed with uv, as after the recipe's tools-uv."""
    return make_fleet(lab, tmp_path, uv=True)


@pytest.fixture
def pip_fleet(lab, tmp_path):
    """No uv on the hosts: pip installs the built wheel."""
    return make_fleet(lab, tmp_path, uv=False)


def venv_run(v, code):
    return subprocess.run([f"{v['workdir']}/vllm-ocr-env/bin/python", "-c", code], capture_output=True, text=True,
                          cwd="/")


@pytest.mark.ssh
def test_identical_hosts_compile_once_and_install_the_wheel(fleet):
    inv, marker, vars_, base, env = fleet
    p = run(base + ["--check"], env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "builds the wheel for gpu2, gpu3 too" in p.stdout and p.stdout.count("installs the wheel built on gpu1") == 2, \
        p.stdout
    plan = json.loads(run(base + ["--check", "--json"], env=env).stdout)["hosts"]
    assert " -m pip wheel " in plan["gpu1"]["steps"][0]["commands"][-2]
    assert all(" -m pip wheel " not in c for c in plan["gpu2"]["steps"][0]["commands"])
    assert compiles(marker) == 0

    p = run(base + ["--json"], env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads(p.stdout)
    assert compiles(marker) == 1                                # the compile ran once, on the builder
    [group] = doc["shared_builds"]
    assert group["builder"] == "gpu1" and group["installed_from_wheel"] == ["gpu2", "gpu3"]
    for name in ("gpu1", "gpu2", "gpu3"):
        step = doc["hosts"][name]["steps"][0]
        assert step["status"] == "changed", step
        # the same check as the guide's: the installed package imports, its C extension with it
        r = venv_run(vars_[name], "from vllm import LLM; print(LLM.answer)")
        assert r.stdout.strip() == "42", r.stderr
    wheel = group["wheel"]
    for name in ("gpu2", "gpu3"):
        assert Path(vars_[name]["workdir"], ".ocrdeploy", "wheels").glob(f"*/{wheel}")
    assert "installed from the wheel built on gpu1" in doc["hosts"]["gpu2"]["steps"][0]["reason"]

    p = run(base, env=env)                                      # the recap says who built and who installed
    assert p.returncode == 0 and "vllm-compile: built on" not in p.stdout   # nothing to do: no shared build
    assert p.stdout.count("ok=1") == 3, p.stdout
    assert compiles(marker) == 1

    clean(vars_)                                                # no build tree left to reuse: all compile anew
    [key_dir] = Path(vars_["gpu1"]["workdir"], ".ocrdeploy", "wheels").iterdir()
    (key_dir / "vllm-0.0.0-py3-none-any.whl").write_bytes(b"an earlier build's")   # emptied before the build
    p = run(base + ["--force"], env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "vllm-compile: built on gpu1, installed from wheel on gpu2, gpu3" in p.stdout
    assert compiles(marker) == 2

    clean(vars_)
    p = run(base + ["--force", "--no-shared-build", "--json"], env=env)   # opted out: every host compiles
    assert p.returncode == 0, p.stdout + p.stderr
    assert compiles(marker) == 5 and "shared_builds" not in json.loads(p.stdout)


@pytest.mark.ssh
def test_a_failed_build_fails_the_group_once_and_a_different_source_builds_its_own(pip_fleet):
    inv, marker, vars_, base, env = pip_fleet
    # gpu3's source is one commit ahead: its inputs differ, it builds on its own
    src3 = Path(vars_["gpu3"]["vllm_src"])
    (src3 / "vllm" / "extra.py").write_text("X = 1\n")
    git(src3, "add", ".")
    git(src3, "commit", "-qm", "ahead")
    p = run(base + ["--json"], env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads(p.stdout)
    assert compiles(marker) == 2
    [group] = doc["shared_builds"]
    assert (group["builder"], group["installed_from_wheel"]) == ("gpu1", ["gpu2"])

    # an uncommitted edit is an input too: gpu1 and gpu2 get the same broken one (the same digest: one group)
    for name in ("gpu1", "gpu2"):
        Path(vars_[name]["vllm_src"], "csrc", "c.c").write_text("this is not C\n")
    p = run(base + ["--force", "--json"], env=env)
    doc = json.loads(p.stdout)
    assert p.returncode == 1
    assert compiles(marker) == 4                                # gpu1's failed compile and gpu3's own: not gpu2's
    steps = {n: doc["hosts"][n]["steps"][0] for n in ("gpu1", "gpu2", "gpu3")}
    assert steps["gpu1"]["status"] == "failed" and steps["gpu1"]["tail"]
    assert steps["gpu2"]["status"] == "failed"
    assert steps["gpu2"]["reason"].startswith("not built here: the shared build on gpu1 failed: `")
    assert steps["gpu3"]["status"] == "changed"


@pytest.mark.ssh
def test_a_corrupted_copy_is_refused(fleet, monkeypatch, capsys):
    """The controller's copy to gpu3 is damaged in transit (one byte flipped on the way): gpu3 refuses it."""
    from ocrdeploy.commands.install import run_install
    from ocrdeploy.provision import connection

    inv, marker, vars_, base, env = fleet
    monkeypatch.setenv("OCRDEPLOY_KNOWN_HOSTS", env["OCRDEPLOY_KNOWN_HOSTS"])
    real_put = connection.SSHConnection.put

    def put(self, local, remote):
        if self.name == "gpu3" and remote.endswith(".whl"):
            damaged = Path(str(local) + ".damaged")
            data = bytearray(Path(local).read_bytes())
            data[len(data) // 2] ^= 0xFF
            damaged.write_bytes(bytes(data))
            local = damaged
        return real_put(self, local, remote)

    monkeypatch.setattr(connection.SSHConnection, "put", put)
    code = run_install(host="gpu1,gpu2,gpu3", group=None, inventory=str(inv), recipe="dspark", check=False, step="vllm-compile",
                       from_=None, force=False, verbose=0, skip_preflight=True, deps_dir=None, sets=[],
                       facts_file=None, as_json=True, accept_new_host_keys=False, connect_timeout=None)
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and compiles(marker) == 1
    step3 = doc["hosts"]["gpu3"]["steps"][0]
    assert step3["status"] == "failed" and step3["reason"].startswith("refused the wheel from gpu1: sha256 ")
    assert doc["hosts"]["gpu2"]["steps"][0]["status"] == "changed"
    assert venv_run(vars_["gpu3"], "import vllm").returncode != 0                      # nothing installed
    assert not list(Path(vars_["gpu3"]["workdir"], ".ocrdeploy", "wheels").glob("*/*.whl"))   # and not kept


def test_host_ranges_compact_consecutive_names():
    assert host_ranges([f"gpu{i}" for i in range(2, 17)]) == "gpu2..gpu16"
    assert host_ranges(["gpu2", "gpu3"]) == "gpu2, gpu3"
    assert host_ranges(["gpu2", "gpu3", "gpu4", "gpu7", "node1", "x"]) == "gpu2..gpu4, gpu7, node1, x"


def test_the_first_host_in_order_builds_and_a_builder_that_ends_hands_over(tmp_path):
    import threading

    shared = SharedBuilds(["a", "b", "c", "d"])
    same, other = {"vllm_src": "1"}, {"vllm_src": "2"}
    threads = [threading.Thread(target=shared.plan, args=(h, {"vllm-compile": i}))
               for h, i in (("c", same), ("b", same), ("a", same))]
    for t in threads:
        t.start()
    shared.leave("d")                       # d ended before planning (its preflight failed)
    for t in threads:
        t.join(timeout=10)
    role = shared.role("b", "vllm-compile")
    assert role.group.builder == "a" and role.kind == "install" and role.group.members == ["a", "b", "c"]
    assert shared.role("a", "vllm-compile").kind == "build"
    waited = []
    waiter = threading.Thread(target=lambda: waited.append(shared.wait("b", role.group)), daemon=True)
    waiter.start()                          # b waits at its build step for a's wheel
    shared.leave("a")                       # a's run ended before its build: b builds for the group
    waiter.join(timeout=10)
    assert waited == ["build"] and shared.role("b", "vllm-compile").kind == "build"
    assert inputs_key(same) != inputs_key(other)


# ---------------------------------------------------------------- two local hosts: the builder's failures and Ctrl-C
PY = f"{sys.version_info.major}.{sys.version_info.minor}"


class Recorder:
    def __init__(self):
        self.retries = []

    def __getattr__(self, name):
        return lambda *a, **k: None

    def retrying(self, host, step, findings, commands):
        self.retries.append((host.name, [f["id"] for f in findings], commands))


@pytest.fixture
def local_pair(tmp_path, monkeypatch):
    """Hosts a and b on this machine (each its work dir, venv and clone of the stand-in) and a run of the
    compile step on both with one SharedBuilds, as `inv install` runs them: (marker, vars, run)."""
    from ocrdeploy.diagnose.engine import log_findings
    from ocrdeploy.inventory.model import Host
    from ocrdeploy.provision.apply import Applier
    from ocrdeploy.provision.connection import LocalConnection
    from ocrdeploy.recipes.cuda_steps import VllmCompile

    marker = tmp_path / "compiles.log"
    template = make_source(tmp_path, marker)
    bin_, buildtools = make_tools(tmp_path)
    monkeypatch.setenv("PATH", f"{bin_}:{os.environ['PATH']}")
    vars_ = {n: make_host(tmp_path, n, template, buildtools) for n in ("a", "b")}

    def run(reporter=None):
        shared, runs, errors = SharedBuilds(["a", "b"]), {}, {}

        def one(name):
            v = vars_[name]
            host = Host(name, vars=v)
            step = VllmCompile("vllm-compile", "vllm-ocr-env", v["vllm_src"], python_minor=PY,
                               deps_dir=v["deps_dir"], jobs=8)
            try:
                runs[name] = Applier(LocalConnection(host), host, [step], v, shared=shared, reporter=reporter,
                                     diagnose=log_findings).apply()
            except BaseException as exc:  # noqa: BLE001 - Ctrl-C ends the host's thread, as in Session.map
                errors[name] = exc

        threads = [threading.Thread(target=one, args=(n,)) for n in ("a", "b")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        shared.close()
        return shared, runs, errors

    return marker, vars_, run


def test_the_shared_build_retries_an_oom_killed_compile_with_half_the_jobs(local_pair):
    marker, vars_, run = local_pair
    for v in vars_.values():                       # compilers killed above 4 jobs, as the OOM killer leaves it
        Path(v["vllm_src"], "oom-above").write_text("4")
    rec = Recorder()
    shared, runs, errors = run(rec)
    assert not errors
    assert [(h, ids) for h, ids, _ in rec.retries] == [("a", ["compile-oom-killed"])]
    [again] = rec.retries[0][2]
    assert " -m pip wheel " in again and "MAX_JOBS=4" in again
    assert compiles(marker) == 1                   # the retry's compile, once for both
    assert [r.status for r in runs["a"].results] == [r.status for r in runs["b"].results] == ["changed"]
    assert shared.groups()[0].installed == ["b"]


@pytest.mark.parametrize("when", ["during the compile", "before the build started"])
def test_ctrl_c_on_the_builder_never_hands_the_build_to_a_follower(local_pair, monkeypatch, when):
    from ocrdeploy.provision import apply, connection, fleet

    marker, vars_, run = local_pair
    builds, b_waits = [], threading.Event()
    real_run_logged, real_wait, real_building = apply.Applier._run_logged, fleet.SharedBuilds.wait, \
        fleet.SharedBuilds.building

    def ctrl_c():
        assert b_waits.wait(60)                    # b waits for a's wheel when Ctrl-C comes
        connection.interrupt_all()
        raise KeyboardInterrupt

    def run_logged(self, step, cmds, log):
        if any("wheel" in c.argv for c in cmds):
            builds.append(self.host.name)
            if self.host.name == "a" and when == "during the compile":
                ctrl_c()
        return real_run_logged(self, step, cmds, log)

    def building(self, host, group):
        if host == "a" and when == "before the build started":
            ctrl_c()
        return real_building(self, host, group)

    def wait(self, host, group):
        b_waits.set()
        return real_wait(self, host, group)

    monkeypatch.setattr(apply.Applier, "_run_logged", run_logged)
    monkeypatch.setattr(fleet.SharedBuilds, "wait", wait)
    monkeypatch.setattr(fleet.SharedBuilds, "building", building)
    try:
        shared, runs, errors = run()
    finally:
        connection.INTERRUPTED.clear()
    assert isinstance(errors.get("a"), KeyboardInterrupt)
    assert "b" not in builds and compiles(marker) == 0           # no second compile, not even its start
    [step] = runs["b"].results
    assert step.status == "failed" and "the shared build on a failed" in step.reason and "interrupted" in step.reason


def test_a_builder_that_ends_during_its_build_fails_the_group(tmp_path):
    """Its end (Ctrl-C, a lost connection) is the group's failure: no follower is handed a second compile;
    Ctrl-C before any build fails every build still to come the same way."""
    for interrupted in (False, True):
        shared = SharedBuilds(["a", "b"])
        planners = [threading.Thread(target=shared.plan, args=(h, {"vllm-compile": {"vllm_src": "1"}}))
                    for h in ("a", "b")]
        for t in planners:
            t.start()
        for t in planners:
            t.join(timeout=10)
        group = shared.role("b", "vllm-compile").group
        waited = []
        waiter = threading.Thread(target=lambda: waited.append(shared.wait("b", group)), daemon=True)
        waiter.start()
        if interrupted:
            shared.interrupt("a")
        else:
            shared.building("a", group)
        shared.leave("a")
        waiter.join(timeout=10)
        assert waited == ["failed"] and group.builder == "a" and shared.role("b", "vllm-compile").kind == "install"
        assert ("Ctrl-C on a" if interrupted else "the build on a ended without a wheel") in group.failure
