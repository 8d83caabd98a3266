"""The install engine against real venvs and real pip installs of small packages from the index."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ocrdeploy.inventory.model import Host
from ocrdeploy.provision.apply import Applier
from ocrdeploy.provision.connection import LocalConnection
from ocrdeploy.provision.kinds import PipEditable, PipInstall, RecordedCheck, Venv
from ocrdeploy.provision.plan import Plan

PY = f"{sys.version_info.major}.{sys.version_info.minor}"


def small_plan(pin="six==1.16.0"):
    return Plan("small", [
        Venv("venv", "env1", f">={PY}"),
        PipInstall("pins", "env1", [pin], after=("venv",)),
        RecordedCheck("import-six", "env1", code="import six; print('six', six.__version__)", after=("pins",),
                      describe="import six"),
    ])


class CountingLocal(LocalConnection):
    def __init__(self, host):
        super().__init__(host)
        self.calls = []

    def run(self, command, **kw):
        self.calls.append(command)
        return super().run(command, **kw)


def apply(tmp_path, plan, conn=None, **kw):
    host = Host("localhost", vars={"workdir": str(tmp_path / "wd")})
    conn = conn or CountingLocal(host)
    run = Applier(conn, host, plan.steps, host.vars, **kw).apply()
    return run, conn


def statuses(run):
    return {r.step: r.status for r in run.results}


def test_check_does_not_call_a_recorded_check_ok_when_its_packages_would_change(tmp_path):
    apply(tmp_path, small_plan())
    run, conn = apply(tmp_path, small_plan("six==1.15.0"), check=True)
    assert statuses(run) == {"venv": "ok", "pins": "changed", "import-six": "changed"}
    assert run.results[2].reason.startswith("runs again after pins changes (now: import six passed at ")
    assert conn.calls == []
    run, conn = apply(tmp_path, small_plan(), check=True)          # nothing would change: its record stands
    assert statuses(run) == {"venv": "ok", "pins": "ok", "import-six": "ok"}


def test_first_run_changes_second_is_a_no_op_drift_is_repaired(tmp_path):
    run, conn = apply(tmp_path, small_plan())
    assert statuses(run) == {"venv": "changed", "pins": "changed", "import-six": "changed"}, run.results
    assert all(r.log and os.path.exists(r.log) for r in run.results)
    env_py = tmp_path / "wd" / "env1" / "bin" / "python"
    out = subprocess.run([str(env_py), "-c", "import six; print(six.__version__)"], capture_output=True, text=True)
    assert out.stdout.strip() == "1.16.0"

    run, conn = apply(tmp_path, small_plan())
    assert statuses(run) == {"venv": "ok", "pins": "ok", "import-six": "ok"}
    assert conn.calls == [] and run.commands_run == 0       # local facts are read in-process: no command at all
    assert "already six 1.16.0" in run.results[1].reason

    subprocess.run([str(env_py), "-m", "pip", "install", "-q", "six==1.15.0"], check=True)
    run, _ = apply(tmp_path, small_plan())
    # the pin is repaired; the env is then exactly what the import check passed with, so it is not re-run
    assert statuses(run) == {"venv": "ok", "pins": "changed", "import-six": "ok"}
    assert "six 1.15.0 installed, want ==1.16.0" in run.results[1].reason
    run, _ = apply(tmp_path, small_plan("six==1.15.0"))   # a new pin: new packages, the check runs again
    assert statuses(run) == {"venv": "ok", "pins": "changed", "import-six": "changed"}
    run, _ = apply(tmp_path, small_plan("six==1.15.0"))
    assert set(statuses(run).values()) == {"ok"}


def test_check_mode_runs_nothing(tmp_path):
    run, conn = apply(tmp_path, small_plan(), check=True)
    assert statuses(run) == {"venv": "changed", "pins": "changed", "import-six": "changed"}
    assert conn.calls == [] and not (tmp_path / "wd" / "env1").exists()
    venv_cmd = run.results[0].commands[0]
    assert venv_cmd.endswith(f"-m venv {tmp_path}/wd/env1")
    assert run.results[1].commands == [f"{tmp_path}/wd/env1/bin/python -m pip install six==1.16.0"]
    assert run.results[2].reason == "env1 does not exist yet; commands decided after pins runs"


def test_failed_step_skips_its_dependents_and_reports_the_log(tmp_path):
    plan = Plan("bad", [Venv("venv", "env1", f">={PY}"),
                        PipInstall("pins", "env1", ["six==0.0.0.404"], after=("venv",)),
                        RecordedCheck("import-six", "env1", code="import six", after=("pins",))])
    run, _ = apply(tmp_path, plan)
    st = statuses(run)
    assert st == {"venv": "changed", "pins": "failed", "import-six": "skipped"}
    failed = run.results[1]
    assert failed.exit_code == 1 and "six==0.0.0.404" in Path(failed.log).read_text()
    assert "No matching distribution" in failed.tail or "Could not find a version" in failed.tail
    assert run.failed


SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    sys.path.insert(0, {tests!r})
    from test_engine import apply, small_plan
    from pathlib import Path
    run, _ = apply(Path({tmp!r}), small_plan("six=={version}"))
    print({{r.step: r.status for r in run.results}})
""")


def test_sigkill_in_the_middle_then_rerun_converges(tmp_path):
    """Kill the whole process group mid-install at several points; every re-run must finish the job,
    and no step is ever reported ok unless its state really is right."""
    root, tests = str(Path(__file__).parents[2]), str(Path(__file__).parent)
    for delay, version in ((0.3, "1.16.0"), (1.2, "1.15.0"), (2.5, "1.16.0")):
        script = SCRIPT.format(root=root, tests=tests, tmp=str(tmp_path), version=version)
        proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        # whatever the kill left, a check-mode run must not call a wrong state ok
        run, _ = apply(tmp_path, small_plan(f"six=={version}"), check=True)
        env_py = tmp_path / "wd" / "env1" / "bin" / "python"
        for r in run.results:
            if r.step == "pins" and r.status == "ok":
                out = subprocess.run([str(env_py), "-c", "import six; print(six.__version__)"],
                                     capture_output=True, text=True)
                assert out.stdout.strip() == version
        run, _ = apply(tmp_path, small_plan(f"six=={version}"))
        assert not run.failed, run.results
        run, conn = apply(tmp_path, small_plan(f"six=={version}"))
        assert set(statuses(run).values()) == {"ok"} and conn.calls == []


def make_pkg(root: Path, name: str, version: str) -> Path:
    src = root / f"{name}-{version}-src"
    (src / name).mkdir(parents=True)
    (src / name / "__init__.py").write_text(f'__version__ = "{version}"\n')
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "{name}"\nversion = "{version}"\n')
    return src


def test_feat_ocr_transformers_overwritten_by_a_release_is_detected_and_reapplied(tmp_path):
    """The ordering rule: an editable transformers 5.19.0.dev0, replaced by a plain 5.19.0, is re-applied."""
    feat = make_pkg(tmp_path, "transformers", "5.19.0.dev0")
    release = make_pkg(tmp_path, "transformers", "5.19.0")
    plan = Plan("order", [Venv("venv", "env1", f">={PY}"),
                          PipEditable("feat-ocr-transformers", "env1", str(feat), "transformers",
                                      expect_version="5.19.0.dev0", no_deps=True, after=("venv",))])
    run, _ = apply(tmp_path, plan)
    assert statuses(run)["feat-ocr-transformers"] == "changed", run.results
    env_py = tmp_path / "wd" / "env1" / "bin" / "python"
    # vLLM's dependencies pull a release over it
    subprocess.run([str(env_py), "-m", "pip", "install", "-q", str(release)], check=True)
    run, _ = apply(tmp_path, plan, check=True)
    r = run.results[1]
    assert r.status == "changed" and "reads 5.19.0, not 5.19.0.dev0" in r.reason
    assert r.commands == [f"{env_py} -m pip install --no-deps -e {feat}"]
    run, _ = apply(tmp_path, plan)
    assert statuses(run)["feat-ocr-transformers"] == "changed"
    out = subprocess.run([str(env_py), "-c", "import transformers; print(transformers.__version__)"],
                         capture_output=True, text=True, cwd="/")
    assert out.stdout.strip() == "5.19.0.dev0"
    run, _ = apply(tmp_path, plan)
    assert statuses(run)["feat-ocr-transformers"] == "ok"
    assert "already 5.19.0.dev0" in run.results[1].reason


@pytest.mark.ssh
def test_engine_over_ssh_no_op_is_one_round_trip(lab, tmp_path, monkeypatch):
    from ocrdeploy.inventory import load_inventory, select_hosts
    from ocrdeploy.provision.session import Session
    import yaml

    monkeypatch.setenv("OCRDEPLOY_KNOWN_HOSTS", str(lab.known_hosts))
    h = lab.start("eng", "127.0.0.8")
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"eng": lab.inventory_entry(h, workdir=str(tmp_path / "rwd"))}}}))
    (host,) = select_hosts(load_inventory(inv), host="eng")

    sent = []          # counted at the connection: every command that really went over SSH

    def once():
        with Session([host]) as session:
            conn = session.connection(host)
            real = conn._run_text
            conn._run_text = lambda text, shown, **kw: (sent.append(shown), real(text, shown, **kw))[1]
            return Applier(conn, host, small_plan().steps, host.vars).apply()

    run = once()
    assert statuses(run) == {"venv": "changed", "pins": "changed", "import-six": "changed"}, run.results
    sent.clear()
    run = once()
    assert set(statuses(run).values()) == {"ok"}
    assert len(sent) == 1 and "<facts probe>" in sent[0], sent          # the no-op re-run: one round trip
