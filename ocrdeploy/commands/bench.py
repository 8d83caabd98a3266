"""`inv bench`: pages per minute at a stated accuracy, per concurrency level (issue 23).

The load and the scoring live in sdk/bench.py; this module reads the options, finds the service (a
--server-url, or the ready service `inv serve` started on --host, reached through an SSH tunnel as
verify does), prints the table and the verdict, writes the JSON document and the HTML report, and
compares with a baseline document.  Exit 0: the verdict passed; 1: no level holds the accuracy floor
(or the run fell behind its baseline); 2: bad input.
"""

from __future__ import annotations

import json as _json
from pathlib import Path

from ..errors import UsageError
from ..sdk import bench as sdk_bench
from ..terminal import safe
from .options import number

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
    return doc


def run_bench(*, host=None, inventory=None, server_url=None, name=None, api_key=None, pages=None,
              concurrency=None, duration=None, requests=None, warmup=None, through=None, backend=None,
              model=None, prompt=None, max_tokens=None, min_accuracy=None, as_json=False, report=None,
              baseline=None, tolerance=None, accept_new_host_keys=False, connect_timeout=None) -> int:
    from ..sdk import pages as pages_mod
    from .verify import check_report_path, check_url, write_html

    levels = levels_option(concurrency)
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
    if through == "sdk":
        raise UsageError("--through sdk (minicpmvocr parse per page) is not built yet; use --through api")
    if backend is not None and backend not in sdk_bench.driver.CONFIG_FOR:
        raise UsageError(f"--backend {backend!r}: choose {', '.join(sdk_bench.driver.CONFIG_FOR)}")
    check_report_path(report)                              # said now, not after the whole run
    base = _baseline(baseline) if baseline else None
    page_list = pages_mod.user_pages(pages) if pages else pages_mod.sample_pages()
    options = dict(levels=levels, requests=requests, duration=duration, warmup=warmup, prompt=prompt or sdk_bench.PROMPT,
                   max_tokens=max_tokens, api_key=api_key, min_accuracy=floor)

    if server_url:
        if name:
            raise UsageError("--name picks a service `inv serve` started; --server-url benches a server by its URL")
        url = check_url(server_url)
        doc = _bench_url(url, page_list, backend=backend or "openai", model=model, **options)
        doc["target"] = url
    else:
        doc = _bench_host(host, inventory, name, page_list, backend, model, accept_new_host_keys, connect_timeout,
                          options)
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


def _bench_url(url, page_list, *, backend, model, nvml=None, **options):
    model = _model_for(url, options.get("api_key"), model)
    return sdk_bench.run(url, page_list, backend=backend, model=model, nvml=nvml, **options)


def _bench_host(host, inventory, name, page_list, backend, model, accept_new_host_keys, connect_timeout, options):
    """The ready service `inv serve` started on the one host selected, through a tunnel where it is remote."""
    from ..services.control import status_all
    from .hosts import open_session

    session = open_session(host, None, inventory, accept_new_host_keys, connect_timeout)
    if len(session.hosts) != 1:
        raise UsageError(f"--host selects {len(session.hosts)} hosts: bench one host at a time "
                         f"(or give --server-url)")

    def one(conn, h):
        from ..provision import facts as facts_mod

        facts = facts_mod.gather(conn, facts_mod.probe_request(h.workdir, net_timeout=0))
        services = [s for s in status_all(conn, facts["workdir"]["path"], name, options.get("api_key"))["services"]
                    if s.get("alive") and s.get("ready")]
        if not services:
            return {"error": "no ready service" + (f" named {name}" if name else "") + " (start one with inv serve)"}
        svc = services[0]
        kind = svc.get("kind") or "dspark"
        with conn.forward(svc["port"]) as local_port:
            doc = _bench_url(f"http://127.0.0.1:{local_port}", page_list, backend=backend or kind,
                             model=model or svc.get("served_name") or sdk_bench.SERVED_NAME,
                             nvml=conn.is_local, **options)
        doc["target"] = f"{h.name}: {svc['name']} (port {svc['port']}, {kind})"
        return doc

    with session:
        outcome = next(iter(session.map(one).values()))
    if outcome.error:
        return {"error": f"{outcome.host.name}: {outcome.error}"}
    if isinstance(outcome.value, dict) and outcome.value.get("error"):
        return {"error": f"{outcome.host.name}: {outcome.value['error']}"}
    return outcome.value


def show(doc, report=None):
    from rich.markup import escape
    from rich.table import Table

    from ..provision.report import console
    from ..report.html import percentiles_ms

    con = console()
    t = Table(title=f"bench: {escape(safe(doc.get('target') or doc['server']))} ({escape(safe(doc['model']))}, "
                    f"--through {doc['through']})", title_justify="left")
    for col in ("conc.", "pages", "errors", "pages/min", "out tok/s", "TTFT ms p50/95/99", "E2EL ms p50/95/99",
                "accuracy", "accept len", "in flight", "client CPU", "GPU"):
        t.add_column(col, justify="right" if col not in ("GPU",) else "left")
    for lv in doc["levels"]:
        gpu = lv["gpu"]
        t.add_row(str(lv["concurrency"]), str(lv["pages"]), str(lv["errors"]), f"{lv['pages_per_min']:.1f}",
                  f"{lv['output_tokens_per_s']:.1f}", percentiles_ms(lv["ttft_ms"], "/"),
                  percentiles_ms(lv["e2el_ms"], "/"),
                  "-" if lv["accuracy"] is None else f"{lv['accuracy']:.1%}",
                  "-" if lv["accept_length"] is None else f"{lv['accept_length']:.2f}",
                  f"{lv['client_in_flight_max']}" + (f" (server {lv['server_running_max']:.0f})"
                                                     if lv["server_running_max"] is not None else ""),
                  f"{lv['controller_cpu_share']:.0%}" if lv["controller_cpu_share"] is not None else "-",
                  f"{gpu['util_mean_pct']:.0f}% {gpu['memory_max_mib']} MiB" if gpu else "-")
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
