"""`inv parse`: a document through the SDK on the host, the guide's way: one page first, then all pages."""

from __future__ import annotations

import json as _json
import posixpath
import time

from ..errors import UsageError
from ..provision.command import Command
from ..provision.kinds import host_state
from ..provision.step import absolute, wd
from ..provision.probe import mask_url
from ..sdk.driver import CONFIG_FOR, check_output, layout_device, parse_job
from ..services.argv import SERVED_NAME
from ..terminal import safe, safe_markup
from .verify import _facts, check_url


def run_parse(*, host, inventory, input_path, output, backend, server_urls, all_pages, run_root, as_json,
              accept_new_host_keys, connect_timeout, model=None) -> int:
    """The SDK config and --model come from the ready service (its kind, its served name: transformers
    serve pins its directory); with --server-url they are --backend (default openai, as `inv verify
    --server-url`) and --model (default minicpm-ocr)."""
    from ..provision.report import console
    from ..services.control import status_all
    from .hosts import open_session

    if not input_path.startswith("/") or not output.startswith("/"):
        raise UsageError("--input and --output are paths on the host and must be absolute (the guide: --set "
                         "paths resolve relative to the config file)")
    if posixpath.normpath(input_path) == posixpath.normpath(output):
        raise UsageError(f"--output {output}: the same file as --input (the Markdown would be written over the "
                         f"document)")
    if run_root and not run_root.startswith("/"):
        raise UsageError("--run-root must be an absolute path")
    if backend is not None and backend not in CONFIG_FOR:
        raise UsageError(f"--backend {backend!r}: choose {', '.join(CONFIG_FOR)} (the SDK config to use)")
    if not server_urls and (backend or model):
        raise UsageError(f"--{'backend' if backend else 'model'} goes with --server-url (a service `inv serve` "
                         f"started knows its own)")
    server_urls = [check_url(u) for u in server_urls or []]
    session = open_session(host, None, inventory, accept_new_host_keys, connect_timeout)
    if len(session.hosts) != 1:
        raise UsageError("parse works on one host (--host NAME)")
    con = console(stderr=as_json)

    def one(conn, h):
        facts = _facts(conn, h)
        state = host_state(facts)
        layout = (state.get("models") or {}).get("PP-DocLayoutV3_infer")
        if not layout:
            return {"error": "the layout model is not verified on this host: inv models"}
        if not (facts.get("files") or {}).get(wd("sdk-env/bin/minicpmvocr"), {}).get("exists"):
            return {"error": "sdk-env has no minicpmvocr: inv install"}
        urls = list(server_urls or [])
        kind, served = backend or "openai", model or SERVED_NAME
        if not urls:
            ready = [s for s in status_all(conn, facts["workdir"]["path"])["services"] if s.get("ready")]
            if not ready:
                return {"error": "no ready service on this host: inv serve, or give --server-url"}
            kind, served = ready[0].get("kind") or "dspark", ready[0].get("served_name") or SERVED_NAME
            if kind not in CONFIG_FOR:
                return {"error": f"{ready[0]['name']} is a {kind} service: inv parse drives the MiniCPM-OCR SDK"}
            same = [s for s in ready if (s.get("kind") or "dspark") == kind and
                    (s.get("served_name") or SERVED_NAME) == served]
            urls = [f"http://127.0.0.1:{s['port']}" for s in same]
        tag = time.strftime("parse-%Y%m%d-%H%M%S")
        steps = []
        for limit_one in ([True, False] if all_pages else [True]):
            out = output if not limit_one or not all_pages else f"{posixpath.splitext(output)[0]}.page1.md"
            job = parse_job(absolute(facts, wd("sdk-env/bin/minicpmvocr")), absolute(facts, wd("minicpmvocr-sdk")),
                            kind, urls, input_path, out, layout_dir=layout["path"], limit_one=limit_one,
                            layout_device=layout_device(facts), run_root=run_root, model=served,
                            run_tag=f"{tag}-{'first' if limit_one else 'all'}",
                            no_proxy=(facts.get("proxy") or {}).get("no_proxy"))
            con.print(f"[dim]{h.name} | {'first page' if limit_one else 'all pages'}: "
                      f"{safe_markup(mask_url(str(Command(job.argv))))}[/dim]")
            r = conn.run(Command(job.argv, env=job.env), timeout=24 * 3600, ok_codes=range(0, 256))
            md = conn.run(["cat", out], ok_codes=range(0, 256)).stdout if r.exit_code == 0 else ""
            checks = check_output(md, "any")
            steps.append({"pages": "first" if limit_one else "all", "exit_code": r.exit_code, "output": out,
                          "checks": [{"check": c, "ok": ok, "detail": d} for c, ok, d in checks],
                          "tail": r.tail(8) if r.exit_code else None})
            if r.exit_code != 0 or not all(ok for _, ok, _ in checks):
                break             # the first page must pass before the whole document is worth parsing
        return {"steps": steps}

    with session:
        (name, o), = session.map(one).items()
    if o.error or o.value.get("error"):
        con.print(f"[red]{name}: {o.error or o.value['error']}[/red]")
        if as_json:
            print(_json.dumps({"host": name, "error": o.error or o.value["error"]}))
        return 1
    ok = all(s["exit_code"] == 0 and all(c["ok"] for c in s["checks"]) for s in o.value["steps"])
    ok = ok and len(o.value["steps"]) == (2 if all_pages else 1)
    for s in o.value["steps"]:
        bad = [f"{c['check']}: {c['detail']}" for c in s["checks"] if not c["ok"]]
        status = "ok" if s["exit_code"] == 0 and not bad else "FAILED"
        con.print(safe(f"{name} | {s['pages']} page(s): {status} -> {s['output']}" + (f" ({'; '.join(bad)})" if bad
                  else "") + (f"\n{s['tail']}" if s.get("tail") else "")), markup=False)
    if as_json:
        print(_json.dumps({"host": name, "steps": o.value["steps"], "ok": ok}, indent=2))
    return 0 if ok else 1
