"""One self-contained HTML file from a bench or verify result document: nothing is fetched when it is viewed.

Why so strict: the page shows what a server answered, and an answer is text from outside.  The file
carries a Content-Security-Policy of default-src 'none' (images only as data: URLs, styles only inline),
the answer's own HTML is escaped except the bare table tags MiniCPM-OCR writes (<table><tr><td>, with
colspan/rowspan), Markdown images and links are not rendered (an OCR answer has no business pointing
anywhere), and LaTeX is shown as its source.  The plot is matplotlib's SVG, inlined without its XML
prologue and metadata.  This module reads documents; it never runs or fetches anything.
"""

from __future__ import annotations

import base64
import html
import io
import re

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
STYLE = """
body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1400px}
h1{font-size:1.4em} h2{font-size:1.15em;margin-top:1.6em}
table.grid{border-collapse:collapse;margin:.5em 0} .grid td,.grid th{border:1px solid #bbb;padding:3px 7px;font-size:.9em}
.verdict{font-size:1.15em;font-weight:bold;padding:.4em .6em;border-radius:4px;display:inline-block}
.ok{background:#dff3df;color:#145214} .bad{background:#f8dddd;color:#7a1010} .na{color:#666}
.page{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1em;border-top:1px solid #ccc;padding:1em 0}
.page img{max-width:100%;max-height:80vh;object-fit:contain;border:1px solid #ccc}
.answer{border:1px solid #ddd;padding:.5em;background:#fafafa;overflow:auto}
.answer table{border-collapse:collapse} .answer td,.answer th{border:1px solid #888;padding:2px 6px}
code.tex{background:#eef;padding:1px 3px}
"""
_TABLE_TAG = re.compile(r"&lt;(/?)(table|thead|tbody|tr|td|th)((?: (?:colspan|rowspan)=&quot;\d+&quot;)*)\s*&gt;", re.I)
_MATH = re.compile(r"(?s)\$\$(.+?)\$\$|\$(.+?)\$|\\\[(.+?)\\\]|\\\((.+?)\\\)")


def _md():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True, "linkify": False}).enable("table")
    md.disable(["image", "link", "autolink"])
    return md


def answer_html(text: str) -> str:
    """An answer rendered: Markdown with its tables, the bare HTML table tags kept, every other tag shown as
    text, math spans as their LaTeX source."""
    maths = []

    def hold(m):
        maths.append(next(g for g in m.groups() if g is not None))
        return f"\x00MATH{len(maths) - 1}\x00"

    held = _MATH.sub(hold, text or "")
    safe = _TABLE_TAG.sub(lambda m: f"<{m.group(1)}{m.group(2)}{html.unescape(m.group(3))}>", html.escape(held))
    out = _md().render(safe.replace("\x00", "\ue000"))
    for i, tex in enumerate(maths):
        out = out.replace(f"\ue000MATH{i}\ue000", f'<code class="tex">{html.escape(tex)}</code>')
    return out


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"(?s)<metadata>.*?</metadata>", "", svg)
    return re.sub(r'\s+xmlns(?::\w+)?="[^"]*"', "", svg)


def plot_svg(levels: list[dict], min_accuracy: float | None) -> str:
    """pages/min (left axis) and accuracy (right axis) against concurrency, as inline SVG."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.4), dpi=96)
    ax = fig.add_subplot()
    xs = [lv["concurrency"] for lv in levels]
    ax.plot(xs, [lv["pages_per_min"] for lv in levels], "o-", color="tab:blue", label="pages/min")
    ax.set_xlabel("concurrency")
    ax.set_ylabel("pages/min", color="tab:blue")
    ax.set_xscale("log", base=2)
    ax.set_xlim(min(xs) / 1.4, max(xs) * 1.4)
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.plot(xs, [None if lv["accuracy"] is None else lv["accuracy"] * 100 for lv in levels], "s--",
             color="tab:green", label="accuracy %")
    if min_accuracy is not None:
        ax2.axhline(min_accuracy * 100, color="tab:red", linewidth=0.8, linestyle=":", label="floor")
    ax2.set_ylabel("accuracy %", color="tab:green")
    ax2.set_ylim(0, 105)
    fig.legend(loc="upper center", ncol=3, fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    return _svg(fig)


def _e(x) -> str:
    return html.escape(str(x))


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            f"<title>{_e(title)}</title><style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n")


def _img(images, name) -> str:
    if name not in images:
        return '<p class="na">(no image)</p>'
    mime, data = images[name]
    return f'<img alt="{_e(name)}" src="data:{_e(mime)};base64,{base64.b64encode(data).decode()}">'


def _checks(checks) -> str:
    rows = []
    for c in checks:
        passed = c.get("passed")
        if passed is None and "status" in c:
            passed = {"passed": True, "failed": False}.get(c["status"])
        cls, word = ("ok", "passed") if passed else ("na", c.get("status", "not scored")) if passed is None \
            else ("bad", "failed")
        rows.append(f'<tr><td>{_e(c["check"])}</td><td class="{cls}">{_e(word)}</td><td>{_e(c.get("detail", ""))}</td></tr>')
    return '<table class="grid"><tr><th>check</th><th>result</th><th>detail</th></tr>' + "".join(rows) + "</table>"


def percentiles_ms(d: dict, sep: str = " / ") -> str:
    """A level's p50/p95/p99 in whole ms, "-" where there is none (the terminal table shares it)."""
    return sep.join("-" if d.get(k) is None else f"{d[k]:.0f}" for k in ("p50", "p95", "p99"))


def gpu_cell(gpu) -> str:
    """Utilisation mean and the most memory one GPU held, each '-' where not read."""
    if not gpu:
        return "-"
    util = "-" if gpu.get("util_mean_pct") is None else f"{gpu['util_mean_pct']:.0f}%"
    mem = "-" if gpu.get("memory_max_mib") is None else f"{gpu['memory_max_mib']} MiB"
    return f"{util} {mem}"


def bench_report(doc: dict, images: dict) -> str:
    """The bench's report: verdict, plot, levels table, and each page beside its answer with the checks.
    images: page name -> (mime, bytes) exactly as sent."""
    v = doc["verdict"]
    # --through sdk sends no prompt of ours: the SDK's parse builds its own request
    prompt = (f"<q>{_e(doc['prompt'])}</q>" if doc.get("prompt") is not None
              else "the SDK's own (minicpmvocr parse)" if doc.get("through") == "sdk" else "-")
    parts = [f"<h1>inv bench: {_e(doc.get('target') or doc.get('server'))}</h1>",
             f"<p>model {_e(doc.get('model'))}; backend body {_e(doc.get('extra_body'))}; prompt "
             f"{prompt}; through {_e(doc.get('through'))}</p>",
             f'<p class="verdict {"ok" if v["passed"] else "bad"}">{_e(v["line"])}</p>']
    if v.get("throughput_stops_growing_at") is not None:
        parts.append(f"<p>Throughput stops growing at concurrency {_e(v['throughput_stops_growing_at'])} "
                     f"(no higher level adds 10%).</p>")
    elif len(doc["levels"]) > 1:
        parts.append(f"<p>Throughput still grows at concurrency {_e(doc['levels'][-1]['concurrency'])}.</p>")
    parts.append('<h2>Pages per minute and accuracy against concurrency</h2><div class="plot">'
                 + plot_svg(doc["levels"], v.get("min_accuracy")) + "</div>")
    head = ("concurrency", "pages", "errors", "pages/min", "output tok/s", "TTFT ms p50/p95/p99",
            "E2EL ms p50/p95/p99", "accuracy", "accept length", "in flight (server)", "client CPU", "GPU")
    rows, timing = [], []
    for lv in doc["levels"]:
        gpu = lv.get("gpu")
        cells = (lv["concurrency"], lv["pages"], lv["errors"], f"{lv['pages_per_min']:.1f}",
                 "-" if lv["output_tokens_per_s"] is None else f"{lv['output_tokens_per_s']:.1f}",
                 percentiles_ms(lv["ttft_ms"]), percentiles_ms(lv["e2el_ms"]),
                 "-" if lv["accuracy"] is None else f"{lv['accuracy']:.1%}",
                 "-" if lv["accept_length"] is None else lv["accept_length"],
                 f"{lv.get('client_in_flight_max')} ({'-' if lv.get('server_running_max') is None else int(lv['server_running_max'])})",
                 f"{lv.get('controller_cpu_s')} s", gpu_cell(gpu) + (f" ({gpu['source']})" if gpu.get("source")
                                                                     else "") if gpu else (lv.get("gpu_note") or "-"))
        rows.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
        if lv.get("sdk_timing_s"):
            timing.append(f"<li>concurrency {_e(lv['concurrency'])}: " + _e(", ".join(
                f"{k} {v:g} s" for k, v in lv["sdk_timing_s"].items())) + "</li>")
    parts.append('<h2>Levels</h2><table class="grid levels"><tr>' + "".join(f"<th>{_e(h)}</th>" for h in head)
                 + "</tr>" + "".join(rows) + "</table>")
    if timing:
        parts.append("<h2>The SDK's timing split (median per page)</h2><ul>" + "".join(timing) + "</ul>")
    errors = [(lv["concurrency"], k, n, lv["error_examples"].get(k)) for lv in doc["levels"]
              for k, n in lv["errors_by_kind"].items()]
    if errors:
        parts.append("<h2>Errors</h2><ul>" + "".join(f"<li>concurrency {_e(c)}: {_e(n)} x {_e(k)}: {_e(ex)}</li>"
                                                    for c, k, n, ex in errors) + "</ul>")
    refs = doc.get("references") or []
    if refs:
        parts.append("<h2>Published figures</h2><ul>" + "".join(
            f"<li>{_e(r['model'])}: {_e(r['figure'])}, {_e(r['setting'])} ({_e(r['source'])})</li>" for r in refs)
                     + "</ul>")
    shown = next((lv for lv in doc["levels"] if lv["concurrency"] == v.get("concurrency")), None) or \
        next((lv for lv in reversed(doc["levels"]) if lv.get("answers")), None)
    parts.append("<h2>Pages and answers" + (f" (concurrency {_e(shown['concurrency'])})" if shown else "") + "</h2>")
    answers = (shown or {}).get("answers") or {}
    for p in doc.get("pages") or []:
        a = answers.get(p["name"])
        acc = "" if not a or a.get("accuracy") is None else f" - accuracy {a['accuracy']:.1%}"
        right = (f'<div class="answer">{answer_html(a["answer"])}</div>' + _checks(a["checks"])) if a else \
            '<p class="bad">no answer for this page (every request for it failed)</p>'
        parts.append(f'<div class="page"><div><h3>{_e(p["name"])}{_e(acc)}</h3><p class="na">{_e(p.get("source"))}</p>'
                     f'{_img(images, p["name"])}</div><div>{right}</div></div>')
    return _page(f"inv bench {doc.get('target') or ''}", "\n".join(parts))


def verify_report(doc: dict, images: dict) -> str:
    """verify's report: each host's checks, and the sample pages beside what the SDK wrote for them."""
    parts = ["<h1>inv verify</h1>"]
    for host, res in (doc.get("hosts") or {}).items():
        checks = (res or {}).get("checks") if isinstance(res, dict) else None
        parts.append(f"<h2>{_e(host)}</h2>")
        if not checks:
            parts.append(f'<p class="bad">{_e((res or {}).get("error") if isinstance(res, dict) else res)}</p>')
            continue
        parts.append(_checks(checks))
        for c in checks:
            if c.get("output") is None:
                continue
            page = c["check"].removeprefix("parse: ").removesuffix(" page")
            parts.append(f'<div class="page"><div><h3>{_e(c["check"])}</h3>{_img(images, page)}</div>'
                         f'<div><div class="answer">{answer_html(c["output"])}</div>{_checks([c])}</div></div>')
    return _page("inv verify", "\n".join(parts))
