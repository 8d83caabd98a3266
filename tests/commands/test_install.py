"""`inv install` as a user runs it, on steps that need no GPU: a real clone from a local repository."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from terminal import sigint_as_from_a_terminal

ROOT = Path(__file__).parents[2]


def make_repo(tmp_path) -> Path:
    repo = tmp_path / "MiniCPM-OCR"
    (repo / "sdk").mkdir(parents=True)
    (repo / "sdk" / "README.md").write_text("sdk\n")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def run(args, env=None, cwd=ROOT):
    e = dict(os.environ, COLUMNS="200")
    e.pop("OCRDEPLOY_INVENTORY", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "ocrdeploy", "install", *args], capture_output=True, text=True,
                          env=e, cwd=cwd, timeout=300)


HEAVY = {"rich", "httpx", "huggingface_hub", "modelscope", "paramiko", "fabric", "urllib.request",
         "ocrdeploy.diagnose.scanner", "packaging.requirements", "encodings.idna",
         # invoke's import-time extras (ocrdeploy.cli defers them) and the recipes a dspark/sdk-only run does not use
         "asyncio", "unittest.mock", "invoke.vendor.yaml", "ocrdeploy.recipes.deepseek", "ocrdeploy.recipes.deepseek_tf"}


def imported(stderr: str) -> set:
    """The modules a `python -X importtime` run loaded, from its report on stderr."""
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_install_one_step_then_rerun_is_ok(tmp_path):
    repo = make_repo(tmp_path)
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(tmp_path / "wd"), "sdk_repo": str(repo)}}}))
    os.utime(inv, (time.time() - 60,) * 2)      # written a while ago: its parse is kept (inventory/cache.py)
    cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    args = ["--inventory", str(inv), "--recipe", "sdk-only", "--step", "sdk-clone", "--json"]
    p = run(args, env=cache)
    assert p.returncode == 0, p.stderr
    step = json.loads(p.stdout)["hosts"]["localhost"]["steps"][0]
    assert (step["step"], step["status"]) == ("sdk-clone", "changed")
    assert (tmp_path / "wd" / "minicpmvocr-sdk" / "sdk" / "README.md").exists()
    assert Path(step["log"]).read_text().startswith(f"\n$ git clone -- {repo} {tmp_path}/wd/minicpmvocr-sdk")
    p = run(args, env=cache)
    doc = json.loads(p.stdout)["hosts"]["localhost"]
    assert p.returncode == 0 and doc["steps"][0]["status"] == "ok" and doc["commands_run"] == 0
    # a local no-op loads nothing it does not use (issue 21: the CLI's imports were most of its time), not even
    # PyYAML for an inventory unchanged since the last run; its step line and recap are plain text here, as
    # rich would print them without a terminal
    p = run([a for a in args if a != "--json"], env={**cache, "PYTHONPROFILEIMPORTTIME": "1"})
    assert p.returncode == 0 and "RECAP\nlocalhost : ok=1  changed=0  failed=0  skipped=0" in p.stdout, p.stdout
    assert "sdk-clone              ok           cloned at" in p.stdout
    assert "preflight failed" not in p.stdout, p.stdout     # said only of a host whose preflight failed
    assert imported(p.stderr) & (HEAVY | {"yaml"}) == set()


@pytest.mark.parametrize("args,needle", [
    (["--step", "nope"], "--step 'nope': no such step in recipe sdk-only"),
    (["--step", "sdk-clone", "--from", "sdk-venv"], "--step and --from exclude each other"),
    (["--facts", "x.json"], "--facts only plans"),
    (["--set", "novalue"], "expected KEY=VALUE"),
    (["--recipe", "nope"], "unknown recipe 'nope'"),
    (["--docker"], "--docker writes the DeepSeek-OCR image"),
    (["--recipe", "deepseek-ocr-vllm085", "--docker", "--pip-index-url", "mirror.example/simple"],
     "--pip-index-url 'mirror.example/simple': an http(s) URL of a package index"),
    (["--recipe", "deepseek-ocr-vllm085", "--docker", "--pip-index-url", "https://m/simple\nRUN rm -rf /"],
     "an http(s) URL of a package index"),
    (["--recipe", "deepseek-ocr-vllm085", "--pip-index-url", "https://m/simple"], "--pip-index-url goes with --docker"),
    (["--check", "--facts", "/tmp"], "/tmp: is a directory, expected the JSON of `inv facts --json --raw`"),
    (["--recipe", "deepseek-ocr-vllm085", "--docker", "--pip-index-url", "http://[::1/simple"],
     "--pip-index-url 'http://[::1/simple': an http(s) URL of a package index"),
])
def test_install_usage_errors(tmp_path, args, needle):
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(tmp_path / "wd"), "sdk_repo": "x"}}}))
    base = ["--inventory", str(inv)] + ([] if "--recipe" in args else ["--recipe", "sdk-only"])
    p = run(base + args)
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr


@pytest.mark.ssh
def test_install_over_ssh_then_no_op(lab, tmp_path):
    repo = make_repo(tmp_path)
    h = lab.start("inst", "127.0.0.9")
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"inst": lab.inventory_entry(
        h, workdir=str(tmp_path / "rwd"), sdk_repo=str(repo))}}}))
    env = {"OCRDEPLOY_KNOWN_HOSTS": str(lab.known_hosts)}
    args = ["--inventory", str(inv), "--host", "inst", "--recipe", "sdk-only", "--step", "sdk-clone"]
    p = run(args, env=env)
    assert p.returncode == 0 and "changed" in p.stdout, p.stdout + p.stderr
    p = run(args + ["--json"], env={**env, "PYTHONPROFILEIMPORTTIME": "1"})
    doc = json.loads(p.stdout)["hosts"]["inst"]
    assert doc["steps"][0]["status"] == "ok" and doc["commands_run"] == 0
    # the host probes its own GPUs: the controller needs no NVML for a remote-only run; the facts round trip
    # went through the system ssh, so no paramiko connection was opened (tests/provision/test_openssh.py)
    assert imported(p.stderr) & (HEAVY | {"pynvml"}) == set()


def test_docker_takes_the_guides_pip_mirror_as_a_build_argument(tmp_path):
    out = tmp_path / "ctx"
    p = run(["--recipe", "deepseek-ocr-vllm085", "--docker", "--docker-dir", str(out),
             "--pip-index-url", "https://pypi.tuna.tsinghua.edu.cn/simple"])
    assert p.returncode == 0, p.stdout + p.stderr
    text = (out / "Dockerfile").read_text()
    assert "ARG PIP_INDEX_URL=https://pypi.tuna.tsinghua.edu.cn/simple\n" in text
    assert 'pip config set global.index-url "$PIP_INDEX_URL"' in text
    assert text.index("pip config set global.index-url") < text.index("RUN pip install torch==2.6.0")
    assert "--build-arg PIP_INDEX_URL=https://pypi.tuna.tsinghua.edu.cn/simple" in (out / "BUILD.md").read_text()
    p = run(["--recipe", "deepseek-ocr-vllm085", "--docker", "--docker-dir", str(tmp_path / "plain")])
    assert "ARG PIP_INDEX_URL=\n" in (tmp_path / "plain" / "Dockerfile").read_text()   # pip's own index


def test_a_token_in_the_sdk_url_is_never_shown_or_logged(tmp_path):
    """sdk_repo with credentials (https://oauth2:TOKEN@host/...): --check, the step lines, --json and the
    step log show *** or the URL without them (the clone is refused at once: nothing listens on port 9); the
    log is the user's only."""
    wd = tmp_path / "wd"
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd),
                                                    "sdk_repo": "https://oauth2:TOK3N@127.0.0.1:9/org/sdk.git"}}}))
    base = ["--inventory", str(inv), "--recipe", "sdk-only", "--step", "sdk-clone", "--skip-preflight"]
    check = run([*base, "--check"])
    assert "clone -- https://127.0.0.1:9/org/sdk.git " in check.stdout       # the credentials go on stdin
    ran = run([*base, "--json"])
    assert ran.returncode == 1
    (step,) = json.loads(ran.stdout)["hosts"]["localhost"]["steps"]
    assert "clone -- https://127.0.0.1:9/org/sdk.git " in step["reason"] and "exited with" in step["reason"]
    assert "localhost | sdk-clone: running (not cloned yet (https://***@127.0.0.1:9/org/sdk.git))" in ran.stderr
    log = Path(step["log"])
    assert "clone -- https://127.0.0.1:9/org/sdk.git " in log.read_text()
    assert (log.stat().st_mode & 0o777, log.parent.stat().st_mode & 0o777) == (0o600, 0o700)
    for text in (check.stdout, check.stderr, ran.stdout, ran.stderr, log.read_text()):
        assert "TOK3N" not in text


class AuthGitServer:
    """git's "dumb" HTTP protocol (the files of a bare repository, as a static web server gives them)
    behind Basic authentication: a real clone that needs the URL's credentials."""

    def __init__(self, bare: Path, user: str, token: str):
        import base64

        sys.path.insert(0, str(ROOT / "tests"))
        from loopback import LoopbackServer

        want = "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode()
        seen = self.seen = []

        class Server(LoopbackServer):
            def handle(self, h, head):
                from urllib.parse import urlparse

                seen.append(h.headers.get("Authorization"))
                path = bare.parent / urlparse(h.path).path.lstrip("/")
                if h.headers.get("Authorization") != want:
                    return self.send(h, 401, b"auth", "text/plain", head, {"WWW-Authenticate": 'Basic realm="git"'})
                if path.is_file() and bare in path.parents:
                    return self.send(h, 200, path.read_bytes(), "application/octet-stream", head)
                return self.send(h, 404, b"no", "text/plain", head)

        self.server = Server()

    def __enter__(self):
        self.server.__enter__()
        return self

    def __exit__(self, *exc):
        self.server.__exit__(*exc)


def test_a_token_in_the_sdk_url_clones_without_reaching_argv_or_git_config(tmp_path):
    """The clone authenticates with the URL's user:token through a one-shot credential helper fed on
    stdin: git's command line and the checkout's .git/config hold the URL without them."""
    src = make_repo(tmp_path)
    bare = tmp_path / "srv" / "sdk.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True)
    subprocess.run(["git", "-C", str(bare), "update-server-info"], check=True)
    with AuthGitServer(bare, "oauth2", "TOK3N") as git_server:
        url = git_server.server.url + "/sdk.git"
        inv = tmp_path / "inv.yml"
        inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(tmp_path / "wd"),
                                                        "sdk_repo": url.replace("http://", "http://oauth2:TOK3N@")}}}))
        p = run(["--inventory", str(inv), "--recipe", "sdk-only", "--step", "sdk-clone", "--skip-preflight",
                 "--json"], env={"GIT_TERMINAL_PROMPT": "0"})
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    (step,) = json.loads(p.stdout)["hosts"]["localhost"]["steps"]
    assert step["status"] == "changed" and f"clone -- {url} " in step["commands"][0]
    checkout = tmp_path / "wd" / "minicpmvocr-sdk"
    assert (checkout / "sdk" / "README.md").read_text() == "sdk\n"
    config = (checkout / ".git" / "config").read_text()
    assert f"url = {url}\n" in config and "TOK3N" not in config
    assert git_server.seen[0] is None and git_server.seen[-1] is not None     # asked, then authenticated
    assert "TOK3N" not in p.stdout + p.stderr + Path(step["log"]).read_text()


def test_ctrl_c_stops_the_run_ends_the_command_and_exits_130(tmp_path):
    """SIGINT (what Ctrl-C sends) while a step's command runs: the command's process group ends at once
    (git's connection to the never-answering server closes), no later step runs, exit 130."""
    import signal
    import socket
    import threading
    import time

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(5)
    events = []

    def serve():
        conn, _ = srv.accept()
        events.append("connected")
        while conn.recv(65536):
            pass
        events.append("closed")

    threading.Thread(target=serve, daemon=True).start()
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {
        "workdir": str(tmp_path / "wd"), "sdk_repo": f"http://127.0.0.1:{srv.getsockname()[1]}/sdk.git",
        "layout_url": "http://127.0.0.1:9/layout.tar"}}}))
    env = dict(os.environ, COLUMNS="200")
    env.pop("OCRDEPLOY_INVENTORY", None)
    proc = subprocess.Popen([sys.executable, "-m", "ocrdeploy", "install", "--inventory", str(inv), "--recipe",
                             "sdk-only", "--from", "sdk-clone", "--skip-preflight"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env, start_new_session=True,
                            preexec_fn=sigint_as_from_a_terminal)
    try:
        deadline = time.monotonic() + 60
        while "connected" not in events and time.monotonic() < deadline:
            time.sleep(0.05)
        assert events == ["connected"]
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        srv.close()
    assert proc.returncode == 130 and err.rstrip().endswith("interrupted"), out + err
    deadline = time.monotonic() + 10           # the server thread sees the close a moment after the exit
    while "closed" not in events and time.monotonic() < deadline:
        time.sleep(0.05)
    assert events == ["connected", "closed"]
    assert "Traceback" not in out + err and "sdk-paddlex" not in out + err and "RECAP" not in out


def test_max_jobs_that_is_not_a_number_fails_the_step_in_one_line(tmp_path):
    facts = Path(__file__).parents[1] / "fixtures" / "facts" / "ubuntu2204-rtx5090-bare.json"
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(tmp_path / "wd"), "sdk_repo": "/x",
                                                    "vllm_src": "/x", "transformers_src": "/x"}}}))
    p = run(["--inventory", str(inv), "--check", "--facts", str(facts), "--set", "max_jobs=abc", "--step",
             "vllm-compile", "--json"])
    assert p.returncode == 1 and "Traceback" not in p.stderr
    (step,) = json.loads(p.stdout)["hosts"]["localhost"]["steps"]
    assert (step["status"], step["reason"]) == (
        "failed", "max_jobs must be a whole number of compile jobs (1 or more), got 'abc'")


def test_a_facts_file_is_a_bounded_regular_file_of_the_right_shape(tmp_path):
    """--facts FILE (red team M19): a FIFO no one writes, /dev/zero, a file past the size bound, 100000-deep
    JSON and values of the wrong type are each one line naming the file, exit 2, at once."""
    import copy

    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(tmp_path / "wd"), "sdk_repo": "x"}}}))
    fifo = tmp_path / "facts.fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(17 * 2**20)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    good = json.loads((ROOT / "tests" / "fixtures" / "facts" / "ubuntu2204-rtx5090-bare.json").read_text())
    cases = {fifo: "not a regular file", "/dev/zero": "not a regular file", big: "larger than 16 MiB",
             deep: "JSON nested too deeply"}
    for i, (key, value) in enumerate([("workdir", 5), ("gpu", "x"), ("venvs", {"sdk-env": 3}),
                                      ("workdir", {"path": "/w", "free": "lots"}), ("pythons", [5])]):
        doc = copy.deepcopy(good)
        doc[key] = value
        f = tmp_path / f"wrong{i}.json"
        f.write_text(json.dumps({"localhost": {"facts": doc}}))
        cases[f] = "not a facts document"
    for i, doc in enumerate([{"a": 1, "b": 2}, [1, 2], "facts", {"hosts": {"h": {"facts": 5}}}]):
        f = tmp_path / f"nofacts{i}.json"        # JSON, but no facts document in it at all (no traceback)
        f.write_text(json.dumps(doc))
        cases[f] = "not a facts document"
    for path, needle in cases.items():
        e = dict(os.environ, COLUMNS="200")
        e.pop("OCRDEPLOY_INVENTORY", None)
        p = subprocess.run([sys.executable, "-m", "ocrdeploy", "install", "--inventory", str(inv), "--recipe",
                            "sdk-only", "--check", "--facts", str(path)], capture_output=True, text=True, env=e,
                           cwd=ROOT, timeout=60)
        assert p.returncode == 2, (path, p.stdout, p.stderr)
        assert f"{path}: {needle}" in p.stderr and "Traceback" not in p.stderr, (path, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_check_force_on_a_clean_sdk_env_has_nothing_to_refuse(tmp_path):
    """L3: the guard, forced on an sdk-env without torch or vLLM, said "it holds , and ..." and failed."""
    facts = ROOT / "tests" / "fixtures" / "facts" / "ubuntu2204-rtx5090-bare.json"
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(tmp_path / "wd"), "sdk_repo": "x"}}}))
    p = run(["--inventory", str(inv), "--recipe", "sdk-only", "--check", "--force", "--facts", str(facts),
             "--step", "sdk-venv-guard", "--json"])
    assert p.returncode == 0, p.stdout + p.stderr
    (step,) = json.loads(p.stdout)["hosts"]["localhost"]["steps"]
    assert step["status"] == "changed" and step["commands"] == [] and "holds ," not in json.dumps(step)


@pytest.mark.ssh
def test_a_shared_build_plans_only_with_the_hosts_it_reached(lab, tmp_path, monkeypatch):
    """Hosts wait for each other's plans, so the fleet is the hosts connected first (conn.ensure_open());
    one that cannot be reached is left out instead of being waited for."""
    import socket

    from ocrdeploy.commands.install import _shared_builds
    from ocrdeploy.inventory import load_inventory, select_hosts
    from ocrdeploy.provision.report import console
    from ocrdeploy.provision.session import Session
    from ocrdeploy.provision.step import Step

    class Build(Step):
        name = "build"

        def build_inputs(self, facts, vars_):
            return {"src": "x"}

    up = lab.start("sb1", "127.0.0.91")
    with socket.socket() as s:              # a port nothing listens on: connection refused
        s.bind(("127.0.0.92", 0))
        dead_port = s.getsockname()[1]
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {
        "up": lab.inventory_entry(up), "down": {**lab.inventory_entry(up), "ansible_host": "127.0.0.92",
                                                "ansible_port": dead_port}}}}))
    monkeypatch.setenv("OCRDEPLOY_KNOWN_HOSTS", str(lab.known_hosts))
    hosts = select_hosts(load_inventory(inv), host="up,down")
    with Session(hosts, lazy=True, connect_timeout=5) as session:
        shared = _shared_builds(session, {h.name: [Build()] for h in hosts}, True, console())
        try:
            assert shared is not None and shared.order == ["up"]
        finally:
            shared.close()


@pytest.mark.parametrize("version", [2, 999, "1", None, True])
def test_a_facts_file_from_another_probe_version_is_refused(tmp_path, version):
    """Facts recorded by another probe version were planned from as if this one had read them (exit 0)."""
    doc = json.loads((ROOT / "tests" / "fixtures" / "facts" / "ubuntu2204-rtx5090-bare.json").read_text())
    doc["probe"]["version"] = version
    f = tmp_path / "other.json"
    f.write_text(json.dumps({"hosts": {"gpu1": {"reachable": True, "facts": doc}}}))
    from ocrdeploy.commands.install import load_facts_file
    from ocrdeploy.errors import UsageError

    with pytest.raises(UsageError) as exc:
        load_facts_file(str(f))
    assert str(exc.value).startswith(f"{f}: not a facts document (probe version {version!r}, this ocrdeploy reads "
                                     f"version 1: record it again")


def test_one_hosts_facts_plan_one_host(tmp_path):
    """--facts with a selection of two hosts planned both from the one file (exit 0), each recap line
    speaking for a host no facts were read from."""
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"h1": {"ansible_host": "127.0.0.1", "ansible_port": 1},
                                                     "h2": {"ansible_host": "127.0.0.1", "ansible_port": 2}},
                                           "vars": {"sdk_repo": "x"}}}))
    facts = ROOT / "tests" / "fixtures" / "facts" / "ubuntu2204-rtx5090-bare.json"
    p = run(["--inventory", str(inv), "--recipe", "sdk-only", "--check", "--facts", str(facts), "-H", "all"])
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert p.stderr.strip() == (f"error: --facts {facts} describes one host, and the selection names 2 (h1, h2): "
                                f"select one with --host")
    p = run(["--inventory", str(inv), "--recipe", "sdk-only", "--check", "--facts", str(facts), "-H", "h2"])
    assert p.returncode == 0 and "h2 : ok=" in p.stdout, p.stdout + p.stderr


def test_router_true_installs_the_router_env_when_it_runs_never_when_it_plans(tmp_path):
    """An inventory with `router: true`: `inv install` sees to the router's venv (here an existing one, given
    by router_env) after the steps; `--check` only plans, so it neither touches nor reports the router."""
    repo = make_repo(tmp_path)
    renv = tmp_path / "renv"
    (renv / "bin").mkdir(parents=True)
    (renv / "bin" / "vllm-router").write_text("#!/bin/sh\nexit 0\n")
    (renv / "bin" / "vllm-router").chmod(0o755)
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(tmp_path / "wd"), "sdk_repo": str(repo),
                                                    "router": True, "router_env": str(renv)}}}))
    args = ["--inventory", str(inv), "--recipe", "sdk-only", "--step", "sdk-clone"]
    p = run([*args, "--check"])
    assert p.returncode == 0, p.stderr
    assert "router:" not in p.stdout and "check mode: nothing was run" in p.stdout, p.stdout
    p = run(args)
    assert p.returncode == 0, p.stderr
    assert f"localhost | router: vllm-router==0.1.17 already there ({renv}/bin/vllm-router)" in p.stdout, p.stdout


def test_a_facts_file_whose_gpus_are_not_objects_is_refused_as_such(tmp_path):
    """gpu.gpus entries are read as objects by every check: a list of numbers is not a facts document."""
    from ocrdeploy.commands.install import load_facts_file
    from ocrdeploy.errors import UsageError

    doc = json.loads((ROOT / "tests" / "fixtures" / "facts" / "ubuntu2204-rtx5090-bare.json").read_text())
    doc["gpu"]["gpus"] = [0, 1]
    f = tmp_path / "f.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(UsageError) as exc:
        load_facts_file(str(f))
    assert str(exc.value) == (f"{f}: not a facts document (gpu.gpus holds something other than objects; expected "
                              f"the output of `inv facts --json --raw`)")
