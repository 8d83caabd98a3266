"""serve / status / stop against a stand-in vLLM server (a real HTTP process), locally and over SSH.

The stand-in is here only for what no real engine shows without a GPU: GPUs (recorded nvidia-smi boxes,
one instance per free card), a CUDA-graph capture that fails (the restart-then-eager policy) and DSpark's
acceptance figures.  The real flags, readiness, failures and counters are tested against real engines in
test_services_engines.py (marker engine).
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

ROOT = Path(__file__).parents[2]
FIX = ROOT / "tests" / "fixtures"
SMI = FIX / "nvidia-smi" / "rtx5090-590"


def provision(wd: Path, behave=None, draft_behave=None):
    """A work dir whose vllm-ocr-env runs the stand-in server, with verified models in the state."""
    env = wd / "vllm-ocr-env"
    site = env / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    site.mkdir(parents=True)
    shutil.copytree(FIX / "standin" / "vllm", site / "vllm")
    (env / "bin").mkdir()
    os.symlink(os.path.realpath(sys.executable), env / "bin" / "python")
    (env / "pyvenv.cfg").write_text(f"home = {Path(os.path.realpath(sys.executable)).parent}\nversion = 3.13.9\n")
    models = {}
    for name in ("MiniCPM-OCR-1.0", "MiniCPM-OCR-1.0-DSpark"):
        d = wd / "models" / name
        d.mkdir(parents=True)
        models[name] = {"path": str(d), "kind": "main", "files": {}, "manifest": {"release": "2026-10-19"}}
    (wd / "models" / "MiniCPM-OCR-1.0" / "standin.json").write_text(json.dumps(behave or {}))
    (wd / ".ocrdeploy").mkdir()
    (wd / ".ocrdeploy" / "state.json").write_text(json.dumps({"models": models}))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(task, args, inv, env=None, timeout=180):
    e = dict(os.environ, PATH=f"{SMI}:{os.environ['PATH']}", OCRDEPLOY_PROBE_NO_NVML="1", COLUMNS="200")
    e.pop("OCRDEPLOY_INVENTORY", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "ocrdeploy", task, "--inventory", str(inv), *args],
                          capture_output=True, text=True, cwd=ROOT, env=e, timeout=timeout)


@pytest.fixture
def site(tmp_path):
    wd = tmp_path / "wd"
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd)}}}))
    yield wd, inv
    cli("stop", ["--grace", "2"], inv)        # never leave a server behind


def test_serve_status_stop(site):
    wd, inv = site
    provision(wd, {"ready_after": 1.5})
    port = free_port()
    p = cli("serve", ["--port", str(port), "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    inst = json.loads(p.stdout)["hosts"]["localhost"]["instances"][0]
    assert inst["ready"] and inst["url"] == f"http://127.0.0.1:{port}" and inst["gpu"] == "0"
    assert inst["elapsed"] >= 1.0          # it waited through "refused" while the server started
    cmd = inst["command"]
    # loopback unless --public: the server listens on 127.0.0.1 only (127.0.0.2 is loopback too, but refused)
    assert inst["bind"] == "127.0.0.1" and "--host 127.0.0.1 " in cmd
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.2", port), timeout=2).close()
    assert "--served-model-name minicpm-ocr" in cmd and "--trust-request-mm-kwargs" in cmd
    assert '"method":"dspark"' in cmd and '"num_speculative_tokens":15' in cmd and "--max-num-seqs 1" in cmd
    record = json.loads((wd / ".ocrdeploy" / "services" / f"minicpm-ocr-{port}.json").read_text())
    pid = record["pid"]
    os.kill(pid, 0)

    p = cli("status", ["--json"], inv)
    s = json.loads(p.stdout)["hosts"]["localhost"]["services"][0]
    assert p.returncode == 0 and s["alive"] and s["ready"] and s["ids"] == ["minicpm-ocr"]
    assert s["spec_decode"]["state"] == "no drafts yet"
    for _ in range(3):
        httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json={"model": "minicpm-ocr", "messages": []})
    s = json.loads(cli("status", ["--json"], inv).stdout)["hosts"]["localhost"]["services"][0]
    assert s["spec_decode"] == {"state": "ok", "accepted": 48.0, "drafts": 9.0, "accept_length": 6.333}

    p = cli("serve", ["--port", str(port)], inv)
    assert p.returncode == 1 and f"already runs (pid {pid}" in p.stdout

    p = cli("stop", [], inv)
    assert p.returncode == 0 and f"pid {pid} stopped" in p.stdout
    from ocrdeploy.services.hostside import alive

    assert not alive(pid)          # gone (or a zombie waiting for init to reap it)
    assert json.loads(cli("status", ["--json"], inv).stdout)["hosts"]["localhost"]["services"] == []


def test_port_taken_is_refused(site):
    wd, inv = site
    provision(wd)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        p = cli("serve", ["--port", str(port)], inv)
    assert p.returncode == 1 and f"port {port} is already taken" in p.stdout


def test_dying_server_is_explained(site):
    wd, inv = site
    provision(wd, {"log": str(FIX / "vllm-logs" / "gpu-busy.log"), "die": 1})
    p = cli("serve", ["--port", str(free_port()), "--standard"], inv)
    assert p.returncode == 1
    assert "not ready: exited" in p.stdout
    assert "diagnosis gpu-busy-memory" in p.stdout and "Free memory on device" in p.stdout
    assert "fix: Pick a free GPU (CUDA_VISIBLE_DEVICES=<idle card>; `inv preflight` names it) or stop the other " \
           "process." in " ".join(p.stdout.split())


def test_failed_start_fix_names_the_instances_port(site):
    """The second of two instances (--port P, its port P+1) fails to bind: the fix names P+1, not the default
    18499 (CI, 2026-12-05: the recorded vLLM log is that failure's)."""
    wd, inv = site
    provision(wd, {"log": str(FIX / "vllm-logs" / "address-in-use.log"), "die": 1})
    port = free_port()
    p = cli("serve", ["--port", str(port), "--standard", "--json"], inv)
    assert p.returncode == 1
    (found,) = [f for f in json.loads(p.stdout)["hosts"]["localhost"]["instances"][0]["findings"]
                if f["id"] == "address-in-use"]
    assert f"ss -ltnp 'sport = :{port}'" in found["fix"] and "18499" not in found["fix"]


def test_a_port_in_the_ephemeral_range_is_warned_about(site):
    """A port the kernel can hand to anyone (bind(0), outgoing connections, a starting engine's own sockets) is
    said once per instance, on a ready start and on a failed one; a port below the range is not."""
    sys.path.insert(0, str(ROOT / "tests"))
    from engines import ephemeral
    from engines import free_port as low_port

    low, high = ephemeral()
    wd, inv = site
    provision(wd)
    inside = free_port()                   # bind(0): the kernel's pick, inside its range
    assert low <= inside <= high
    p = cli("serve", ["--port", str(inside), "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    (inst,) = json.loads(p.stdout)["hosts"]["localhost"]["instances"]
    assert [w for w in inst["warnings"] if "ephemeral port range" in w] == [
        f"port {inside} lies in this host's ephemeral port range ({low}-{high}, net.ipv4.ip_local_port_range): an "
        f"outgoing connection or a starting engine's own sockets can take it at any time; a --port below {low} "
        f"avoids that"]
    cli("stop", [], inv)
    # --instances 2 --port low-1: the first is below the range, the second (low) inside it, and the advice is
    # about --port, whose value must go one lower for the second instance to leave the range too
    box = {"PATH": f"{FIX / 'nvidia-smi' / '3gpu-busy0'}:{os.environ['PATH']}"}
    p = cli("serve", ["--instances", "2", "--port", str(low - 1), "--json"], inv, env=box)
    assert p.returncode == 0, p.stdout + p.stderr
    first, second = json.loads(p.stdout)["hosts"]["localhost"]["instances"]
    assert not [w for w in first["warnings"] if "ephemeral" in w]
    (w,) = [w for w in second["warnings"] if "ephemeral" in w]
    assert w.startswith(f"port {low} lies in") and w.endswith(f"a --port below {low - 1} avoids that")
    cli("stop", [], inv)
    provision_log = wd / "models" / "MiniCPM-OCR-1.0" / "standin.json"
    provision_log.write_text(json.dumps({"log": str(FIX / "vllm-logs" / "address-in-use.log"), "die": 1}))
    p = cli("serve", ["--port", str(free_port())], inv)
    assert p.returncode == 1 and "diagnosis address-in-use" in p.stdout
    assert "    warning: port " in p.stdout and "ephemeral port range" in p.stdout


def test_cuda_graph_failure_restarts_once_then_enforce_eager(site):
    wd, inv = site
    provision(wd, {"needs_eager": True})
    p = cli("serve", ["--port", str(free_port()), "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    inst = json.loads(p.stdout)["hosts"]["localhost"]["instances"][0]
    assert inst["ready"] and inst["attempts"] == 3
    assert inst["restarts"] == ["restart once: the compile cache now exists (the guide, section 4.4)",
                                "restart with --enforce-eager (the guide, section 4.4)"]
    assert inst["command"].endswith("--enforce-eager")


def test_standard_has_no_spec_counters_and_public_needs_a_key(site):
    wd, inv = site
    provision(wd)
    assert cli("serve", ["--public"], inv).returncode == 2
    port = free_port()
    p = cli("serve", ["--standard", "--port", str(port), "--public", "--api-key", "s3cret", "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    inst = json.loads(p.stdout)["hosts"]["localhost"]["instances"][0]
    assert inst["bind"] == "0.0.0.0" and "s3cret" not in p.stdout + p.stderr and "--api-key" not in inst["command"]
    assert '--limit-mm-per-prompt {"image":36}' in inst["command"]
    assert httpx.get(f"http://127.0.0.1:{port}/v1/models").status_code == 401
    assert httpx.get(f"http://127.0.0.1:{port}/v1/models", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    # the key reaches the server through its environment (VLLM_API_KEY, owner-only), not its command line
    pid = inst["pid"]
    assert b"s3cret" not in Path(f"/proc/{pid}/cmdline").read_bytes()
    assert b"VLLM_API_KEY=s3cret\0" in Path(f"/proc/{pid}/environ").read_bytes()
    record = wd / ".ocrdeploy" / "services" / f"minicpm-ocr-{port}.json"
    assert "s3cret" not in record.read_text() and json.loads(record.read_text())["has_key"] is True
    s = json.loads(cli("status", ["--json", "--api-key", "s3cret"], inv).stdout)["hosts"]["localhost"]["services"][0]
    assert s["ready"] and s["spec_decode"]["state"] == "not applicable"       # never meant to have counters


def test_instances_one_per_free_gpu(site):
    wd, inv = site
    provision(wd)
    port = free_port()
    box = FIX / "nvidia-smi" / "3gpu-busy0"
    env = {"PATH": f"{box}:{os.environ['PATH']}"}
    p = cli("serve", ["--instances", "2", "--port", str(port), "--json"], inv, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    insts = json.loads(p.stdout)["hosts"]["localhost"]["instances"]
    assert [(i["gpu"], i["port"]) for i in insts] == [("1", port), ("2", port + 1)]   # GPU 0 is busy
    p = cli("serve", ["--instances", "3", "--port", str(port + 5)], inv, env=env)
    assert p.returncode == 1 and "3 instance(s) need 3 free GPU(s)" in p.stdout


@pytest.mark.ssh
def test_serve_over_ssh_survives_the_session(lab, tmp_path):
    h = lab.start("svc", "127.0.0.12", path_prefix=str(SMI))
    wd = tmp_path / "rwd"
    provision(wd)
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"gpu": lab.inventory_entry(h, workdir=str(wd))}}}))
    env = {"OCRDEPLOY_KNOWN_HOSTS": str(lab.known_hosts)}
    port = free_port()
    try:
        p = cli("serve", ["--host", "gpu", "--port", str(port)], inv, env=env)
        assert p.returncode == 0, p.stdout + p.stderr
        assert f"ssh -p {h.port} -L {port}:127.0.0.1:{port}" in p.stdout       # the lab's sshd is not on 22
        assert f"--server-url http://127.0.0.1:{port}" in p.stdout
        time.sleep(0.5)      # the SSH session that started it is gone; the server is not
        p = cli("status", ["--host", "gpu", "--json"], inv, env=env)
        s = json.loads(p.stdout)["hosts"]["gpu"]["services"][0]
        assert s["alive"] and s["ready"]
        p = cli("verify", ["--host", "gpu", "--json"], inv, env=env)    # through an SSH tunnel to the loopback port
        checks = {c["check"]: c for c in json.loads(p.stdout)["hosts"]["gpu"]["checks"]}
        assert checks["smoke request"]["status"] == "passed" and checks["DSpark counters"]["status"] == "passed"
        assert checks["parse: text page"]["status"] == "not run"   # no SDK on this host: said, not claimed
    finally:
        p = cli("stop", ["--host", "gpu"], inv, env=env)
    assert p.returncode == 0 and "stopped" in p.stdout


def test_deepseek_served_on_upstream_vllm_with_its_recipe_flags(site):
    wd, inv = site
    provision(wd)
    model = wd / "models" / "DeepSeek-OCR"
    model.mkdir(parents=True)
    state = json.loads((wd / ".ocrdeploy" / "state.json").read_text())
    state["models"]["DeepSeek-OCR"] = {"path": str(model), "kind": "deepseek", "files": {}}
    (wd / ".ocrdeploy" / "state.json").write_text(json.dumps(state))
    shutil.copytree(wd / "vllm-ocr-env", wd / "deepseek-ocr-env", symlinks=True)     # the 0.8.5 stack only
    p = cli("serve", ["--backend", "deepseek"], inv)
    out = " ".join(p.stdout.split())
    assert p.returncode == 1 and "vLLM 0.8.5 (deepseek-ocr-env) cannot serve DeepSeek-OCR over the OpenAI API" in out
    assert "`inv install --recipe deepseek-ocr` first" in out and "`inv deepseek-run`" in out
    shutil.copytree(wd / "vllm-ocr-env", wd / "deepseek-vllm-env", symlinks=True)
    port = free_port()
    p = cli("serve", ["--backend", "deepseek", "--port", str(port), "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    inst = json.loads(p.stdout)["hosts"]["localhost"]["instances"][0]
    assert inst["ready"] and inst["name"] == f"deepseek-ocr-{port}"
    argv = inst["command"].split()
    assert argv[0].startswith(f"{wd}/deepseek-vllm-env/bin/python") and argv[1:3] == [
        "-m", "vllm.entrypoints.openai.api_server"]
    assert argv[3:] == ["--model", str(model), "--served-model-name", "deepseek-ai/DeepSeek-OCR", "--trust-remote-code",
                        "--dtype", "bfloat16", "--max-model-len", "8192", "--gpu-memory-utilization", "0.9", "--host",
                        "127.0.0.1", "--port", str(port), "--logits-processors",
                        "vllm.model_executor.models.deepseek_ocr:NGramPerReqLogitsProcessor",
                        "--no-enable-prefix-caching", "--mm-processor-cache-gb", "0"]
    s = json.loads(cli("status", ["--json"], inv).stdout)["hosts"]["localhost"]["services"][0]
    assert s["ready"] and s["ids"] == ["deepseek-ai/DeepSeek-OCR"]
    cli("stop", ["--grace", "2"], inv)
    shutil.rmtree(wd / "deepseek-vllm-env")
    shutil.rmtree(wd / "deepseek-ocr-env")
    p = cli("serve", ["--backend", "deepseek-upstream"], inv)
    assert p.returncode == 1 and "deepseek-vllm-env is not installed: `inv install --recipe deepseek-ocr` first" in \
        " ".join(p.stdout.split())


def test_an_old_log_line_never_restarts_todays_start(site):
    """Yesterday's CUDA-graph timeout in the service log must not make today's start restart (a log per start)."""
    wd, inv = site
    provision(wd, {"log": str(FIX / "vllm-logs" / "gpu-busy.log"), "die": 1})
    port = free_port()
    services = wd / ".ocrdeploy" / "services"
    services.mkdir(parents=True)
    (services / f"minicpm-ocr-{port}.log").write_text(
        "(EngineCore_DP0 pid=7) Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 37%| 25/67 received "
        "SIGTERM, shutting down\nRuntimeError: CUDA graph capture timed out after 600 s\n")
    p = cli("serve", ["--port", str(port), "--json"], inv)
    assert p.returncode == 1
    inst = json.loads(p.stdout)["hosts"]["localhost"]["instances"][0]
    assert inst["attempts"] == 1 and inst["restarts"] == [] and "--enforce-eager" not in inst["command"]
    ids = {f["id"] for f in inst["findings"]}
    assert "gpu-busy-memory" in ids and "cudagraph-capture-failed" not in ids
    link = services / f"minicpm-ocr-{port}.log"
    assert link.is_symlink() and str(link.resolve()) == inst["log"]          # <name>.log points at this start
    assert "capture timed out" in (services / f"minicpm-ocr-{port}-before.log").read_text()   # kept, not scanned


def test_remedy_options_reach_the_server(site):
    wd, inv = site
    provision(wd)
    port = free_port()
    p = cli("serve", ["--port", str(port), "--json", "--gpu-memory-utilization", "0.7", "--max-model-len", "16384",
                      "--max-num-seqs", "2", "--enforce-eager", "--no-flashinfer-sampler"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    inst = json.loads(p.stdout)["hosts"]["localhost"]["instances"][0]
    cmd = inst["command"]
    assert "--gpu-memory-utilization 0.7 " in cmd and "--max-model-len 16384 " in cmd and "--max-num-seqs 2 " in cmd
    assert cmd.endswith("--enforce-eager")
    env = Path(f"/proc/{inst['pid']}/environ").read_bytes().split(b"\0")
    assert b"VLLM_USE_FLASHINFER_SAMPLER=0" in env and b"CUDA_VISIBLE_DEVICES=0" in env
    record = json.loads((wd / ".ocrdeploy" / "services" / f"minicpm-ocr-{port}.json").read_text())
    assert record["options"]["tuning"]["max_model_len"] == 16384
    for bad, what in ((["--gpu-memory-utilization", "1.5"], "--gpu-memory-utilization must be a fraction"),
                      (["--max-num-seqs", "0"], "--max-num-seqs must be at least 1"),
                      (["--backend", "transformers", "--enforce-eager"], "--enforce-eager tunes the MiniCPM-OCR")):
        p = cli("serve", bad, inv)
        assert p.returncode == 2 and what in p.stderr, p.stderr


def test_diagnose_fix_restarts_the_service_with_the_remedy(site):
    wd, inv = site
    provision(wd)
    port = free_port()
    assert cli("serve", ["--port", str(port)], inv).returncode == 0
    name = f"minicpm-ocr-{port}"
    record = json.loads((wd / ".ocrdeploy" / "services" / f"{name}.json").read_text())
    with open(record["log"], "a") as fh:       # this start's log shows the capture failing
        fh.write("RuntimeError: CUDA graph capture timed out after 600 s\n")
    p = cli("diagnose", ["--service", "--fix", "--yes"], inv)
    assert f"will restart {name} with --enforce-eager" in p.stdout, p.stdout + p.stderr
    assert f"ok: {name} ready again with --enforce-eager" in p.stdout
    after = json.loads((wd / ".ocrdeploy" / "services" / f"{name}.json").read_text())
    assert after["pid"] != record["pid"] and after["argv"][-1] == "--enforce-eager"
    assert after["options"]["tuning"]["enforce_eager"] is True and after["gpu"] == record["gpu"]
    p = cli("diagnose", ["--log", record["log"], "--fix", "--yes"], inv)   # a plain log: said, not restarted
    assert "by hand: restart the service with `inv serve ... --enforce-eager`" in p.stdout


def test_diagnose_fix_restarts_a_keyed_service_only_with_its_own_key(site):
    """The key is never stored: the restart needs it again, the running service says whether it is its
    key, and the restarted server requires the same key (not none, not another)."""
    wd, inv = site
    provision(wd)
    port = free_port()
    assert cli("serve", ["--port", str(port), "--public", "--api-key", "s3cret"], inv).returncode == 0
    name = f"minicpm-ocr-{port}"
    rec = lambda: json.loads((wd / ".ocrdeploy" / "services" / f"{name}.json").read_text())
    first = rec()
    with open(first["log"], "a") as fh:
        fh.write("RuntimeError: CUDA graph capture timed out after 600 s\n")
    for extra, said in (([], "requires an API key, which is never stored: give it again"),
                        (["--api-key", "n0pe"], "refused the API key given: it was started with another one")):
        p = cli("diagnose", ["--service", "--fix", "--yes", *extra], inv)
        assert p.returncode == 1 and f"FAILED: {name} with --enforce-eager: {name} {said}" in p.stdout, p.stdout
        assert rec()["pid"] == first["pid"]                        # nothing stopped
    p = cli("diagnose", ["--service", "--fix", "--yes", "--api-key", "s3cret"], inv)
    assert f"ok: {name} ready again with --enforce-eager" in p.stdout, p.stdout + p.stderr
    after = rec()
    assert after["pid"] != first["pid"] and after["has_key"] and "s3cret" not in json.dumps(after)
    for key, auth in ((None, "key missing"), ("n0pe", "key refused")):
        s = json.loads(cli("status", ["--json"] + (["--api-key", key] if key else []), inv).stdout)
        assert s["hosts"]["localhost"]["services"][0]["auth"] == auth
    s = json.loads(cli("status", ["--json", "--api-key", "s3cret"], inv).stdout)["hosts"]["localhost"]["services"][0]
    assert s["ready"] and "auth" not in s


def test_inventory_gpu_is_honoured(site, tmp_path):
    wd, inv = site
    provision(wd)
    box = FIX / "nvidia-smi" / "3gpu-busy0"
    env = {"PATH": f"{box}:{os.environ['PATH']}"}
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd), "gpu": 2}}}))
    p = cli("serve", ["--port", str(free_port()), "--json"], inv, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads(p.stdout)["hosts"]["localhost"]["instances"][0]["gpu"] == "2"
    cli("stop", ["--grace", "2"], inv)
    p = cli("serve", ["--port", str(free_port()), "--json", "--gpu", "1"], inv, env=env)   # the option wins
    assert json.loads(p.stdout)["hosts"]["localhost"]["instances"][0]["gpu"] == "1"


def test_status_says_the_key_is_missing(site):
    wd, inv = site
    provision(wd)
    p = cli("serve", ["--standard", "--port", str(free_port()), "--public", "--api-key", "s3cret"], inv)
    assert p.returncode == 0, p.stdout
    p = cli("status", [], inv)
    assert p.returncode == 1 and "started with --api-key; pass" in p.stdout
    s = json.loads(cli("status", ["--json"], inv).stdout)["hosts"]["localhost"]["services"][0]
    assert s["auth"] == "key missing" and "requires its API key" in s["error"]
    s = json.loads(cli("status", ["--json", "--api-key", "nope"], inv).stdout)["hosts"]["localhost"]["services"][0]
    assert s["auth"] == "key refused"


def test_serve_refuses_a_draft_from_another_release(site):
    """`inv models --from` can put another release's draft beside the main model: serve checks the rule again."""
    wd, inv = site
    provision(wd)
    state = json.loads((wd / ".ocrdeploy" / "state.json").read_text())
    state["models"]["MiniCPM-OCR-1.0-DSpark"]["manifest"] = {"release": "2026-08-01"}
    (wd / ".ocrdeploy" / "state.json").write_text(json.dumps(state))
    p = cli("serve", ["--port", str(free_port())], inv)
    assert p.returncode == 1
    assert "refusing to serve DSpark: draft from another release: release main='2026-10-19' draft='2026-08-01'" \
        in " ".join(p.stdout.split())
    assert not list((wd / ".ocrdeploy").glob("services/*.json"))          # nothing was started
    assert cli("serve", ["--standard", "--port", str(free_port())], inv).returncode == 0   # no draft involved
    cli("stop", ["--grace", "2"], inv)
    p = cli("serve", ["--port", str(free_port()), "--allow-release-mismatch", "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    inst = json.loads(p.stdout)["hosts"]["localhost"]["instances"][0]
    assert inst["ready"] and "--allow-release-mismatch" in inst["warnings"][0]


@pytest.mark.ssh
def test_a_connection_lost_during_the_readiness_wait_is_unreachable(lab, tmp_path):
    """The SSH session dies while serve waits on the host: the host is reported unreachable with the
    connection lost, not 'failed (exit code -1)' as if a command had failed on it."""
    import signal

    h = lab.start("lost", "127.0.0.13", path_prefix=str(SMI))
    wd = tmp_path / "rwd"
    provision(wd, {"ready_after": 60})
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": {"gpu": lab.inventory_entry(h, workdir=str(wd))}}}))
    e = dict(os.environ, PATH=f"{SMI}:{os.environ['PATH']}", OCRDEPLOY_PROBE_NO_NVML="1", COLUMNS="200",
             OCRDEPLOY_KNOWN_HOSTS=str(lab.known_hosts))
    e.pop("OCRDEPLOY_INVENTORY", None)
    proc = subprocess.Popen([sys.executable, "-m", "ocrdeploy", "serve", "--inventory", str(inv), "--host", "gpu",
                             "--port", str(free_port()), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, env=e)
    try:
        log = wd / ".ocrdeploy" / "services"
        deadline = time.monotonic() + 60
        while not list(log.glob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1)                                   # in the wait now
        sessions = subprocess.run(["pgrep", "-P", str(h.proc.pid)], capture_output=True, text=True).stdout.split()
        assert sessions
        for pid in sessions:                            # the lab's per-connection sshd: the link drops
            os.kill(int(pid), signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        cli("stop", ["--host", "gpu", "--grace", "2"], inv, env={"OCRDEPLOY_KNOWN_HOSTS": str(lab.known_hosts)})
    assert proc.returncode == 1
    doc = json.loads(out)["hosts"]["gpu"]
    assert doc["reachable"] is False and "lost while running" in doc["error"] and "exit code -1" not in doc["error"]


@pytest.mark.parametrize("args, says", [
    (["--speculative-config", "{ngram"], "--speculative-config: not JSON"),
    (["--speculative-config", '{"num_speculative_tokens": 3}'], 'expected a JSON object with a "method"'),
    (["--backend", "transformers", "--speculative-config", '{"method": "ngram"}'], "is for the vLLM backends"),
    (["--model-dir", "models/mine"], "--model-dir models/mine: give the model directory's absolute path"),
    (["--backend", "deepseek", "--model-dir", "/m"], "--model-dir is for the MiniCPM-OCR backends"),
    # red team M5: nesting that json's recursive parser dies on (RecursionError), closed or not
    (["--speculative-config", '{"method":"ngram","x":' + "[" * 30000 + "]" * 30000 + "}"], "nested more than 8 deep"),
    (["--speculative-config", '{"method":"ngram","x":' + "[" * 60000], "nested more than 8 deep"),
    (["--speculative-config", '{"method":"ngram","x":[[[[[[[[[1]]]]]]]]]}'], "nested more than 8 deep"),
    # red team L6: non-standard JSON numbers vLLM would be handed
    (["--speculative-config", '{"method":"ngram","num_speculative_tokens":NaN}'], "NaN is not a JSON number"),
    (["--speculative-config", '{"method":"ngram","prompt_lookup_max":-Infinity}'], "-Infinity is not a JSON number"),
    (["--speculative-config", '{"method":"ngram","prompt_lookup_max":1e999}'], "a number out of range"),
    # red team L8: the second instance would be planned on port 65536
    (["--port", "65535", "--instances", "2"], "the last instance would listen on port 65536, above 65535"),
    (["--port", "65530", "--instances", "7"], "port 65536, above 65535"),
])
def test_serve_option_errors_are_one_line_exit_2(site, args, says):
    wd, inv = site
    p = cli("serve", args, inv)
    assert p.returncode == 2 and says in p.stderr and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert len(p.stderr.strip().splitlines()) == 1 and len(p.stderr) < 400, p.stderr[-2000:]


def test_the_last_port_and_a_flat_speculative_config_are_taken():
    from ocrdeploy.commands.services import parse_speculative_config

    spec = parse_speculative_config('{"method":"ngram","num_speculative_tokens":3,"x":[[[[[[[1]]]]]]],"s":"[[[[[[[[[["}')
    assert spec["num_speculative_tokens"] == 3 and spec["s"] == "[[[[[[[[[["     # brackets in a string are text


def test_serve_names_what_is_missing_on_the_host(site, tmp_path):
    wd, inv = site
    provision(wd)
    p = cli("serve", ["--standard", "--model-dir", str(tmp_path / "nope"), "--gpu", "none"], inv)
    assert p.returncode == 1 and f"--model-dir {tmp_path / 'nope'}: no such directory on this host" in p.stdout
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd), "vllm_env": str(tmp_path / "no-env")}}}))
    p = cli("serve", ["--standard", "--gpu", "none"], inv)
    assert p.returncode == 1 and f"inventory var vllm_env: {tmp_path / 'no-env'} has no bin/python" in p.stdout


def test_a_start_that_died_of_oom_is_kept_for_diagnose_fix(site):
    """Audit M40: the failed start's record stays (marked failed, its log and options), so `inv diagnose
    --service --fix` finds it and restarts it at --gpu-memory-utilization 0.7; the MiniCPM serve failure
    shows the MiniCPM-OCR fix, not DeepSeek's config.py ones."""
    wd, inv = site
    provision(wd, {"oom_above": 0.7})
    port = free_port()
    name = f"minicpm-ocr-{port}"
    p = cli("serve", ["--port", str(port)], inv)
    out = " ".join(p.stdout.split())
    assert p.returncode == 1 and "diagnosis cuda-oom" in out, p.stdout + p.stderr
    assert "--gpu-memory-utilization 0.7" in out and "DeepSeek" not in out and "config.py" not in out
    assert "inv diagnose --service --fix" in out
    record = json.loads((wd / ".ocrdeploy" / "services" / f"{name}.json").read_text())
    assert record["failed"]["reason"] == "exited" and "cuda-oom" in record["failed"]["findings"]
    p = cli("status", [], inv)
    assert p.returncode == 1 and "the last start failed" in " ".join(p.stdout.split())
    p = cli("diagnose", ["--service", "--fix", "--yes"], inv)
    assert f"ok: {name} ready again with --gpu-memory-utilization 0.7" in p.stdout, p.stdout + p.stderr
    after = json.loads((wd / ".ocrdeploy" / "services" / f"{name}.json").read_text())
    assert "failed" not in after and after["options"]["tuning"]["gpu_memory_utilization"] == 0.7
    assert "--gpu-memory-utilization 0.7" in " ".join(after["argv"])
    p = cli("stop", [], inv)
    assert p.returncode == 0 and not list((wd / ".ocrdeploy" / "services").glob("*.json"))


def test_a_wrapper_bin_python_serves_and_stops(site, tmp_path):
    """Red team M4 through the CLI: a vllm_env whose bin/python is a shell script that execs the real one."""
    wd, inv = site
    provision(wd, {"ready_after": 0.5})
    env = tmp_path / "wrapped-env"
    (env / "bin").mkdir(parents=True)
    site_dir = wd / "vllm-ocr-env" / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    (env / "bin" / "python").write_text(f'#!/bin/sh\nsleep 0.3\nPYTHONPATH={site_dir} exec '
                                        f'{os.path.realpath(sys.executable)} "$@"\n')
    (env / "bin" / "python").chmod(0o755)
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd), "vllm_env": str(env)}}}))
    port = free_port()
    p = cli("serve", ["--standard", "--port", str(port), "--gpu", "none", "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    pid = json.loads(p.stdout)["hosts"]["localhost"]["instances"][0]["pid"]
    s = json.loads(cli("status", ["--json"], inv).stdout)["hosts"]["localhost"]["services"][0]
    assert s["alive"] and s["ready"]
    p = cli("stop", [], inv)
    assert p.returncode == 0 and f"pid {pid} stopped" in p.stdout
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


CAPTURING = ("(EngineCore_DP0 pid=7) INFO 10-19 12:01:00 [gpu_model_runner.py:3480] Capturing CUDA graphs (mixed "
             "prefill-decode, PIECEWISE):  37%|###  | 25/67 [00:10<00:17]\n")
KILLED = CAPTURING + "(EngineCore_DP0 pid=7) ERROR 10-19 12:01:10 [core.py:700] EngineCore failed to start.\n"


@pytest.mark.parametrize("how", ["killed", "timed out"])
def test_a_capture_that_died_or_timed_out_restarts_once_then_enforce_eager(site, tmp_path, how):
    """The guide's policy (section 4.4) holds for every way a capture fails: the engine dying while it captures
    (diagnose says cudagraph-capture-killed, which overrides cudagraph-capture-failed) and the wait running out
    while the log says it captures."""
    wd, inv = site
    log = tmp_path / "capture.log"
    log.write_text(KILLED if how == "killed" else CAPTURING)
    provision(wd, {"log": str(log), "die": 1} if how == "killed" else {"log": str(log), "ready_after": 300})
    p = cli("serve", ["--port", str(free_port()), "--json", "--timeout", "2"], inv)
    assert p.returncode == 1, p.stdout + p.stderr
    inst = json.loads(p.stdout)["hosts"]["localhost"]["instances"][0]
    assert inst["attempts"] == 3 and inst["reason"] == ("exited" if how == "killed" else "timeout")
    assert inst["restarts"] == ["restart once: the compile cache now exists (the guide, section 4.4)",
                                "restart with --enforce-eager (the guide, section 4.4)"]
    assert inst["command"].endswith("--enforce-eager")


def test_a_capture_failure_with_enforce_eager_given_restarts_once_only(site, tmp_path):
    """Started with --enforce-eager already, the second failure is the last: no third start, and the flag is
    never given twice."""
    wd, inv = site
    log = tmp_path / "capture.log"
    log.write_text(KILLED)
    provision(wd, {"log": str(log), "die": 1})
    p = cli("serve", ["--port", str(free_port()), "--json", "--enforce-eager"], inv)
    assert p.returncode == 1, p.stdout + p.stderr
    inst = json.loads(p.stdout)["hosts"]["localhost"]["instances"][0]
    assert inst["attempts"] == 2 and inst["restarts"] == [
        "restart once: the compile cache now exists (the guide, section 4.4)"]
    assert inst["command"].split().count("--enforce-eager") == 1
    assert inst.get("kept") == "failed"


def test_the_eager_restart_is_recorded_in_the_services_options(site):
    """After the --enforce-eager restart the record's options say so: a later `inv diagnose --fix` restart
    (which starts from the recorded options) keeps it."""
    wd, inv = site
    provision(wd, {"needs_eager": True})
    port = free_port()
    p = cli("serve", ["--port", str(port), "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    record = json.loads((wd / ".ocrdeploy" / "services" / f"minicpm-ocr-{port}.json").read_text())
    assert record["argv"][-1] == "--enforce-eager" and record["options"]["tuning"]["enforce_eager"] is True


def test_transformers_serve_is_restarted_once_never_given_a_vllm_flag(site, tmp_path):
    """transformers serve has no --enforce-eager: a capture failure there is restarted once, then said."""
    wd, inv = site
    provision(wd)
    log = tmp_path / "capture.log"
    log.write_text(KILLED)
    tbin = wd / "tf-ocr-env" / "bin" / "transformers"
    tbin.parent.mkdir(parents=True)
    tbin.write_text(f"#!/bin/sh\ncat '{log}'\nexit 1\n")
    tbin.chmod(0o755)
    p = cli("serve", ["--port", str(free_port()), "--json", "--backend", "transformers"], inv)
    assert p.returncode == 1, p.stdout + p.stderr
    inst = json.loads(p.stdout)["hosts"]["localhost"]["instances"][0]
    assert inst["kind"] == "transformers" and inst["attempts"] == 2, inst
    assert inst["restarts"] == ["restart once: the compile cache now exists (the guide, section 4.4)"]
    assert "--enforce-eager" not in inst["command"] and inst.get("kept") == "failed"


def test_stop_refuses_a_drain_timeout_without_drain():
    """A plain stop waits on no drain: --drain-timeout alone was dropped without a word (exit 0)."""
    from ocrdeploy.commands.services import run_stop
    from ocrdeploy.errors import UsageError

    with pytest.raises(UsageError, match="^--drain-timeout goes with --drain$"):
        run_stop(host="nosuchhost.invalid", inventory=None, name=None, grace=None, as_json=False,
                 accept_new_host_keys=False, connect_timeout=None, drain_timeout="5")


@pytest.mark.parametrize("args,ports", [(["--port", "18490"], "18490-18490"),
                                        (["--port", "18491"], "18491-18491"),
                                        (["--port", "18489", "--instances", "2"], "18489-18490"),
                                        (["--port", "18490", "--router-host", "localhost"], "18490-18490")])
def test_serve_refuses_instance_ports_that_take_the_routers(tmp_path, args, ports):
    """An instance on the router's port (18490 by default) or its metrics port went ahead: whichever started
    second failed on the host after the first was up.  Said before anything starts, touching nothing."""
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(tmp_path / "wd")}}}))
    p = cli("serve", ["--standard", "--router", *args], inv, timeout=60)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert f"the instances' ports {ports} take the router's 18490 (and 18491, its metrics)" in p.stderr
    assert not (tmp_path / "wd").exists()


@pytest.mark.parametrize("gpu,instances,twice", [("0,0", 2, "0"), ("1,0,1", 3, "1"), ("0,1,0,1", 4, "0, 1")])
def test_a_gpu_named_twice_for_two_instances_is_refused(gpu, instances, twice):
    """--gpu 0,0 --instances 2 (or the inventory's gpu var so) put two vLLMs on one card, one per free GPU
    being the rule; the second ran out of memory."""
    from ocrdeploy.commands.services import pick_gpus
    from ocrdeploy.errors import UsageError

    with pytest.raises(UsageError, match=f"^--gpu {gpu}: GPU {twice} named twice; each instance gets a GPU"):
        pick_gpus({}, gpu, instances)
    assert pick_gpus({}, "0,0", 1) == ["0"] and pick_gpus({}, "1,0", 2) == ["1", "0"]
