"""Driving the minicpmvocr CLI the way the guide says (seed 000 section 5), and checking what it wrote
(section 6)."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass

from ..services.argv import SERVED_NAME

CONFIG_FOR = {"dspark": "vllm.yaml", "standard": "vllm.yaml", "transformers": "openai.yaml", "openai": "openai.yaml",
              "llamacpp": "llamacpp.yaml"}
NO_THINKING = json.dumps({"chat_template_kwargs": {"enable_thinking": False}}, separators=(",", ":"))


@dataclass
class ParseJob:
    argv: list
    env: dict
    output: str
    run_tag: str


def parse_job(minicpmvocr: str, sdk_repo: str, backend: str, server_urls, input_path: str, output_path: str, *,
              layout_dir: str, limit_one=True, cpu_layout=False, run_root: str | None = None,
              run_tag: str | None = None) -> ParseJob:
    """`minicpmvocr parse` with every rule of the guide: the backend's config, one --server-url per instance,
    --model matching the served name, absolute --set paths, input.limit=1 first, thinking off with openai.yaml,
    layout.device=cpu with CPU paddle, a fresh run.run_tag, run.run_root when disk is tight."""
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
    argv += ["--model", SERVED_NAME]
    if limit_one:
        argv += ["--set", "input.limit=1"]
    if CONFIG_FOR[backend] == "openai.yaml":
        argv += ["--set", f"engine.extra_body={NO_THINKING}"]
    if cpu_layout:
        argv += ["--set", "layout.device=cpu"]
    argv += ["--set", f"run.run_tag={tag}"]
    if run_root:
        argv += ["--set", f"run.run_root={run_root}"]
    argv += ["--input", input_path, "--output", output_path]
    env = {"OCR_LAYOUT_MODEL_DIR": layout_dir, "PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK": "True"}
    return ParseJob(argv, env, output_path, tag)


LATEX = re.compile(r"\\frac|\\sum|\\sqrt|\$[^$]+\$|\\\[|\\\(|\^\{|_\{")


def check_output(md: str, page: str) -> list[tuple[str, bool, str]]:
    """(check, passed, detail) for the output of one page; page is text, table, formula or any."""
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
        words = re.findall(r"[A-Za-z]{3,}", md)
        repeated = re.search(r"(.{2,8}?)\1{8,}", md)
        ok = letters >= 40 and letters / max(1, len(md.strip())) > 0.5 and len(words) >= 8 and not repeated
        out.append(("readable text on the text page", ok, f"{len(words)} words" + (
            f", repeated {repeated.group(1)!r}" if repeated else "")))
    return out
