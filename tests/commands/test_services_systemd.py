"""serve --systemd and --gpu: what reaches the unit, the files it leaves, and readiness after the start.

systemd cannot run in this container, so `SystemdStandIn` (a real local connection that runs
every command except the sudo ones) plays systemctl's part: it keeps what `install` would put
under /etc and, on `systemctl start`, launches the unit's ExecStart with its Environment= and
EnvironmentFile= values, as systemd would.  The stand-in vLLM server is the real HTTP process of
tests/fixtures/standin.  Everything else (staging, readiness over the host helper) is the real code.
"""

import json
import os
import shlex
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ocrdeploy.commands.services import _systemd, check_gpu
from ocrdeploy.errors import UsageError
from ocrdeploy.inventory import Host
from ocrdeploy.provision.command import Secret
from ocrdeploy.provision.connection import LocalConnection
from ocrdeploy.services import argv as serving
from ocrdeploy.services.control import Instance, systemd_env_file, systemd_unit

sys.path.insert(0, str(Path(__file__).parent))
from test_services import cli, free_port, provision  # noqa: E402


C_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "s": " ", "a": "\a", "b": "\b",
             "f": "\f", "r": "\r", "v": "\v"}


def systemd_words(value, exec_line=False, specifiers=None, env=None):
    """What systemd makes of a setting's value (systemd.syntax(7), systemd.service(5) "Command lines"):
    words split at whitespace, "..." and '...' quoting with C escapes, then every %X a specifier (%% is
    %; an unknown one fails the unit), then on an ExecStart= line $$ is $ and $VAR / ${VAR} a variable."""
    import re

    words, word, quote, i, started = [], "", None, 0, False
    while i < len(value):
        ch = value[i]
        if quote is None and ch.isspace():
            if started:
                words.append(word)
            word, started = "", False
        elif ch in "\"'" and quote is None and not started:
            quote, started = ch, True
        elif quote is not None and ch == quote:
            quote = None
        elif ch == "\\":
            i += 1
            word += C_ESCAPES[value[i]]
            started = True
        else:
            word += ch
            started = True
        i += 1
    assert quote is None, f"unterminated quote in {value!r}"
    if started:
        words.append(word)
    spec = {"h": "/root", "u": "root", "n": "unit.service", **(specifiers or {})}

    def expand(w):
        out = re.sub(r"%(.)", lambda m: "%" if m.group(1) == "%" else spec[m.group(1)], w)
        if exec_line:
            out = re.sub(r"\$\$|\$\{(\w+)\}|\$(\w+)", lambda m: "$" if m.group(0) == "$$" else
                         (env or {}).get(m.group(1) or m.group(2), ""), out)
        return out

    return [expand(w) for w in words]


class SystemdStandIn(LocalConnection):
    def __init__(self, host):
        super().__init__(host)
        self.installed, self.sudo, self.started = {}, [], []

    def run(self, command, **kw):
        if getattr(command, "sudo", False):
            argv = list(command.argv)
            self.sudo.append(argv)
            if argv[0] == "install" and "-d" not in argv:
                self.installed[argv[-1]] = (argv[2], Path(argv[-2]).read_text())
            if argv[:2] == ["systemctl", "start"]:
                self._start(argv[2])
            return None
        return super().run(command, **kw)

    def _start(self, unit_name):
        mode, unit = self.installed[f"/etc/systemd/system/{unit_name}"]
        env = dict(os.environ)
        for line in unit.splitlines():
            key, _, value = line.partition("=")
            if key == "Environment":
                k, _, v = systemd_words(value)[0].partition("=")
                env[k] = v
            elif key == "EnvironmentFile":
                for kv in self.installed[value][1].splitlines():
                    k, _, v = kv.partition("=")
                    env[k] = shlex.split(v)[0]
            elif key == "ExecStart":
                argv = systemd_words(value, exec_line=True, env=env)
            elif key == "StandardOutput":
                log = value.split(":", 1)[1]
        with open(log, "ab") as out:
            self.started.append(subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                                 start_new_session=True))


def instance(wd, port, key=None):
    py = str(wd / "vllm-ocr-env" / "bin" / "python")
    argv = serving.vllm_standard(py, str(wd / "models" / "MiniCPM-OCR-1.0"), port, "127.0.0.1")
    env = {"CUDA_VISIBLE_DEVICES": "0", "PATH": os.environ["PATH"], **serving.key_env(key)}
    return Instance(f"minicpm-ocr-{port}", port, "0", argv, env, "standard", "127.0.0.1",
                    str(wd / ".ocrdeploy" / "services" / f"minicpm-ocr-{port}.log"), key=key)


def test_unit_runs_exactly_the_servers_argv_and_keeps_the_key_out(tmp_path):
    inst = instance(tmp_path, 18499, key="s3cret")
    unit = systemd_unit(inst, "ocr", "/etc/ocrdeploy/minicpm-ocr-18499.env")
    lines = dict(line.split("=", 1) for line in unit.splitlines() if "=" in line and not line.startswith("["))
    assert systemd_words(lines["ExecStart"], exec_line=True) == [str(a) for a in inst.argv]
    assert lines["EnvironmentFile"] == "/etc/ocrdeploy/minicpm-ocr-18499.env" and lines["User"] == "ocr"
    assert "s3cret" not in unit and "VLLM_API_KEY" not in unit
    assert systemd_env_file(inst) == "VLLM_API_KEY=s3cret\n"
    assert systemd_env_file(instance(tmp_path, 18499)) is None
    inst.env["EVIL"] = "x\nExecStartPre=/bin/sh -c id"
    with pytest.raises(ValueError, match="line break"):
        systemd_unit(inst, None)
    inst.env.pop("EVIL")
    inst.env[serving.API_KEY_ENV] = Secret("k\nExecStartPre=id")
    with pytest.raises(ValueError, match="line break"):
        systemd_env_file(inst)


def test_systemd_start_waits_until_ready_and_leaves_no_copies(tmp_path):
    wd = tmp_path / "wd"
    provision(wd)
    port = free_port()
    inst = instance(wd, port, key="s3cret")
    conn = SystemdStandIn(Host("localhost"))
    try:
        res = _systemd(conn, Host("localhost"), str(wd), inst, timeout=60)
    finally:
        for p in conn.started:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert res["ready"] is True and res["ids"] == ["minicpm-ocr"]      # not "not ready: None"
    unit_path, env_path = f"/etc/systemd/system/ocrdeploy-minicpm-ocr-{port}.service", \
        f"/etc/ocrdeploy/minicpm-ocr-{port}.env"
    assert conn.installed[unit_path][0] == "0644" and conn.installed[env_path] == ("0600", "VLLM_API_KEY=s3cret\n")
    assert ["install", "-d", "-m", "0700", "/etc/ocrdeploy"] in conn.sudo
    assert [a[:2] for a in conn.sudo][-2:] == [["systemctl", "daemon-reload"], ["systemctl", "start"]]
    stage = wd / ".ocrdeploy" / "staging"
    assert list(stage.iterdir()) == [] and stat.S_IMODE(stage.stat().st_mode) == 0o700


def test_systemd_start_that_never_answers_is_a_timeout(tmp_path):
    wd = tmp_path / "wd"
    provision(wd, {"die": 1})
    inst = instance(wd, free_port())
    conn = SystemdStandIn(Host("localhost"))
    res = _systemd(conn, Host("localhost"), str(wd), inst, timeout=2)
    for p in conn.started:
        p.wait()
    assert res["ready"] is False and res["reason"] == "timeout"


@pytest.mark.parametrize("gpu", ["0\nExecStartPre=/bin/sh -c id", "abc", "0;x", "1,", "-1", "0 1"])
def test_gpu_is_auto_or_indexes(gpu):
    with pytest.raises(UsageError, match="--gpu"):
        check_gpu(gpu)


def test_gpu_accepted_forms():
    assert [check_gpu(g) for g in ("auto", None, "0", "1,2", " 3 , 4")] == ["auto", None, "0", "1,2", "3,4"]


def test_gpu_refused_on_the_command_line(tmp_path):
    inv = tmp_path / "inv.yml"
    inv.write_text(json.dumps({"all": {"vars": {"workdir": str(tmp_path / "wd")}}}))
    p = cli("serve", ["--gpu", "0\nExecStartPre=/bin/sh -c id", "--systemd"], inv)
    assert p.returncode == 2 and p.stderr.startswith("error: --gpu '0\\nExecStartPre=/bin/sh -c id'")


@pytest.mark.parametrize("path", ["/home/u/models/50%h-off", "/srv/$HOME/m", "/srv/${VLLM_API_KEY}/m",
                                  '/srv/a "quoted" dir/m', "/srv/back\\slash/m", "/srv/it's/m", "/srv/%%u/m"])
def test_unit_words_are_quoted_for_systemd_not_for_a_shell(tmp_path, path):
    """Red team L18: shlex.quote leaves %h, $VAR and ${VAR} for systemd to expand, so a model path
    with them would be served as another path; the unit must give systemd back exactly the argv."""
    inst = instance(tmp_path, 18499)
    inst.argv[inst.argv.index("--model") + 1] = path
    inst.env["OCR_NOTE"] = path
    unit = systemd_unit(inst, None)
    lines = dict(line.split("=", 1) for line in unit.splitlines() if "=" in line and not line.startswith("["))
    env = {"HOME": "/root", "VLLM_API_KEY": "leaked"}
    assert systemd_words(lines["ExecStart"], exec_line=True, env=env) == [str(a) for a in inst.argv]
    envs = [systemd_words(line.split("=", 1)[1])[0] for line in unit.splitlines() if line.startswith("Environment=")]
    assert f"OCR_NOTE={path}" in envs


def test_a_log_path_systemd_would_read_otherwise_is_refused(tmp_path):
    inst = instance(tmp_path, 18499)
    inst.log = str(tmp_path / "my logs" / "x.log")
    with pytest.raises(ValueError, match="cannot go in a systemd unit"):
        systemd_unit(inst, None)
    inst.log = str(tmp_path / "50%u.log")
    assert f"StandardOutput=append:{tmp_path}/50%%u.log" in systemd_unit(inst, None)
