"""`inv models`: download + verify on the hosts through the install engine, or --verify-only a local
directory without any network."""

from __future__ import annotations

import json as _json
import os
import sys
import time
from pathlib import Path

from ..errors import UsageError
from ..models import hostside
from ..models.catalog import DEFAULT_SET, LAYOUT_URL, MODELS, ModelSpec

VERIFY_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ocrdeploy" / "hash-cache.json"


KINDS = ("main", "draft", "layout", "deepseek")


def kind_from_content(path: Path) -> tuple[str | None, str]:
    """Which model a directory holds, from what it holds (never from its name: a draft copied into
    `draftcopy/` is still a draft): (kind, the evidence) or (None, why it cannot be told)."""
    names = {p.name for p in path.iterdir()}
    if any(n.endswith(".pdiparams") for n in names) or "inference.yml" in names:
        return "layout", "Paddle inference files"
    cfg = path / "config.json"
    if not cfg.is_file():
        return None, "no config.json"
    data, err = hostside.read_manifest(str(cfg))
    if err or data is None:
        return None, err or "no config.json"
    model_type = data.get("model_type")
    archs = data.get("architectures") if isinstance(data.get("architectures"), list) else []
    said = " ".join(str(x) for x in [model_type, *archs]).lower()
    for kind, marks in (("draft", ("dspark", "draft")), ("deepseek", ("deepseek",)), ("main", ("minicpm",))):
        if any(m in said for m in marks):
            return kind, f"config.json model_type {model_type!r}"
    return None, f"config.json model_type {model_type!r} names none of them"


def verify_only(path: str, manifest: str | None, kind: str | None, rehash: bool, as_json: bool,
                model: str | None = None) -> int:
    """Exit 0 verified, 1 mismatch or missing, 2 input error."""
    root = Path(path).expanduser()
    if not root.exists():
        raise UsageError(f"{root}: no such directory")
    if not root.is_dir():
        raise UsageError(f"{root}: not a directory (give the model directory)")
    if manifest is not None:
        m = Path(manifest).expanduser()
        if not m.exists():
            raise UsageError(f"{m}: manifest not found")
        data, err = hostside.read_manifest(str(m))
        if err:
            raise UsageError(f"--manifest {err}")
    if model is not None:
        if model not in MODELS:
            raise UsageError(f"--model {model!r}: choose {', '.join(MODELS)}")
        if kind is not None and kind != MODELS[model].kind:
            raise UsageError(f"--model {model} is a {MODELS[model].kind} model, not --kind {kind}: give one of them")
        kind, source = MODELS[model].kind, f"--model {model}"
    elif kind is not None:
        source = "--kind"
    else:
        kind, source = kind_from_content(root)
        if kind is None:
            raise UsageError(f"{root}: cannot tell which model this is ({source}): name it with --model NAME "
                             f"or --kind {'|'.join(KINDS)}")
    if kind not in KINDS:
        raise UsageError(f"--kind {kind!r}: choose main, draft, layout or deepseek")
    spec = MODELS[model] if model else next(s for s in MODELS.values() if s.kind == kind)
    bar = _HashBar(enabled=not as_json and sys.stderr.isatty())
    hostside.progress_hook = bar.update
    try:
        result = hostside.verify({"name": root.name, "kind": kind, "required": list(spec.required),
                                  "weight": spec.weight}, str(root), str(VERIFY_CACHE), rehash,
                                 str(Path(manifest).expanduser()) if manifest else None, move_bad=False)
    finally:
        bar.close()
        hostside.progress_hook = hostside._print_progress
    result["kind_from"] = source
    if as_json:
        print(_json.dumps(result, indent=2))
    else:
        from rich.markup import escape

        from ..provision.report import console

        con = console()
        con.print(f"[bold]{escape(str(root))}[/bold] [dim](checked as {kind}, from {escape(source)})[/dim]")
        for name, f in result["files"].items():
            src = ", ".join(f["checked_against"])
            con.print(f"  {escape(name)}  {f['sha256']}  [dim]vs {escape(src)}{' (cached)' if f['cached'] else ''}"
                      f"[/dim]")
        for p in result["problems"]:
            con.print(f"  [red]{escape(p)}[/red]")
        con.print("[green]verified[/green]" if result["ok"] else "[red]NOT verified[/red]")
    return 0 if result["ok"] else 1


class _HashBar:
    """Bytes hashed and the rate, on stderr, while --verify-only reads the weights."""

    def __init__(self, enabled):
        self.progress, self.tasks = None, {}
        if enabled:
            from rich.console import Console
            from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                                       TransferSpeedColumn)

            self.progress = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                                     TransferSpeedColumn(), TimeRemainingColumn(), console=Console(stderr=True),
                                     transient=True)
            self.progress.start()

    def update(self, label, done, total):
        if self.progress is None:
            return
        if label not in self.tasks:
            self.tasks[label] = self.progress.add_task(label, total=total)
        self.progress.update(self.tasks[label], completed=done, total=total)

    def close(self):
        if self.progress is not None:
            self.progress.stop()


def run_models(*, host, group, inventory, names, source, from_path, via_controller, manifest, rehash, check,
               as_json, layout_url, endpoint, verbose, accept_new_host_keys, connect_timeout) -> int:
    from ..diagnose.engine import log_findings
    from ..provision.apply import Applier, summarize
    from ..provision.report import console, recap
    from ..provision.reporter import Reporter
    from .hosts import open_session
    from ..models.plan import build_models_plan

    if via_controller and from_path:
        raise UsageError("--via-controller downloads from the hub; --from copies a local path: choose one")
    session = open_session(host, group, inventory, accept_new_host_keys, connect_timeout)
    con = console(stderr=as_json)
    reporter = Reporter(con, show_commands=verbose >= 1)  # -v: commands; -vv: their output
    run_id = time.strftime("%Y%m%d-%H%M%S")

    def one(conn, h):
        staged = stage_via_controller(conn, h, names, source, endpoint, con, layout_url) if via_controller else None
        plan = build_models_plan(h.vars, names=names, source=source, from_path=from_path, manifest=manifest,
                                 rehash=rehash, layout_url=layout_url, endpoint=endpoint, staged=staged)
        return Applier(conn, h, plan.steps, h.vars, check=check, force=rehash, verbose=verbose >= 2, run_id=run_id,
                       reporter=reporter, diagnose=log_findings).apply()

    for h in session.hosts:   # validate options before connecting anywhere
        build_models_plan(h.vars, names=names, source=source, from_path=from_path, manifest=manifest,
                          rehash=rehash, layout_url=layout_url, endpoint=endpoint)
    with session:
        outcomes = session.map(one)
    rows, hosts, failed = summarize(outcomes)
    doc = {"check": check, "hosts": hosts}
    if as_json:
        print(_json.dumps(doc, indent=2))
    else:
        recap(con, rows)
    sys.stdout.flush()
    return 1 if failed else 0


def stage_via_controller(conn, host, names, source, endpoint, con, layout_url=None) -> dict:
    """Download on the controller, copy to the host; the host then verifies what arrived.

    Every model asked for (without --model: the default set, the layout tarball included) comes this
    way: the option is for hosts that must not or cannot reach the hub, so none is left to the host."""
    if (source or host.vars.get("model_source") or "hf") != "hf":
        raise UsageError("--via-controller downloads from Hugging Face only")
    cache = Path.home() / ".cache" / "ocrdeploy" / "models"
    staged = {}
    facts = _workdir(conn, host)
    for n in names or DEFAULT_SET:
        spec: ModelSpec = MODELS[n]
        local = cache / n
        job = {"spec": {"name": n, "kind": spec.kind, "repo": spec.hf_repo, "required": list(spec.required),
                        "weight": spec.weight}, "dest": str(local), "source": "hf",
               "endpoint": endpoint or host.vars.get("hf_endpoint")}
        if spec.kind == "layout":
            job.update(source="url", url=layout_url or host.vars.get("layout_url") or LAYOUT_URL)
        bar = _HashBar(enabled=sys.stderr.isatty())
        hostside.progress_hook = bar.update      # progress here goes to our terminal, not into stdout
        try:
            (res,) = hostside.run({"models": [job], "cache": str(cache / ".hash-cache.json")})
        finally:
            bar.close()
            hostside.progress_hook = hostside._print_progress
        if not res.get("ok"):
            raise UsageError(f"{n}: download on the controller failed: {'; '.join(res.get('problems', []))}")
        remote_root = f"{facts}/models/{n}"
        for path in sorted(local.rglob("*")):
            rel = path.relative_to(local)
            if path.is_dir() or rel.parts[0] in (".cache", hostside.QUARANTINE):
                continue
            conn.run(["mkdir", "-p", str(Path(remote_root) / rel.parent)])
            conn.put(str(path), f"{remote_root}/{rel}")
            con.print(f"[dim]{host.name} | copied {rel} ({path.stat().st_size} bytes)[/dim]")
        lfs = {k: f["sha256"] for k, f in res.get("files", {}).items() if "hub LFS metadata" in f["checked_against"]}
        staged[n] = {"lfs": lfs, "sizes": {}, "commit": res.get("commit")}
    return staged


def _workdir(conn, host) -> str:
    from ..provision import facts as facts_mod

    return facts_mod.gather(conn, facts_mod.probe_request(host.workdir, net_timeout=0))["workdir"]["path"]
