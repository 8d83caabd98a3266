"""`inv verify`: prove the service works, and report only what was checked (seed 000 sections 6, 7, 10).

Readiness, one smoke request, the DSpark counters read before and after it, a parse of the
project's own sample pages through the SDK with the output checks, and the two-end
verification only when both of the user's scripts are given.  Every check ends passed,
failed or not run, with why.
"""

from __future__ import annotations

import json as _json
import re
import time

from ..provision.command import Command
from ..provision.kinds import STATE_FILE, venv_python
from ..services.control import accept_length, status_all
from ..provision.step import absolute, dist, wd
from ..services.argv import SERVED_NAME
from ..sdk import samples
from ..sdk.client import OcrClient, ServiceError
from ..sdk.driver import check_output, parse_job

PASSED, FAILED, NOT_RUN = "passed", "failed", "not run"
OTSL_PROMPT = "请识别图中的表格并输出 OTSL"


def _facts(conn, host):
    from ..provision import facts as facts_mod

    req = facts_mod.probe_request(host.workdir, reads=[STATE_FILE], net_timeout=0,
                                  paths=[wd("sdk-env/bin/minicpmvocr"), wd("minicpmvocr-sdk/configs/backends")])
    return facts_mod.gather(conn, req)


def verify_host(conn, host, *, name=None, api_key=None, scripts=None, timeout=600) -> list[dict]:
    checks = []

    def add(check, status, detail):
        checks.append({"check": check, "status": status, "detail": detail})

    facts = _facts(conn, host)
    wdir = facts["workdir"]["path"]
    services = [s for s in status_all(conn, wdir, name, api_key)["services"] if s.get("alive")]
    ready = [s for s in services if s.get("ready")]
    rest = ["smoke request", "DSpark counters", "parse: text page", "parse: table page", "parse: formula page",
            "two-end verification"]
    if not ready:
        add("readiness", FAILED, "no running service lists " + SERVED_NAME + (
            f" ({', '.join(s['name'] for s in services)} not ready)" if services else " (start one with inv serve)"))
        for c in rest:
            add(c, NOT_RUN, "the service is not ready")
        return checks
    svc = ready[0]
    add("readiness", PASSED, f"{svc['name']}: /v1/models lists {svc.get('served_name') or SERVED_NAME} "
                             f"(pid {svc['pid']}, port {svc['port']})")
    state = _json.loads((facts.get("reads") or {}).get(STATE_FILE) or "{}")
    with conn.forward(svc["port"]) as local_port, OcrClient(f"http://127.0.0.1:{local_port}", api_key,
                                                            timeout=timeout,
                                                            model=svc.get("served_name") or SERVED_NAME) as client:
        before = accept_length(_metrics(client))
        try:
            answer = client.chat_image(samples.png(), "Read all text in the image.", max_tokens=64)
            add("smoke request", PASSED if answer.strip() else FAILED,
                f"choices[0].message.content: {answer.strip()[:60]!r}" if answer.strip() else "empty answer")
        except ServiceError as exc:
            add("smoke request", FAILED, str(exc))
        except Exception as exc:  # noqa: BLE001 - a transport error is a failed check, said plainly
            add("smoke request", FAILED, f"{type(exc).__name__}: {exc}")
        after = accept_length(_metrics(client))
    if svc.get("kind") == "dspark" or after.get("state") in ("ok", "no drafts yet"):
        if after.get("state") == "not started with --speculative-config":
            add("DSpark counters", FAILED, "spec_decode counters absent: not started with --speculative-config")
        elif after.get("drafts", 0) > before.get("drafts", 0):
            add("DSpark counters", PASSED, f"drafts {before.get('drafts', 0):.0f} -> {after['drafts']:.0f}, accepted "
                                           f"{before.get('accepted', 0):.0f} -> {after['accepted']:.0f}; accept "
                                           f"length {after.get('accept_length')}")
        else:
            add("DSpark counters", FAILED, f"the counters did not increase ({after.get('state')})")
    else:
        add("DSpark counters", NOT_RUN, f"{svc.get('kind')} service: no speculative decoding to check")
    if str(svc.get("kind") or "").startswith("deepseek"):
        checks += [{"check": c, "status": NOT_RUN, "detail": "a DeepSeek-OCR service: its pages are checked by "
                    "inv deepseek-verify"} for c in rest[2:]]
        return checks
    checks += parse_pages(conn, host, facts, state, svc, wdir)
    checks += two_end(conn, host, facts, state, svc, scripts)
    return checks


def _metrics(client):
    try:
        return client.metrics()
    except Exception:  # noqa: BLE001
        return None


def parse_pages(conn, host, facts, state, svc, wdir) -> list[dict]:
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
    cpu = bool(dist(facts, "sdk-env", "paddlepaddle")) and not dist(facts, "sdk-env", "paddlepaddle-gpu")
    tag = time.strftime("verify-%Y%m%d-%H%M%S")
    base = f"{wdir}/.ocrdeploy/verify/{tag}"
    conn.run(["mkdir", "-p", base])
    out = []
    for page in pages:
        conn.put_data(samples.PAGES[page](), f"{base}/{page}.pdf")
        job = parse_job(absolute(facts, wd("sdk-env/bin/minicpmvocr")), absolute(facts, wd("minicpmvocr-sdk")),
                        svc.get("kind") or "dspark", [f"http://127.0.0.1:{svc['port']}"], f"{base}/{page}.pdf",
                        f"{base}/{page}.md", layout_dir=layout["path"], cpu_layout=cpu, run_tag=f"{tag}-{page}")
        r = conn.run(Command(job.argv, env=job.env, cwd=base), timeout=1800, ok_codes=range(0, 256))
        if r.exit_code != 0:
            out.append({"check": f"parse: {page} page", "status": FAILED,
                        "detail": f"minicpmvocr exited {r.exit_code}: {r.tail(3)}"})
            continue
        md = conn.run(["cat", job.output], ok_codes=range(0, 256)).stdout
        results = check_output(md, page)
        bad = [f"{c}: {d}" for c, ok, d in results if not ok]
        out.append({"check": f"parse: {page} page", "status": FAILED if bad else PASSED,
                    "detail": "; ".join(bad) if bad else ", ".join(f"{c}" for c, _, _ in results),
                    "argv": job.argv})
    return out


TOKENS = re.compile(r"(?i)prompt[ _]?tokens?\D{0,5}(\d+)")


def two_end(conn, host, facts, state, svc, scripts) -> list[dict]:
    name = "two-end verification"
    if not scripts or not all(scripts):
        return [{"check": name, "status": NOT_RUN, "detail": "verify_transformers.py and verify_vllm.py not given: "
                                                              "the two ends are not claimed to agree"}]
    main = (state.get("models") or {}).get("MiniCPM-OCR-1.0")
    tf_py = venv_python(facts, "tf-ocr-env")
    vllm_py = venv_python(facts, "vllm-ocr-env")
    wdir = facts["workdir"]["path"]
    img = f"{wdir}/.ocrdeploy/verify/table.png"
    conn.run(["mkdir", "-p", f"{wdir}/.ocrdeploy/verify"])
    conn.put_data(samples.png(), img)
    env = {"CUDA_VISIBLE_DEVICES": str(svc.get("gpu") or "0")}
    runs = {}
    for side, py, script, extra in (("transformers", tf_py, scripts[0], ["--attn", "sdpa", "--max-new-tokens", "512"]),
                                    ("vllm", vllm_py, scripts[1], ["--max-tokens", "512"])):
        r = conn.run(Command([py, script, "--model", main["path"], "--image", img, "--prompt", OTSL_PROMPT, *extra],
                             env=env), timeout=3600, ok_codes=range(0, 256))
        runs[side] = r
    if any(r.exit_code != 0 for r in runs.values()):
        return [{"check": name, "status": FAILED, "detail": "; ".join(
            f"{s} exited {r.exit_code}: {r.tail(2)}" for s, r in runs.items() if r.exit_code != 0)}]

    def parsed(text):
        tokens = TOKENS.findall(text)
        m = re.search(r"<otsl>.*</otsl>", text, re.S)
        return (tokens[0] if tokens else None), (m.group(0) if m else text.strip())

    (tt, to), (vt, vo) = parsed(runs["transformers"].stdout), parsed(runs["vllm"].stdout)
    problems = []
    if tt is None or vt is None or tt != vt:
        problems.append(f"prompt tokens transformers={tt} vllm={vt}")
    if to != vo:
        problems.append("outputs differ")
    if not (to.endswith("</otsl>") and vo.endswith("</otsl>")):
        problems.append("an output does not end with </otsl>")
    detail = "; ".join(problems) if problems else f"same prompt tokens ({tt}), identical outputs ({len(to)} chars), " \
                                                  f"both end with </otsl>"
    return [{"check": name, "status": FAILED if problems else PASSED, "detail": detail}]


def report_checks(fn, title: str, *, host, inventory, as_json, accept_new_host_keys, connect_timeout) -> int:
    """fn(conn, host) -> checks on every host; one table per host, exit 1 when a check failed."""
    from rich.markup import escape
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
            t.add_row(c["check"], f"[{style}]{c['status']}[/]", escape(c["detail"]))
        run.con.print(t)
    return run.exit_code()


def run_verify(*, host, inventory, name, api_key, scripts, as_json, accept_new_host_keys, connect_timeout) -> int:
    return report_checks(lambda conn, h: verify_host(conn, h, name=name, api_key=api_key, scripts=scripts),
                         "verification", host=host, inventory=inventory, as_json=as_json,
                         accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout)
