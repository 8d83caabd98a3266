"""`inv install`: inventory -> hosts -> one plan per host -> applied in parallel -> recap."""

from __future__ import annotations

import json as _json
import os
import sys
import time

from ..errors import UsageError
from ..diagnose.engine import log_findings
from ..provision.apply import Applier, summarize
from ..provision.connection import Connection

VAR_KEYS = ("sdk_repo", "vllm_src", "transformers_src", "deps_dir", "sdk_commit", "cuda_13_4_dir", "max_jobs",
            "transformers_serving")


def parse_sets(sets) -> dict:
    out = {}
    for item in sets:
        if "=" not in item:
            raise UsageError(f"--set {item!r}: expected KEY=VALUE")
        key, value = item.split("=", 1)
        if not key.isidentifier():
            raise UsageError(f"--set {item!r}: {key!r} is not a variable name")
        out[key] = value
    return out


def load_facts_file(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = _json.load(fh)
    except FileNotFoundError:
        raise UsageError(f"{path}: facts file not found")
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, expected the JSON of `inv facts --json --raw`")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the facts file ({exc})")
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON ({exc})")
    # accept both a bare facts document and `inv facts --json --raw` output ({host: {"facts": ...}})
    if isinstance(doc, dict) and "workdir" in doc and "gpu" in doc:
        return doc
    if isinstance(doc, dict) and len(doc) == 1:
        inner = next(iter(doc.values()))
        if isinstance(inner, dict) and isinstance(inner.get("facts"), dict):
            return inner["facts"]
    raise UsageError(f"{path}: not a facts document (expected the output of `inv facts --json --raw`)")


def wants_router(h) -> bool:
    return str(h.vars.get("router") or "").lower() in ("1", "true", "yes", "on")


def run_install(*, host, group, inventory, recipe, check, step, from_, force, verbose, skip_preflight, deps_dir,
                sets, facts_file, as_json, accept_new_host_keys, connect_timeout) -> int:
    from ..recipes import get_recipe
    from ..recipes.minicpm import build_plan, check_required
    from .hosts import open_session
    from ..provision.report import console, recap
    from ..provision.reporter import Reporter

    chosen = get_recipe(recipe)
    overrides = parse_sets(sets)
    if deps_dir:
        overrides["deps_dir"] = deps_dir
    if facts_file and not check:
        raise UsageError("--facts only plans (it needs --check): it describes a host, it cannot change one")
    recorded = load_facts_file(facts_file) if facts_file else None
    session = open_session(host, group, inventory, accept_new_host_keys, connect_timeout)
    plans = {}
    for h in session.hosts:
        h.vars.update(overrides)
        origin = str(inventory or os.environ.get("OCRDEPLOY_INVENTORY") or "inventory.yml")
        check_required(chosen.name, h.vars, origin)
        plans[h.name] = build_plan(chosen.name, h.vars)
    selected = {name: plan.select(step, from_) for name, plan in plans.items()}
    run_id = time.strftime("%Y%m%d-%H%M%S")
    con = console(stderr=as_json)
    reporter = Reporter(con, show_commands=verbose >= 1, quiet=False)  # -v: commands; -vv: their output

    def one(conn, h):
        result = Applier(conn, h, selected[h.name], h.vars, check=check, force=force, verbose=verbose >= 2,
                         run_id=run_id, reporter=reporter, requirements=chosen.requirements,
                         skip_preflight=skip_preflight, facts=recorded, diagnose=log_findings).apply()
        if wants_router(h) and not check and recorded is None and not result.preflight_failed:
            from .router import install_for
            install_for(conn, h, con)            # the inventory asks for the router: its pinned venv too
        return result

    with session:
        if recorded is not None:
            outcomes = {h.name: _Outcome(h, one(_NoConnection(h, recorded), h)) for h in session.hosts}
        else:
            outcomes = session.map(one)
    rows, hosts, failed = summarize(outcomes)
    doc = {"recipe": chosen.name, "check": check, "run": run_id, "hosts": hosts}
    if as_json:
        print(_json.dumps(doc, indent=2))
    else:
        recap(con, rows)
        for name, o in outcomes.items():
            if not o.error and o.value.preflight_failed:
                con.print(f"[red]{name}: preflight failed, nothing installed[/red]")
        if check:
            con.print("[dim](check mode: nothing was run)[/dim]")
    sys.stdout.flush()
    return 1 if failed else 0


class _Outcome:
    def __init__(self, host, value):
        self.host, self.value, self.error = host, value, None


class _NoConnection(Connection):
    """Planning against recorded facts: the plan is shown as this host would run it; nothing runs."""

    is_local = True

    def __init__(self, host, facts):
        super().__init__(host)
        self._uid = (facts.get("host") or {}).get("uid")

    def run(self, *a, **kw):
        raise RuntimeError("no commands run when planning from recorded facts")

    def set_uid(self, uid):
        pass


def index_url_option(flag: str, value: str | None) -> str | None:
    """A package index URL from the command line: http(s), a host, nothing that could end a Dockerfile line."""
    from urllib.parse import urlsplit

    if value is None:
        return None
    parts = urlsplit(str(value))
    if parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() or c in "\"'\\$`"
                                                                        for c in str(value)):
        raise UsageError(f"{flag} {value!r}: an http(s) URL of a package index, e.g. "
                         f"https://pypi.tuna.tsinghua.edu.cn/simple")
    return str(value)


def run_docker(recipe, docker_dir, pip_index_url=None, inventory=None, sets=()) -> int:
    """`inv install --docker`: the DeepSeek-OCR image's build context, and how to build and run it.

    The image is built here, so this machine's vars (the inventory's localhost, then --set) give its
    package mirrors (pip_index_url & co, torch_index_url); --pip-index-url overrides pip_index_url."""
    if recipe != "deepseek-ocr-vllm085":
        raise UsageError("--docker writes the DeepSeek-OCR image: use it with --recipe deepseek-ocr-vllm085")
    from ..inventory import find_inventory_path, load_inventory
    from ..recipes.deepseek import docker_commands, write_docker_context

    index_url = index_url_option("--pip-index-url", pip_index_url)
    v = dict(load_inventory(find_inventory_path(inventory)).host("localhost").vars)
    v.update(parse_sets(sets))
    for path in write_docker_context(docker_dir or "deepseek-ocr-docker", index_url=index_url, pip=v):
        print(f"wrote {path}")
    print("then, in that directory:\n  " + "\n  ".join(docker_commands()))
    return 0
