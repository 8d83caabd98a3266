"""`inv deepseek-verify`: DeepSeek-OCR's batch scripts on the project's own sample pages (seed 003 sections 3, 4).

The sample document (a text page with a title, a table, a formula, a figure, a two-column
page) goes through run_dpsk_ocr_pdf.py with the host's config.py (only INPUT_PATH,
OUTPUT_PATH and PRINT_NUM_VIS_TOKENS are set for the run, and the file is put back after).
Per page: headings, `|` tables, LaTeX, image placeholders, no repeated-character garbage,
and the vision tokens per page in Gundam mode when the run prints them.  --compare-modes
runs the two-column page in Gundam and in Base mode and says whether each kept the
column order.  Every check ends passed, failed or not run.
"""

from __future__ import annotations

import re
import time

from ..recipes.deepseek import MODES, VISION_TOKENS, mode_of
from ..sdk import samples
from .deepseek_config import gpu_option
from .deepseek_run import SCRIPTS, CannotRun, open_stack, run_gpu, run_script
from .verify import FAILED, NOT_RUN, PASSED, report_checks

PAGE_SPLIT = "<--- Page Split --->"
HEADING = re.compile(r"(?m)^#{1,6}\s+\S")
PIPE_ROW = re.compile(r"(?m)^\s*\|.*\|.*\|\s*$")
LATEX = re.compile(r"\\frac|\\sum|\\sqrt|\\\[|\\\(|\$[^$\n]+\$")
IMAGE = re.compile(r"!\[[^\]]*\]\([^)]+\)")
GARBAGE = re.compile(r"(.{1,4}?)\1{12,}", re.S)
# What DeepSeek-OCR's vLLM model prints per image with PRINT_NUM_VIS_TOKENS (deepseek_ocr.py): the global
# view's and the crops' feature shapes, `BASE:  torch.Size([1, 256, 1280])` then `PATCHES:  torch.Size([6,
# 100, 1280])` or `NO PATCHES`.  Vision tokens = views x tokens per view, summed.
VIS_BLOCK = re.compile(r"BASE:\s+torch\.Size\(\[(\d+), (\d+), \d+\]\)[ \t]*\r?\n[^\n]*?"
                       r"(?:PATCHES:\s+torch\.Size\(\[(\d+), (\d+), \d+\]\)|(NO PATCHES))")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
PDF_LOADING = "PDF loading"   # run_dpsk_ocr_pdf.py prints it once the engine is built: blocks before it are profiling


def column_order(text: str):
    """True when every left-column line comes before every right-column line; None when neither is there."""
    lefts = [m.start() for m in re.finditer(r"Left column line", text)]
    rights = [m.start() for m in re.finditer(r"Right column line", text)]
    if not lefts or not rights:
        return None
    return max(lefts) < min(rights)


def page_checks(pages: list[str]) -> list[dict]:
    out = []

    def add(check, ok, detail):
        out.append({"check": check, "status": PASSED if ok else FAILED, "detail": detail})

    by = dict(zip(samples.DEEPSEEK_PAGES, pages + [""] * (len(samples.DEEPSEEK_PAGES) - len(pages))))
    if len(pages) != len(samples.DEEPSEEK_PAGES):
        out.append({"check": "pages", "status": FAILED, "detail": f"{len(pages)} pages in the output, "
                    f"{len(samples.DEEPSEEK_PAGES)} sent (SKIP_REPEAT drops pages that never end)"})
    add("Markdown heading (text page)", bool(HEADING.search(by["text"])), "a '#' title" if HEADING.search(
        by["text"]) else "no heading: the prompt must carry <|grounding|>")
    rows = len(PIPE_ROW.findall(by["table"]))
    add("| table (table page)", rows >= 2 or "<table" in by["table"].lower(),
        f"{rows} '|' rows" if rows >= 2 else ("an HTML <table>" if "<table" in by["table"].lower()
                                               else "the table came out as plain text: use the grounding prompt"))
    m = LATEX.search(by["formula"])
    add("LaTeX (formula page)", bool(m), m.group(0) if m else "no LaTeX")
    add("image placeholder (figure page)", bool(IMAGE.search(by["figure"])),
        IMAGE.search(by["figure"]).group(0) if IMAGE.search(by["figure"]) else "no ![](...) placeholder")
    junk = GARBAGE.search("\n".join(pages))
    add("no repeated-character garbage", not junk,
        "clean" if not junk else f"{junk.group(1)!r} repeated: SKIP_REPEAT is off or the prompt does not fit the "
                                 f"document")
    return out


def vision_tokens(stdout: str) -> list[dict]:
    """Per image, in order: {"base", "crops", "patches", "tokens"} from the shapes the run printed.  Blocks
    printed before run_dpsk_ocr_pdf.py's "PDF loading" line belong to vLLM's profiling pass and are left out."""
    text = ANSI.sub("", stdout)
    if PDF_LOADING in text:
        text = text[text.rindex(PDF_LOADING):]
    out = []
    for m in VIS_BLOCK.finditer(text):
        base = int(m.group(1)) * int(m.group(2))
        crops = 0 if m.group(5) else int(m.group(3))
        patches = 0 if m.group(5) else crops * int(m.group(4))
        out.append({"base": base, "crops": crops, "patches": patches, "tokens": base + patches})
    return out


def vision_check(stdout: str, mode: str, pages: int) -> dict:
    name = "vision tokens per page"
    seen = vision_tokens(stdout)
    if not seen:
        return {"check": name, "status": NOT_RUN, "detail": "the run printed no BASE:/PATCHES: shapes"}
    counts = ", ".join(str(v["tokens"]) for v in seen)
    of = "" if len(seen) == pages else f" ({len(seen)} images for {pages} pages)"
    if mode in VISION_TOKENS:
        want = VISION_TOKENS[mode]
        wrong = [v for v in seen if v["tokens"] != want or v["crops"]]
        return {"check": name, "status": FAILED if wrong else PASSED,
                "detail": (f"{counts}{of}: {mode.capitalize()} mode gives {want} per page" +
                           ("; config.py's sizes did not take effect" if wrong else ""))}
    if mode != "gundam":
        return {"check": name, "status": NOT_RUN, "detail": f"{counts}: sizes of no named mode ({mode})"}
    high = [v["tokens"] for v in seen if v["tokens"] > 1000]
    low = [v["tokens"] for v in seen if v["tokens"] < 100]
    detail = f"{counts}{of} (256 for the global view + 100 per crop; the guide: 100-800 a page, above 1000 too many)"
    if high:
        detail = f"{counts}: above 1000 means too many crops: lower MAX_CROPS"
    elif low:
        detail = f"{counts}: below 100 vision tokens a page in Gundam mode: the sizes did not take effect"
    return {"check": name, "status": FAILED if high or low else PASSED, "detail": detail}


PAGE_CHECKS = ("Markdown heading (text page)", "| table (table page)", "LaTeX (formula page)",
               "image placeholder (figure page)", "no repeated-character garbage", "vision tokens per page")


def script_failed(why: str, then: str) -> list[dict]:
    """A stack that cannot run the batch script is a failed verification, not an empty one."""
    return [{"check": "run_dpsk_ocr_pdf.py", "status": FAILED, "detail": why}] + [
        {"check": n, "status": NOT_RUN, "detail": then} for n in PAGE_CHECKS]


def verify_host(conn, host, compare_modes=False, gpu=None) -> list[dict]:
    try:
        stack = open_stack(conn, host)
        gpu = run_gpu(stack, gpu)
    except CannotRun as exc:
        return script_failed(str(exc), "nothing ran")
    values = stack.values
    tag = time.strftime("ds-verify-%Y%m%d-%H%M%S")
    base = f"{stack.workdir}/.ocrdeploy/verify/{tag}"
    conn.run(["mkdir", "-p", base])

    def run(pdf_bytes, name, overrides):
        pdf = f"{base}/{name}.pdf"
        conn.put_data(pdf_bytes, pdf)
        out_dir = f"{base}/{name}-out"
        r = run_script(conn, stack, SCRIPTS["pdf"], {**overrides, "INPUT_PATH": pdf, "OUTPUT_PATH": out_dir,
                                                     "PRINT_NUM_VIS_TOKENS": True}, gpu=gpu, timeout=3 * 3600)
        mmd = conn.run(["cat", f"{out_dir}/{name}.mmd"], ok_codes=range(0, 256)).stdout if r.exit_code == 0 else ""
        return r, mmd

    checks = []
    r, mmd = run(samples.deepseek_document(), "samples", {})
    mode = mode_of(values)
    if r.exit_code != 0:
        checks += script_failed(f"exited {r.exit_code}: {r.tail(3)}", "the run failed")
    else:
        pages = [p.strip() for p in mmd.split(PAGE_SPLIT) if p.strip()]
        checks.append({"check": "run_dpsk_ocr_pdf.py", "status": PASSED,
                       "detail": f"{mode} mode, {len(pages)} pages -> {base}/samples-out/samples.mmd"})
        checks += page_checks(pages)
        checks.append(vision_check(r.stdout, mode, len(samples.DEEPSEEK_PAGES)))
    if compare_modes:
        page = samples.pdf(samples.two_column_content())
        result = {}
        for m in ("gundam", "base"):
            b, i, c = MODES[m]
            rr, out = run(page, f"two-column-{m}", {"BASE_SIZE": b, "IMAGE_SIZE": i, "CROP_MODE": c})
            result[m] = column_order(out) if rr.exit_code == 0 else f"run failed ({rr.exit_code})"
        kept = result["gundam"] is True
        detail = f"Gundam: {'column order kept' if kept else result['gundam']}; Base: " + (
            "column order kept" if result["base"] is True else "columns interleaved" if result["base"] is False
            else str(result["base"]))
        checks.append({"check": "Gundam vs Base (two-column page)", "status": PASSED if kept else FAILED,
                       "detail": detail})
    else:
        checks.append({"check": "Gundam vs Base (two-column page)", "status": NOT_RUN, "detail": "--compare-modes not given"})
    return checks


def run_deepseek_verify(*, host, inventory, compare_modes, as_json, accept_new_host_keys, connect_timeout,
                        gpu=None) -> int:
    gpu = gpu_option(gpu)
    return report_checks(lambda conn, h: verify_host(conn, h, compare_modes, gpu), "DeepSeek-OCR verification",
                         host=host, inventory=inventory, as_json=as_json,
                         accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout)
