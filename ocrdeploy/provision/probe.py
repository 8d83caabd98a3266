"""The facts probe: everything we need to know about a host, gathered in ONE run.

This file is sent verbatim to the host (``python3 -c <this source> <request>``) and
must therefore use the standard library only and run on Python 3.6+.  Locally
the controller imports it and calls ``collect`` in-process.  It reports raw tool
output (nvidia-smi) rather than interpreting it, so the parsing lives on the
controller beside the recorded outputs it is tested with.

Slow things (nvidia-smi, interpreters, compilers, the GitHub connect test) run in
threads at the same time, so the probe costs about as much as its slowest part.
"""

import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

MARKER = "@@OCRDEPLOY-FACTS@@"
PROBE_VERSION = 1
PYTHON_MINORS = ("3.10", "3.11", "3.12", "3.13")
COMPILERS = ("gcc", "g++", "gcc-13", "g++-13")
TOOLS = ("apt-get", "sudo", "git", "ccache", "nvcc", "docker", "curl", "tar", "systemctl", "ninja",
         "add-apt-repository")
SMI_GPU_FIELDS = "index,name,uuid,memory.total,memory.used,memory.free,driver_version"
SMI_APP_FIELDS = "gpu_uuid,pid,process_name,used_memory"
LIBCUDA_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                "/usr/lib/wsl/lib", "/usr/local/nvidia/lib64", "/usr/lib")


def _run(argv, timeout=20.0):
    """Run argv; return {"rc", "out", "err"}; rc None when it could not start or timed out."""
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, timeout=timeout)
        return {"rc": proc.returncode, "out": proc.stdout.decode("utf-8", "replace"),
                "err": proc.stderr.decode("utf-8", "replace")}
    except FileNotFoundError:
        return {"rc": None, "out": "", "err": "not found"}
    except subprocess.TimeoutExpired:
        return {"rc": None, "out": "", "err": "timed out after %ss" % timeout}
    except OSError as exc:
        return {"rc": None, "out": "", "err": str(exc)}


def _os_release():
    info = {}
    try:
        with open("/etc/os-release") as fh:
            for line in fh:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    info[k.lower()] = v.strip().strip('"')
    except OSError:
        pass
    return {"id": info.get("id"), "version_id": info.get("version_id"),
            "pretty": info.get("pretty_name") or _uname()[0]}


def _uname():
    """(system, node, release, version, machine): os.uname where there is one, as platform reads it there;
    platform itself (a dozen regexes compiled at import) only where there is not."""
    if hasattr(os, "uname"):
        return tuple(os.uname())
    import platform

    return (platform.system(), platform.node(), platform.release(), platform.version(), platform.machine())


def _memory():
    mem = {"total": None, "available": None}
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in ("MemTotal", "MemAvailable"):
                    val = int(rest.split()[0]) * 1024
                    mem["total" if key == "MemTotal" else "available"] = val
    except OSError:
        pass
    return mem


def _cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def _disk(path):
    probe = path
    while probe and not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    try:
        st = os.statvfs(probe)
        return {"path": path, "exists": os.path.isdir(path), "disk_path": probe,
                "disk_path_is_dir": os.path.isdir(probe),     # False: a file where the work dir (or a parent) goes
                "free": st.f_bavail * st.f_frsize, "total": st.f_blocks * st.f_frsize}
    except OSError as exc:
        return {"path": path, "exists": False, "disk_path": probe, "free": None,
                "total": None, "error": str(exc)}


def _gpus_nvml():
    """GPUs through NVML (nvidia-ml-py); None when NVML cannot be used here."""
    if os.environ.get("OCRDEPLOY_PROBE_NO_NVML"):
        return None
    try:
        import pynvml
    except ImportError:
        return _gpus_nvml_ctypes()
    try:
        pynvml.nvmlInit()
    except Exception:
        return None
    try:
        def text(v):
            return v.decode() if isinstance(v, bytes) else v
        driver = text(pynvml.nvmlSystemGetDriverVersion())
        cuda = pynvml.nvmlSystemGetCudaDriverVersion_v2()
        gpus = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            procs = []
            try:
                for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
                    used = getattr(p, "usedGpuMemory", None)
                    procs.append({"pid": p.pid, "name": _proc_name(p.pid),
                                  "used_mib": used // 1048576 if used else None})
            except Exception:
                pass
            gpus.append({"index": i, "name": text(pynvml.nvmlDeviceGetName(h)),
                         "uuid": text(pynvml.nvmlDeviceGetUUID(h)),
                         "memory_total_mib": mem.total // 1048576,
                         "memory_used_mib": mem.used // 1048576,
                         "memory_free_mib": mem.free // 1048576, "processes": procs})
        return {"source": "nvml", "driver": driver,
                "cuda": "%d.%d" % (cuda // 1000, (cuda % 1000) // 10), "gpus": gpus}
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


class _NvmlError(Exception):
    """An NVML call that did not return NVML_SUCCESS."""


def _gpus_nvml_ctypes():
    """The facts of _gpus_nvml read from the driver's libnvidia-ml.so.1 through ctypes, for a host without
    nvidia-ml-py (the probe runs on the system python3, which seldom has it).  nvidia-smi, the fallback, is
    three runs that each start NVML anew: 50 ms to 2 s apiece on a GPU host, on every re-run.  Only the few
    calls pynvml makes for these facts, with the same structures (nvmlMemory_t, nvmlProcessInfo_v2_t, which
    _v3 fills); any error, a missing symbol included, is None, and nvidia-smi says what it says."""
    try:
        import ctypes
        lib = ctypes.CDLL("libnvidia-ml.so.1")
    except (ImportError, OSError):
        return None
    c_uint, c_ull, byref = ctypes.c_uint, ctypes.c_ulonglong, ctypes.byref

    class Memory(ctypes.Structure):
        _fields_ = [("total", c_ull), ("free", c_ull), ("used", c_ull)]

    class Process(ctypes.Structure):
        _fields_ = [("pid", c_uint), ("usedGpuMemory", c_ull), ("gpuInstanceId", c_uint),
                    ("computeInstanceId", c_uint)]

    def call(name, *args):
        rc = getattr(lib, name)(*args)
        if rc != 0:
            raise _NvmlError("%s: %d" % (name, rc))

    def text(name, *args):
        buf = ctypes.create_string_buffer(96)      # NVML's largest name/UUID/version buffer
        call(name, *(args + (buf, c_uint(96))))
        return buf.value.decode()

    def processes(handle):
        fn = lib.nvmlDeviceGetComputeRunningProcesses_v3
        count = c_uint(0)
        rc = fn(handle, byref(count), None)
        if rc == 0:
            return []
        if rc != 7:                                 # NVML_ERROR_INSUFFICIENT_SIZE: the count is set
            raise _NvmlError("nvmlDeviceGetComputeRunningProcesses_v3: %d" % rc)
        count.value = count.value * 2 + 5           # room for processes started meanwhile, as pynvml leaves
        infos = (Process * count.value)()
        rc = fn(handle, byref(count), infos)
        if rc != 0:
            raise _NvmlError("nvmlDeviceGetComputeRunningProcesses_v3: %d" % rc)
        out = []
        for p in infos[:count.value]:
            used = None if p.usedGpuMemory == 2 ** 64 - 1 else p.usedGpuMemory   # NVML_VALUE_NOT_AVAILABLE
            out.append({"pid": p.pid, "name": _proc_name(p.pid), "used_mib": used // 1048576 if used else None})
        return out

    try:
        call("nvmlInit_v2")
    except (_NvmlError, AttributeError):
        return None
    try:
        driver = text("nvmlSystemGetDriverVersion")
        cuda = ctypes.c_int()
        call("nvmlSystemGetCudaDriverVersion_v2", byref(cuda))
        count = c_uint()
        call("nvmlDeviceGetCount_v2", byref(count))
        gpus = []
        for i in range(count.value):
            handle = ctypes.c_void_p()
            call("nvmlDeviceGetHandleByIndex_v2", c_uint(i), byref(handle))
            mem = Memory()
            call("nvmlDeviceGetMemoryInfo", handle, byref(mem))
            gpus.append({"index": i, "name": text("nvmlDeviceGetName", handle),
                         "uuid": text("nvmlDeviceGetUUID", handle),
                         "memory_total_mib": mem.total // 1048576, "memory_used_mib": mem.used // 1048576,
                         "memory_free_mib": mem.free // 1048576, "processes": processes(handle)})
        return {"source": "nvml", "driver": driver, "cuda": "%d.%d" % (cuda.value // 1000, (cuda.value % 1000) // 10),
                "gpus": gpus}
    except (_NvmlError, AttributeError, UnicodeDecodeError, ValueError):
        return None
    finally:
        try:
            lib.nvmlShutdown()
        except AttributeError:
            pass


def _proc_name(pid):
    try:
        with open("/proc/%d/comm" % pid) as fh:
            return fh.read().strip()
    except OSError:
        return None


def _gpus_smi(out):
    """Raw nvidia-smi output; parsed by the controller."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        out["gpu"] = {"source": "none", "raw": None, "error": "nvidia-smi not found"}
        return
    raw = {}
    jobs = {
        "query_gpu": [smi, "--query-gpu=" + SMI_GPU_FIELDS, "--format=csv,noheader,nounits"],
        "compute_apps": [smi, "--query-compute-apps=" + SMI_APP_FIELDS, "--format=csv,noheader,nounits"],
        "header": [smi],
    }
    threads = [threading.Thread(target=lambda k=k, a=a: raw.__setitem__(k, _run(a)))
               for k, a in jobs.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out["gpu"] = {"source": "nvidia-smi", "path": smi, "raw": raw}


def _gpus(out):
    nvml = _gpus_nvml()
    if nvml is not None:
        out["gpu"] = nvml
    else:
        _gpus_smi(out)


def _real_python(path):
    """Resolve a pyenv shim to a real interpreter so a failing shim is not counted."""
    if "/shims/" not in path:
        return path
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    name = os.path.basename(path)
    versions = os.path.join(root, "versions")
    try:
        entries = sorted(os.listdir(versions), reverse=True)
    except OSError:
        return None
    for v in entries:
        cand = os.path.join(versions, v, "bin", name)
        if os.access(cand, os.X_OK):
            return cand
    return None


def _pythons(out):
    candidates = []
    dirs = os.environ.get("PATH", "").split(os.pathsep) + ["/usr/bin", "/usr/local/bin"]
    for minor in PYTHON_MINORS:
        name = "python" + minor
        for d in dirs:
            p = os.path.join(d, name)
            if os.access(p, os.X_OK) and not os.path.isdir(p):
                real = _real_python(p)
                if real and os.path.realpath(real) not in [os.path.realpath(c) for c in candidates]:
                    candidates.append(real)
                break
    # interpreters `uv python install` manages (ocrdeploy installs Python 3.12 that way when a host lacks it)
    uv_dir = os.environ.get("UV_PYTHON_INSTALL_DIR") or os.path.join(os.path.expanduser("~"), ".local", "share",
                                                                       "uv", "python")
    for p in sorted(glob.glob(os.path.join(uv_dir, "cpython-3.1[0-3]*", "bin", "python3.1[0-3]"))):
        if os.path.realpath(p) not in [os.path.realpath(c) for c in candidates]:
            candidates.append(p)
    results = [None] * len(candidates)
    cache = _VersionCache("probe-pythons.json")

    def check(i, path):
        version = cache.version(path, [path, "-I", "-S", "-c", "import sys;print('%d.%d.%d' % sys.version_info[:3])"])
        if version is not None:
            results[i] = {"path": path, "version": version}

    threads = [threading.Thread(target=check, args=(i, c)) for i, c in enumerate(candidates)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cache.save()
    system = shutil.which("python3")
    system = _real_python(system) if system else None
    for r in results:
        if r and system and os.path.realpath(r["path"]) == os.path.realpath(system):
            r["default"] = True          # what `python3` runs here
    out["pythons"] = [r for r in results if r]


class _VersionCache(object):
    """Versions seen before, keyed by the binary's (size, mtime_ns, inode): an unchanged interpreter or
    compiler is not started again on every run (a version exec is tens of ms, and a no-op re-run's probe
    made eleven).  One JSON file per kind in ~/.cache/ocrdeploy; entries not seen this run are dropped."""

    def __init__(self, name):
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        self.path = os.path.join(base, "ocrdeploy", name)
        self.seen = {}
        self.fresh = {}
        try:
            with open(self.path) as fh:
                data = json.load(fh)
            if isinstance(data, dict):
                self.seen = data
        except (OSError, ValueError):
            pass

    def version(self, path, argv):
        """argv's output, stripped (the version the binary at ``path`` prints), or None when it fails; a
        failure is not kept, so the next run asks again."""
        try:
            st = os.stat(path)
            key = [st.st_size, st.st_mtime_ns, st.st_ino]
        except OSError:
            return None
        hit = self.seen.get(path)
        if isinstance(hit, dict) and hit.get("key") == key and isinstance(hit.get("version"), str):
            self.fresh[path] = hit
            return hit["version"]
        r = _run(argv, timeout=10)
        if r["rc"] != 0:
            return None
        version = r["out"].strip()
        self.fresh[path] = {"key": key, "version": version}
        return version

    def save(self):
        if self.fresh == self.seen:
            return
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = "%s.%d.tmp" % (self.path, os.getpid())
            with open(tmp, "w") as fh:
                json.dump(self.fresh, fh)
            os.replace(tmp, self.path)
        except OSError:
            pass


def _compilers(out):
    found = {}
    cache = _VersionCache("probe-compilers.json")

    def check(name):
        path = shutil.which(name)
        if not path:
            found[name] = None
            return
        found[name] = {"path": path, "version": cache.version(path, [path, "-dumpfullversion", "-dumpversion"])}

    threads = [threading.Thread(target=check, args=(n,)) for n in COMPILERS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cache.save()
    out["compilers"] = found


def _sudo(out):
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        out["sudo_nopasswd"] = True
        return
    if not shutil.which("sudo"):
        out["sudo_nopasswd"] = False
        return
    r = _run(["sudo", "-n", "true"], timeout=5)
    out["sudo_nopasswd"] = r["rc"] == 0


class _Late(Exception):
    """A network probe ran past its bound (a name lookup included)."""


def _bounded(seconds, fn, *args):
    """fn(*args) in a daemon thread, given up after `seconds`: a socket timeout does not bound the name
    lookup (getaddrinfo blocks as long as the resolver takes: a dead nameserver is 5 s per attempt),
    so the probe's stated bound holds only when the whole call is bounded.  A thread given up on is
    left to the resolver; the probe process ends without waiting for it."""
    box = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    t = threading.Thread(target=run)
    t.daemon = True
    t.start()
    t.join(seconds)
    if t.is_alive():
        raise _Late()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _connect(address, timeout):
    # an ASCII name as bytes: getaddrinfo encodes a str host with the idna codec, whose import
    # (encodings.idna, stringprep, unicodedata) cost more than the rest of the network check's CPU
    host, port = address
    if isinstance(host, str) and host.isascii():
        host = host.encode("ascii")
    socket.create_connection((host, port), timeout=timeout).close()


def _network(out, timeout, proxy_set):
    if timeout <= 0:
        out["network"] = {"github": "unknown", "detail": "not tested (--no-network-check)"}
        return
    start = time.time()
    try:
        try:
            _bounded(timeout, _connect, ("github.com", 443), timeout)
        except _Late:
            raise socket.timeout("timed out")
        out["network"] = {"github": "reachable", "detail": "connected in %.0f ms" % ((time.time() - start) * 1000)}
    except socket.gaierror as exc:
        state = "unknown" if proxy_set else "unreachable"
        out["network"] = {"github": state, "detail": "name resolution failed (%s)%s" % (
            exc.strerror or exc, "; a proxy is set, so this direct test does not decide it" if proxy_set else "")}
    except (socket.timeout, OSError) as exc:
        state = "unknown" if proxy_set else "unreachable"
        detail = "no answer within %.1f s" % timeout if isinstance(exc, socket.timeout) else str(exc)
        if proxy_set:
            detail += "; a proxy is set, so this direct test does not decide it"
        out["network"] = {"github": state, "detail": detail}


SOURCE_GIVE_UP = 3.0   # a source gets this many times --network-timeout before it counts as closed


def _proxy_for(url):
    """The proxy a request to `url` goes through, by the environment's proxy vars and no_proxy."""
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxy


def _source(url, timeout):
    """One HEAD request, through the proxy the environment names, as pip and the hub clients would
    go; any HTTP answer (even 404 or 405) means the source answers."""
    import base64
    import urllib.error
    import urllib.request
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    headers = {"User-Agent": "ocrdeploy-preflight"}
    if parts.username:              # urllib takes no user:password@ in a URL: send it as basic auth
        cred = "%s:%s" % (parts.username, parts.password or "")
        headers["Authorization"] = "Basic " + base64.b64encode(cred.encode()).decode()
        netloc = host + (":%d" % parts.port if parts.port else "")
        url = urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
    proxy = _proxy_for(url)
    out = {"proxy": mask_url(proxy) if proxy else None}
    start = time.time()
    try:
        req = urllib.request.Request(url, method="HEAD", headers=headers)
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            out["status"] = resp.status
    except urllib.error.HTTPError as exc:
        out["status"] = exc.code
    except Exception as exc:  # noqa: BLE001 - every failure is a reading of the network
        reason = str(getattr(exc, "reason", None) or exc)
        out.update(reachable=False, ms=round((time.time() - start) * 1000),
                   error="no answer within %.1f s" % timeout if "timed out" in reason else reason)
        return out
    out.update(reachable=True, ms=round((time.time() - start) * 1000))
    return out


def _sources(out, sources, net_timeout):
    """preflight's sources check: every source in parallel; --network-timeout 0 skips them all."""
    if net_timeout <= 0:
        out["sources"] = {"skipped": "not tested (--network-timeout 0)", "results": []}
        return
    results = [None] * len(sources)

    give_up = net_timeout * SOURCE_GIVE_UP

    def one(i, src):
        start = time.time()
        try:
            found = _bounded(give_up, _source, src["url"], give_up)
        except _Late:
            proxy = _proxy_for(src["url"])
            found = {"proxy": mask_url(proxy) if proxy else None, "reachable": False,
                     "ms": round((time.time() - start) * 1000),
                     "error": "no answer within %.1f s (name lookup included)" % give_up}
        except Exception as exc:  # noqa: BLE001 - a URL urllib cannot read (http://[::1): a reading, never a hole
            found = {"proxy": None, "reachable": False, "ms": round((time.time() - start) * 1000),
                     "error": "%s: %s" % (type(exc).__name__, exc)}
        results[i] = dict(src, url=mask_url(src["url"]), **found)

    threads = [threading.Thread(target=one, args=(i, s)) for i, s in enumerate(sources)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out["sources"] = {"slow_ms": round(net_timeout * 1000), "give_up_s": net_timeout * SOURCE_GIVE_UP,
                      "results": results}


def _dists(site):
    dists = {}
    try:
        names = os.listdir(site)
    except OSError:
        return dists
    for entry in names:
        if not entry.endswith(".dist-info"):
            continue
        stem = entry[: -len(".dist-info")]
        name, sep, version = stem.partition("-")
        if not sep:
            continue
        key = re.sub(r"[-_.]+", "-", name).lower()
        editable = False
        try:
            with open(os.path.join(site, entry, "direct_url.json")) as fh:
                info = json.load(fh)
                editable = bool(info.get("dir_info", {}).get("editable"))
                source = info.get("url")
        except (OSError, ValueError):
            source = None
        dists[key] = {"version": version, "editable": editable,
                      "complete": os.path.exists(os.path.join(site, entry, "RECORD"))}
        if source and (editable or source.endswith(".whl")):   # a shared build's wheel names its build
            dists[key]["source"] = source
    return dists


def _venv(path):
    cfg = os.path.join(path, "pyvenv.cfg")
    info = {"path": path, "python": None, "site_packages": None, "dists": {}}
    try:
        with open(cfg) as fh:
            for line in fh:
                k, _, v = line.partition("=")
                k = k.strip()
                if k in ("version", "version_info"):
                    info["python"] = v.strip()
                elif k == "home":
                    info["home"] = v.strip()
    except OSError:
        return None
    libdir = os.path.join(path, "lib")
    try:
        for entry in sorted(os.listdir(libdir)):
            if entry.startswith("python"):
                site = os.path.join(libdir, entry, "site-packages")
                if os.path.isdir(site):
                    info["site_packages"] = site
                    info["dists"] = _dists(site)
                    break
    except OSError:
        pass
    return info


def _venvs(workdir, extra):
    venvs = {}
    try:
        entries = sorted(os.listdir(workdir))
    except OSError:
        entries = []
    for entry in entries:
        path = os.path.join(workdir, entry)
        if os.path.isfile(os.path.join(path, "pyvenv.cfg")):
            v = _venv(path)
            if v:
                venvs[entry] = v
    for path in extra:
        key = path
        path = _resolve(path, workdir)
        v = _venv(path)
        if v:
            venvs[key] = v
    return venvs


def _resolve(p, workdir):
    """'@/x' is relative to the work dir; '~' is the home directory."""
    if p == "@" or p.startswith("@/"):
        return os.path.join(workdir, p[2:])
    return os.path.expanduser(p)


def _files(paths, workdir):
    files = {}
    for p in paths:
        full = _resolve(p, workdir)
        entry = {"exists": False}
        try:
            st = os.lstat(full)
            entry = {"exists": True, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino}
            if os.path.islink(full):
                entry["type"] = "link"
                entry["target"] = os.readlink(full)
                entry["resolves"] = os.path.exists(full)
            elif os.path.isdir(full):
                entry["type"] = "dir"
            else:
                entry["type"] = "file"
        except OSError:
            pass
        files[p] = entry
    return files


def _git_head(repo):
    """The commit checked out in a git work tree, read from .git without running git."""
    gitdir = os.path.join(repo, ".git")
    try:
        if os.path.isfile(gitdir):  # a worktree or submodule: "gitdir: <path>"
            with open(gitdir) as fh:
                gitdir = os.path.join(repo, fh.read().split(":", 1)[1].strip())
        with open(os.path.join(gitdir, "HEAD")) as fh:
            head = fh.read().strip()
    except (OSError, IndexError):
        return None
    if not head.startswith("ref:"):
        return {"commit": head, "ref": None}
    ref = head[4:].strip()
    try:
        with open(os.path.join(gitdir, ref)) as fh:
            return {"commit": fh.read().strip(), "ref": ref}
    except OSError:
        pass
    try:
        with open(os.path.join(gitdir, "packed-refs")) as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref:
                    return {"commit": parts[0], "ref": ref}
    except OSError:
        pass
    return {"commit": None, "ref": ref}


def _git_status(repo):
    """Whether a work tree differs from its commit, and a digest of how (a shared build's input): asked
    only by the steps that key a build on it, since it runs git."""
    git = shutil.which("git")
    if not git:
        return None
    status = _run([git, "-C", repo, "status", "--porcelain=v1", "--untracked-files=no"], timeout=60)
    if status["rc"] != 0:
        return None
    if not status["out"].strip():
        return {"dirty": False, "digest": None}
    import hashlib      # only for a dirty tree: its import loads OpenSSL, a tenth of the probe's imports

    diff = _run([git, "-C", repo, "diff", "HEAD", "--binary"], timeout=60)
    digest = hashlib.sha256((status["out"] + "\0" + diff["out"]).encode("utf-8", "replace")).hexdigest()[:16]
    return {"dirty": True, "digest": digest}


def _imports(out, probes, workdir):
    """Import probes ({"name", "python", "code"}) run from a neutral directory, in parallel."""
    results = {}

    def one(probe):
        python = _resolve(probe["python"], workdir)
        r = _run([python, "-c", probe["code"]], timeout=float(probe.get("timeout", 300)))
        text = (r["out"] + r["err"]).strip().splitlines()
        results[probe["name"]] = {"rc": r["rc"], "tail": text[-8:], "out": r["out"].strip()[-2000:]}

    cwd = os.getcwd()
    try:
        os.chdir("/")  # never import from a source tree in the current directory
    except OSError:
        pass
    threads = [threading.Thread(target=one, args=(p,)) for p in probes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        os.chdir(cwd)
    except OSError:
        pass
    out["imports"] = results


def _listing(root, skip=(".cache", ".ocrdeploy-quarantine", ".git")):
    """{relative path: [size, mtime_ns, inode]} of the files under root (None when root is missing)."""
    if not os.path.isdir(root):
        return None
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        for f in filenames:
            full = os.path.join(dirpath, f)
            try:
                st = os.stat(full)
            except OSError:
                continue
            out[os.path.relpath(full, root)] = [st.st_size, st.st_mtime_ns, st.st_ino]
    return out


def _read_small(path, limit=65536):
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError:
        return None
    if len(data) > limit:
        return None
    return data.decode("utf-8", "replace")


_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)([^\s'\"<>]+)")


def _mask_rest(scheme, rest):
    """rest: what follows 'scheme://' (or a whole scheme-less value): its userinfo as ***."""
    # the authority ends at the first '/', '?' or '#', as urlsplit reads it: an '@' in a query or fragment
    # (https://host?x=a@b) is not a credential
    cut = next((i for i, c in enumerate(rest) if c in "/?#"), len(rest))
    head, tail_ = rest[:cut], rest[cut:]
    if "@" in head:
        user, _, host = head.rpartition("@")
        if scheme or ":" in user:
            return scheme + "***@" + host + tail_
    elif tail_:
        user, colon, password = head.partition(":")
        at = tail_.find("@")
        if colon and not password.isdigit() and at > 0 and "/" not in tail_[at:].split("/", 1)[0]:
            return scheme + "***@" + tail_[at + 1:]          # a password with '/', '?' or '#' in it
    return scheme + rest


def mask_url(text):
    """Credentials in URLs as ***, wherever they are in `text`: proxy passwords (with '@' or '/' in
    them, or the scheme-less user:pass@host:port form) and tokens in git URLs
    (https://oauth2:TOKEN@host/...).  It lives in the probe because the probe runs alone on the
    host; the controller's commands, reports and logs use this same function."""
    if not text or not isinstance(text, str):
        return text
    masked = _URL.sub(lambda m: _mask_rest(m.group(1), m.group(2)), text)
    if "://" not in text and "@" in text and not any(c.isspace() for c in text):
        masked = _mask_rest("", text)
    return masked


def _proxy(overrides=None):
    """Proxy variables as the host's commands get them (the inventory's over the environment's), in either
    spelling (the lower case wins, as in urllib), and whether loopback bypasses them by the standard
    library's no_proxy rules (urllib.request.proxy_bypass_environment: '*', suffixes, ports)."""
    env = dict(os.environ)
    env.update(overrides or {})
    values = {}
    for name in ("http_proxy", "https_proxy", "no_proxy"):
        v = env.get(name) or env.get(name.upper())
        values[name] = mask_url(v) if name != "no_proxy" else v
    if not values["no_proxy"]:      # nothing bypasses: no need for urllib.request (and http, email, ssl)
        values["loopback_bypassed"] = {"127.0.0.1": False, "localhost": False}
        return values
    try:
        from urllib.request import proxy_bypass_environment
    except ImportError:                       # Python 2 hosts
        from urllib import proxy_bypass_environment
    values["loopback_bypassed"] = {h: bool(proxy_bypass_environment(h, {"no": values["no_proxy"]}))
                                   for h in ("127.0.0.1", "localhost")}
    return values


def collect(request):
    """Gather every fact; ``request`` is {"workdir", "paths", "venvs", "git", "globs", "reads", "imports",
    "net_timeout"}.

    Paths may start with '@/' (relative to the work dir) or '~'; results are keyed as asked.
    """
    start = time.time()
    home = os.path.expanduser("~")
    workdir = os.path.abspath(os.path.expanduser(request.get("workdir") or "~/ocrdeploy"))
    out = {
        "probe": {"version": PROBE_VERSION, "kind": "python", "python": sys.executable,
                  "python_version": "%d.%d.%d" % sys.version_info[:3]},
        "host": {"hostname": socket.gethostname(), "os": _os_release(), "kernel": _uname()[2],
                 "arch": _uname()[4], "user": _user(), "uid": os.getuid() if hasattr(os, "getuid") else None,
                 "home": home},
        "cpu": {"count": _cpu_count()},
        "memory": _memory(),
        "workdir": _disk(workdir),
    }
    proxy = _proxy(request.get("env"))
    out["proxy"] = proxy
    proxy_set = bool(proxy["http_proxy"] or proxy["https_proxy"])
    workers = [
        threading.Thread(target=_imports, args=(out, request.get("imports") or [], workdir)),
        threading.Thread(target=_gpus, args=(out,)),
        threading.Thread(target=_pythons, args=(out,)),
        threading.Thread(target=_compilers, args=(out,)),
        threading.Thread(target=_sudo, args=(out,)),
        threading.Thread(target=_network, args=(out, float(request.get("net_timeout", 1.0)), proxy_set)),
    ]
    if request.get("git_status"):     # runs git: beside the other workers, not before the file facts
        workers.append(threading.Thread(target=lambda: out.__setitem__("git_status", {
            r: _git_status(_resolve(r, workdir)) for r in request["git_status"]})))
    if request.get("sources") is not None:
        workers.append(threading.Thread(target=_sources, args=(out, request["sources"],
                                                               float(request.get("net_timeout", 1.0)))))
    for t in workers:
        t.start()
    out["tools"] = {name: shutil.which(name) for name in TOOLS}
    out["libcuda"] = next((os.path.join(d, "libcuda.so.1") for d in LIBCUDA_DIRS
                           if os.path.exists(os.path.join(d, "libcuda.so.1"))), None)
    out["venvs"] = _venvs(workdir, request.get("venvs") or [])
    out["files"] = _files(request.get("paths") or [], workdir)
    out["git"] = {r: _git_head(_resolve(r, workdir)) for r in request.get("git") or []}
    out["globs"] = {g: sorted(glob.glob(_resolve(g, workdir))) for g in request.get("globs") or []}
    out["reads"] = {r: _read_small(_resolve(r, workdir)) for r in request.get("reads") or []}
    out["dirs"] = {d: _listing(_resolve(d, workdir)) for d in request.get("dirs") or []}
    out["env_path"] = os.environ.get("PATH", "")
    # names only (a value may hold an index password): the installer choice keeps pip where they configure it
    out["pip_env"] = sorted(k if k != "PIP_CONFIG_FILE" or v != os.devnull else k + "=" + v
                            for k, v in os.environ.items() if k.startswith("PIP_"))
    for t in workers:
        t.join()
    out["probe"]["elapsed_ms"] = round((time.time() - start) * 1000, 1)
    return out


def _user():
    try:
        import pwd
        return pwd.getpwuid(os.getuid()).pw_name
    except Exception:
        return os.environ.get("USER")


def main(argv):
    if len(argv) > 1 and argv[1] == "-":        # the request on stdin: it may hold proxy passwords
        data = sys.stdin.read()
        if not data.strip():
            # stdin closed with no request: the controller started this probe early (early_probe.py) and
            # its run did not take it over; nothing is probed
            os._exit(0)
        request = json.loads(data)
    else:
        request = json.loads(argv[1]) if len(argv) > 1 else {}
    facts = collect(request)
    sys.stdout.write(MARKER + "\n" + json.dumps(facts) + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    # the answer is out: the interpreter's teardown (every module, a lookup thread left to the resolver) only
    # delays the exit status ssh waits for, by more than the probe's own file facts take
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
