"""The invoke tasks: thin; they parse options and call ocrdeploy.commands.

Only invoke and the recipe registry (plain data) are imported at module level so
that `inv --list` stays fast; every task imports what it needs when it runs.
"""

from __future__ import annotations

import functools
import inspect
import sys

from invoke import Collection, Task
from invoke import task as _invoke_task
from invoke.exceptions import Exit

from .recipes.registry import recipe_names  # data only: the --recipe help lists the recipes


# Flags every host task shares, with their short forms: -h stays invoke's --help (so --host is -H),
# -v is always --verbose, as in Ansible.
SHORT_FLAGS = {"host": "H", "verbose": "v", "limit": "l", "inventory": "i"}
RESERVED_SHORT = {"-", "_", "h", *SHORT_FLAGS.values()}

RUN_HELP = {
    "limit": "Narrow the selection with a host pattern, as Ansible's --limit (e.g. 'gpu*:!gpu2')",
    "forks": "Hosts worked on at once (default 32)",
    "list-hosts": "Print the hosts the selection matches, how each is reached, and exit; connects nowhere",
    "verbose": "-v shows each command, -vv also streams its output, -vvv adds connection debugging",
}


class _HostTask(Task):
    """Invoke picks a short flag from any character of the option's name; here only letters (an
    option whose letters are all taken, install's --docker-dir, would get `--`), never -h (help),
    and the shared options always get the same one (SHORT_FLAGS)."""

    def arg_opts(self, name, default, taken_names):
        opts = super().arg_opts(name, default, taken_names | RESERVED_SHORT)
        long = opts["names"][0]
        if name in SHORT_FLAGS:
            opts["names"] = [long, SHORT_FLAGS[name]]
        if name == "verbose":
            opts.update(incrementable=True, kind=int, default=0)
        if name == "forks":  # read as text and checked by commands.hosts: no traceback on --forks x
            opts.update(kind=str, default=str(default))
        if "help" not in opts and long in RUN_HELP:
            opts["help"] = RUN_HELP[long]
        return opts


task = functools.partial(_invoke_task, klass=_HostTask)

HOST_HELP = {
    "host": "Hosts: names, groups or an Ansible pattern ('gpu*', 'all:!gpu2', 'a100:&ubuntu'); default localhost",
    "group": "An inventory group (comma separated for several)",
    "inventory": "Inventory file, YAML or INI (default: $OCRDEPLOY_INVENTORY, then ./inventory.yml, ./inventory.ini)",
    "accept-new-host-keys": "Accept and record SSH host keys never seen before (a CHANGED key is still refused)",
    "connect-timeout": "Seconds to wait for each SSH connection (default 10)",
    "json": "Print one JSON document instead of tables",
}
_RUN_PARAMS = {"limit": None, "forks": 32, "list_hosts": False, "verbose": 0}


def host_options(fn):
    """Give a host task the shared --limit, --forks, --list-hosts and -v options.

    They are added to the task's signature (so invoke makes flags of them) and taken off
    before the body runs: --list-hosts answers here without running the body, the others
    become the run's options (commands.hosts.run_options).  A body that takes `verbose`
    itself (install, models) still gets it.
    """
    sig = inspect.signature(fn)
    added = [k for k in _RUN_PARAMS if k not in sig.parameters]

    @functools.wraps(fn)
    def wrapper(c, *args, **kwargs):
        from .commands.hosts import list_hosts, run_options

        opts = {k: kwargs.pop(k, _RUN_PARAMS[k]) for k in added}
        verbose = kwargs.get("verbose", opts.get("verbose", 0))
        with run_options(limit=opts.get("limit"), forks=opts.get("forks", 32), verbosity=verbose):
            if opts.get("list_hosts"):
                return _exit(list_hosts(kwargs.get("host"), kwargs.get("group"), kwargs.get("inventory"),
                                        kwargs.get("json", False)))
            return fn(c, *args, **kwargs)

    params = list(sig.parameters.values())
    params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=_RUN_PARAMS[k]) for k in added]
    wrapper.__signature__ = sig.replace(parameters=params)
    return wrapper


def cli_errors(fn):
    """Input errors end as one line on stderr and exit 2, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from .errors import UsageError

        try:
            return fn(*args, **kwargs)
        except UsageError as exc:
            sys.stderr.write(f"error: {exc}\n")
            raise Exit(code=exc.exit_code)
        except KeyboardInterrupt:
            sys.stderr.write("interrupted\n")
            raise Exit(code=130)

    return wrapper


def _exit(code):
    """A command's exit code becomes the process's; 0 returns normally."""
    if code:
        raise Exit(code=code)


@task(help={**HOST_HELP, "raw": "With --json: the probe's full facts (default: a summary per host)"})
@cli_errors
@host_options
def facts(c, host=None, group=None, inventory=None, json=False, raw=False,
          accept_new_host_keys=False, connect_timeout=None):
    """Gather each host's facts in one round trip and print them."""
    from .commands.preflight import run_facts

    _exit(run_facts(host=host, group=group, inventory=inventory, json=json, raw=raw,
                    accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout))


@task(help={**HOST_HELP, "recipe": "Recipe whose requirements to check (default: dspark)",
            "network-timeout": "Seconds for the github.com:443 test, and the sources check's slow mark (3x: closed); "
                               "0 skips both (default 1)"})
@cli_errors
@host_options
def preflight(c, host=None, group=None, inventory=None, recipe=None, json=False,
              accept_new_host_keys=False, connect_timeout=None, network_timeout=None):
    """Check driver, VRAM, free GPU, disk, Pythons, gcc-13, GitHub and proxies on each host."""
    from .commands.preflight import run_preflight

    _exit(run_preflight(host=host, group=group, inventory=inventory, recipe=recipe, json=json,
                        accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout,
                        network_timeout=network_timeout))


@task(iterable=["log", "rules"], help={
    "log": "Log file to scan (repeatable); '-' reads stdin; .gz files are decompressed",
    "host": "Scan logs on this host (paths are the host's); default: this machine",
    "inventory": HOST_HELP["inventory"],
    "service": "Scan the log(s) of the service(s) `inv serve` started on the host",
    "service-name": "With --service: only this service",
    "rules": "Extra rules file in the table's format (repeatable)",
    "json": HOST_HELP["json"],
    "fix": "Apply the automatic remedies of the findings, after printing exactly what will run",
    "yes": "With --fix: do not ask before running",
    "api-key": "With --fix: the key of a service started with --api-key, so that its restart keeps it",
    "context": "Lines of context around each first occurrence (default 2)",
    "as-log": "Read every --log as a run's log: never hold its findings back as quotes of a text about errors",
    "accept-new-host-keys": HOST_HELP["accept-new-host-keys"],
    "connect-timeout": HOST_HELP["connect-timeout"],
})
@cli_errors
@host_options
def diagnose(c, log=None, host=None, inventory=None, service=False, service_name=None, rules=None, json=False,
             fix=False, yes=False, context=None, api_key=None, as_log=False, accept_new_host_keys=False,
             connect_timeout=None):
    """Match logs against the error table: known failures with cause and fix, harmless noise, unexplained errors.

    Exit codes: 0 nothing wrong found, 1 a known error, 3 only unrecognised errors, 2 input error.
    """
    from .commands.diagnose import run_diagnose

    _exit(run_diagnose(logs=log, host=host, inventory=inventory, service=service, service_name=service_name,
                       rules=rules, json=json, fix=fix, yes=yes, context=context, api_key=api_key,
                       as_log=as_log, accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout))


@task(iterable=["set"], help={
    **{k: HOST_HELP[k] for k in ("host", "group", "inventory", "accept-new-host-keys", "connect-timeout", "json")},
    "recipe": "One of: " + ", ".join(recipe_names()) + " (default dspark)",
    "check": "Print each step's state and the exact commands it would run; run nothing",
    "step": "Run only this step", "from": "Run this step and the ones after it",
    "force": "Run the selected steps even where the facts say nothing is to do",
    "skip-preflight": "Install even when a preflight check fails",
    "deps-dir": "An existing vLLM source's .deps on the host: compile offline (sets the *_SRC_DIR variables)",
    "set": "Host var for this run, KEY=VALUE (repeatable), e.g. --set vllm_src=/src/vllm",
    "no-shared-build": "Every host compiles vLLM itself (default: hosts with the same build inputs share one "
                       "build: one compiles a wheel, the others install it)",
    "facts": "With --check: plan against recorded facts (JSON from `inv facts --json --raw`) instead of a host",
    "installer": "auto (default), uv or pip: what installs the packages (the installer inventory var; README: uv)",
    "docker": "With --recipe deepseek-ocr-vllm085: write its Dockerfile and build/run commands instead of installing",
    "docker-dir": "Where --docker writes (default ./deepseek-ocr-docker)",
    "pip-index-url": "With --docker: the Dockerfile's pip mirror (its PIP_INDEX_URL build argument's default), e.g. "
                     "the guide's https://pypi.tuna.tsinghua.edu.cn/simple",
})
@cli_errors
@host_options
def install(c, host=None, group=None, inventory=None, recipe=None, check=False, step=None, from_=None, force=False,
            verbose=0, skip_preflight=False, deps_dir=None, set=None, facts=None, json=False, docker=False,
            docker_dir=None, accept_new_host_keys=False, connect_timeout=None, pip_index_url=None,
            no_shared_build=False, installer=None):
    """Install a recipe's environments, idempotently: only the steps the facts say are needed run."""
    from .commands.install import run_docker, run_install

    if pip_index_url is not None and not docker:
        from .errors import UsageError

        raise UsageError("--pip-index-url goes with --docker (hosts take the pip_index_url inventory var)")
    if docker:
        _exit(run_docker(recipe, docker_dir, pip_index_url, inventory, list(set or [])))
        return
    code = run_install(host=host, group=group, inventory=inventory, recipe=recipe, check=check, step=step,
                       from_=from_, force=force, verbose=verbose, skip_preflight=skip_preflight, deps_dir=deps_dir,
                       sets=list(set or []) + ([f"installer={installer}"] if installer else []), facts_file=facts,
                       as_json=json, accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout,
                       shared_build=not no_shared_build)
    if code:
        raise Exit(code=code)


@task(iterable=["model"], help={
    **{k: HOST_HELP[k] for k in ("host", "group", "inventory", "accept-new-host-keys", "connect-timeout", "json")},
    "model": "A model to fetch (repeatable): MiniCPM-OCR-1.0, MiniCPM-OCR-1.0-DSpark, PP-DocLayoutV3_infer, "
             "DeepSeek-OCR (default: the first three)",
    "source": "hf (default; hf_endpoint for a mirror), modelscope (modelscope_endpoint; ids from ms_main, ms_draft, "
              "...) or auto (the hub, then hf_mirror, then ModelScope, after a short probe); default: model_source",
    "from": "Copy one model from this path on the host (a directory, or the layout .tar) instead of downloading",
    "via-controller": "Download on this machine and copy to the host (hosts without internet)",
    "verify-only": "Verify a local model directory (--path), without any network; exit 0/1/2",
    "path": "With --verify-only: the model directory",
    "manifest": "A release_manifest.json to verify against (default: the one in the model directory)",
    "kind": "With --verify-only: main, draft, layout or deepseek (default: the --model's, else read from the "
            "directory's config.json or Paddle files)",
    "rehash": "Hash every file again instead of trusting the cache of unchanged files",
    "check": "Show what would be fetched and verified; run nothing",
    "layout-url": "Where to get PP-DocLayoutV3_infer.tar (default: the guide's URL)",
    "endpoint": "Hugging Face endpoint (a mirror), overriding hf_endpoint",
})
@cli_errors
@host_options
def models(c, host=None, group=None, inventory=None, model=None, source=None, from_=None, via_controller=False,
           verify_only=False, path=None, manifest=None, kind=None, rehash=False, check=False, json=False,
           layout_url=None, endpoint=None, verbose=0, accept_new_host_keys=False, connect_timeout=None):
    """Download the models on each host and verify them (sha256 against the release manifest and the hub)."""
    from .errors import UsageError
    from .commands.models import run_models, verify_only as verify_local

    if verify_only:
        if not path:
            raise UsageError("--verify-only needs --path DIR")
        if model and len(model) > 1:
            raise UsageError("--verify-only checks one directory: give at most one --model")
        code = verify_local(path, manifest, kind, rehash, json, model=model[0] if model else None)
    else:
        if path:
            raise UsageError("--path goes with --verify-only")
        code = run_models(host=host, group=group, inventory=inventory, names=list(model or []) or None,
                          source=source, from_path=from_, via_controller=via_controller, manifest=manifest,
                          rehash=rehash, check=check, as_json=json, layout_url=layout_url, endpoint=endpoint,
                          verbose=verbose, accept_new_host_keys=accept_new_host_keys,
                          connect_timeout=connect_timeout)
    if code:
        raise Exit(code=code)


SERVE_HELP = {k: HOST_HELP[k] for k in ("host", "inventory", "accept-new-host-keys", "connect-timeout", "json")}
ROUTER_HELP = {"router": "Put the ready instances behind vLLM's router: one URL (README: One URL for many instances)",
               "router-port": "The router's port on 127.0.0.1 (default 18490)",
               "router-policy": "The router's --policy (default round_robin)",
               "router-host": "The host the router runs on (default: the inventory group `router`, else the first "
                              "selected host); workers elsewhere are reached through SSH tunnels it holds"}


@task(help={**SERVE_HELP,
            "dspark": "DSpark speculative decoding (the default)", "standard": "vLLM without speculative decoding",
            "backend": "dspark, standard, transformers (transformers serve) or deepseek (DeepSeek-OCR on "
                       "upstream vLLM; deepseek-upstream is the same)",
            "gpu": "GPU index (comma list with --instances), auto: the free card preflight picks, or none: no GPU "
                   "(a CPU build of vLLM; transformers on the CPU) (default: the host's `gpu` var, else auto)",
            "model-dir": "Serve this model directory on the host (absolute) instead of the one `inv models` verified",
            "speculative-config": "vLLM's --speculative-config JSON, replacing the recipe's (DSpark) one",
            "port": "Port of the first instance (default 18499; 8000 for DeepSeek-OCR); the next ones follow",
            "instances": "Instances, one per free GPU, on consecutive ports (default 1)",
            "public": "Bind 0.0.0.0 instead of 127.0.0.1 (needs --api-key)", "api-key": "Key the server requires",
            "systemd": "Run as a systemd unit instead of a detached process",
            "timeout": "Seconds to wait for readiness (default 900; the first start takes ~3 min)",
            "gpu-memory-utilization": "vLLM's --gpu-memory-utilization (default 0.85; out of memory: 0.7)",
            "max-model-len": "vLLM's --max-model-len (default 40960; out of memory: 16384)",
            "max-num-seqs": "vLLM's --max-num-seqs (DSpark default 1: requests queue; more for throughput)",
            "enforce-eager": "Start vLLM with --enforce-eager (no CUDA graphs)",
            "no-flashinfer-sampler": "Set VLLM_USE_FLASHINFER_SAMPLER=0 (drivers < 580: TopKMaskLogits ... kernel "
                                     "image is invalid; greedy decoding gives the same result)",
            "allow-release-mismatch": "Serve DSpark even when the draft is not from the main model's release",
            **ROUTER_HELP})
@cli_errors
@host_options
def serve(c, host=None, inventory=None, dspark=False, standard=False, backend=None, gpu=None, port=None,
          instances=None, public=False, api_key=None, systemd=False, timeout=None, json=False,
          accept_new_host_keys=False, connect_timeout=None, gpu_memory_utilization=None, max_model_len=None,
          max_num_seqs=None, enforce_eager=False, no_flashinfer_sampler=False, allow_release_mismatch=False,
          model_dir=None, speculative_config=None, router=False, router_port=None, router_policy=None,
          router_host=None):
    """Start the OCR service (vLLM + DSpark by default) and wait until /v1/models lists minicpm-ocr."""
    from .errors import UsageError
    from .commands.services import run_serve, tuning_from

    chosen = [b for b, on in (("dspark", dspark), ("standard", standard)) if on] + ([backend] if backend else [])
    if len(set(chosen)) > 1:
        raise UsageError("choose one of --dspark, --standard, --backend")
    chosen_backend = (chosen or ["dspark"])[0]
    tuning = tuning_from(chosen_backend, gpu_memory_utilization, max_model_len, max_num_seqs, enforce_eager,
                         no_flashinfer_sampler)
    code = run_serve(host=host, inventory=inventory, backend=chosen_backend, gpu=gpu, port=port,
                     instances=instances, public=public, api_key=api_key, systemd=systemd, timeout=timeout,
                     as_json=json, accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout,
                     tuning=tuning, allow_release_mismatch=allow_release_mismatch, model_dir=model_dir,
                     speculative_config=speculative_config, router=_router_options(router, router_port,
                                                                                   router_policy, public, router_host))
    if code:
        raise Exit(code=code)


def _router_options(router, router_port, router_policy, public, router_host=None):
    from .errors import UsageError

    if not router:
        if router_host or router_port or router_policy:
            raise UsageError("--router-host, --router-port and --router-policy go with --router")
        return None
    from .commands.router import check_router_options

    port, policy = check_router_options(router_port, public, router_policy)
    return {"port": port, "policy": policy, "host": router_host}


@task(help={**SERVE_HELP, "name": "Only this service (e.g. minicpm-ocr-18499)", "api-key": "The server's key"})
@cli_errors
@host_options
def status(c, host=None, inventory=None, name=None, api_key=None, json=False, accept_new_host_keys=False,
           connect_timeout=None):
    """Per service: pid alive, port, ready, model ids, uptime, and DSpark's accept length from /metrics."""
    from .commands.services import run_status

    code = run_status(host=host, inventory=inventory, name=name, api_key=api_key, as_json=json,
                      accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout)
    if code:
        raise Exit(code=code)


@task(help={**SERVE_HELP, "name": "Only this service (a vllm-router-PORT name: that router alone)",
            "grace": "Seconds between SIGTERM and SIGKILL (default 30)",
            "drain": "Out of the router first, then wait until the engine holds no request (running, waiting: 0)",
            "drain-timeout": "Seconds --drain waits before the stop cuts requests off (default 600)",
            "api-key": "The services' key (to read their /metrics while draining)",
            "router-host": "The host whose router pools these hosts' workers (default: the inventory group "
                           "`router`); they leave it first"})
@cli_errors
@host_options
def stop(c, host=None, inventory=None, name=None, grace=None, json=False, accept_new_host_keys=False,
         connect_timeout=None, drain=False, drain_timeout=None, api_key=None, router_host=None):
    """Stop what `inv serve` started, by pid, and wait for it to end."""
    from .commands.services import run_stop

    code = run_stop(host=host, inventory=inventory, name=name, grace=grace, as_json=json,
                    accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout, drain=drain,
                    drain_timeout=drain_timeout, api_key=api_key, router_host=router_host)
    if code:
        raise Exit(code=code)


@task(help={**SERVE_HELP, "rolling": "One instance at a time behind the router: out, drain, stop, start, ready + "
                                       "smoke, back in, next",
            "batch": "Instances restarted together (default 1)",
            "allow-downtime": "Roll even with fewer than two instances in the pool (the URL answers nothing "
                              "meanwhile)",
            "timeout": "Seconds each new instance has to be ready (default 900)",
            "drain-timeout": "Seconds a drain waits before the stop cuts requests off (default 600)",
            "router-port": "The router to roll behind (default: the one running on the host)",
            "api-key": "The services' key (never stored: give it again)",
            "max-model-len": "New vLLM --max-model-len", "max-num-seqs": "New vLLM --max-num-seqs",
            "gpu-memory-utilization": "New vLLM --gpu-memory-utilization",
            "enforce-eager": "Restart with --enforce-eager",
            "model-dir": "Serve this model directory from now on (absolute path on the host)",
            "router-host": "The host whose router pools the selected hosts' workers (default: the inventory group "
                           "`router`, else each host's own router)"})
@cli_errors
@host_options
def restart(c, host=None, inventory=None, rolling=False, batch=None, allow_downtime=False, timeout=None,
            drain_timeout=None, router_port=None, api_key=None, max_model_len=None, max_num_seqs=None,
            gpu_memory_utilization=None, enforce_eager=False, json=False, accept_new_host_keys=False,
            connect_timeout=None, model_dir=None, router_host=None):
    """Restart the instances behind the router with changed serve options, dropping no request."""
    from .commands.router import run_restart
    from .commands.services import tuning_from

    given = tuning_from("standard", gpu_memory_utilization, max_model_len, max_num_seqs, enforce_eager)
    change = {k: getattr(given, k) for k, v in (("max_model_len", max_model_len), ("max_num_seqs", max_num_seqs),
                                                ("gpu_memory_utilization", gpu_memory_utilization),
                                                ("enforce_eager", enforce_eager or None)) if v is not None}
    code = run_restart(host=host, inventory=inventory, rolling=rolling, change=change, timeout=timeout, batch=batch,
                       allow_downtime=allow_downtime, drain_timeout=drain_timeout, router_port=router_port,
                       api_key=api_key, as_json=json, accept_new_host_keys=accept_new_host_keys,
                       connect_timeout=connect_timeout, model_dir=model_dir, router_host=router_host)
    if code:
        raise Exit(code=code)


@task(iterable=["server_url"], help={
    **SERVE_HELP, "name": "Verify this service (default: the first ready one)", "api-key": "The server's key",
    "verify-transformers": "Path on the host of verify_transformers.py (feat-ocr source), for two-end checks",
    "verify-vllm": "Path on the host of verify_vllm.py (feat-ocr source), for two-end checks",
    "server-url": "Verify an existing server instead (llama.cpp, any OpenAI-compatible one), as the host's SDK "
                  "reaches it (repeatable)",
    "backend": "With --server-url: the SDK config, openai (default), llamacpp or vllm",
    "model": "With --server-url: the model name the SDK asks for (default minicpm-ocr)",
    "image": "With the two-end scripts: your own table image on the host (default: the project's 1080x1080 table)",
    "report": "Also write the checks and each parsed page beside its output to this HTML file",
    "router": "Verify through the router's URL (inv serve --router)", "router-port": ROUTER_HELP["router-port"]})
@cli_errors
@host_options
def verify(c, host=None, inventory=None, name=None, api_key=None, verify_transformers=None, verify_vllm=None,
           json=False, accept_new_host_keys=False, connect_timeout=None, server_url=None, backend=None, model=None,
           image=None, report=None, router=False, router_port=None):
    """Readiness, a smoke request, DSpark counters, sample pages through the SDK; each check passed/failed/not run."""
    from .commands.verify import run_verify

    from .commands.router import router_target

    url = router_target(router, router_port, server_url, "checks")
    if url:             # the router's URL as the one server (the engines behind it speak vLLM's API)
        server_url, backend = [url], backend or "standard"

    code = run_verify(host=host, inventory=inventory, name=name, api_key=api_key,
                      scripts=(verify_transformers, verify_vllm) if verify_transformers or verify_vllm else None,
                      as_json=json, accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout,
                      server_urls=list(server_url or []), backend=backend, model=model, image=image, report=report)
    if code:
        raise Exit(code=code)


@task(help={**SERVE_HELP,
    "server-url": "Bench this OpenAI-compatible server (default: the ready service `inv serve` started on --host)",
    "name": "With --host: this service", "api-key": "The server's key",
    "pages": "An image, a PDF or a directory of them (page.md beside page.png: its ground truth); "
             "default: the project's sample pages",
    "concurrency": "Levels of requests in flight (default 1,2,4,8)",
    "duration": "Seconds of load per level", "requests": "Requests per level (default: 4 x concurrency, at least "
                                                           "one per page)",
    "warmup": "Requests sent first and not counted (default 1)",
    "through": "api (default): chat requests as the SDK sends them; sdk: minicpmvocr parse per page on the host",
    "backend": "The SDK config whose request body to send: dspark/standard/vllm, transformers/openai, llamacpp "
               "(default: the service's, openai with --server-url)",
    "model": "The model name to send (default: minicpm-ocr, or the one /v1/models lists)",
    "prompt": "The OCR prompt", "max-tokens": "max_tokens per page (default 1024)",
    "min-accuracy": "The accuracy floor of the verdict, 0-1 (default 0.85)",
    "report": "Write a self-contained HTML report here", "baseline": "An earlier --json document to compare with",
    "tolerance": "With --baseline: the pages/min drop allowed, 0-1 (default 0.10)",
    "router": "Bench through the router's URL on the host (inv serve --router)",
    "router-port": ROUTER_HELP["router-port"]})
@cli_errors
@host_options
def bench(c, host=None, inventory=None, server_url=None, name=None, api_key=None, pages=None, concurrency=None,
          duration=None, requests=None, warmup=None, through=None, backend=None, model=None, prompt=None,
          max_tokens=None, min_accuracy=None, report=None, baseline=None, tolerance=None, json=False,
          accept_new_host_keys=False, connect_timeout=None, router=False, router_port=None):
    """Pages per minute at a stated accuracy, per concurrency level; exit 0 passed, 1 below the floor, 2 bad input."""
    from .commands.bench import run_bench

    _exit(run_bench(host=host, inventory=inventory, server_url=server_url, name=name, api_key=api_key, pages=pages,
                    concurrency=concurrency, duration=duration, requests=requests, warmup=warmup, through=through,
                    backend=backend, model=model, prompt=prompt, max_tokens=max_tokens, min_accuracy=min_accuracy,
                    as_json=json, report=report, baseline=baseline, tolerance=tolerance,
                    accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout, router=router,
                    router_port=router_port))


@task(iterable=["server_url"], help={**SERVE_HELP,
    "input": "The document on the host (absolute path)", "output": "Where the Markdown goes on the host (absolute)",
    "backend": "With --server-url: the SDK config, openai (default; openai.yaml), vllm (vllm.yaml) or llamacpp",
    "model": "With --server-url: the model name the SDK asks for (default minicpm-ocr)",
    "server-url": "A service URL as seen from the host (repeatable); default: the ready services `inv serve` started",
    "all-pages": "After the first page passes, parse the whole document (default: the first page only)",
    "run-root": "Where the SDK keeps its runs (absolute; for when the SDK's disk is tight)",
    "router": "Parse through the router's URL (inv serve --router)", "router-port": ROUTER_HELP["router-port"]})
@cli_errors
@host_options
def parse(c, input=None, output=None, host=None, inventory=None, backend=None, server_url=None, all_pages=False,
          run_root=None, json=False, accept_new_host_keys=False, connect_timeout=None, model=None, router=False,
          router_port=None):
    """Parse a document through the SDK on the host: input.limit=1 first, then (--all-pages) every page."""
    from .commands.parse import run_parse
    from .errors import UsageError

    from .commands.router import router_target

    url = router_target(router, router_port, server_url, "parses through")
    if url:             # the SDK gets the router's one URL
        server_url, backend = [url], backend or "standard"

    if not input or not output:  # options, not positionals: a positional would swallow -h
        raise UsageError("parse needs --input /abs/doc.pdf and --output /abs/doc.md")

    code = run_parse(host=host, inventory=inventory, input_path=input, output=output, backend=backend,
                     server_urls=server_url, all_pages=all_pages, run_root=run_root, as_json=json,
                     accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout, model=model)
    if code:
        raise Exit(code=code)


@task(help={**SERVE_HELP,
            "mode": "tiny, small, base, large or gundam (default: by the chosen GPU's memory)",
            "gpu": "The GPU to size for and run on: an index, or auto (preflight's free GPU; the default)",
            "max-crops": "MAX_CROPS, 2-9 (default 6; 6 under 24 GB)",
            "max-concurrency": "MAX_CONCURRENCY (default: 100 from 40 GB, 50 from 32 GB, 40 from 24 GB, else 30)",
            "input": "INPUT_PATH on the host (absolute; default <workdir>/deepseek-input)",
            "output": "OUTPUT_PATH on the host (absolute; default <workdir>/deepseek-output)",
            "prompt": "The notes' prompts: grounding (keeps the layout), free (Free OCR: fast, no structure), ocr-image, "
                      "figure, describe, or locate:TEXT (default: config.py's own PROMPT stays; grounding when none)",
            "downgrade": "Apply the next out-of-memory remedy to the current config.py",
            "single-image-oom": "With --downgrade: one image alone ran out of memory (BASE_SIZE 640)",
            "check": "Print the values; write nothing"})
@cli_errors
@host_options
def deepseek_config(c, host=None, inventory=None, mode=None, max_crops=None, max_concurrency=None, input=None,
                    output=None, prompt=None, downgrade=False, single_image_oom=False, check=False, json=False,
                    accept_new_host_keys=False, connect_timeout=None, gpu=None):
    """Write DeepSeek-OCR-vllm/config.py for the host's GPU: mode, crops, concurrency, workers, absolute paths."""
    from .commands.deepseek_config import run_deepseek_config

    code = run_deepseek_config(host=host, inventory=inventory, mode=mode, max_crops=max_crops,
                               max_concurrency=max_concurrency, input_path=input, output_path=output, prompt=prompt,
                               downgrade=downgrade, single_image=single_image_oom, check=check, as_json=json,
                               accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout, gpu=gpu)
    if code:
        raise Exit(code=code)


DS_GPU_HELP = "The GPU to run on (default: the one config.py was sized for, else preflight's free GPU)"


@task(help={**SERVE_HELP, "compare-modes": "Also run the two-column page in Gundam and Base mode and compare",
            "gpu": DS_GPU_HELP})
@cli_errors
@host_options
def deepseek_verify(c, host=None, inventory=None, compare_modes=False, json=False, accept_new_host_keys=False,
                    connect_timeout=None, gpu=None):
    """DeepSeek-OCR's batch script on the project's sample pages: headings, tables, LaTeX, figures, no garbage."""
    from .commands.deepseek_verify import run_deepseek_verify

    code = run_deepseek_verify(host=host, inventory=inventory, compare_modes=compare_modes, as_json=json,
                               accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout, gpu=gpu)
    if code:
        raise Exit(code=code)


@task(help={**SERVE_HELP, "input": "A PDF, an image (jpg/png/jpeg) or a directory of them on the host (absolute)",
            "output": "Where the results go on the host (absolute; default <workdir>/deepseek-output)",
            "eval": "A benchmark directory (OmniDocBench layout) through run_dpsk_ocr_eval_batch.py",
            "backend": "vllm (default: the repository's batch scripts) or transformers (infer() on each image, the "
                       "notes' section 4.1: single images and prompt tuning)",
            "gpu": DS_GPU_HELP})
@cli_errors
@host_options
def deepseek_run(c, host=None, inventory=None, input=None, output=None, eval=False, json=False,
                 accept_new_host_keys=False, connect_timeout=None, gpu=None, backend=None):
    """DeepSeek-OCR's batch scripts on your files with the host's config.py: PDF, images, or a benchmark."""
    from .commands.deepseek_run import run_deepseek_batch

    code = run_deepseek_batch(host=host, inventory=inventory, input_path=input, output=output, evaluate=eval,
                              as_json=json, accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout,
                              gpu=gpu, backend=backend)
    if code:
        raise Exit(code=code)


ns = Collection()
ns.add_task(facts)
ns.add_task(preflight)
ns.add_task(install)
ns.add_task(models)
ns.add_task(serve)
ns.add_task(status)
ns.add_task(stop)
ns.add_task(restart)
ns.add_task(verify)
ns.add_task(parse)
ns.add_task(bench)
ns.add_task(deepseek_config)
ns.add_task(deepseek_verify)
ns.add_task(deepseek_run)
ns.add_task(diagnose)
