"""`inv serve`, `inv stop`, `inv status` on the controller: plan the service, call services.hostside on the host.

The process survives the SSH session (its own session, output to a log, a pid in the
record).  Readiness is decided on the host; a start that fails is explained by the
diagnose scanner on its log, and a CUDA-graph capture that timed out or was stopped
is restarted once, then with --enforce-eager (the MiniCPM-OCR guide, section 4.4).
"""

from __future__ import annotations

import json
import math
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import HostError
from ..terminal import safe
from . import hostside
from ..provision.command import Secret, remote_python
from ..provision.connection import LineStream

GRAPH_FAILURE = "cudagraph-capture-failed"
# every finding that is a failed capture: "the engine died while capturing" (cudagraph-capture-killed) overrides
# cudagraph-capture-failed in diagnose, so a death during the capture shows only as that one
GRAPH_FAILURES = frozenset({GRAPH_FAILURE, "cudagraph-capture-killed"})


def host_call(conn, request: dict, timeout: float = 120.0, out_stream=None) -> dict:
    """One action of hostside on the host; the request goes on stdin (it may hold the API key,
    which must not be readable in the helper's command line)."""
    source = Path(hostside.__file__).read_text(encoding="utf-8")
    cmd = remote_python(source, "-", "service control", show_argument=True)
    result = conn.run(cmd, timeout=timeout, ok_codes=range(0, 256), out_stream=out_stream,
                      stdin=json.dumps(request))
    if hostside.MARKER not in result.stdout:
        tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise HostError(conn.name, f"service control failed (exit code {result.exit_code}): {' | '.join(tail)}")
    return json.loads(result.stdout.split(hostside.MARKER, 1)[1].strip().splitlines()[0])


@dataclass
class Instance:
    name: str
    port: int
    gpu: str | None
    argv: list
    env: dict
    kind: str
    bind: str
    log: str
    key: str | None = None
    restarts: list = field(default_factory=list)
    served: str = "minicpm-ocr"     # the name a client asks for (services.argv / recipes.deepseek)
    ready: str = "models"           # how readiness shows: "models" (/v1/models lists it) or "health"
    options: dict = field(default_factory=dict)   # how serve was asked (backend, tuning): kept in the record
    run_log: str | None = None      # this start's own log (the host makes one per start)
    also_ports: tuple = ()          # (port, why) the process binds besides its own, checked free with it
    port_flag: tuple | None = ("--port", 0)   # (the option that set the port, port minus its value): warnings'
                                              # advice; None where the tool picked the port itself

    def current_log(self) -> str:
        return self.run_log or self.log

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class PhaseStream(LineStream):
    """Reads the host's '@@phase NAME SECONDS' lines as they come and shows them."""

    def __init__(self, show):
        def on_line(line):
            if line.startswith("@@phase "):
                _, name, secs = line.split(" ", 2)
                show(name.replace("_", " "), float(secs))

        super().__init__(on_line)


def start_instance(conn, workdir: str, inst: Instance, served_name: str) -> dict:
    shown = [("***" if isinstance(a, Secret) else a) for a in inst.argv]
    return host_call(conn, {"action": "start", "workdir": workdir, "name": inst.name, "port": inst.port,
                            "argv": [str(a) for a in inst.argv], "shown": shown, "env": inst.env,
                            "log": inst.log, "kind": inst.kind, "gpu": inst.gpu, "bind": inst.bind,
                            "served_name": served_name, "has_key": bool(inst.key), "options": inst.options,
                            "ready": inst.ready, "also_ports": [list(x) for x in inst.also_ports],
                            "port_flag": list(inst.port_flag) if inst.port_flag else None})


def wait_ready(conn, workdir, inst, served_name, timeout, show=None, unit=False) -> dict:
    """unit: a systemd unit runs it (no record of ours): wait on its port and log until the time is up."""
    where = {"port": inst.port, "log": inst.log} if unit else {}
    return host_call(conn, {"action": "wait", "workdir": workdir, "name": inst.name, "timeout": timeout,
                            "served_name": served_name, "key": inst.key, **where},
                     timeout=timeout + 60, out_stream=PhaseStream(show) if show else None)


def stop_service(conn, workdir, name, grace=30.0, failed: dict | None = None) -> dict:
    """failed: the start failed; its record stays, marked with this (reason, phase), for diagnose --fix."""
    return host_call(conn, {"action": "stop", "workdir": workdir, "name": name, "grace": grace, "failed": failed},
                     timeout=grace + 60)


def status_all(conn, workdir, name=None, key=None) -> dict:
    return host_call(conn, {"action": "status", "workdir": workdir, "name": name, "key": key})


def request(conn, port, path, body=None, key=None, timeout=600) -> dict:
    return host_call(conn, {"action": "request", "port": port, "path": path, "body": body, "key": key,
                            "timeout": timeout}, timeout=timeout + 60)


def serve_with_retries(conn, host, workdir, inst: Instance, served_name, timeout, diagnose, show=None) -> dict:
    """Start, wait; on a CUDA-graph capture failure restart once, then once more with --enforce-eager."""
    attempt = 0
    while True:
        attempt += 1
        started = start_instance(conn, workdir, inst, served_name)
        if not started.get("ok"):
            return {"ready": False, "reason": "refused", "error": started.get("error"), "attempts": attempt}
        inst.run_log = (started.get("record") or {}).get("log") or inst.log   # only this start's output is read
        waited = wait_ready(conn, workdir, inst, served_name, timeout, show)
        waited["host_warnings"] = started.get("warnings") or []
        waited["attempts"] = attempt
        waited["pid"] = started.get("pid")
        if waited.get("ready"):
            return waited
        findings = diagnose(inst.current_log())
        waited["findings"] = findings
        ids = {f["id"] for f in findings}
        graph = bool(GRAPH_FAILURES & ids) or (waited.get("reason") == "timeout" and
                                               waited.get("phase") == "capturing CUDA graphs")
        last = not (graph and (attempt == 1 or (attempt == 2 and "--enforce-eager" not in inst.argv and
                                                 inst.kind != "transformers")))
        stopped = stop_service(conn, workdir, inst.name, grace=10,
                               failed={"reason": waited.get("reason"), "phase": waited.get("phase"),
                                       "findings": sorted(ids)} if last else None)
        if stopped.get("kept"):
            waited["kept"] = stopped["kept"]
        if graph and attempt == 1:
            inst.restarts.append("restart once: the compile cache now exists (the guide, section 4.4)")
            continue
        if graph and attempt == 2 and "--enforce-eager" not in inst.argv and inst.kind != "transformers":
            inst.restarts.append("restart with --enforce-eager (the guide, section 4.4)")
            inst.argv = list(inst.argv) + ["--enforce-eager"]
            if "tuning" in inst.options:
                inst.options = {**inst.options, "tuning": {**inst.options["tuning"], "enforce_eager": True}}
            continue
        return waited


def systemd_unit(inst: Instance, user: str | None, env_file: str | None = None) -> str:
    """A unit for --systemd: the same command, environment and log as the detached start.

    The unit is world-readable, so secrets (the API key) are not in it but in `env_file`, which
    only root reads (systemd_env_file).  A line break in any value would start a new directive."""
    public = {k: v for k, v in inst.env.items() if not isinstance(v, Secret)}
    values = [str(a) for a in inst.argv] + [f"{k}={v}" for k, v in public.items()] + [inst.log, user or ""]
    bad = [v for v in values if "\n" in v or "\r" in v]
    if bad:
        raise ValueError(f"a line break in {bad[0]!r} would inject a line into the systemd unit")
    env = "".join(f"Environment={systemd_quote(f'{k}={v}')}\n" for k, v in public.items())
    secrets = f"EnvironmentFile={systemd_path(env_file)}\n" if env_file else ""
    argv = " ".join(systemd_quote(str(a), exec_line=True) for a in inst.argv)
    return (f"[Unit]\nDescription=ocrdeploy {inst.name} (MiniCPM-OCR, {inst.kind})\nAfter=network.target\n\n"
            f"[Service]\nType=simple\n{'User=' + user + chr(10) if user else ''}{env}{secrets}"
            f"ExecStart={argv}\nStandardOutput=append:{systemd_path(inst.log)}\n"
            f"StandardError=append:{systemd_path(inst.log)}\n"
            f"Restart=no\n\n[Install]\nWantedBy=multi-user.target\n")


def systemd_quote(value: str, exec_line: bool = False) -> str:
    """One word as systemd reads it (systemd.syntax(7); systemd.service(5), "Command lines"): in double
    quotes with C-style escapes for \\ and ", `%` doubled (else a specifier: %h, %u) and, on an
    ExecStart= line, `$` doubled (else a variable: $VAR, ${VAR}).  shlex.quote knows none of these."""
    out = value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    if exec_line:
        out = out.replace("$", "$$")
    return f'"{out}"'


def systemd_path(path: str) -> str:
    """A path setting (StandardOutput=append:, EnvironmentFile=) is read unquoted: `%` doubled, and a
    path that whitespace, a quote or a backslash would change is refused."""
    if any(c.isspace() or c in "\"'\\" for c in path):
        raise ValueError(f"{path!r}: a path with whitespace, quotes or backslashes cannot go in a systemd unit")
    return path.replace("%", "%%")


def systemd_env_file(inst: Instance) -> str | None:
    """The unit's secrets, KEY=VALUE lines for a root-only (0600) EnvironmentFile; None without any."""
    secrets = {k: v for k, v in inst.env.items() if isinstance(v, Secret)}
    if any("\n" in v or "\r" in v for v in secrets.values()):
        raise ValueError("a line break in a secret would inject a line into the EnvironmentFile")
    return "".join(f"{k}={shlex.quote(str(v))}\n" for k, v in secrets.items()) or None


MAX_METRICS = 8 << 20


def accept_length(metrics_text: str | None) -> dict:
    """DSpark's mean accept length from vLLM's counters: 1 + accepted / drafts."""
    if not metrics_text:
        return {"state": "no metrics"}
    from prometheus_client.parser import text_string_to_metric_families

    if len(metrics_text) > MAX_METRICS:
        return {"state": "malformed /metrics", "error": f"over {MAX_METRICS >> 20} MiB"}
    totals = {}
    try:
        for family in text_string_to_metric_families(metrics_text):
            for sample in family.samples:
                if sample.name in ("vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_drafts_total"):
                    if not math.isfinite(sample.value) or sample.value < 0:
                        raise ValueError(f"{sample.name} is {sample.value}")
                    totals[sample.name] = totals.get(sample.name, 0.0) + sample.value
    except Exception as exc:  # noqa: BLE001 - the parser raises what it meets; any of it means malformed
        return {"state": "malformed /metrics", "error": safe(f"{type(exc).__name__}: {exc}"[:200])}
    acc = totals.get("vllm:spec_decode_num_accepted_tokens_total")
    drafts = totals.get("vllm:spec_decode_num_drafts_total")
    if acc is None or drafts is None:
        return {"state": "not started with --speculative-config"}
    if drafts == 0:
        return {"state": "no drafts yet", "accepted": acc, "drafts": drafts}
    return {"state": "ok", "accepted": acc, "drafts": drafts, "accept_length": round(1 + acc / drafts, 3)}
