"""The install probe's ssh started at the program's entry (commands/early_install.py, provision/early_probe.py): it starts before invoke
and the recipes are imported, the run takes it over (still one ssh per host), a line it cannot read without
doubt starts nothing, and a started one the run does not take is ended with nothing probed on the host."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ocrdeploy.commands import early_install
from ocrdeploy.commands.early_install import BOOL_FLAGS, SHORT, VALUE_FLAGS, read_install_args
from ocrdeploy.provision import early_probe, probe

ROOT = Path(__file__).parents[2]
SMI = Path(__file__).parents[1] / "fixtures" / "nvidia-smi"


def test_the_flag_table_is_the_install_tasks_own():
    """Every flag early_probe reads means there what invoke's parser of the install task makes of it.  (In a child
    process: invoke hands each task's help out once, and the tasks' own tests read it after this one.)"""
    asked = [f"--{n}" for n in VALUE_FLAGS | BOOL_FLAGS] + [f"-{s}" for s in SHORT]
    code = ("import json, sys; from ocrdeploy.tasks import ns; "
            "(c,) = [c for c in ns.to_contexts() if c.name == 'install']; "
            "print(json.dumps({f: [c.flags[f].name, c.flags[f].takes_value, c.flags[f].kind is list] "
            "for f in sys.argv[1:]}))")
    p = subprocess.run([sys.executable, "-c", code, *asked], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    flags = json.loads(p.stdout)
    for name in VALUE_FLAGS | BOOL_FLAGS:
        assert flags[f"--{name}"][1] == (name in VALUE_FLAGS), name
    for letter, name in SHORT.items():
        assert flags[f"-{letter}"] == flags[f"--{name}"], (letter, name)
    assert flags["--set"][2] is True


@pytest.mark.parametrize("args, want", [
    (["install", "-H", "gpu*", "--check", "--json"], {"host": "gpu*", "check": True, "json": True}),
    (["install", "--host=a,b", "-i", "inv.yml", "--limit", "a"], {"host": "a,b", "inventory": "inv.yml",
                                                                  "limit": "a"}),
    (["install", "--set", "workdir=/x", "-e", "k=v", "-t", "uv"], {"set": ["workdir=/x", "k=v"],
                                                                    "installer": "uv"}),
    (["install"], {}),
])
def test_a_line_read_without_doubt(args, want):
    assert read_install_args(args) == {"set": [], **want}


@pytest.mark.parametrize("args", [
    ["facts", "-H", "h"],                        # another command
    ["install", "-v"], ["install", "-vv"],        # -v: a verbose run is not the one timed
    ["install", "--help"], ["install", "-h"],
    ["install", "--facts", "f.json", "--check"],  # no probe
    ["install", "--docker"], ["install", "--list-hosts"],
    ["install", "-Hh"], ["install", "-jc"],       # combined short flags
    ["install", "-H"], ["install", "--host"],     # a value missing
    ["install", "--host", "--check"],
    ["install", "-H", "a", "--host", "b"],        # given twice
    ["install", "preflight"],                     # another task on the line
    ["install", "--skip_preflight"],              # not a spelling invoke takes
])
def test_a_line_with_any_doubt_starts_nothing(args):
    assert read_install_args(args) is None


def test_an_unknown_inventory_or_host_starts_nothing_and_says_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OCRDEPLOY_INVENTORY", raising=False)
    monkeypatch.chdir(tmp_path)
    assert early_install.start(["install", "-i", str(tmp_path / "missing.yml")]) == 0
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"gpu1": {"ansible_host": "127.0.0.9"}}}}))
    assert early_install.start(["install", "-i", str(inv), "-H", "nosuch"]) == 0
    assert early_install.start(["install", "-i", str(inv), "-H", "localhost"]) == 0    # local: probed in-process
    assert early_install.start(["install", "-i", str(inv), "--forks", "zero"]) == 0
    assert capsys.readouterr() == ("", "") and not early_probe._PENDING


def test_a_probe_whose_stdin_closes_without_a_request_probes_nothing(tmp_path):
    """What an ended early start leaves on the host: the probe reads EOF and exits at once, no facts."""
    p = subprocess.run([sys.executable, probe.__file__, "-"], input="", capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, OCRDEPLOY_PROBE_NO_NVML="1"))
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")
    p = subprocess.run([sys.executable, probe.__file__, "-"], input=json.dumps({"workdir": str(tmp_path)}),
                       capture_output=True, text=True, timeout=60, env=dict(os.environ, OCRDEPLOY_PROBE_NO_NVML="1",
                                                                           PATH=f"{SMI / 'rtx5090-590'}:"
                                                                                f"{os.environ['PATH']}"))
    assert p.returncode == 0 and probe.MARKER in p.stdout


# `python -c DRIVER OUT ARGV...`: runs ARGV as the program's entry does (`python -m ocrdeploy`, or `inv` when
# ARGV[0] is inv), noting for each ssh started which of invoke and the recipes were imported by then; at exit
# (after early_probe's own discard at exit) it writes the notes, early_probe's counts and whether every ssh it
# started has ended
DRIVER = r"""
import atexit, json, subprocess, sys
out, argv = sys.argv[1], sys.argv[2:]
notes, procs = [], []
init = subprocess.Popen.__init__
def spy(self, args, *a, **k):
    if isinstance(args, list) and args and str(args[0]).endswith("ssh"):
        notes.append(sorted(m for m in ("invoke", "ocrdeploy.recipes", "ocrdeploy.tasks", "ocrdeploy.inventory")
                            if m in sys.modules))
        procs.append(self)
    return init(self, args, *a, **k)
subprocess.Popen.__init__ = spy
def report():
    from ocrdeploy.provision import early_probe
    with open(out, "w") as fh:
        json.dump({"notes": notes, "stats": early_probe.STATS, "all_ended": all(p.poll() is not None for p in procs)}, fh)
atexit.register(report)          # runs last: after early_probe's own discard, registered later
if "SKEW" in __import__("os").environ:
    from ocrdeploy.commands import early_install
    read = early_install.read_install_args
    early_install.read_install_args = lambda a: dict(read(a), set=read(a)["set"] + ["workdir=/elsewhere"])
sys.argv = argv
if argv[0] == "inv":
    from invoke.main import program
    program.run()
else:
    import runpy
    runpy.run_module("ocrdeploy", run_name="__main__")
"""


def drive(tmp_path, lab, argv, env=None):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    e = dict(os.environ, OCRDEPLOY_KNOWN_HOSTS=str(lab.known_hosts), COLUMNS="200", HOME=str(home),
             **(env or {}))
    e.pop("OCRDEPLOY_INVENTORY", None)
    e.pop("XDG_CACHE_HOME", None)                 # the remembered lines live under HOME's .cache
    out = tmp_path / "drive.json"
    p = subprocess.run([sys.executable, "-c", DRIVER, str(out), *argv], capture_output=True, text=True, cwd=ROOT,
                       env=e, timeout=180)
    return p, json.loads(out.read_text())


def lab_inventory(lab, tmp_path, ip, **vars_):
    h = lab.start("early", ip, path_prefix=str(SMI / "rtx5090-590"))
    inv = tmp_path / "inv.yml"
    sources = {k: str(tmp_path / k) for k in ("sdk_repo", "vllm_src", "transformers_src")}
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"h": lab.inventory_entry(h, workdir=str(tmp_path / "wd"),
                                                                              **{**sources, **vars_})}}}))
    return inv


@pytest.mark.ssh
def test_an_ssh_install_starts_its_probe_before_invoke_and_takes_it_over(lab, tmp_path):
    inv = lab_inventory(lab, tmp_path, "127.0.0.81")
    p, got = drive(tmp_path, lab, ["ocrdeploy", "install", "-H", "h", "--check", "--json", "-s", "tools-venv", "-i", str(inv)])
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(p.stdout)["hosts"]["h"]
    assert doc["reachable"] and doc["commands_run"] == 0
    # one ssh, started before invoke, the tasks and the recipes (after reading the inventory)
    assert got["notes"] == [["ocrdeploy.inventory"]]
    assert got["stats"] == {"started": 1, "adopted": 1, "ended": 0} and got["all_ended"]
    # the re-run starts the line it remembered before reading the inventory, and takes it over
    p, got = drive(tmp_path, lab, ["ocrdeploy", "install", "-H", "h", "--check", "--json", "-s", "tools-venv",
                                   "-i", str(inv)])
    assert p.returncode == 0, p.stderr[-3000:]
    assert json.loads(p.stdout)["hosts"]["h"]["reachable"]
    assert got["notes"] == [[]] and got["stats"] == {"started": 1, "adopted": 1, "ended": 0}
    # another command line, or the inventory changed: not the remembered line's key, the inventory is read again
    p, got = drive(tmp_path, lab, ["ocrdeploy", "install", "-H", "h", "--check", "-s", "tools-venv", "-i", str(inv)])
    assert p.returncode == 0 and got["notes"] == [["ocrdeploy.inventory"]], p.stderr[-3000:]
    inv.write_text(inv.read_text() + "\n")
    p, got = drive(tmp_path, lab, ["ocrdeploy", "install", "-H", "h", "--check", "--json", "-s", "tools-venv",
                                   "-i", str(inv)])
    assert p.returncode == 0 and got["notes"] == [["ocrdeploy.inventory"]], p.stderr[-3000:]
    assert got["stats"] == {"started": 1, "adopted": 1, "ended": 0}


@pytest.mark.ssh
def test_a_remembered_line_the_run_does_not_take_is_ended_and_forgotten(lab, tmp_path):
    inv = lab_inventory(lab, tmp_path, "127.0.0.89")
    argv = ["ocrdeploy", "install", "-H", "h", "--check", "--json", "-s", "tools-venv", "-i", str(inv)]
    drive(tmp_path, lab, argv)
    memory = tmp_path / "home" / ".cache" / "ocrdeploy" / "early-probe.json"
    doc = json.loads(memory.read_text())
    ((key, lines),) = doc.items()
    assert len(lines) == 1 and lines[0][-1].endswith(str(tmp_path / "wd"))     # the probe's work dir, last word
    assert memory.stat().st_mode & 0o077 == 0
    lines[0][-1] = lines[0][-1].replace(str(tmp_path / "wd"), str(tmp_path / "elsewhere"))
    memory.write_text(json.dumps({key: lines}))
    p, got = drive(tmp_path, lab, argv)
    assert p.returncode == 0 and json.loads(p.stdout)["hosts"]["h"]["reachable"], p.stderr[-3000:]
    assert got["stats"] == {"started": 1, "adopted": 0, "ended": 1} and got["all_ended"]
    assert json.loads(memory.read_text()) == {}                                   # forgotten
    p, got = drive(tmp_path, lab, argv)                                           # read afresh, remembered again
    assert got["notes"] == [["ocrdeploy.inventory"]] and got["stats"]["adopted"] == 1
    assert json.loads(memory.read_text())[key][0][-1].endswith(str(tmp_path / "wd"))


@pytest.mark.ssh
def test_inv_install_starts_its_probe_before_the_tasks_are_imported(lab, tmp_path):
    inv = lab_inventory(lab, tmp_path, "127.0.0.82")
    p, got = drive(tmp_path, lab, ["inv", "install", "-H", "h", "--check", "--json", "-s", "tools-venv", "-i", str(inv)])
    assert p.returncode == 0, p.stderr[-3000:]
    assert json.loads(p.stdout)["hosts"]["h"]["reachable"]
    assert got["notes"] == [["invoke", "ocrdeploy.inventory"]]  # invoke runs first under `inv`; tasks, recipes not yet
    assert got["stats"] == {"started": 1, "adopted": 1, "ended": 0}


@pytest.mark.ssh
def test_a_started_probe_the_run_does_not_take_is_ended(lab, tmp_path):
    """The early start saw another work dir than the run (SKEW): the run spawns its own ssh, the started one
    is ended at exit and its probe, given no request, probes nothing (above)."""
    inv = lab_inventory(lab, tmp_path, "127.0.0.83")
    p, got = drive(tmp_path, lab, ["ocrdeploy", "install", "-H", "h", "--check", "--json", "-s", "tools-venv", "-i", str(inv)],
                   env={"SKEW": "1"})
    assert p.returncode == 0, p.stderr[-3000:]
    assert json.loads(p.stdout)["hosts"]["h"]["reachable"]
    assert got["notes"] == [["ocrdeploy.inventory"], ["invoke", "ocrdeploy.inventory", "ocrdeploy.recipes",
                                                      "ocrdeploy.tasks"]]
    assert got["stats"] == {"started": 1, "adopted": 0, "ended": 1} and got["all_ended"]


@pytest.mark.ssh
def test_a_run_that_stops_at_an_input_error_ends_its_started_probe(lab, tmp_path):
    """An input error the plan finds (a recipe's source var not set: the run must ask, never guess), after the early
    probe started.  (A var the inventory load refuses, such as `model_source: hub`, stops the run before any probe.)"""
    inv = lab_inventory(lab, tmp_path, "127.0.0.85", sdk_repo=None)
    p, got = drive(tmp_path, lab, ["ocrdeploy", "install", "-H", "h", "-i", str(inv)])
    assert p.returncode == 2 and "sdk_repo" in p.stderr and "Traceback" not in p.stderr, p.stderr[-3000:]
    assert got["notes"] == [["ocrdeploy.inventory"]] and got["stats"] == {"started": 1, "adopted": 0, "ended": 1} and got["all_ended"]


@pytest.mark.ssh
@pytest.mark.parametrize("var,value", [("model_source", "hub"), ("installer", "pipx"),
                                       ("pip_index_url", "mirror.example/simple"), ("pip_trusted_host", "a/b")])
def test_an_inventory_var_refused_at_load_starts_no_probe(lab, tmp_path, var, value):
    """The URL vars and installer are checked when the inventory is read, as model_source is: the line names the
    file and the var, and no probe was started for a run that stops there."""
    inv = lab_inventory(lab, tmp_path, "127.0.0.78", **{var: value})
    p, got = drive(tmp_path, lab, ["ocrdeploy", "install", "-H", "h", "-i", str(inv)])
    assert p.returncode == 2 and f"{inv}:" in p.stderr and f"host 'h': {var}" in p.stderr, p.stderr[-3000:]
    assert "Traceback" not in p.stderr and got["stats"].get("started", 0) == 0


@pytest.mark.ssh
def test_a_verbose_run_starts_nothing_early(lab, tmp_path):
    inv = lab_inventory(lab, tmp_path, "127.0.0.84")
    p, got = drive(tmp_path, lab, ["ocrdeploy", "install", "-H", "h", "--check", "-v", "-s", "tools-venv", "-i", str(inv)])
    assert p.returncode == 0, p.stderr[-3000:]
    assert got["notes"] == [["invoke", "ocrdeploy.inventory", "ocrdeploy.recipes", "ocrdeploy.tasks"]]
    assert got["stats"] == {"started": 0, "adopted": 0, "ended": 0}


@pytest.mark.ssh
def test_the_inventorys_warnings_are_said_once(lab, tmp_path):
    """The early read of the inventory says nothing: a name both a host and a group, and ~/.ssh/config's
    Match block paramiko cannot evaluate (read for a name the inventory lacks), are each said once, by the run."""
    h = lab.start("early", "127.0.0.86", path_prefix=str(SMI / "rtx5090-590"))
    sources = {k: str(tmp_path / k) for k in ("sdk_repo", "vllm_src", "transformers_src")}
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"h": lab.inventory_entry(h, workdir=str(tmp_path / "wd"),
                                                                            **sources)},
                                           "children": {"h": {"hosts": {"h": None}}},
                                           "vars": {"workdir": str(tmp_path / "wd"), **sources}}}))
    (tmp_path / "home" / ".ssh").mkdir(parents=True)
    (tmp_path / "home" / ".ssh" / "config").write_text(
        f"Match localnetwork 10.0.0.0/8\n  Compression no\nHost alias\n  HostName {h.ip}\n  Port {h.port}\n"
        f"  User {os.environ.get('USER') or 'root'}\n  IdentityFile {lab.client_key}\n")
    p, got = drive(tmp_path, lab, ["ocrdeploy", "install", "-H", "all:&h", "--check", "--json", "-s", "tools-venv",
                                   "-i", str(inv)])
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stderr.count("is both a host and a group") == 1, p.stderr
    assert got["stats"] == {"started": 1, "adopted": 1, "ended": 0}
    p, got = drive(tmp_path, lab, ["ocrdeploy", "install", "-H", "alias", "--check", "--json", "-s", "tools-venv",
                                   "-i", str(inv)])
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stderr.count("skipped Match block") == 1, p.stderr
    assert got["stats"] == {"started": 1, "adopted": 1, "ended": 0}


@pytest.mark.ssh
def test_each_host_of_a_fleet_gets_its_own_started_probe(lab, tmp_path):
    sources = {k: str(tmp_path / k) for k in ("sdk_repo", "vllm_src", "transformers_src")}
    hosts = {name: lab.inventory_entry(lab.start(name, ip, path_prefix=str(SMI / "rtx5090-590")),
                                       workdir=str(tmp_path / name), **sources)
             for name, ip in (("f1", "127.0.0.87"), ("f2", "127.0.0.88"))}
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    p, got = drive(tmp_path, lab, ["ocrdeploy", "install", "-H", "f1,f2", "--check", "--json", "-s", "tools-venv",
                                   "-i", str(inv)])
    assert p.returncode == 0, p.stderr[-3000:]
    assert all(d["reachable"] for d in json.loads(p.stdout)["hosts"].values())
    assert got["notes"] == [["ocrdeploy.inventory"]] * 2
    assert got["stats"] == {"started": 2, "adopted": 2, "ended": 0}
    p, got = drive(tmp_path, lab, ["ocrdeploy", "install", "-H", "f1,f2", "--forks", "1", "--check", "--json",
                                   "-s", "tools-venv", "-i", str(inv)])
    assert p.returncode == 0, p.stderr[-3000:]
    assert got["notes"][0] == ["ocrdeploy.inventory"] and len(got["notes"]) == 2   # --forks 1: the second waits
    assert got["stats"] == {"started": 1, "adopted": 1, "ended": 0}


def test_the_default_inventories_are_the_inventorys_own():
    """early_probe keys remembered lines on the default inventory files without importing the inventory module."""
    from ocrdeploy.inventory.model import DEFAULT_FILES

    assert early_probe.DEFAULT_INVENTORIES == DEFAULT_FILES
