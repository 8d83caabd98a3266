"""The `ocrdeploy` program entry (ocrdeploy/cli.py): one task's run parses against that task alone, and
invoke is imported without the modules only MockContext and invoke.yaml files use, which still work."""

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).parents[1]


def python(code, cwd=ROOT):
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def cli(args, env=None):
    e = dict(os.environ, COLUMNS="200", **(env or {}))
    e.pop("OCRDEPLOY_INVENTORY", None)
    return subprocess.run([sys.executable, "-m", "ocrdeploy", *args], capture_output=True, text=True, cwd=ROOT,
                          env=e, timeout=120)


def test_invoke_comes_without_unittest_mock_and_its_yaml_until_used(tmp_path):
    """The edges of the stand-ins: none of the deferred modules at start-up; MockContext still wraps run in
    the real Mock; an invoke.yaml still loads through invoke's own YAML; the real modules afterwards."""
    conf = tmp_path / "rt.yaml"
    conf.write_text("run:\n  echo: true\nmine: 7\n")
    out = json.loads(python(f"""
import json, sys
import ocrdeploy.cli
first = sorted(m for m in ("unittest.mock", "asyncio", "invoke.vendor.yaml", "unittest") if m in sys.modules)
from invoke import Config, MockContext, Result
c = MockContext(run=Result("hi"))
ran = c.run("anything").stdout
from unittest.mock import Mock
mocked = isinstance(c.run, Mock) and c.run.call_count == 1
cfg = Config(runtime_path={str(conf)!r})
cfg.load_runtime()
import invoke.vendor.yaml as real
print(json.dumps({{"first": first, "ran": ran, "mocked": mocked, "echo": cfg.run.echo, "mine": cfg.mine,
                   "real_yaml": hasattr(real, "SafeLoader"), "real_mock": hasattr(Mock, "assert_called_once")}}))
"""))
    assert out == {"first": [], "ran": "hi", "mocked": True, "echo": True, "mine": 7, "real_yaml": True,
                   "real_mock": True}


def test_a_module_imported_before_the_cli_is_left_alone():
    """A program that loaded unittest.mock itself (a test runner) keeps its module: no stand-in replaces it."""
    out = python("import unittest.mock as m, sys; import ocrdeploy.cli; print(sys.modules['unittest.mock'] is m)")
    assert out.strip() == "True"


def test_one_task_parses_against_that_task_alone():
    from ocrdeploy.cli import namespace_for
    from ocrdeploy.tasks import ns

    assert list(namespace_for(["install", "--check"]).tasks) == ["install"]
    # every task named on the line runs, as with the whole collection; a flag's value naming a task is harmless
    assert list(namespace_for(["facts", "-H", "gpu1", "preflight"]).tasks) == ["facts", "preflight"]
    for args in ([], ["--list"], ["-h"], ["--complete", "--", "ocrdeploy", "ins"], ["nope"]):
        assert namespace_for(args) is ns, args


def test_help_list_and_two_tasks_in_one_run(tmp_path):
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"gpu1": {"ansible_host": "10.0.0.1"}}}}))
    p = cli(["--list"])
    assert p.returncode == 0 and all(f"  {t} " in p.stdout for t in ("install", "preflight", "deepseek-config"))
    p = cli(["install", "--help"])
    assert p.returncode == 0 and "--skip-preflight" in p.stdout and "Usage: ocrdeploy [--core-opts] install" in p.stdout
    # a command line invoke cannot parse is a usage error (README's exit codes: 2), never 1 ('a check failed')
    for args, said in ((["install", "--nope"], "No idea what '--nope' is!"), (["nope"], "No idea what 'nope' is!"),
                       (["preflight", "-H"], "needed value and was not given one"),
                       (["--bogus"], "No idea what '--bogus' is!")):
        p = cli(args)
        assert p.returncode == 2 and said in p.stderr and "Traceback" not in p.stderr, (args, p.returncode, p.stderr)
    p = cli(["facts", "-i", str(inv), "-H", "gpu1", "--list-hosts", "preflight", "-i", str(inv), "-H", "gpu1", "--list-hosts"])
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("gpu1") == 2, p.stdout        # both tasks ran
    p = cli(["--complete", "--", "ocrdeploy", "ins"])
    assert p.returncode == 0 and "install" in p.stdout.split()
