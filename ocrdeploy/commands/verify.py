"""`inv verify`: prove the service works, and report only what was checked (the MiniCPM-OCR guide, sections 6, 7, 10).

Readiness, one smoke request, the DSpark counters read before and after it, a parse of the
project's own sample pages through the SDK with the output checks, and the two-end
verification only when both of the user's scripts are given.  Every check ends passed,
failed or not run, with why.
"""

from __future__ import annotations

import json as _json
import time

from ..provision.command import Command
from ..provision.kinds import STATE_FILE, host_state, venv_python
from ..services.control import accept_length, status_all
from ..provision.step import absolute, dist, wd
from ..services.argv import MM_PROCESSOR_KWARGS, SERVED_NAME
from ..sdk import samples
from ..sdk.client import OcrClient, ServiceError
from ..errors import UsageError
from ..provision.probe import mask_url
from ..sdk import twoend
from ..terminal import safe_markup
from ..sdk.driver import CONFIG_FOR, check_output, layout_device, parse_job, sends_mm_kwargs

PASSED, FAILED, NOT_RUN = "passed", "failed", "not run"
OTSL_PROMPT = "请识别图中的表格并输出 OTSL"


def _facts(conn, host):
    from ..provision import facts as facts_mod

    req = facts_mod.probe_request(host.workdir, reads=[STATE_FILE], net_timeout=0,
                                  paths=[wd("sdk-env/bin/minicpmvocr"), wd("minicpmvocr-sdk/configs/backends")])
    return facts_mod.gather(conn, req)


REST = ["smoke request", "DSpark counters", "parse: text page", "parse: table page", "parse: formula page",
        "two-end verification"]


def verify_host(conn, host, *, name=None, api_key=None, scripts=None, timeout=600, image=None) -> list[dict]:
    checks = []

    def add(check, status, detail):
        checks.append({"check": check, "status": status, "detail": detail})

    facts = _facts(conn, host)
    wdir = facts["workdir"]["path"]
    services = [s for s in status_all(conn, wdir, name, api_key)["services"] if s.get("alive")]
    ready = [s for s in services if s.get("ready")]
    if not ready:
        add("readiness", FAILED, "no running service lists " + SERVED_NAME + (
            f" ({', '.join(s['name'] for s in services)} not ready)" if services else " (start one with inv serve)"))
        for c in REST:
            add(c, NOT_RUN, "the service is not ready")
        return checks
    svc = ready[0]
    kind = svc.get("kind") or "dspark"
    served = svc.get("served_name") or SERVED_NAME      # transformers serve: the directory it pins
    seen = ("/health answers ok; transformers serve pins " if svc.get("ready_by") == "health"
            else "/v1/models lists ")
    add("readiness", PASSED, f"{svc['name']}: {seen}{served} (pid {svc['pid']}, port {svc['port']})")
    state = host_state(facts)
    with conn.forward(svc["port"]) as local_port, OcrClient(f"http://127.0.0.1:{local_port}", api_key,
                                                            timeout=timeout, model=served) as client:
        checks += smoke_and_counters(client, kind, expect_dspark=kind == "dspark")
    if kind.startswith("deepseek"):
        checks += [{"check": c, "status": NOT_RUN, "detail": "a DeepSeek-OCR service: its pages are checked by "
                    "inv deepseek-verify"} for c in REST[2:]]
        return checks
    checks += parse_pages(conn, facts, state, kind, [f"http://127.0.0.1:{svc['port']}"], model=served)
    checks += two_end(conn, facts, state, scripts, image)
    return checks


# transformers serve lists its hub cache on /v1/models and loads the model a request names (an empty list while
# it serves a directory); the smoke request that follows is what says whether the server answers
NO_MODEL = "no model (a server that loads models on request, as transformers serve does, lists none; the smoke " \
           "request decides)"


def verify_url(conn, host, urls, *, api_key=None, backend="openai", scripts=None, timeout=600, model=None,
               image=None) -> list[dict]:
    """An existing server (llama.cpp, any OpenAI-compatible one; the guide's SDK-only row), as the host's SDK
    sees it: readiness, the smoke request, the counters where it has them, the sample pages through the SDK.
    A URL is shown with its password masked."""
    checks = []
    facts = _facts(conn, host)
    state = host_state(facts)
    model = model or SERVED_NAME
    for url in urls:
        shown = mask_url(url)
        with reach(conn, url) as base, OcrClient(base, api_key, timeout=timeout, model=model) as client:
            try:
                ids = client.models()
            except ServiceError as exc:
                ids, why = None, str(exc) + (" (give the server's key with --api-key)" if exc.status == 401 else "")
            except Exception as exc:  # noqa: BLE001 - not reachable, not an OpenAI server: a failed check
                ids, why = None, f"{type(exc).__name__}: {exc}"
            if ids is None:
                checks.append({"check": "readiness", "status": FAILED,
                               "detail": mask_url(f"{shown}/v1/models: {why}")})
                checks += [{"check": c, "status": NOT_RUN, "detail": f"{shown} is not ready"} for c in REST[:2]]
                continue
            note = "" if model in ids else f" (the SDK asks for {model} (--model); a server that serves one " \
                                           f"model answers it whatever the name)"
            checks.append({"check": "readiness", "status": PASSED,
                           "detail": f"{shown}/v1/models lists {', '.join(ids) or NO_MODEL}{note}"})
            checks += smoke_and_counters(client, backend, expect_dspark=False)
    if any(c["check"] == "readiness" and c["status"] == FAILED for c in checks):
        return checks + [{"check": c, "status": NOT_RUN, "detail": "the server is not ready"} for c in REST[2:]]
    checks += parse_pages(conn, facts, state, backend, list(urls), model=model)
    checks += two_end(conn, facts, state, scripts, image)
    return [{**c, "detail": mask_url(c["detail"])} for c in checks]


def reach(conn, url):
    """The URL as this machine reaches it: a loopback URL of a remote host through an SSH tunnel."""
    import contextlib
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if conn.is_local or parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        return contextlib.nullcontext(url)

    @contextlib.contextmanager
    def tunnel():
        with conn.forward(parts.port or (443 if parts.scheme == "https" else 80)) as local:
            yield f"{parts.scheme}://127.0.0.1:{local}{parts.path}"

    return tunnel()


def smoke_and_counters(client, backend, expect_dspark) -> list[dict]:
    """One request the way the SDK makes it, and the spec-decode counters read before and after it."""
    before = accept_length(_metrics(client))
    smoke = smoke_request(client, backend)
    after = accept_length(_metrics(client))
    if "malformed /metrics" in (before.get("state"), after.get("state")):
        bad = after if after.get("state") == "malformed /metrics" else before
        counters = (FAILED if expect_dspark else NOT_RUN,
                    f"the server's /metrics answer is malformed ({bad.get('error')}): the counters cannot be read")
    elif expect_dspark or after.get("state") in ("ok", "no drafts yet"):
        if after.get("state") in ("not started with --speculative-config", "no metrics"):
            counters = (FAILED, "spec_decode counters absent: not started with --speculative-config")
        elif after.get("drafts", 0) > before.get("drafts", 0):
            counters = (PASSED, f"drafts {before.get('drafts', 0):.0f} -> {after['drafts']:.0f}, accepted "
                                f"{before.get('accepted', 0):.0f} -> {after['accepted']:.0f}; accept length "
                                f"{after.get('accept_length')}")
        else:
            counters = (FAILED, f"the counters did not increase ({after.get('state')})")
    else:
        counters = (NOT_RUN, f"{backend} server without spec-decode counters: no speculative decoding to check")
    return [smoke, {"check": "DSpark counters", "status": counters[0], "detail": counters[1]}]


def smoke_request(client, backend) -> dict:
    """An image request as the SDK sends it: for vLLM with the per-request mm_processor_kwargs, so a server
    started without --trust-request-mm-kwargs fails here and not on every page later."""
    mm = MM_PROCESSOR_KWARGS if sends_mm_kwargs(backend) else None

    def ask(kwargs):
        return client.chat_image(samples.png(), "Read all text in the image.", max_tokens=64,
                                 mm_processor_kwargs=kwargs)

    sent = f" (with mm_processor_kwargs {_json.dumps(mm)})" if mm else ""
    try:
        answer = ask(mm).strip()
    except ServiceError as exc:
        detail = str(exc)
        if exc.status == 400 and mm:
            try:
                ask(None)
                detail += ("; the same request without mm_processor_kwargs is answered: the server was started "
                           "without --trust-request-mm-kwargs, so it rejects every request the SDK sends (the SDK "
                           "retries until its 600 s timeout, which looks stuck); restart it with "
                           "--trust-request-mm-kwargs (inv serve passes it)")
            except Exception:  # noqa: BLE001 - it fails either way: the first answer says why
                pass
        return {"check": "smoke request", "status": FAILED, "detail": detail + sent}
    except Exception as exc:  # noqa: BLE001 - a transport error is a failed check, said plainly
        return {"check": "smoke request", "status": FAILED, "detail": f"{type(exc).__name__}: {exc}"}
    if not answer:
        return {"check": "smoke request", "status": FAILED, "detail": "empty answer" + sent}
    return {"check": "smoke request", "status": PASSED, "detail": f"choices[0].message.content: {answer[:60]!r}{sent}"}


def _metrics(client):
    try:
        return client.metrics()
    except Exception:  # noqa: BLE001
        return None


def parse_pages(conn, facts, state, backend, urls, model=SERVED_NAME) -> list[dict]:
    pages = ("text", "table", "formula")
    names = [f"parse: {p} page" for p in pages]
    files = facts.get("files") or {}
    if not files.get(wd("sdk-env/bin/minicpmvocr"), {}).get("exists"):
        return [{"check": n, "status": NOT_RUN, "detail": "sdk-env has no minicpmvocr (inv install)"} for n in names]
    if not files.get(wd("minicpmvocr-sdk/configs/backends"), {}).get("exists"):
        return [{"check": n, "status": NOT_RUN, "detail": "no SDK checkout with configs/backends"} for n in names]
    layout = (state.get("models") or {}).get("PP-DocLayoutV3_infer")
    if not layout:
        return [{"check": n, "status": NOT_RUN, "detail": "layout model not verified (inv models)"} for n in names]
    wdir = facts["workdir"]["path"]
    tag = time.strftime("verify-%Y%m%d-%H%M%S")
    base = f"{wdir}/.ocrdeploy/verify/{tag}"
    conn.run(["mkdir", "-p", base])
    out = []
    for page in pages:
        conn.put_data(samples.PAGES[page](), f"{base}/{page}.pdf")
        job = parse_job(absolute(facts, wd("sdk-env/bin/minicpmvocr")), absolute(facts, wd("minicpmvocr-sdk")),
                        backend, urls, f"{base}/{page}.pdf", f"{base}/{page}.md", layout_dir=layout["path"],
                        layout_device=layout_device(facts), run_tag=f"{tag}-{page}", model=model,
                        no_proxy=(facts.get("proxy") or {}).get("no_proxy"))
        r = conn.run(Command(job.argv, env=job.env, cwd=base), timeout=1800, ok_codes=range(0, 256))
        if r.exit_code != 0:
            out.append({"check": f"parse: {page} page", "status": FAILED,
                        "detail": f"minicpmvocr exited {r.exit_code}: {r.tail(3)}"})
            continue
        md = conn.run(["cat", job.output], ok_codes=range(0, 256)).stdout
        results = check_output(md, page)
        bad = [f"{c}: {d}" for c, ok, d in results if not ok]
        out.append({"check": f"parse: {page} page", "status": FAILED if bad else PASSED,
                    "detail": "; ".join(bad) if bad else "; ".join(f"{c}: {d}" for c, _, d in results[-1:]),
                    "argv": [mask_url(a) for a in job.argv], "output": md})
    return out


TF_SIDE, VLLM_SIDE = ("tf-ocr-env", "ocr-env"), ("vllm-ocr-env", "ocr-env")   # the guide: "or the merged env"


def two_end(conn, facts, state, scripts, image=None) -> list[dict]:
    """The guide's section 7: both feat-ocr scripts on a free GPU, transformers from tf-ocr-env (or the merged
    ocr-env), vLLM from vllm-ocr-env (or ocr-env) with CUDA_HOME set as in section 4; judged by sdk.twoend.
    The image is a table page: the user's own (--image, on the host) or the project's, drawn at the guide's
    1080x1080 with the cells of samples.TABLE."""
    from ..checks.preflight import free_gpus
    from ..provision.step import venv
    from ..recipes.cuda_steps import cu13_dir

    name = "two-end verification"

    def failed(detail):
        return [{"check": name, "status": FAILED, "detail": detail}]

    if not scripts or not all(scripts):
        return [{"check": name, "status": NOT_RUN, "detail": "verify_transformers.py and verify_vllm.py not given: "
                                                              "the two ends are not claimed to agree"}]
    main = (state.get("models") or {}).get("MiniCPM-OCR-1.0")
    if not main:
        return failed("MiniCPM-OCR-1.0 is not verified on this host (inv models)")
    tf_env = next((e for e in TF_SIDE if venv(facts, e)), None)
    vllm_env = next((e for e in VLLM_SIDE if venv(facts, e)), None)
    if not tf_env or not vllm_env:
        return failed(f"no {' or '.join(TF_SIDE if not tf_env else VLLM_SIDE)} on this host for the "
                      f"{'transformers' if not tf_env else 'vLLM'} side (inv install --recipe "
                      f"{'transformers' if not tf_env else 'dspark'}, or --recipe merged for both)")
    free = free_gpus(facts)
    if (facts.get("gpu") or {}).get("gpus") and not free:
        busy = ", ".join(f"GPU {g['index']}" for g in facts["gpu"]["gpus"])
        return failed(f"no free GPU for the scripts ({busy} busy; the service holds its card): stop a process "
                      f"or the service first")
    gpu = str(free[0]["index"]) if free else "0"
    minor = ".".join(str(venv(facts, vllm_env).get("python") or "3.13").split(".")[:2])
    cu = absolute(facts, cu13_dir(vllm_env, minor))
    path = f"{absolute(facts, wd(vllm_env + '/bin'))}:{cu}/bin:{facts.get('env_path') or '/usr/local/bin:/usr/bin:/bin'}"
    wdir = facts["workdir"]["path"]
    if image:
        img = image
    else:
        img = f"{wdir}/.ocrdeploy/verify/table-1080.png"
        conn.run(["mkdir", "-p", f"{wdir}/.ocrdeploy/verify"])
        conn.put_data(samples.table_png(), img)
    runs = {}
    for side, env_name, script, extra, env in (
            ("transformers", tf_env, scripts[0], ["--attn", "sdpa", "--max-new-tokens", "512"],
             {"CUDA_VISIBLE_DEVICES": gpu}),
            ("vllm", vllm_env, scripts[1], ["--max-tokens", "512"],
             {"CUDA_VISIBLE_DEVICES": gpu, "CUDA_HOME": cu, "PATH": path})):
        argv = [venv_python(facts, env_name), script, "--model", main["path"], "--image", img, "--prompt",
                OTSL_PROMPT, *extra]
        runs[side] = conn.run(Command(argv, env=env), timeout=3600, ok_codes=range(0, 256))
    if any(r.exit_code != 0 for r in runs.values()):
        return failed("; ".join(f"{s} ({env}) exited {r.exit_code}: {r.tail(2)}"
                                for (s, r), env in zip(runs.items(), (tf_env, vllm_env)) if r.exit_code != 0))
    tf_text = runs["transformers"].stdout + "\n" + runs["transformers"].stderr
    vllm_text = runs["vllm"].stdout + "\n" + runs["vllm"].stderr
    problems = twoend.compare(tf_text, vllm_text)
    where = f"GPU {gpu}; transformers in {tf_env}, vLLM in {vllm_env}"
    if problems:
        return failed("; ".join(problems) + f" ({where})")
    out = twoend.output(tf_text)
    counts = ", ".join(f"{k} {twoend.count(tf_text, k)}" for k in ("vision", "generation")
                       if twoend.count(tf_text, k) is not None)
    return [{"check": name, "status": PASSED,
             "detail": f"same prompt tokens ({twoend.count(tf_text, 'prompt')}), identical outputs ({len(out)} chars), "
                       f"both end with </otsl>; no missing, unexpected or mismatched keys; "
                       f"{twoend.parameters(tf_text)} parameters{'; ' + counts if counts else ''} ({where})"}]


def report_checks(fn, title: str, *, host, inventory, as_json, accept_new_host_keys, connect_timeout,
                  report=None) -> int:
    """fn(conn, host) -> checks on every host; one table per host, exit 1 when a check failed."""
    from rich.table import Table

    from ..provision.report import STATUS_STYLE
    from .hosts import map_hosts

    run = map_hosts(fn, host=host, inventory=inventory, accept_new_host_keys=accept_new_host_keys,
                    connect_timeout=connect_timeout, as_json=as_json)
    for hname, checks in run.hosts:
        run.doc["hosts"][hname] = {"checks": checks}
        run.failed |= any(c["status"] == FAILED for c in checks)
        t = Table(title=f"{hname}: {title}", title_justify="left")
        for col in ("check", "result", "detail"):
            t.add_column(col)
        for c in checks:
            style = STATUS_STYLE[c["status"]]
            t.add_row(safe_markup(c["check"]), f"[{style}]{c['status']}[/]", safe_markup(c["detail"]))
        run.con.print(t)
    if report:      # --report FILE.html: the checks, each parsed sample page beside what the SDK wrote
        write_report(report, run.doc)
    return run.exit_code()


def check_report_path(report):
    """--report FILE.html of verify and bench, refused before the run (not after it): a name ending in .html
    in a directory that exists."""
    from pathlib import Path

    if not report:
        return
    if not str(report).endswith((".html", ".htm")):
        raise UsageError(f"--report {report}: give a file name ending in .html")
    if not Path(report).parent.is_dir():
        raise UsageError(f"--report {report}: no directory {Path(report).parent}")
    if Path(report).is_dir():
        raise UsageError(f"--report {report}: is a directory")


def write_html(path, html: str):
    """The report written, or one line naming the file and why not (no traceback)."""
    from pathlib import Path

    try:
        Path(path).write_text(html, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--report {path}: {exc.strerror or exc}")


def write_report(path, doc):
    from ..report.html import verify_report
    from ..sdk.pages import sample_pages

    write_html(path, verify_report(doc, {p.name: (p.mime, p.image) for p in sample_pages()}))


def run_verify(*, host, inventory, name, api_key, scripts, as_json, accept_new_host_keys, connect_timeout,
               server_urls=None, backend=None, model=None, image=None, report=None) -> int:
    from .options import api_key as api_key_option
    from .services import check_name

    check_report_path(report)
    check_name(name)
    api_key_option(api_key)                   # as status and stop: a bad name is not "no running service"
    if scripts:
        if not all(scripts):
            given, missing = (("--verify-transformers", "--verify-vllm") if scripts[0]
                              else ("--verify-vllm", "--verify-transformers"))
            raise UsageError(f"{given} needs {missing} too: the two-end verification runs both scripts")
        for flag, path in zip(("--verify-transformers", "--verify-vllm"), scripts):
            if not str(path).startswith("/"):
                raise UsageError(f"{flag} {path}: give the script's absolute path on the host")
    if image is not None:
        if not str(image).startswith("/"):
            raise UsageError(f"--image {image}: give the image's absolute path on the host")
        if not scripts:
            raise UsageError("--image is the two-end verification's table image: give --verify-transformers and "
                             "--verify-vllm too")
    if model is not None and not server_urls:
        raise UsageError("--model goes with --server-url (a service `inv serve` started knows its own served name)")
    if server_urls:
        urls = [check_url(u) for u in server_urls]
        backend = backend or "openai"
        if backend not in CONFIG_FOR:
            raise UsageError(f"--backend {backend!r}: choose {', '.join(CONFIG_FOR)} (the SDK config to use)")
        if name:
            raise UsageError("--name picks a service `inv serve` started; --server-url checks a server by its URL")
        fn = lambda conn, h: verify_url(conn, h, urls, api_key=api_key, backend=backend, scripts=scripts,  # noqa: E731
                                        model=model, image=image)
    else:
        if backend:
            raise UsageError("--backend goes with --server-url (a service `inv serve` started knows its own)")
        fn = lambda conn, h: verify_host(conn, h, name=name, api_key=api_key, scripts=scripts, image=image)  # noqa: E731
    return report_checks(fn, "verification", host=host, inventory=inventory, as_json=as_json,
                         accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout, report=report)


def check_url(url: str) -> str:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(str(url))
    except ValueError as exc:                  # http://[::1 : a bracketed host urlsplit cannot read
        raise UsageError(f"--server-url {url!r}: not a URL ({exc})")
    try:
        parts.port
    except ValueError:
        raise UsageError(f"--server-url {url!r}: the port is not a number 1-65535")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--server-url {url!r}: give the server's base URL, e.g. http://127.0.0.1:18499")
    return str(url).rstrip("/")
