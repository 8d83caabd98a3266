"""No-op re-run of the default install plan on a provisioned host, against an Ansible playbook
doing the same checks.

Usage: python bench/noop_install.py [--repeat 5] [--no-ansible] [--before DIR] [--rtt-ms MS] [--timeline N]

--before DIR: a checkout of an earlier commit (`git worktree add DIR REV`), timed in the same run, each
of its runs right after the current tree's, so both see the same load.
--timeline N: N more SSH runs per user (and per tree) with wall-clock stamps, medians printed: the controller's
start, the ssh spawned (at the program's entry since the early start), the host's python up, the request sent
(counted from the controller's start: its imports and plan), the probe done (from the request; the probe's own
elapsed_ms), the answer, the exit; the host is this machine, so one clock serves both sides.
--rtt-ms MS: the SSH host is reached through a loopback relay that holds each chunk MS/2 each way, so the
figures (and the OpenSSH floor beside them) are those of a host on a network, not of a loopback sshd.

Builds a work dir whose venvs hold the right dist-info (every pin of the dspark plan, the
editable vLLM and feat-ocr transformers, the cu13 tree with its links and crt files, the SDK
checkout, the recorded import checks), then times `ocrdeploy install` (all steps ok, no command
run) locally and over SSH lab hosts (as root, whose ~/.bashrc runs pyenv init, and as a
plain user).  The toolchain's proof files (/usr/bin/gcc-13, ...) are created for the run
when missing and removed afterwards.  With ansible-core in a bench venv (created on first
use), the same checks as a playbook: stat of every path, `pip show` per pip step, git HEAD.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from ocrdeploy.provision import facts as facts_mod  # noqa: E402
from ocrdeploy.provision import probe  # noqa: E402
from ocrdeploy.provision.kinds import PipEditable, PipInstall  # noqa: E402
from ocrdeploy.recipes.cuda_steps import CRT_FILES  # noqa: E402
from ocrdeploy.provision.step import fingerprint  # noqa: E402
from ocrdeploy.recipes import minicpm  # noqa: E402
from ocrdeploy.recipes.cuda_layout import LINKS  # noqa: E402

PROOFS = {"/usr/bin/gcc-13": "/usr/bin/gcc", "/usr/bin/g++-13": "/usr/bin/g++",
          "/usr/include/elfutils/libdw.h": None, "/usr/include/libelf.h": None}


def dist_info(site: Path, name: str, version: str, editable_from: str | None = None):
    d = site / f"{name.replace('-', '_')}-{version}.dist-info"
    d.mkdir(parents=True, exist_ok=True)
    (d / "RECORD").write_text("")
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if editable_from:
        (d / "direct_url.json").write_text(json.dumps({"url": f"file://{editable_from}", "dir_info": {"editable": True}}))


def make_venv(wd: Path, name: str, minor: str, dists: dict):
    site = wd / name / "lib" / f"python{minor}" / "site-packages"
    site.mkdir(parents=True, exist_ok=True)
    (wd / name / "bin").mkdir(parents=True, exist_ok=True)
    if not (wd / name / "bin" / "python").exists():
        os.symlink(sys.executable, wd / name / "bin" / "python")
    (wd / name / "pyvenv.cfg").write_text(f"home = /usr/bin\nversion = {minor}.9\n")
    for n, (v, ed) in dists.items():
        dist_info(site, n, v, ed)
    return site


def version_for(req) -> str:
    for spec in req.specifier:
        if spec.operator == "==":
            return spec.version
    for spec in req.specifier:
        if spec.operator == ">=":
            return spec.version
    return "1.0"


def provision(wd: Path, src: Path):
    v = {"sdk_repo": str(src / "MiniCPM-OCR"), "vllm_src": str(src / "vllm"), "transformers_src": str(src / "transformers")}
    for p in v.values():
        Path(p).mkdir(parents=True, exist_ok=True)
    (src / "vllm" / "setup.py").write_text("")
    plan = minicpm.build_plan("dspark", v)
    dists = {"sdk-env": {"pip": ("24.0", None)}, "vllm-ocr-env": {"pip": ("24.0", None)},
             ".ocrdeploy/tools-env": {"pip": ("24.0", None)}}
    for s in plan.steps:
        if isinstance(s, PipInstall):
            target = s.cpu if isinstance(s, minicpm.Paddle) and False else s
            for r in target.reqs:
                dists[s.venv_name][r.name] = (version_for(r), None)
        if isinstance(s, PipEditable):
            dists[s.venv_name][s.dist_name] = (s.expect_version or "0.2.3",
                                               s.src if not s.src.startswith("@/") else str(wd / s.src[2:]))
    dists["vllm-ocr-env"]["vllm"] = ("0.31.0.dev0", str(src / "vllm"))
    make_venv(wd, "sdk-env", "3.11", dists["sdk-env"])
    site = make_venv(wd, "vllm-ocr-env", "3.13", dists["vllm-ocr-env"])
    cu = site / "nvidia" / "cu13"
    for d in ("bin/crt", "lib", "nvvm/bin"):
        (cu / d).mkdir(parents=True, exist_ok=True)
    for f in ("bin/cicc", "nvvm/bin/cicc", "lib/libcudart.so.13", "lib/libnvrtc.so.13", *CRT_FILES):
        (cu / f).write_text("x")
    for rel, target in LINKS:
        path = cu / rel
        if rel != "nvvm/bin/cicc" and not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target.format(cu=cu, libcuda="/dev/null"), path)
    sdk = wd / "minicpmvocr-sdk"
    if not (sdk / ".git").exists():
        (sdk / "sdk").mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(sdk)], check=True)
        subprocess.run(["git", "-C", str(sdk), "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-q",
                        "--allow-empty", "-m", "x"], check=True)
    make_venv(wd, ".ocrdeploy/tools-env", "3.11", dists[".ocrdeploy/tools-env"])
    models = {}
    from ocrdeploy.models.catalog import DEFAULT_SET, MODELS
    from ocrdeploy.models.hostside import listing

    for name in DEFAULT_SET:
        d = wd / "models" / name
        d.mkdir(parents=True, exist_ok=True)
        for f in MODELS[name].required or ("config.json",):
            (d / f).write_text("x")
        (d / "release_manifest.json").write_text(json.dumps({"release": "2026-10-19"}))
        models[name] = {"path": str(d), "kind": MODELS[name].kind, "files": listing(str(d)),
                        "manifest": {"release": "2026-10-19"}, "verified_at": "bench", "checked_against": {}}
    facts = facts_mod.normalise(probe.collect(facts_mod.probe_request(str(wd), net_timeout=0)))
    state = {"checks": {"sdk-backends": {"fingerprint": fingerprint(facts, "sdk-env"), "at": "bench"},
                        "vllm-import": {"fingerprint": fingerprint(facts, "vllm-ocr-env"), "at": "bench"}},
             "models": models}
    (wd / ".ocrdeploy").mkdir(exist_ok=True)
    (wd / ".ocrdeploy" / "state.json").write_text(json.dumps(state))
    return v


CPU: dict = {}     # argv[-1] of each timed command -> median CPU seconds (user + system) of the command


BEFORE: Path | None = None       # --before: the earlier checkout
BEFORE_TIMES: dict = {}          # its median wall and CPU time per command line


def timed(argv, env, repeat):
    """Median wall time; the median CPU time of the command (and what it waited for) goes to CPU: on a
    loaded machine the wall time measures the scheduler, the CPU time still measures the work."""
    import resource

    ours = "ocrdeploy" in argv
    times, cpus, out = [], [], None
    before_times, before_cpus = [], []
    for _ in range(repeat):
        for tree in ([None, BEFORE] if ours and BEFORE else [None]):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            # `python -m ocrdeploy` imports the package of its working directory first
            p = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=tree or ROOT)
            (times if tree is None else before_times).append(time.perf_counter() - t)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            (cpus if tree is None else before_cpus).append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
            if tree is None:
                out = p
            elif p.returncode != 0:
                raise SystemExit(f"--before {tree}: {' '.join(argv)} failed: {p.stderr[-2000:]}")
    CPU[" ".join(argv)] = statistics.median(cpus)
    if before_times:
        BEFORE_TIMES[" ".join(argv)] = (statistics.median(before_times), statistics.median(before_cpus))
    return statistics.median(times), out


def delay_relay(target: tuple, one_way_s: float):
    """A TCP relay on loopback that holds every chunk one_way_s before passing it on, each way: the lab's
    sshd answers in microseconds, a real host some tens of milliseconds away does not, and a start that
    overlaps the connection with the controller's own work only shows its worth against such a host."""
    import queue
    import socket
    import threading

    srv = socket.socket()
    srv.bind((target[0], 0))
    srv.listen(16)

    def pipe(src, dst):
        q = queue.Queue()

        def reader():
            while True:
                try:
                    data = src.recv(65536)
                except OSError:
                    data = b""
                q.put((time.monotonic() + one_way_s, data))
                if not data:
                    return

        def writer():
            while True:
                due, data = q.get()
                time.sleep(max(0.0, due - time.monotonic()))
                if not data:
                    try:
                        dst.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    return
                try:
                    dst.sendall(data)
                except OSError:
                    return

        for fn in (reader, writer):
            threading.Thread(target=fn, daemon=True).start()

    def accept():
        while True:
            try:
                client, _ = srv.accept()
            except OSError:
                return
            upstream = socket.create_connection(target)
            time.sleep(one_way_s * 2)                  # the TCP handshake's round trip
            pipe(client, upstream)
            pipe(upstream, client)

    threading.Thread(target=accept, daemon=True).start()
    return srv.getsockname()[1]


# `python -c TIMELINE_RUN ARGS...` in a tree: `ocrdeploy ARGS` with stamps (time.time(), the host is this machine)
TIMELINE_RUN = r"""
import json, os, subprocess, sys, time
T = {"main": time.time()}
popen_init, communicate = subprocess.Popen.__init__, subprocess.Popen.communicate
def init(self, args, *a, **k):
    if isinstance(args, list) and args and args[0].endswith("/ssh"):
        T.setdefault("ssh", time.time())
    return popen_init(self, args, *a, **k)
def comm(self, *a, **k):
    if isinstance(self.args, list) and self.args[0].endswith("/ssh"):
        T.setdefault("request", time.time())
    out, err = communicate(self, *a, **k)
    if isinstance(self.args, list) and self.args[0].endswith("/ssh"):
        T["answer"] = time.time()
        for line in (err or b"").decode().splitlines():
            if line.startswith("T_PROBE_START "):
                T["probe_start"] = float(line.split()[1])
        from ocrdeploy.provision import probe
        if probe.MARKER in (out or b"").decode() and "probe_start" in T:
            doc = json.loads(out.decode().split(probe.MARKER, 1)[1].strip().splitlines()[0])
            # the probe's own clock starts when its request is in (an early-started one waits for it)
            T["probe_done"] = max(T["probe_start"], T["request"]) + doc["probe"]["elapsed_ms"] / 1000
    return out, err
subprocess.Popen.__init__, subprocess.Popen.communicate = init, comm
from ocrdeploy.provision import facts
from ocrdeploy.provision.command import Script
probe_command = facts.probe_command
def stamped(request):
    cmd = probe_command(request)
    argv = list(cmd.argv)
    argv[4] = Script("import time, sys; sys.stderr.write('T_PROBE_START %r\\n' % time.time())\n" + argv[4], argv[4].label)
    return type(cmd)(argv, env=cmd.env, cwd=cmd.cwd, sudo=cmd.sudo, stdin=cmd.stdin)
facts.probe_command = stamped
import runpy
sys.argv = ["ocrdeploy", *sys.argv[1:]]
try:
    runpy.run_module("ocrdeploy", run_name="__main__")   # as `python -m ocrdeploy` runs: its early start included
finally:
    T["end"] = time.time()
    t0 = float(os.environ["T_SPAWN"])
    sys.stderr.write("TIMELINE " + json.dumps({k: (v - t0) * 1000 for k, v in T.items()}) + "\n")
"""
PHASES = (("python start", "main", None), ("to ssh spawn", "ssh", "main"), ("ssh to host python up", "probe_start", "ssh"),
          ("plan done, request sent", "request", "main"), ("probe", "probe_done", "request"),
          ("to answer", "answer", "probe_done"), ("to exit", "end", "answer"))


def timeline(args, env, n, tree) -> str:
    """Medians of n stamped runs of `ocrdeploy ARGS` from tree: each phase in ms."""
    runs = []
    for _ in range(n):
        e = dict(env, T_SPAWN=repr(time.time()))
        p = subprocess.run([sys.executable, "-c", TIMELINE_RUN, *args], env=e, capture_output=True, text=True, cwd=tree)
        line = next((ln for ln in p.stderr.splitlines() if ln.startswith("TIMELINE ")), None)
        if p.returncode != 0 or line is None:
            raise SystemExit(f"timeline run failed: {p.stderr[-2000:]}")
        runs.append(json.loads(line.split(" ", 1)[1]))
    out = []
    for label, end, start in PHASES:
        ok = [r[end] - (r[start] if start else 0) for r in runs if end in r and (start is None or start in r)]
        out.append(f"{label} {statistics.median(ok):.0f}" if ok else f"{label} -")
    return " | ".join(out) + f" (total {statistics.median(r['end'] for r in runs):.0f} ms)"


def settled(path: Path):
    """A re-run's inventory was written a while ago: a file changed in the last two seconds is parsed on every
    run (inventory/cache.py), which is no re-run's case."""
    past = time.time() - 60
    os.utime(path, (past, past))


def before(argv) -> str:
    """The --before figure of a command line, to print beside the current one."""
    got = BEFORE_TIMES.get(" ".join(argv))
    return f" [before: {got[0]:.2f} s, CPU {got[1]:.2f} s]" if got else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-ansible", action="store_true")
    ap.add_argument("--before", type=Path, help="an earlier checkout, timed in the same run")
    ap.add_argument("--timeline", type=int, default=0, metavar="N",
                    help="N more stamped SSH runs per user and tree: where the time goes, medians")
    ap.add_argument("--rtt-ms", type=float, default=0.0,
                    help="reach the lab host through a relay that adds this round-trip time (a host on a network)")
    args = ap.parse_args()
    global BEFORE
    BEFORE = args.before.resolve() if args.before else None
    made = []
    for path, target in PROOFS.items():
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if target:
                os.symlink(target, path)
            else:
                Path(path).write_text("/* bench proof */\n")
            made.append(path)
    tmp = Path(tempfile.mkdtemp(prefix="ocrnoop-"))
    os.chmod(tmp, 0o755)
    # byte-code as an installed package has it (pip compiles on install): with PYTHONDONTWRITEBYTECODE set
    # (as on this machine) a source checkout would otherwise compile every module on every run
    for tree in (ROOT, BEFORE) if BEFORE else (ROOT,):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "ocrdeploy")], check=True,
                       stdout=subprocess.DEVNULL)
    print(f"load average before: {os.getloadavg()[0]:.2f}; byte-code compiled; "
          f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}")
    try:
        wd, src = tmp / "wd", tmp / "src"
        v = provision(wd, src)
        inv = tmp / "inv.yml"
        inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd), **v}}}))
        settled(inv)
        env = dict(os.environ, OCRDEPLOY_INVENTORY=str(inv), PATH=f"{ROOT}/tests/fixtures/nvidia-smi/rtx5090-590:"
                                                                  f"{os.environ['PATH']}", OCRDEPLOY_PROBE_NO_NVML="1")
        cli = [sys.executable, "-m", "ocrdeploy", "install", "--json"]
        t_local, out = timed(cli, env, args.repeat)
        doc = json.loads(out.stdout)["hosts"]["localhost"]
        assert set(doc["counts"]) and doc["counts"]["changed"] == 0 and doc["commands_run"] == 0, doc["counts"]
        n_steps = sum(doc["counts"].values())
        t_python, _ = timed([sys.executable, "-c", "pass"], env, args.repeat)
        print(f"no-op install, local: {t_local:.2f} s for {n_steps} steps, all ok, 0 commands "
              f"(target <= 0.30 s; a bare `python -c pass` here: {t_python:.2f} s); CPU "
              f"{CPU[' '.join(cli)]:.2f} s, `python -c pass` {CPU[sys.executable + ' -c pass']:.2f} s"
              f"{before(cli)}")

        from sshlab import SSHLab
        lab = SSHLab(tmp / "lab")
        os.chmod(lab.client_key, 0o600)
        if subprocess.run(["id", "ocrbench"], capture_output=True).returncode != 0:
            subprocess.run(["useradd", "-m", "-s", "/bin/bash", "ocrbench"], check=True)
        subprocess.run(["usermod", "-p", "*", "ocrbench"], check=True)  # unlocked for sshd without PAM
        Path("/home/ocrbench/.bashrc").write_text("")
        subprocess.run(["chmod", "-R", "a+rX", str(tmp)], check=True)
        os.chmod(lab.client_key, 0o600)
        try:
            h = lab.start("h", "127.0.2.1", path_prefix=f"{ROOT}/tests/fixtures/nvidia-smi/rtx5090-590")
            if args.rtt_ms:
                port = delay_relay((h.ip, h.port), args.rtt_ms / 2000)
                known = lab.known_hosts.read_text().splitlines()
                mine = [ln for ln in known if ln.startswith(f"[{h.ip}]:{h.port} ")]
                lab.known_hosts.write_text("\n".join(known + [ln.replace(f"[{h.ip}]:{h.port} ", f"[{h.ip}]:{port} ", 1)
                                                              for ln in mine]) + "\n")
                h.port = port
                print(f"the host is reached through a relay adding {args.rtt_ms:g} ms of round trip")
            results = {}
            for user in ("root", "ocrbench"):
                inv2 = tmp / f"inv-{user}.yml"
                inv2.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd), **v}, "hosts": {
                    "h": {**lab.inventory_entry(h), "ansible_user": user}}}}))
                settled(inv2)
                e = dict(env, OCRDEPLOY_INVENTORY=str(inv2), OCRDEPLOY_KNOWN_HOSTS=str(lab.known_hosts))
                t, out = timed(cli + ["--host", "h"], e, args.repeat)
                d = json.loads(out.stdout)["hosts"]["h"]
                assert d.get("counts", {}).get("changed") == 0 and d["commands_run"] == 0, d
                results[user] = t
                # the OpenSSH floor of the same run: one ssh and one python3 start on the host
                floor, _ = timed(["ssh", "-q", "-i", str(lab.client_key), "-o", "BatchMode=yes", "-o",
                                  f"UserKnownHostsFile={lab.known_hosts}", "-p", str(h.port), f"{user}@{h.ip}",
                                  "python3 -c pass"], e, args.repeat)
                label = "root, ~/.bashrc runs pyenv init" if user == "root" else "plain user, no shell hooks"
                print(f"no-op install over SSH ({label}): {t:.2f} s, one facts round trip, 0 commands; OpenSSH "
                      f"floor {floor:.2f} s: {t / floor:.2f}x (target <= 1.5x); controller CPU "
                      f"{CPU[' '.join(cli + ['--host', 'h'])]:.2f} s; load {os.getloadavg()[0]:.2f}"
                      f"{before(cli + ['--host', 'h'])}")
                if args.timeline:
                    for tree in (ROOT, BEFORE) if BEFORE else (ROOT,):
                        print(f"  timeline ({'this tree' if tree == ROOT else tree}, medians of {args.timeline}, ms): "
                              f"{timeline(cli[3:] + ['--host', 'h'], e, args.timeline, tree)}; load "
                              f"{os.getloadavg()[0]:.2f}")
            if not args.no_ansible:
                ansible(tmp, wd, v, lab, h, t_local, results, args.repeat)
        finally:
            lab.stop()
    finally:
        for path in made:
            os.unlink(path)
        shutil.rmtree(tmp, ignore_errors=True)


def ansible(tmp, wd, v, lab, h, t_local, results, repeat):
    venv = Path("/tmp/ocrdeploy-bench-ansible")
    if not (venv / "bin" / "ansible-playbook").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "ansible-core"], check=True)
    plan = minicpm.build_plan("dspark", v)
    tasks = [{"name": "facts", "ansible.builtin.setup": {"gather_subset": ["min"]}}]
    stat_paths, pip_checks = set(), []
    for s in plan.steps:
        req = s.request(v)
        stat_paths |= {p.replace("@/", f"{wd}/") for p in req.paths}
        if isinstance(s, PipInstall):
            pip_checks.append((s.venv_name, [r.name for r in s.reqs]))
        if isinstance(s, PipEditable):
            pip_checks.append((s.venv_name, [s.dist_name]))
    for p in sorted(stat_paths):
        tasks.append({"ansible.builtin.stat": {"path": p}, "register": "st"})
    for venv_name, names in pip_checks:
        tasks.append({"ansible.builtin.command": {"argv": [f"{wd}/{venv_name}/bin/python", "-m", "pip", "show",
                                                           "-q", *names]},
                      "changed_when": False, "failed_when": False})
    tasks.append({"ansible.builtin.command": {"argv": ["git", "-C", f"{wd}/minicpmvocr-sdk", "rev-parse", "HEAD"]},
                  "changed_when": False, "failed_when": False})
    book = tmp / "noop.yml"
    book.write_text(yaml.safe_dump([{"hosts": "all", "gather_facts": False, "tasks": tasks}]))
    print(f"ansible playbook: {len(tasks)} tasks ({len(stat_paths)} stat, {len(pip_checks)} pip show, setup, git)")
    env = dict(os.environ, ANSIBLE_HOST_KEY_CHECKING="False", ANSIBLE_PYTHON_INTERPRETER="/usr/bin/python3")
    t, out = timed([str(venv / "bin" / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(book)], env, 3)
    assert out.returncode == 0, out.stdout[-2000:]
    print(f"ansible-playbook, local: {t:.2f} s = {t / t_local:.0f}x ocrdeploy")
    for user in ("root", "ocrbench"):
        inv = f"{h.ip},"
        t, out = timed([str(venv / "bin" / "ansible-playbook"), "-i", inv, "-e", f"ansible_port={h.port}",
                        "-u", user, "--private-key", str(lab.client_key), str(book)], env, 3)
        assert out.returncode == 0, out.stdout[-2000:]
        print(f"ansible-playbook over SSH as {user}: {t:.2f} s = {t / results[user]:.0f}x ocrdeploy")


if __name__ == "__main__":
    main()
