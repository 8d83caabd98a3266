"""`inv diagnose`: scan logs here or on a host, print the findings, apply the remedies on --fix."""

from __future__ import annotations

import json as _json
import sys

from .hosts import open_session
from .options import number


def run_diagnose(*, logs, host, inventory, service, service_name, rules, json, fix, yes, context,
                 accept_new_host_keys, connect_timeout, api_key=None, as_log=False) -> int:
    """Exit codes: 0 nothing wrong found, 1 a known error, 3 only unrecognised errors, 2 input error."""
    from ..diagnose.engine import annotate, exit_code, fix_context
    from ..diagnose.table import load_table
    from ..errors import UsageError

    logs = list(logs or [])
    if not logs and not service and not service_name:
        raise UsageError("nothing to scan: give --log FILE (repeatable, '-' for stdin) or --service")
    context = number(context, "context", 2, whole=True, minimum=0, maximum=20)
    table = load_table(list(rules or []))
    session = open_session(host, None, inventory, accept_new_host_keys, connect_timeout)
    if len(session.hosts) != 1:
        raise UsageError("diagnose works on one host at a time (--host NAME)")
    (target,) = session.hosts
    services = target.workdir if (service or service_name) else None
    with session:
        outcome = session.map(lambda conn, h: _scan_on(conn, logs, table, context, services, service_name,
                                                                  not as_log))[target.name]
        if outcome.error:
            sys.stderr.write(f"error: {target.name}: {outcome.error}\n")
            return 1
        reports = annotate(outcome.value, table, fix_context(target))
        code = exit_code(reports)
        label = None if target.is_local else target.name
        if json:
            print(_json.dumps({"host": target.name, "reports": reports, "exit_code": code}, indent=2))
        else:
            from ..diagnose.render import render
            from ..provision import report

            render(report.console(), reports, label)
        if fix:
            fix_failed = _apply_remedies(session.connection(target), target, reports, fix_context(target), yes,
                                         json, api_key)
            if fix_failed:
                return 1
    if code == 2:
        for rep in reports:
            if "error" in rep and json:
                sys.stderr.write(f"error: {rep['file']}: {rep['error']}\n")
    return code


def _scan_on(conn, logs, table, context, services, service_name, documents):
    from ..diagnose.engine import scan_local, scan_remote

    if conn.is_local:
        return scan_local(logs, table, context=context, services=services, service_name=service_name,
                          documents=documents)
    return scan_remote(conn, logs, table, context=context, services=services, service_name=service_name)


def _confirm(out, question: str) -> bool:
    """Asked where the plan was printed (stderr under --json, so stdout stays one JSON document);
    end of input (Ctrl-D) is a no."""
    out.write(question)
    out.flush()
    answer = sys.stdin.readline()
    if not answer:
        out.write("\n")
    return answer.strip().lower() in ("y", "yes")


def _host_home(conn) -> str:
    """The home directory of the user the remedies run as, asked of the host itself."""
    from ..provision.command import Command
    from ..provision.connection import CommandFailed

    try:
        return conn.run(Command(["sh", "-c", 'printf "%s" "$HOME"']), timeout=60).stdout.strip()
    except CommandFailed:
        return ""


def _apply_remedies(conn, host, reports, ctx, yes, quiet_json, api_key=None) -> bool:
    """Print the remedy plan, ask, run it; True when a remedy command (or a restart) failed.

    A serve remedy (--enforce-eager, a lower --gpu-memory-utilization, VLLM_USE_FLASHINFER_SAMPLER=0)
    found in the log of a service `inv serve` started restarts that service with it; in the log of a
    DeepSeek-OCR run (inv deepseek-run) an out-of-memory gets DeepSeek's remedy instead."""
    from ..diagnose.engine import with_home
    from ..recipes.remedies import SERVE_REMEDIES, plan_remedy, remedy_for, stack_of_log
    from ..provision.connection import CommandFailed
    from ..terminal import safe

    out = sys.stderr if quiet_json else sys.stdout
    if any(isinstance(v, str) and v.startswith("~") for v in ctx.values()):
        ctx = with_home(ctx, _host_home(conn))
    libcuda = None
    services = None
    if any(f.get("remedy") in SERVE_REMEDIES for rep in reports for f in rep.get("findings", [])):
        from .services import services_by_log

        services = services_by_log(conn, host)
    plans, seen = [], set()
    for rep in reports:
        service = (services or {}).get(rep.get("file"))
        stack = stack_of_log(rep.get("file"))          # a DeepSeek-OCR run's OOM has DeepSeek's remedy
        for f in rep.get("findings", []):
            remedy = remedy_for(f.get("remedy"), stack)
            key = (remedy, service)
            if remedy and key not in seen:
                seen.add(key)
                plans.append(plan_remedy(remedy, f["id"], {**ctx, "stack": stack}, libcuda, service=service))
    if not plans:
        out.write("--fix: no finding has an automatic remedy\n")
        return False
    runnable = [p for p in plans if p.commands or p.restart]
    out.write(f"--fix on {conn.name}:\n")
    for p in plans:
        if p.commands:
            for cmd in p.commands:
                out.write(f"  [{p.finding}] will run: {cmd}\n")
        elif p.restart:
            out.write(f"  [{p.finding}] will restart {p.restart['service']} with {p.restart['says']}\n")
        else:
            out.write(f"  [{p.finding}] by hand: {p.manual}\n")
    if not runnable:
        return False
    if not yes:
        if not sys.stdin.isatty():
            out.write("--fix: not run (no terminal to confirm on; add --yes)\n")
            return False
        if not _confirm(out, "Run these commands? [y/N] "):
            out.write("--fix: nothing run\n")
            return False
    failed = False
    for p in runnable:
        if p.restart:
            from .services import restart_service
            from ..provision.report import console

            r = restart_service(conn, host, p.restart["service"], p.restart["change"], con=console(stderr=True),
                                api_key=api_key)
            if r.get("ok"):
                out.write(f"  ok: {p.restart['service']} ready again with {p.restart['says']} ({r.get('url')})\n")
            else:
                failed = True
                why = r.get("error") or f"{r.get('reason')} during {r.get('phase') or 'start-up'}"
                out.write(f"  FAILED: {p.restart['service']} with {p.restart['says']}: {safe(why)}\n")
            continue
        for cmd in p.commands:
            try:
                conn.run(cmd, timeout=1800)
                out.write(f"  ok: {cmd}\n")
            except CommandFailed as exc:
                failed = True
                out.write(f"  FAILED (exit code {exc.result.exit_code}): {cmd}\n{safe(exc.result.tail(10))}\n")
                break
    return failed
