"""`inv bench`: pages per minute at a stated accuracy, per concurrency level (issue 23).

The load and the scoring live in sdk/bench.py; this module reads the options, finds the service (a
--server-url, or the ready service `inv serve` started on --host, reached through an SSH tunnel as
verify does), prints the table and the verdict, writes the JSON document and the HTML report, and
compares with a baseline document.  Exit 0: the verdict passed; 1: no level holds the accuracy floor
(or the run fell behind its baseline); 2: bad input.
"""

from __future__ import annotations

import json as _json
import math
from pathlib import Path

from ..errors import UsageError
from ..provision.probe import mask_url
from ..sdk import bench as sdk_bench
from ..terminal import safe
from .options import api_key as api_key_option, number

THROUGH = ("api", "sdk")


def levels_option(value) -> list[int]:
    """--concurrency 1,2,4,8: whole numbers >= 1, in the order given, each once."""
    text = "1,2,4,8" if value is None else str(value)
    out = []
    for part in text.split(","):
        n = number(part.strip(), "concurrency", None, whole=True, minimum=1, maximum=4096)
        if n not in out:
            out.append(n)
    return out


def _baseline(path):
    try:
        doc = _json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"--baseline {path}: {exc.strerror or exc}")
    except ValueError as exc:
        raise UsageError(f"--baseline {path}: not a JSON document ({exc})")
    if not isinstance(doc, dict) or not isinstance(doc.get("verdict"), dict):
        raise UsageError(f"--baseline {path}: not an `inv bench --json` document (no verdict)")
    figure = doc["verdict"].get("pages_per_min")
    if figure is not None and (isinstance(figure, bool) or not isinstance(figure, (int, float))):
        raise UsageError(f"--baseline {path}: its verdict's pages_per_min {str(figure)[:40]!r} is not a number")
    if figure is not None and not (math.isfinite(figure) and figure >= 0):
        # NaN compared as never worse (the gate passed whatever the run did); -1 or Infinity as always worse
        raise UsageError(f"--baseline {path}: its verdict's pages_per_min {figure!r} is not a figure a run makes")
    return doc


def run_bench(*, host=None, inventory=None, server_url=None, name=None, api_key=None, pages=None,
              concurrency=None, duration=None, requests=None, warmup=None, through=None, backend=None,
              model=None, prompt=None, max_tokens=None, min_accuracy=None, as_json=False, report=None,
              baseline=None, tolerance=None, accept_new_host_keys=False, connect_timeout=None, router=None,
              router_port=None) -> int:
    """router: None, or True to bench through the router's URL on the host (router_port, default 18490)."""
    from ..sdk import pages as pages_mod
    from .router import router_target
    from .verify import check_report_path, check_url, write_html

    levels = levels_option(concurrency)
    api_key_option(api_key)
    if duration is not None and requests is not None:
        raise UsageError("give --duration S or --requests N, not both")
    duration = number(duration, "duration", None, above=0) if duration is not None else None
    requests = number(requests, "requests", None, whole=True, minimum=1) if requests is not None else None
    warmup = number(warmup, "warmup", 1, whole=True, minimum=0)
    max_tokens = number(max_tokens, "max-tokens", 1024, whole=True, minimum=1)
    floor = number(min_accuracy, "min-accuracy", 0.85, minimum=0, maximum=1)
    tolerance = number(tolerance, "tolerance", 0.10, minimum=0, maximum=1)
    through = through or "api"
    if through not in THROUGH:
        raise UsageError(f"--through {through!r}: choose api or sdk")
    routed = router_target(router, router_port, server_url, "benches")
    router = True if routed else None
    if backend is not None and backend not in sdk_bench.driver.CONFIG_FOR:
        raise UsageError(f"--backend {backend!r}: choose {', '.join(sdk_bench.driver.CONFIG_FOR)}")
    check_report_path(report)                              # said now, not after the whole run
    base = _baseline(baseline) if baseline else None
    page_list = pages_mod.user_pages(pages) if pages else pages_mod.sample_pages()
    options = dict(levels=levels, requests=requests, duration=duration, warmup=warmup, prompt=prompt or sdk_bench.PROMPT,
                   max_tokens=max_tokens, api_key=api_key, min_accuracy=floor)

    if name and (server_url or router is not None):
        raise UsageError("--name picks a service `inv serve` started; --server-url and --router bench one URL")
    if server_url and through == "api" and host:
        raise UsageError("--server-url with --through api benches from this machine: --host is not used "
                         "(--through sdk runs the SDK on the host against that URL)")
    if server_url and through == "api":      # a server by its URL, from this machine: no host session
        url = check_url(server_url)
        doc = _bench_url(url, page_list, backend=backend or "openai", model=model, **options)
        doc["target"] = url
    else:
        # the ready service on --host, the router there (the URL `inv verify --router` checks), or, for the
        # SDK, --server-url as the host sees it; the SDK runs on that host
        url, kind = None, backend
        if router is not None:
            url, kind = routed, backend or "standard"
        elif server_url:
            url, kind = check_url(server_url), backend or "openai"
        doc = _bench_host(host, inventory, name, page_list, kind, model, accept_new_host_keys, connect_timeout,
                          options, url=url, through=through, router=router is not None)
        if doc.get("error"):
            import sys

            sys.stderr.write(safe(doc["error"]) + "\n")
            return 1
    code = 0 if doc["verdict"]["passed"] else 1
    if base:
        problems = sdk_bench.compare_baseline(doc, base, tolerance)
        doc["baseline"] = {"file": str(baseline), "tolerance": tolerance, "problems": problems,
                           "pages_per_min": base["verdict"].get("pages_per_min")}
        code = code or (1 if problems else 0)
    if report:
        from ..report.html import bench_report

        write_html(report, bench_report(doc, {p.name: (p.mime, p.image) for p in page_list}))
    if as_json:
        print(_json.dumps(doc, indent=2, default=str))
    else:
        show(doc, report)
    return code


def _model_for(url, api_key, model):
    """The name to send: --model, else minicpm-ocr where /v1/models lists it, else the one model listed."""
    if model:
        return model
    from ..sdk.client import OcrClient

    try:
        with OcrClient(url, api_key, timeout=30) as client:
            ids = client.models()
    except Exception:  # noqa: BLE001 - transformers serve answers 500 there; the SDK's name is sent then
        return sdk_bench.SERVED_NAME
    if sdk_bench.SERVED_NAME in ids or len(ids) != 1:
        return sdk_bench.SERVED_NAME
    return ids[0]


def _bench_url(url, page_list, *, backend, model, nvml=None, host_gpu=None, sdk_call=None, **options):
    model = _model_for(url, options.get("api_key"), model)
    return sdk_bench.run(url, page_list, backend=backend, model=model, nvml=nvml, host_gpu=host_gpu,
                         sdk_call=sdk_call, **options)


def _bench_host(host, inventory, name, page_list, backend, model, accept_new_host_keys, connect_timeout, options,
                url=None, through="api", router=False):
    """On the one host selected: the ready service `inv serve` started there (or `url`, a URL as the host
    sees it: the router's, or --server-url for the SDK), reached from here through a tunnel where it is
    remote; the host's GPUs read with nvidia-smi dmon there during each level; with --through sdk the SDK
    on that host parses the pages."""
    from ..services.control import status_all
    from .hosts import open_session
    from .verify import _facts, reach

    session = open_session(host, None, inventory, accept_new_host_keys, connect_timeout)
    if len(session.hosts) != 1:
        raise UsageError(f"--host selects {len(session.hosts)} hosts: bench one host at a time "
                         f"(or give --server-url)")

    def one(conn, h):
        facts = _facts(conn, h)
        if url is None:
            services = [s for s in status_all(conn, facts["workdir"]["path"], name, options.get("api_key"))["services"]
                        if s.get("alive") and s.get("ready")]
            if not services:
                return {"error": "no ready service" + (f" named {name}" if name else "") +
                                 " (start one with inv serve)"}
            svc = services[0]
            kind = backend or svc.get("kind") or "dspark"
            served = model or svc.get("served_name") or sdk_bench.SERVED_NAME
            host_url = f"http://127.0.0.1:{svc['port']}"
            target = f"{h.name}: {svc['name']} (port {svc['port']}, {svc.get('kind') or 'dspark'})"
        else:
            kind, served, host_url = backend, model, url
            target = f"{h.name}: " + ("the router " if router else "") + mask_url(url)
        sdk_call = None
        if through == "sdk":
            sdk_call = sdk_caller(conn, h, facts, kind, host_url, served or sdk_bench.SERVED_NAME, page_list)
            if isinstance(sdk_call, str):
                return {"error": sdk_call}
        with reach(conn, host_url) as local_url:
            doc = _bench_url(local_url, page_list, backend=kind, model=served, nvml=False,
                             host_gpu=sdk_bench.HostGpu(conn, h.name), sdk_call=sdk_call, **options)
        doc["target"] = target
        if router:
            doc["router"] = mask_url(url)
        return doc

    with session:
        outcome = next(iter(session.map(one).values()))
    if outcome.error:
        return {"error": f"{outcome.host.name}: {outcome.error}"}
    if isinstance(outcome.value, dict) and outcome.value.get("error"):
        return {"error": f"{outcome.host.name}: {outcome.value['error']}"}
    return outcome.value


def sdk_caller(conn, h, facts, kind, server_url, served, page_list):
    """call(page) -> Outcome: `minicpmvocr parse` of one page on the host, the guide's way (sdk/driver.parse_job:
    the backend's config, --model, layout device, a fresh run tag), timed from start to exit; the answer is
    the Markdown it wrote.  Or a string: why the SDK cannot run there."""
    import itertools
    import threading
    import time

    from ..provision.command import Command
    from ..provision.kinds import host_state
    from ..provision.step import absolute, wd
    from ..sdk import samples
    from ..sdk.driver import CONFIG_FOR, layout_device, parse_job

    if kind not in CONFIG_FOR:
        return f"{kind} service: --through sdk drives the MiniCPM-OCR SDK (--backend {', '.join(CONFIG_FOR)})"
    files = facts.get("files") or {}
    if not files.get(wd("sdk-env/bin/minicpmvocr"), {}).get("exists"):
        return "sdk-env has no minicpmvocr (inv install): --through sdk needs the SDK on the host"
    layout = (host_state(facts).get("models") or {}).get("PP-DocLayoutV3_infer")
    if not layout:
        return "the layout model is not verified on this host (inv models): --through sdk needs it"
    tag = time.strftime("bench-%Y%m%d-%H%M%S")
    base = f"{facts['workdir']['path']}/.ocrdeploy/bench/{tag}"
    conn.run(["mkdir", "-p", base])
    inputs = {}
    for p in page_list:     # the project's pages as the PDFs verify parses; a user's page as its image
        if p.kind in samples.PAGES:
            name, data = f"{p.kind}.pdf", samples.PAGES[p.kind]()
        else:
            name, data = f"page-{len(inputs)}.{p.mime.split('/')[-1]}", p.image
        conn.put_data(data, f"{base}/{name}")
        inputs[p.name] = f"{base}/{name}"
    exe, repo = absolute(facts, wd("sdk-env/bin/minicpmvocr")), absolute(facts, wd("minicpmvocr-sdk"))
    device, no_proxy = layout_device(facts), (facts.get("proxy") or {}).get("no_proxy")
    counter, lock = itertools.count(), threading.Lock()

    def call(page):
        with lock:
            n = next(counter)
        out = f"{base}/out-{n}.md"
        job = parse_job(exe, repo, kind, [server_url], inputs[page.name], out, layout_dir=layout["path"],
                        layout_device=device, run_tag=f"{tag}-{n}", model=served, no_proxy=no_proxy)
        start = time.perf_counter()
        r = conn.run(Command(job.argv, env=job.env, cwd=base), timeout=1800, ok_codes=range(0, 256))
        end = time.perf_counter()
        timing = sdk_bench.sdk_timing((r.stdout or "") + "\n" + (r.stderr or ""))
        if r.exit_code != 0:
            return sdk_bench.Outcome(page.name, False, start, end, error_kind=f"minicpmvocr exit {r.exit_code}",
                                     error=r.tail(3)[:300], timing=timing)
        md = conn.run(["cat", out], ok_codes=range(0, 256))
        if md.exit_code != 0:
            return sdk_bench.Outcome(page.name, False, start, end, error_kind="no output file",
                                     error=f"{out}: {md.tail(1)}"[:300], timing=timing)
        return sdk_bench.Outcome(page.name, True, start, end, text=md.stdout, timing=timing)

    return call


def show(doc, report=None):
    from rich.markup import escape
    from rich.table import Table

    from ..provision.report import console
    from ..report.html import gpu_cell, percentiles_ms

    con = console()
    t = Table(title=f"bench: {escape(safe(doc.get('target') or doc['server']))} ({escape(safe(doc['model']))}, "
                    f"--through {doc['through']})", title_justify="left")
    for col in ("conc.", "pages", "errors", "pages/min", "out tok/s", "TTFT ms p50/95/99", "E2EL ms p50/95/99",
                "accuracy", "accept len", "in flight", "client CPU", "GPU"):
        t.add_column(col, justify="right" if col not in ("GPU",) else "left")
    for lv in doc["levels"]:
        gpu = lv["gpu"]
        t.add_row(str(lv["concurrency"]), str(lv["pages"]), str(lv["errors"]), f"{lv['pages_per_min']:.1f}",
                  "-" if lv["output_tokens_per_s"] is None else f"{lv['output_tokens_per_s']:.1f}",
                  percentiles_ms(lv["ttft_ms"], "/"),
                  percentiles_ms(lv["e2el_ms"], "/"),
                  "-" if lv["accuracy"] is None else f"{lv['accuracy']:.1%}",
                  "-" if lv["accept_length"] is None else f"{lv['accept_length']:.2f}",
                  f"{lv['client_in_flight_max']}" + (f" (server {lv['server_running_max']:.0f})"
                                                     if lv["server_running_max"] is not None else ""),
                  f"{lv['controller_cpu_share']:.0%}" if lv["controller_cpu_share"] is not None else "-",
                  gpu_cell(gpu))
    con.print(t)
    v = doc["verdict"]
    con.print(("[green]" if v["passed"] else "[red]") + escape(v["line"]) + "[/]")
    if v.get("throughput_stops_growing_at") is not None:
        con.print(f"throughput stops growing at concurrency {v['throughput_stops_growing_at']} "
                  f"(no higher level adds 10%)")
    elif len(doc["levels"]) > 1:
        con.print(f"throughput still grows at concurrency {doc['levels'][-1]['concurrency']}: try higher levels")
    for lv in doc["levels"]:
        for kind, n in lv["errors_by_kind"].items():
            con.print(f"concurrency {lv['concurrency']}: {n} x {escape(safe(kind))}: "
                      f"{escape(safe(lv['error_examples'].get(kind) or ''))}")
    for lv in doc["levels"]:
        if lv.get("sdk_timing_s"):
            con.print(f"concurrency {lv['concurrency']}: the SDK's timing split (median s): " + escape(safe(", ".join(
                f"{k} {v:g}" for k, v in lv["sdk_timing_s"].items()))))
    if doc["through"] == "sdk" and not any(lv.get("sdk_timing_s") for lv in doc["levels"]):
        con.print("the SDK printed no timing split (stage: N s lines): E2EL is the whole minicpmvocr parse")
    notes = {lv["gpu_note"] for lv in doc["levels"] if lv["gpu_note"]}
    for note in sorted(notes):
        con.print(f"GPU: {escape(note)}")
    if any("chunks" in lv["tokens_from"] for lv in doc["levels"]):
        con.print("output tokens: the server sent no usage; counted as content chunks (a lower bound)")
    for ref in doc["references"]:
        con.print(f"reference: {ref['model']} {ref['figure']}, {ref['setting']} ({ref['source']})")
    if doc.get("baseline"):
        b = doc["baseline"]
        con.print(("[red]" if b["problems"] else "[green]") + escape(
            "; ".join(b["problems"]) or f"within {b['tolerance']:.0%} of the baseline ({b['file']})") + "[/]")
    if report:
        con.print(f"report: {escape(str(report))}")
