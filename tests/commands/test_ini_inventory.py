"""Every command with an Ansible INI inventory whose hosts are a range with group vars, against
real sshd hosts: two sshd processes on one port, 127.0.0.51 and 127.0.0.52, written as
``127.0.0.[51:52]:PORT`` with the key, user, known_hosts and work dir in ``[gpus:vars]``."""

import json
import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_deepseek_run import batch_site  # noqa: E402
from test_services import SMI, cli, free_port  # noqa: E402

from ocrdeploy.sdk import samples  # noqa: E402

pytestmark = pytest.mark.ssh
FIRST, SECOND = "127.0.0.51", "127.0.0.52"


def _port_free_on_both():
    for _ in range(50):
        port = free_port()
        try:
            for ip in (FIRST, SECOND):
                with socket.socket() as s:
                    s.bind((ip, port))
            return port
        except OSError:
            continue
    raise RuntimeError("no port free on both lab addresses")


@pytest.fixture
def ini_site(lab, tmp_path):
    port = _port_free_on_both()
    lab.start("range51", FIRST, path_prefix=str(SMI), port=port)
    lab.start("range52", SECOND, path_prefix=str(SMI), port=port)
    wd = tmp_path / "wd"
    vdir, _ = batch_site(wd)
    inv = tmp_path / "hosts.ini"
    inv.write_text(f"""\
; two lab GPU hosts on one port, named by a range
[gpus]
127.0.0.[51:52]:{port}

[gpus:vars]
ansible_user=root
ansible_ssh_private_key_file={lab.client_key}
known_hosts_file={lab.known_hosts}
workdir={wd}
sdk_repo={tmp_path}/src/minicpmvocr-sdk
vllm_src={tmp_path}/src/vllm
transformers_src={tmp_path}/src/transformers
deepseek_model_path={wd}/models/DeepSeek-OCR
""")
    (wd / "models" / "DeepSeek-OCR").mkdir(parents=True, exist_ok=True)
    yield wd, inv
    cli("stop", ["-H", FIRST, "--grace", "2"], inv)    # never leave a server behind


def doc(p):
    return json.loads(p.stdout)


def test_every_command_with_an_ini_range_inventory(ini_site, tmp_path):
    wd, inv = ini_site
    p = cli("facts", ["-H", "gpus", "--json"], inv)
    assert p.returncode == 0, p.stderr
    assert sorted(doc(p)["hosts"]) == [FIRST, SECOND]
    assert all(h["facts"]["workdir"] == str(wd) for h in doc(p)["hosts"].values())     # from [gpus:vars]

    p = cli("preflight", ["-H", "all", "--network-timeout", "0", "--json"], inv)
    assert sorted(doc(p)["hosts"]) == [FIRST, SECOND] and all(h["reachable"] for h in doc(p)["hosts"].values())

    one = ["-H", "gpus", "--limit", "*.51"]       # the rest on one host: both share this machine's disk
    p = cli("install", [*one, "--check", "--json", "--skip-preflight"], inv)
    assert list(doc(p)["hosts"]) == [FIRST]
    steps = {s["step"]: s for s in doc(p)["hosts"][FIRST]["steps"]}
    assert steps["vllm-compile"]["reason"] == f"vllm_src {tmp_path}/src/vllm not found on the host"  # a group var
    assert p.returncode == 1
    p = cli("models", [*one, "--check", "--json", "--model", "PP-DocLayoutV3_infer"], inv)
    assert p.returncode == 0 and list(doc(p)["hosts"]) == [FIRST], p.stdout + p.stderr

    port = free_port()
    p = cli("serve", [*one, "--port", str(port), "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    assert doc(p)["hosts"][FIRST]["instances"][0]["ready"]
    p = cli("status", [*one, "--json"], inv)
    assert doc(p)["hosts"][FIRST]["services"][0]["ready"]
    p = cli("verify", [*one, "--json"], inv)
    checks = {c["check"]: c["status"] for c in doc(p)["hosts"][FIRST]["checks"]}
    assert checks["smoke request"] == "passed"
    out = tmp_path / "out.md"
    p = cli("parse", [*one, "--input", str(tmp_path / "doc.pdf"), "--output", str(out), "--json"], inv)
    assert p.returncode == 1 and "inv models" in p.stdout + p.stderr    # no layout model here: said
    p = cli("stop", [*one, "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr

    p = cli("deepseek-config", [*one, "--check", "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    p = cli("deepseek-verify", [*one, "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr
    pdf = tmp_path / "doc.pdf"
    pdf.write_bytes(samples.deepseek_document())
    p = cli("deepseek-run", [*one, "--input", str(pdf), "--json"], inv)
    assert p.returncode == 0, p.stdout + p.stderr

    log = tmp_path / "vllm.log"
    log.write_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    p = cli("diagnose", ["-H", FIRST, "--log", str(log), "--json"], inv)
    assert p.returncode == 1 and doc(p)["host"] == FIRST, p.stdout + p.stderr
