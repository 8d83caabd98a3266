"""`inv install`: inventory -> hosts -> one plan per host -> applied in parallel -> recap."""

from __future__ import annotations

import json as _json
import os
import sys
import time

from ..errors import UsageError
from .options import parse_sets
from ..provision.apply import Applier, summarize
from ..provision.connection import Connection
from ..provision.step import Step

VAR_KEYS = ("sdk_repo", "vllm_src", "transformers_src", "deps_dir", "sdk_commit", "cuda_13_4_dir", "max_jobs",
            "transformers_serving", "torch_cuda_arch_list")


FACTS_FILE_MAX = 16 * 2**20     # a facts document is tens of KB; a file past this is not one
FACTS_FILE_DEPTH = 32           # the probe's output nests 6 deep

# what a facts document's sections are, where the checks and steps read them
_SECTIONS = {"host": dict, "cpu": dict, "memory": dict, "workdir": dict, "gpu": dict, "proxy": dict, "tools": dict,
             "compilers": dict, "network": dict, "venvs": dict, "files": dict, "git": dict, "globs": dict,
             "reads": dict, "dirs": dict, "imports": dict, "probe": dict, "pythons": list}
_NESTED = {"workdir": {"path": (str, type(None)), "free": (int, type(None)), "total": (int, type(None))},
           "gpu": {"gpus": list, "driver": (str, type(None))}, "host": {"uid": (int, type(None))},
           "memory": {"total": (int, type(None)), "available": (int, type(None))}}


def _depth(doc) -> int:
    deepest, todo = 0, [(doc, 1)]
    while todo:
        node, d = todo.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, d)
            if deepest > FACTS_FILE_DEPTH:
                return deepest
            todo.extend((v, d + 1) for v in (node.values() if isinstance(node, dict) else node))
    return deepest


def _shape_problem(facts: dict) -> str | None:
    for key, kind in _SECTIONS.items():
        if key in facts and not isinstance(facts[key], kind):
            return f"{key!r} is a {type(facts[key]).__name__}, not a {kind.__name__}"
    for key, fields in _NESTED.items():
        for field, kinds in fields.items():
            section = facts.get(key) or {}
            value = section.get(field)
            if field in section and (not isinstance(value, kinds) or isinstance(value, bool)):
                return f"{key}.{field} is a {type(value).__name__}"
    for section in ("venvs", "files"):
        for name, value in (facts.get(section) or {}).items():
            if not isinstance(value, dict):
                return f"{section}[{name!r}] is a {type(value).__name__}, not an object"
    if not all(isinstance(g, dict) for g in facts["gpu"].get("gpus") or []):
        return "gpu.gpus holds something other than objects"
    from ..provision.probe import PROBE_VERSION

    version = (facts.get("probe") or {}).get("version", PROBE_VERSION)
    if version != PROBE_VERSION or isinstance(version, bool):
        # another probe's facts name other keys (or mean other things by the same ones): a plan read from them
        # would say ok for what this version cannot see
        return f"probe version {version!r}, this ocrdeploy reads version {PROBE_VERSION}: record it again"
    return None


def load_facts_file(path: str) -> dict:
    """--facts FILE: a regular file (a FIFO would block, /dev/zero never ends), bounded in size and depth,
    shaped like `inv facts --json --raw` output; anything else is one line naming the file."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise UsageError(f"{path}: facts file not found")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the facts file ({exc.strerror or exc})")
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise UsageError(f"{path}: is a directory, expected the JSON of `inv facts --json --raw`")
        raise UsageError(f"{path}: not a regular file (a pipe or device?): the facts file must be a file")
    with os.fdopen(fd, "rb") as fh:
        try:
            data = fh.read(FACTS_FILE_MAX + 1)
        except OSError as exc:
            raise UsageError(f"{path}: cannot read the facts file ({exc.strerror or exc})")
    if len(data) > FACTS_FILE_MAX:
        raise UsageError(f"{path}: larger than {FACTS_FILE_MAX // 2**20} MiB: not a facts file")
    try:
        doc = _json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})")
    except RecursionError:
        raise UsageError(f"{path}: JSON nested too deeply: not a facts file")
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON ({exc})")
    if _depth(doc) > FACTS_FILE_DEPTH:
        raise UsageError(f"{path}: JSON nested more than {FACTS_FILE_DEPTH} deep: not a facts file")
    # accept a bare facts document and `inv facts --json --raw` output ({"hosts": {host: {"facts": ...}}},
    # or the older {host: {"facts": ...}})
    facts = None
    if isinstance(doc, dict) and "workdir" in doc and "gpu" in doc:
        facts = doc
    if facts is None and isinstance(doc, dict) and list(doc) == ["hosts"] and isinstance(doc["hosts"], dict):
        doc = doc["hosts"]
    if facts is None and isinstance(doc, dict) and len(doc) == 1:
        inner = next(iter(doc.values()))
        if isinstance(inner, dict) and isinstance(inner.get("facts"), dict):
            facts = inner["facts"]
    if facts is None or "workdir" not in facts or "gpu" not in facts:
        raise UsageError(f"{path}: not a facts document (expected the output of `inv facts --json --raw`)")
    problem = _shape_problem(facts)
    if problem:
        raise UsageError(f"{path}: not a facts document ({problem}; expected the output of "
                         f"`inv facts --json --raw`)")
    return facts


def wants_router(h) -> bool:
    return str(h.vars.get("router") or "").lower() in ("1", "true", "yes", "on")


def run_install(*, host, group, inventory, recipe, check, step, from_, force, verbose, skip_preflight, deps_dir,
                sets, facts_file, as_json, accept_new_host_keys, connect_timeout, shared_build=True) -> int:
    from ..recipes import get_recipe
    from ..provision.installer import mode
    from ..provision.kinds import with_uv
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
    if recorded is not None and len(session.hosts) != 1:
        # one host's facts: a plan for each of several hosts read from them would speak for hosts never seen
        raise UsageError(f"--facts {facts_file} describes one host, and the selection names "
                         f"{len(session.hosts)} ({', '.join(h.name for h in session.hosts[:4])}"
                         f"{', ...' if len(session.hosts) > 4 else ''}): select one with --host")
    plans = {}
    for h in session.hosts:
        h.vars.update(overrides)
        origin = str(inventory or os.environ.get("OCRDEPLOY_INVENTORY") or "inventory.yml")
        check_required(chosen.name, h.vars, origin)
        mode(h.vars)                             # a bad installer var: one line before anything connects
        plans[h.name] = build_plan(chosen.name, h.vars)
    # uv's bootstrap comes with the selected steps (on demand: nothing where uv is there or not used)
    selected = {h.name: with_uv(plans[h.name].select(step, from_), h.vars) for h in session.hosts}
    run_id = time.strftime("%Y%m%d-%H%M%S")
    con = console(stderr=as_json)
    reporter = Reporter(con, show_commands=verbose >= 1, quiet=False)  # -v: commands; -vv: their output

    shared = None

    def one(conn, h):
        result = Applier(conn, h, selected[h.name], h.vars, check=check, force=force, verbose=verbose >= 2,
                         run_id=run_id, reporter=reporter, requirements=chosen.requirements,
                         skip_preflight=skip_preflight, facts=recorded, diagnose=_log_findings,
                         shared=shared).apply()
        if wants_router(h) and not check and recorded is None and not result.preflight_failed:
            from .router import install_for
            install_for(conn, h, con)            # the inventory asks for the router: its pinned venv too
        return result

    with session:
        if recorded is not None:
            outcomes = {h.name: _Outcome(h, _plan_recorded(one, h, recorded, facts_file)) for h in session.hosts}
        else:
            shared = _shared_builds(session, selected, shared_build, con)
            try:
                outcomes = session.map(one)
            finally:
                if shared is not None:
                    shared.close()
    rows, hosts, failed = summarize(outcomes)
    doc = {"recipe": chosen.name, "check": check, "run": run_id, "hosts": hosts}
    if shared is not None:
        doc["shared_builds"] = [g.to_dict() for g in shared.groups()]
    if as_json:
        print(_json.dumps(doc, indent=2))
    else:
        recap(con, rows)
        for line in shared.summary() if shared is not None else ():
            con.print(line, markup=False)
        for name, o in outcomes.items():
            if not o.error and o.value.preflight_failed:
                con.print(f"[red]{name}: preflight failed, nothing installed[/red]")
        if check:
            con.print("[dim](check mode: nothing was run)[/dim]")
    sys.stdout.flush()
    return 1 if failed else 0


def _shared_builds(session, selected, wanted, con):
    """The coordinator of builds shared by identical hosts (provision/fleet.py), or None: one host, a plan
    with nothing to build, --no-shared-build, or more hosts than run at once (their plans wait for each
    other, so every host must be running)."""
    if not wanted or len(session.hosts) < 2:
        return None
    if not any(type(s).build_inputs is not Step.build_inputs for steps in selected.values() for s in steps):
        return None
    if len(session.hosts) > session.max_parallel:
        con.print(f"shared builds off: {len(session.hosts)} hosts, {session.max_parallel} at once (--forks); "
                  f"each host builds its own", markup=False)
        return None
    from ..provision.fleet import SharedBuilds

    # connected first, so the plan waits only for hosts that are there
    reached = session.map(lambda conn, h: conn.ensure_open())
    return SharedBuilds([name for name, o in reached.items() if not o.error])


def _log_findings(conn, host, log):
    """The diagnosis of a failed step's log: its rules are loaded only when a step fails."""
    from ..diagnose.engine import log_findings

    return log_findings(conn, host, log)


def _plan_recorded(one, host, recorded, path):
    """Planning from a file: a value of the wrong type deeper than load_facts_file looks is still the
    file's fault, said in one line."""
    try:
        return one(_NoConnection(host, recorded), host)
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
        raise UsageError(f"{path}: not a facts document (planning from it failed: {type(exc).__name__}: "
                         f"{exc}; expected the output of `inv facts --json --raw`)")


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
    from ..provision.pip_index import split_url

    if value is None:
        return None
    try:
        parts = split_url(str(value))
    except ValueError:                         # http://[::1, a port out of range: not a URL pip can use
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() or c in "\"'\\$`"
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
