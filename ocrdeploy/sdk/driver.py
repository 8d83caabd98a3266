"""Driving the minicpmvocr CLI the way the guide says (seed 000 section 5), and checking what it wrote
(section 6)."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass

from ..services.argv import SERVED_NAME
from . import samples

CONFIG_FOR = {"dspark": "vllm.yaml", "standard": "vllm.yaml", "vllm": "vllm.yaml", "transformers": "openai.yaml",
              "openai": "openai.yaml", "llamacpp": "llamacpp.yaml"}


def sends_mm_kwargs(backend: str | None) -> bool:
    """The SDK's vLLM config sends per-request mm_processor_kwargs (the server needs --trust-request-mm-kwargs)."""
    return CONFIG_FOR.get(backend or "") == "vllm.yaml"


def layout_device(facts: dict, sdk_env: str = "sdk-env") -> str | None:
    """--set layout.device for the SDK on this host (the guide, sections 3.1 and 5): cpu with CPU paddle;
    with GPU paddle cuda:N for the card the layout model should use, a free one first (layout uses GPU 0
    by default, which the service may hold), else the one with the most free memory."""
    from ..checks.preflight import free_gpus
    from ..provision.step import dist

    if dist(facts, sdk_env, "paddlepaddle") and not dist(facts, sdk_env, "paddlepaddle-gpu"):
        return "cpu"
    gpus = (facts.get("gpu") or {}).get("gpus") or []
    if not gpus:
        return None
    free = free_gpus(facts)
    best = free[0] if free else max(gpus, key=lambda g: (g.get("memory_free_mib") or 0, -g["index"]))
    return f"cuda:{best['index']}"
NO_THINKING = json.dumps({"chat_template_kwargs": {"enable_thinking": False}}, separators=(",", ":"))


@dataclass
class ParseJob:
    argv: list
    env: dict
    output: str
    run_tag: str


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def no_proxy_with_loopback(user: str | None) -> str:
    """The user's no_proxy with the loopback names added (the guide, section 8): the SDK calls the
    service on 127.0.0.1, which a proxy set on the host would otherwise take."""
    have = [h.strip() for h in (user or "").split(",") if h.strip()]
    return ",".join(have + [h for h in LOOPBACK if h not in have])


def parse_job(minicpmvocr: str, sdk_repo: str, backend: str, server_urls, input_path: str, output_path: str, *,
              layout_dir: str, limit_one=True, layout_device: str | None = None, run_root: str | None = None,
              run_tag: str | None = None, model: str | None = None, no_proxy: str | None = None) -> ParseJob:
    """`minicpmvocr parse` with every rule of the guide: the backend's config, one --server-url per instance,
    --model matching the served name (the service record's: transformers serve pins its directory),
    absolute --set paths, input.limit=1 first, thinking off with openai.yaml, layout.device=cpu with CPU
    paddle, a fresh run.run_tag, run.run_root when disk is tight, loopback in no_proxy."""
    if backend not in CONFIG_FOR:
        raise ValueError(f"unknown backend {backend!r}")
    for p in (input_path, output_path, layout_dir, *( [run_root] if run_root else [])):
        if not p.startswith("/"):
            raise ValueError(f"{p}: --set and --input paths must be absolute (the guide: --set resolves "
                             f"relative to the config file)")
    tag = run_tag or time.strftime("ocrdeploy-%Y%m%d-%H%M%S")
    argv = [minicpmvocr, "parse", "--config", f"{sdk_repo}/configs/backends/{CONFIG_FOR[backend]}"]
    for url in server_urls:
        argv += ["--server-url", url]
    argv += ["--model", model or SERVED_NAME]
    if limit_one:
        argv += ["--set", "input.limit=1"]
    if CONFIG_FOR[backend] == "openai.yaml":
        argv += ["--set", f"engine.extra_body={NO_THINKING}"]
    if layout_device:
        argv += ["--set", f"layout.device={layout_device}"]
    argv += ["--set", f"run.run_tag={tag}"]
    if run_root:
        argv += ["--set", f"run.run_root={run_root}"]
    argv += ["--input", input_path, "--output", output_path]
    loopback = no_proxy_with_loopback(no_proxy)
    env = {"OCR_LAYOUT_MODEL_DIR": layout_dir, "PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK": "True",
           "no_proxy": loopback, "NO_PROXY": loopback}
    return ParseJob(argv, env, output_path, tag)


LATEX = re.compile(r"\\frac|\\sum|\\sqrt|\$[^$]+\$|\\\[|\\\(|\^\{|_\{")




# What a correct parse of the project's own pages must contain (samples.py holds the truth), and how much of it.
TEXT_RECALL_MIN = 0.85      # share of the text page's distinct words found in the output
TABLE_CELLS_MIN = 0.85      # share of the table's cells found as <td>/<th> cells
FORMULA_TOKENS_MIN = 1.0    # every token of the formula, numerator and denominator in their places

_WORD = re.compile(r"[a-z0-9]+")
_CELL = re.compile(r"(?is)<t[dh]\b[^>]*>(.*?)</t[dh]>")
_TAG = re.compile(r"<[^>]+>")
_MATH = re.compile(r"(?s)\$\$(.+?)\$\$|\$(.+?)\$|\\\[(.+?)\\\]|\\\((.+?)\\\)")
_TEX_TOKEN = re.compile(r"\\[A-Za-z]+|[A-Za-z0-9]|[=+\-]")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _norm_cell(text: str) -> str:
    return " ".join(_TAG.sub(" ", text).split()).lower()


def _missing(items, limit=8) -> str:
    items = list(items)
    return ", ".join(repr(i) for i in items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit else "")


def recalled(want: list, have) -> tuple[float, list]:
    """The share of `want` found in `have`, and what is missing: the one measure behind every content check
    (verify's pass/fail and bench's accuracy)."""
    missing = [w for w in want if w not in have]
    return (1 - len(missing) / len(want) if want else 1.0), missing


def word_recall(md: str, truth: str) -> tuple[float, list, int]:
    """The share of the truth's distinct words in the answer (order and case aside)."""
    want = list(dict.fromkeys(words(truth)))
    share, missing = recalled(want, set(words(md)))
    return share, missing, len(want)


def cell_recall(md: str, cells: list[str]) -> tuple[float, list]:
    """The share of the truth's cells found as <td>/<th> cells of the answer."""
    return recalled([_norm_cell(c) for c in cells], {_norm_cell(c) for c in _CELL.findall(md)})


def html_cells(html: str) -> list[str]:
    return _CELL.findall(html)


def text_recall(md: str) -> tuple[bool, str]:
    recall, missing, n = word_recall(md, " ".join(samples.TEXT))
    detail = f"{recall:.0%} of the page's {n} words (>= {TEXT_RECALL_MIN:.0%})"
    return recall >= TEXT_RECALL_MIN, detail + (f"; missing {_missing(missing)}" if missing else "")


def table_cells(md: str) -> tuple[bool, str]:
    want = [c for row in samples.TABLE for c in row]
    share, missing = cell_recall(md, want)
    detail = f"{len(want) - len(missing)} of {len(want)} cells (>= {TABLE_CELLS_MIN:.0%})"
    return share >= TABLE_CELLS_MIN, detail + (f"; missing {_missing(missing)}" if missing else "")


def _braced(text: str, start: int) -> tuple[str | None, int]:
    """The {...} group opening at text[start] (nested braces kept), and where it ends."""
    if start >= len(text) or text[start] != "{":
        return None, start
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + 1:i], i + 1
    return None, start


def math_tex(md: str) -> str:
    """The LaTeX of the answer's math spans ($...$, $$...$$, \\[...\\], \\(...\\)), joined."""
    return " ".join(next(g for g in m.groups() if g is not None) for m in _MATH.finditer(md))


def tex_tokens(tex: str) -> list[str]:
    return _TEX_TOKEN.findall(tex)


def formula_parts(md: str, tokens=None, numerator=None, denominator=None) -> dict:
    """The formula page's check, measured: which of its tokens the answer's math misses, and which
    numerator/denominator tokens are not in their place in the first \\frac (the sample's by default)."""
    tex = math_tex(md)
    want = list(samples.FORMULA["tokens"] if tokens is None else tokens)
    share, missing = recalled(want, set(tex_tokens(tex)))
    num_want = tex_tokens(samples.FORMULA["numerator"] if numerator is None else numerator)
    den_want = tex_tokens(samples.FORMULA["denominator"] if denominator is None else denominator)
    placed, in_place = [], 0
    at = tex.find("\\frac")
    if at >= 0:
        num, end = _braced(tex, at + len("\\frac"))
        den, _ = _braced(tex, end)
        num_t, den_t = tex_tokens(num or ""), tex_tokens(den or "")
        placed = [f"{t!r} not in the numerator" for t in num_want if t not in num_t]
        placed += [f"{t!r} not in the denominator" for t in den_want if t not in den_t]
        in_place = len(num_want) + len(den_want) - len(placed)
    checks = len(want) + len(num_want) + len(den_want)
    return {"math": bool(tex), "want": want, "missing": missing, "share": share, "placed": placed,
            "score": (len(want) - len(missing) + in_place) / checks if checks else 1.0}


def formula_tokens(md: str) -> tuple[bool, str]:
    """The formula page's x = (a + b) / 2c as LaTeX: its tokens, a+b over 2c in a \\frac."""
    f = formula_parts(md)
    if not f["math"]:
        return False, "no LaTeX math ($...$, $$...$$, \\[...\\]) in the output"
    want, missing, placed = f["want"], f["missing"], f["placed"]
    ok = f["share"] >= FORMULA_TOKENS_MIN and not placed
    detail = f"{len(want) - len(missing)} of {len(want)} formula tokens (>= {FORMULA_TOKENS_MIN:.0%})"
    if missing:
        detail += f"; missing {_missing(missing)}"
    if placed:
        detail += "; " + ", ".join(placed)
    return ok, detail


CONTENT = {"text": ("the text page's words", text_recall), "table": ("the table's cells", table_cells),
           "formula": ("the formula's tokens", formula_tokens)}


def check_output(md: str, page: str) -> list[tuple[str, bool, str]]:
    """(check, passed, detail) for the output of one page; page is text, table, formula or any.

    The shape checks of the guide's section 6, then, for the project's own sample pages, their content:
    a page of `aaa bbb`, an empty <table> or an x^{2} passes the shape and fails here."""
    out = [("non-empty", bool(md.strip()), f"{len(md)} chars")]
    out.append(("no <otsl> left", "<otsl>" not in md, "OTSL not converted to HTML" if "<otsl>" in md else "ok"))
    if page == "table":
        out.append(("<table> on the table page", "<table>" in md.lower(), "ok" if "<table>" in md.lower()
                    else "no <table>"))
    if page == "formula":
        m = LATEX.search(md)
        out.append(("LaTeX on the formula page", bool(m), m.group(0) if m else "no LaTeX (e.g. \\frac)"))
    if page == "text":
        letters = sum(ch.isalpha() for ch in md)
        found = re.findall(r"[A-Za-z]{3,}", md)
        repeated = re.search(r"(.{2,8}?)\1{8,}", md)
        ok = letters >= 40 and letters / max(1, len(md.strip())) > 0.5 and len(found) >= 8 and not repeated
        out.append(("readable text on the text page", ok, f"{len(found)} words" + (
            f", repeated {repeated.group(1)!r}" if repeated else "")))
    if page in CONTENT:
        what, check = CONTENT[page]
        ok, detail = check(md)
        out.append((what, ok, detail))
    return out
