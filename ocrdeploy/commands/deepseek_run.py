"""`inv deepseek-run`: the DeepSeek-OCR repository's own batch scripts on the user's files (seed 003 section 3).

The script follows from the input: a PDF goes through run_dpsk_ocr_pdf.py (the concurrent path),
an image or a directory of images through run_dpsk_ocr_image.py (streaming), and with --eval a
benchmark directory through run_dpsk_ocr_eval_batch.py.  Only INPUT_PATH and OUTPUT_PATH are set
for the run and config.py is put back afterwards, so `inv deepseek-config` stays the one place that
chooses mode, crops and concurrency.  The run's output streams as it comes and stays in a log on
the host; a failed run is read against the diagnose table, so an out-of-memory names the next
downgrade instead of leaving the user with a traceback.
"""

from __future__ import annotations

import os
import posixpath
import tempfile
import time
from dataclasses import dataclass

from ..errors import UsageError
from ..provision.command import Command
from ..recipes.deepseek import CONFIG, ENV, read_config, render_config

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")          # what run_dpsk_ocr_image.py reads (seed 003 3.1)
SCRIPTS = {"pdf": "run_dpsk_ocr_pdf.py", "image": "run_dpsk_ocr_image.py", "eval": "run_dpsk_ocr_eval_batch.py"}


class CannotRun(Exception):
    """The host cannot run DeepSeek-OCR's scripts on this input; the message says what fixes that."""


@dataclass
class Stack:
    facts: dict
    text: str        # config.py as the user has it
    cfg: str         # its absolute path on the host
    py: str          # the deepseek-ocr-env interpreter

    @property
    def values(self) -> dict:
        return read_config(self.text)

    @property
    def workdir(self) -> str:
        return self.facts["workdir"]["path"]


def open_stack(conn, host, paths=()) -> Stack:
    """One probe: the checkout's config.py, the env's interpreter and any other paths the caller needs."""
    from ..provision import facts as facts_mod
    from ..provision.step import absolute, wd

    py_rel = wd(f"{ENV}/bin/python")
    facts = facts_mod.gather(conn, facts_mod.probe_request(host.workdir, reads=[CONFIG], net_timeout=0,
                                                           paths=[py_rel, *paths]))
    text = (facts.get("reads") or {}).get(CONFIG)
    if text is None:
        raise CannotRun("the DeepSeek-OCR checkout is missing: inv install --recipe deepseek-ocr-vllm085")
    if not (facts.get("files") or {}).get(py_rel, {}).get("exists"):
        raise CannotRun(f"{ENV} is not installed: inv install --recipe deepseek-ocr-vllm085")
    if not str(read_config(text).get("MODEL_PATH", "")).startswith("/"):
        raise CannotRun("config.py has no absolute MODEL_PATH: inv deepseek-config first")
    return Stack(facts, text, absolute(facts, CONFIG), absolute(facts, py_rel))


def run_script(conn, stack: Stack, script: str, overrides: dict, *, out_stream=None, timeout=24 * 3600):
    """The script with config.py changed by `overrides` for this run only; the user's file goes back after."""
    conn.put_data(render_config(stack.text, overrides), stack.cfg)
    try:
        return conn.run(Command([stack.py, script], cwd=posixpath.dirname(stack.cfg), env={"PYTHONUNBUFFERED": "1"}),
                        timeout=timeout, ok_codes=range(0, 256), out_stream=out_stream)
    finally:
        conn.put_data(stack.text, stack.cfg)


def pick_script(path: str, kind: str, evaluate: bool) -> str:
    if evaluate:
        if kind != "dir":
            raise CannotRun(f"--eval takes a benchmark directory; {path} is a {kind}")
        return SCRIPTS["eval"]
    if kind == "file" and path.lower().endswith(".pdf"):
        return SCRIPTS["pdf"]
    if kind == "dir" or (kind == "file" and path.lower().endswith(IMAGE_SUFFIXES)):
        return SCRIPTS["image"]
    raise CannotRun(f"{path}: neither a PDF, an image ({', '.join(IMAGE_SUFFIXES)}) nor a directory")


def run_host(conn, host, input_path, output, evaluate, show, rules) -> dict:
    try:
        stack = open_stack(conn, host, paths=[input_path])
        entry = stack.facts["files"][input_path]
        if not entry.get("exists"):
            raise CannotRun(f"{input_path} does not exist on the host")
        script = pick_script(input_path, entry.get("type", "file"), evaluate)
    except CannotRun as exc:
        return {"error": str(exc)}
    out_dir = output or f"{stack.workdir}/deepseek-output"
    tag = time.strftime("%Y%m%d-%H%M%S")
    log = f"{stack.workdir}/.ocrdeploy/deepseek-runs/{tag}.log"
    marker = f"{log}.start"
    conn.run(["mkdir", "-p", out_dir, posixpath.dirname(log)])
    conn.run(["touch", marker])
    from ..provision.connection import LineStream

    r = run_script(conn, stack, script, {"INPUT_PATH": input_path, "OUTPUT_PATH": out_dir},
                   out_stream=LineStream(lambda line: show(host.name, line)))
    text = r.stdout + ("\n" if r.stdout and r.stderr else "") + r.stderr
    conn.put_data(text, log)
    found = conn.run(["find", out_dir, "-type", "f", "-newer", marker], ok_codes=range(0, 256)).stdout.split()
    conn.run(["rm", "-f", marker], ok_codes=range(0, 256))
    doc = {"script": script, "input": input_path, "output_dir": out_dir, "log": log, "exit_code": r.exit_code,
           "seconds": round(r.duration, 1), "outputs": sorted(found), "findings": []}
    if r.exit_code != 0:
        doc["findings"] = _diagnose(text, rules, host)
    return doc


def _diagnose(text, rules, host) -> list[dict]:
    """The run's output against the diagnose table, read here: it is already on this machine."""
    from ..diagnose.engine import annotate, fix_context, scan_local

    with tempfile.TemporaryDirectory(prefix="ocrdeploy-") as d:
        path = os.path.join(d, "run.log")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        reports = annotate(scan_local([path], rules), rules, fix_context(host))
    return [f for rep in reports for f in rep.get("findings", [])]


def run_deepseek_batch(*, host, inventory, input_path, output, evaluate, as_json, accept_new_host_keys,
                       connect_timeout) -> int:
    from ..diagnose.table import load_table
    from ..provision.report import console
    from .hosts import map_hosts

    for flag, value in (("--input", input_path), ("--output", output)):
        if value is not None and not str(value).startswith("/"):
            raise UsageError(f"{flag} {value}: a path on the host, and it must be absolute")
    if not input_path:
        raise UsageError("--input PATH is required (a PDF, an image, or a directory of images)")
    con = console(stderr=as_json)
    rules = load_table()

    def show(name, line):
        con.print(f"{name} | {line}", markup=False, highlight=False)

    run = map_hosts(lambda conn, h: run_host(conn, h, input_path, output, evaluate, show, rules), host=host,
                    inventory=inventory, accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout,
                    as_json=as_json, con=con)
    for name, r in run.hosts:
        run.doc["hosts"][name] = r
        if r.get("error"):
            run.failed = True
            con.print(f"{name}: {r['error']}", markup=False)
            continue
        if r["exit_code"] != 0:
            run.failed = True
            con.print(f"[red]{name}: {r['script']} exited {r['exit_code']}[/red] after {r['seconds']:.0f} s; "
                      f"log: {r['log']}")
            for f in r["findings"]:
                con.print(f"    diagnosis {f['id']} (line {f['first_line']}): {f['cause']}", markup=False)
                con.print(f"    fix: {f['fix']}", markup=False)
            continue
        con.print(f"[green]{name}: {r['script']} done[/green] in {r['seconds']:.0f} s: {len(r['outputs'])} files "
                  f"in {r['output_dir']} (log: {r['log']})")
        for path in r["outputs"][:20]:
            con.print(f"    {path}", markup=False)
        if len(r["outputs"]) > 20:
            con.print(f"    ... and {len(r['outputs']) - 20} more", markup=False)
    return run.exit_code()
