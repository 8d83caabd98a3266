"""Facts on the controller side: run the probe in one round trip, normalise its output.

Parsers are pure functions of the raw text tools print (nvidia-smi CSV and its
header), so they are tested against recorded outputs.  Everything returned is
plain JSON-serialisable data; checks and steps read it and never touch the host.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import HostError, HostFailed
from . import probe as probe_module
from .command import Command, Script, remote_python

_HERE = Path(__file__).parent
SH_MARKER = "@@OCRDEPLOY-SH@@"
def probe_request(workdir: str, paths=(), venvs=(), net_timeout: float = 1.0, git=(), imports=(), globs=(),
                  reads=(), dirs=(), sources=None, git_status=()) -> dict:
    """sources: [{"name", "url", ...}] to HEAD from the host (preflight's sources check), or None."""
    req = {"workdir": workdir, "paths": list(paths), "venvs": list(venvs), "net_timeout": net_timeout,
           "git": list(git), "imports": list(imports), "globs": list(globs), "reads": list(reads),
           "dirs": list(dirs)}
    if git_status:
        req["git_status"] = list(git_status)
    if sources is not None:
        req["sources"] = list(sources)
    return req


# Compiling the probe's source was a third of its Python work on the host, on every run.  So the command runs
# this loader, and the source travels beside it (PROBE_SOURCE_VAR, in the environment as the sh fallback does);
# the host keeps the compiled code in ~/.cache/ocrdeploy with the source it came from, and uses it only when
# that source is the one sent, in full, and the file is its own user's (owner, not group/world writable, no
# symlink): code another user could have written is never run.  Any problem: it compiles, as before.
PROBE_SOURCE_VAR = "OCRDEPLOY_PROBE_SOURCE"
PROBE_LOADER = """\
import os, sys
src = os.environ.pop("%s")
code = None
try:
    import marshal
    tag = "%%s-%%x" %% (getattr(getattr(sys, "implementation", None), "cache_tag", None) or "py", sys.hexversion)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "ocrdeploy", "probe-%%s.marshal" %% tag)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        fd = None
    if fd is not None:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if st.st_uid == os.geteuid() and not st.st_mode & 0o022:
                kept = marshal.load(fh)
                if type(kept) is tuple and len(kept) == 2 and kept[0] == src:
                    code = kept[1]
    if code is None:
        code = compile(src, "<facts probe>", "exec")
        try:
            os.makedirs(os.path.dirname(path), 0o700)
        except OSError:
            pass
        tmp = "%%s.%%d.tmp" %% (path, os.getpid())
        try:
            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as fh:
                marshal.dump((src, code), fh)
            os.rename(tmp, path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
except Exception:
    code = None
if code is None:
    code = compile(src, "<facts probe>", "exec")
del src
exec(code, {"__name__": "__main__"})
""" % PROBE_SOURCE_VAR


def probe_command(request: dict) -> Command:
    source = Path(probe_module.__file__).read_text(encoding="utf-8")
    fallback = (_HERE / "probe_fallback.sh").read_text(encoding="utf-8")
    # the request goes on stdin ("-"): it holds the proxy vars, passwords included, and a command line
    # is readable by every user of the host
    # -S: the probe is stdlib only (NVML through ctypes where nvidia-ml-py is not importable, with the same
    # facts), and the site module's scan of site-packages and .pth files was half of its interpreter's start
    # (Debian 12's python3.11: 12 ms with it, 5 ms with -S)
    cmd = remote_python(PROBE_LOADER, "-", "facts probe", fallback=fallback, fallback_args=[request["workdir"]],
                        show_argument=True, stdin=json.dumps(request), site=False)
    return type(cmd)(cmd.argv, env={**cmd.env, PROBE_SOURCE_VAR: Script(source, "facts probe")}, stdin=cmd.stdin)


def gather(conn, request: dict, timeout: float = 120.0) -> dict:
    """Facts of the host behind ``conn``: in-process when local (unless the inventory names the
    interpreter to probe with, or another user to become), one command otherwise.

    The inventory's proxy vars travel in the request, so the checks judge the environment the host's
    commands get, not only the login shell's."""
    request = dict(request, env={k: str(v) for k, v in conn.command_env().items()})
    if conn.is_local and not conn.host.python_interpreter and not conn.host.become_user:
        raw = probe_module.collect(request)
    else:
        result = conn.run_light(probe_command(request), timeout=timeout, ok_codes=range(0, 256))
        raw = parse_probe_output(conn.name, result.stdout, result.stderr, result.exit_code)
    facts = normalise(raw)
    conn.set_uid(facts["host"].get("uid"))
    return facts


def parse_probe_output(host: str, stdout: str, stderr: str, exit_code) -> dict:
    if probe_module.MARKER in stdout:
        payload = stdout.split(probe_module.MARKER, 1)[1].strip().splitlines()[0]
        try:
            return json.loads(payload)
        except ValueError as exc:
            raise HostError(host, f"facts probe printed invalid JSON: {exc}")
    if SH_MARKER in stdout:
        return parse_sh_output(stdout.split(SH_MARKER, 1)[1])
    tail = (stderr or stdout).strip().splitlines()[-3:]
    missing = next((line for line in tail if line.startswith("ansible_python_interpreter ")), None)
    if missing:       # the host answered: it lacks the interpreter the inventory names
        raise HostFailed(host, missing)
    raise HostError(host, f"facts probe failed (exit code {exit_code}): {' | '.join(tail) or 'no output'}")


def parse_sh_output(text: str) -> dict:
    """The POSIX fallback's key=value lines and raw sections, shaped like the Python probe's."""
    kv: dict[str, str] = {}
    sections: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("@@SECTION "):
            _, name, rc = line.split(" ", 2)
            current = sections.setdefault(name, {"rc": int(rc), "out": "", "err": ""})
            continue
        if current is not None:
            current["out"] += line + "\n"
        elif "=" in line:
            k, v = line.split("=", 1)
            kv[k] = v

    def num(key, scale=1):
        try:
            return int(kv[key]) * scale
        except (KeyError, ValueError):
            return None

    tools = {t: kv.get(f"tool_{t}") for t in probe_module.TOOLS}
    compilers = {c: ({"path": kv[f"tool_{c}"], "version": kv.get(f"version_{c}") or None}
                     if f"tool_{c}" in kv else None) for c in probe_module.COMPILERS}
    env = {k[4:].lower(): v for k, v in kv.items() if k.startswith("env_")}
    no_proxy = [s.strip() for s in env.get("no_proxy", "").split(",") if s.strip()]
    gpu = ({"source": "nvidia-smi", "path": kv["smi"], "raw": sections} if "smi" in kv
           else {"source": "none", "raw": None, "error": "nvidia-smi not found"})
    return {
        "probe": {"version": probe_module.PROBE_VERSION, "kind": "sh", "python": None},
        "host": {"hostname": kv.get("hostname"), "os": {"id": kv.get("os_id"), "version_id": kv.get("os_version_id"),
                                                         "pretty": kv.get("os_pretty")},
                 "kernel": kv.get("kernel"), "arch": kv.get("arch"), "user": kv.get("user"),
                 "uid": num("uid"), "home": kv.get("home")},
        "cpu": {"count": num("cpus")},
        "memory": {"total": num("mem_total_kb", 1024), "available": num("mem_available_kb", 1024)},
        "workdir": {"path": kv.get("workdir"), "exists": kv.get("workdir_exists") == "1",
                    "disk_path": kv.get("disk_path"), "free": num("disk_free_kb", 1024),
                    "total": num("disk_total_kb", 1024)},
        "proxy": {"http_proxy": probe_module.mask_url(env.get("http_proxy")),
                  "https_proxy": probe_module.mask_url(env.get("https_proxy")),
                  "no_proxy": env.get("no_proxy"),
                  "loopback_bypassed": {h: h in no_proxy or "*" in no_proxy for h in ("127.0.0.1", "localhost")}},
        "sudo_nopasswd": True if num("uid") == 0 else None,
        "tools": tools,
        "compilers": compilers,
        "network": {"github": "unknown", "detail": "not tested: the host has no Python for the probe"},
        "pythons": [],
        "libcuda": None,
        "venvs": {},
        "files": {},
        "git": {},
        "imports": {},
        "globs": {},
        "reads": {},
        "dirs": {},
        "env_path": kv.get("path", ""),
        "gpu": gpu,
    }


# ---------------------------------------------------------------- nvidia-smi parsing

_SMI_FAIL = re.compile(r"NVIDIA-SMI has failed|couldn't communicate with the NVIDIA driver|"
                       r"No devices were found|Failed to initialize NVML", re.I)


def _int(value: str):
    value = value.strip()
    if not value or value.startswith("[") or value in ("N/A", "[N/A]"):
        return None
    try:
        return int(float(value))
    except ValueError:
        return None


def parse_query_gpu(text: str) -> list[dict]:
    """Rows of --query-gpu=index,name,uuid,memory.total,memory.used,memory.free,driver_version."""
    gpus = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 7:
            raise ValueError(f"unexpected nvidia-smi --query-gpu line: {line!r}")
        # A GPU name never holds a comma today, but join the middle defensively.
        index, uuid_etc = cells[0], cells[-5:]
        name = ", ".join(cells[1:-5])
        gpus.append({"index": _int(index), "name": name, "uuid": uuid_etc[0],
                     "memory_total_mib": _int(uuid_etc[1]), "memory_used_mib": _int(uuid_etc[2]),
                     "memory_free_mib": _int(uuid_etc[3]), "driver": uuid_etc[4], "processes": []})
    return gpus


def parse_compute_apps(text: str) -> list[dict]:
    """Rows of --query-compute-apps=gpu_uuid,pid,process_name,used_memory."""
    apps = []
    for line in text.splitlines():
        if not line.strip() or line.lower().startswith("no running"):
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 4:
            continue
        apps.append({"gpu_uuid": cells[0], "pid": _int(cells[1]), "name": ", ".join(cells[2:-1]),
                     "used_mib": _int(cells[-1])})
    return apps


_CUDA_RE = re.compile(r"CUDA (?:UMD )?Version:\s*([0-9.]+|N/A)")


def parse_header_cuda(text: str):
    m = _CUDA_RE.search(text or "")
    if not m or m.group(1) == "N/A":
        return None
    return m.group(1)


def normalise_gpu(gpu: dict) -> dict:
    """One shape whatever the source: {source, driver, cuda, gpus, error}."""
    if gpu.get("source") == "nvml":
        return {"source": "nvml", "driver": gpu.get("driver"), "cuda": gpu.get("cuda"),
                "gpus": gpu.get("gpus", []), "error": None}
    if gpu.get("source") != "nvidia-smi" or not gpu.get("raw"):
        return {"source": "none", "driver": None, "cuda": None, "gpus": [],
                "error": gpu.get("error") or "nvidia-smi not found"}
    raw = gpu["raw"]
    q = raw.get("query_gpu") or {}
    out = (q.get("out") or "") + (q.get("err") or "")
    if q.get("rc") != 0 or _SMI_FAIL.search(out):
        first = next((l.strip() for l in out.splitlines() if l.strip()), "no output")
        return {"source": "nvidia-smi", "driver": None, "cuda": None, "gpus": [],
                "error": f"nvidia-smi failed (exit code {q.get('rc')}): {first}"}
    try:
        gpus = parse_query_gpu(q.get("out", ""))
    except ValueError as exc:
        return {"source": "nvidia-smi", "driver": None, "cuda": None, "gpus": [], "error": str(exc)}
    apps = raw.get("compute_apps") or {}
    if apps.get("rc") == 0:
        by_uuid = {g["uuid"]: g for g in gpus}
        for app in parse_compute_apps(apps.get("out", "")):
            target = by_uuid.get(app.pop("gpu_uuid"))
            if target is not None:
                target["processes"].append(app)
    driver = gpus[0].pop("driver") if gpus else None
    for g in gpus:
        g.pop("driver", None)
    header = raw.get("header") or {}
    return {"source": "nvidia-smi", "driver": driver, "cuda": parse_header_cuda(header.get("out", "")),
            "gpus": gpus, "error": None if gpus else "nvidia-smi lists no GPU"}


def normalise(raw: dict) -> dict:
    facts = dict(raw)
    facts["gpu"] = normalise_gpu(raw.get("gpu") or {})
    return facts


def summary(facts: dict) -> dict:
    """The few facts a human wants in a report line."""
    gpu = facts["gpu"]
    mem = facts.get("memory") or {}
    wd = facts.get("workdir") or {}
    return {
        "os": (facts["host"].get("os") or {}).get("pretty"),
        "cpus": facts["cpu"].get("count"),
        "memory_gib": round(mem["total"] / 2**30, 1) if mem.get("total") else None,
        "driver": gpu.get("driver"),
        "cuda": gpu.get("cuda"),
        "gpus": [f"{g['index']}: {g['name']} {round((g['memory_total_mib'] or 0) / 1024)} GiB"
                 for g in gpu.get("gpus", [])],
        "workdir": wd.get("path"),
        "disk_free_gib": round(wd["free"] / 2**30, 1) if wd.get("free") is not None else None,
        "pythons": [p["version"] for p in facts.get("pythons", [])],
    }
