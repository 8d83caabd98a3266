"""`inv deepseek-run`: the DeepSeek-OCR repository's own batch scripts on the user's files (seed 003 section 3).

The script follows from the input: a PDF goes through run_dpsk_ocr_pdf.py (the concurrent path),
an image through run_dpsk_ocr_image.py (streaming), a directory file by file (the image script opens
one file: each image through it, each PDF through the PDF script, each into its own output folder),
and with --eval a benchmark directory through run_dpsk_ocr_eval_batch.py.  Only INPUT_PATH and
OUTPUT_PATH are set for the run and config.py is put back afterwards, so `inv deepseek-config` stays
the one place that chooses mode, crops, concurrency and the GPU; the scripts pin GPU 0 themselves,
so they run through recipes/deepseek_gpu.py, which hands them that GPU.  The run's output streams as it comes and stays in a log on
the host; a failed run is read against the diagnose table, so an out-of-memory names the next
downgrade instead of leaving the user with a traceback.
"""

from __future__ import annotations

import json as _json
import os
import posixpath
import tempfile
import time
from dataclasses import dataclass

from pathlib import Path

from ..errors import UsageError
from ..provision.command import Command, Script
from ..recipes import deepseek_gpu, deepseek_tf
from ..recipes.deepseek import CONFIG, ENV, read_config, render_config
from .deepseek_config import GPU_KEY, gpu_option, host_path_option

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


def open_stack(conn, host, paths=(), dirs=()) -> Stack:
    """One probe: the checkout's config.py, the env's interpreter, the GPUs and any other paths the caller
    needs (`dirs` are listed)."""
    from ..provision import facts as facts_mod
    from ..provision.step import absolute, wd

    py_rel = wd(f"{ENV}/bin/python")
    facts = facts_mod.gather(conn, facts_mod.probe_request(host.workdir, reads=[CONFIG], net_timeout=0,
                                                           paths=[py_rel, *paths], dirs=list(dirs)))
    text = (facts.get("reads") or {}).get(CONFIG)
    if text is None:
        raise CannotRun("the DeepSeek-OCR checkout is missing: inv install --recipe deepseek-ocr-vllm085")
    if not (facts.get("files") or {}).get(py_rel, {}).get("exists"):
        raise CannotRun(f"{ENV} is not installed: inv install --recipe deepseek-ocr-vllm085")
    if not str(read_config(text).get("MODEL_PATH", "")).startswith("/"):
        raise CannotRun("config.py has no absolute MODEL_PATH: inv deepseek-config first")
    return Stack(facts, text, absolute(facts, CONFIG), absolute(facts, py_rel))


LAUNCHER = Path(deepseek_gpu.__file__).read_text(encoding="utf-8")
TF_RUNNER = Path(deepseek_tf.__file__).read_text(encoding="utf-8")
BACKENDS = ("vllm", "transformers")


def run_gpu(stack: Stack, gpu: str | None) -> str:
    """The GPU a run uses: --gpu, else the one config.py was sized for (deepseek-config records it), else
    preflight's free GPU.  The recorded GPU is refused while another process holds it, rather than shared;
    --gpu is taken as given."""
    from ..checks.preflight import free_gpu

    gpus = {str(g["index"]): g for g in (stack.facts.get("gpu") or {}).get("gpus") or []}
    if gpu is not None:
        if gpus and gpu not in gpus:
            raise CannotRun(f"--gpu {gpu}: no such GPU on this host (GPUs: {', '.join(gpus)})")
        return gpu
    recorded = stack.values.get(GPU_KEY)
    if recorded is not None and str(recorded) in gpus:
        busy = gpus[str(recorded)].get("processes")
        if busy:
            raise CannotRun(f"GPU {recorded}, which config.py is sized for, is busy (pid "
                            f"{', '.join(str(p['pid']) for p in busy)}): free it, pass --gpu, or run "
                            f"inv deepseek-config again for a free GPU")
        return str(recorded)
    free = free_gpu(stack.facts)
    if free is None:
        raise CannotRun("no free GPU on this host" + (" (pass --gpu to share one)" if gpus else ""))
    return str(free["index"])


def run_script(conn, stack: Stack, script: str, overrides: dict, *, gpu: str, out_stream=None,
               timeout=24 * 3600):
    """The script on `gpu` with config.py changed by `overrides` for this run only; the user's file goes back
    after."""
    conn.put_data(render_config(stack.text, overrides), stack.cfg)
    try:
        cmd = Command([stack.py, "-c", Script(LAUNCHER, "deepseek_gpu.py"), script, gpu],
                      cwd=posixpath.dirname(stack.cfg), env={"PYTHONUNBUFFERED": "1", "CUDA_VISIBLE_DEVICES": gpu})
        return conn.run(cmd, timeout=timeout, ok_codes=range(0, 256), out_stream=out_stream)
    finally:
        conn.put_data(stack.text, stack.cfg)


def pick_script(path: str, kind: str, evaluate: bool) -> str:
    if evaluate:
        if kind != "dir":
            raise CannotRun(f"--eval takes a benchmark directory; {path} is a {kind}")
        return SCRIPTS["eval"]
    if kind == "file" and path.lower().endswith(".pdf"):
        return SCRIPTS["pdf"]
    if kind == "file" and path.lower().endswith(IMAGE_SUFFIXES):
        return SCRIPTS["image"]
    raise CannotRun(f"{path}: neither a PDF, an image ({', '.join(IMAGE_SUFFIXES)}) nor a directory")


def plan_runs(input_path: str, kind: str, listing, evaluate: bool, out_dir: str) -> list[tuple[str, str, str]]:
    """(script, INPUT_PATH, OUTPUT_PATH) for each run.  A directory becomes one run per image and per PDF in it
    (run_dpsk_ocr_image.py opens a single file), each writing into OUTPUT/<file name>/, since every image run
    writes the same result.mmd and every run an images/ folder."""
    if evaluate:
        pick_script(input_path, kind, evaluate)
        others = sorted({n.split("/")[0] + ("/" if "/" in n else "") for n in listing or {}
                         if "/" in n or not n.lower().endswith(IMAGE_SUFFIXES)})
        if others:
            raise CannotRun(f"--eval opens every file in {input_path} as an image; not images: "
                            f"{', '.join(others[:5])}{' ...' if len(others) > 5 else ''}")
        # run_dpsk_ocr_eval_batch.py writes OUTPUT_PATH + file name, without a '/' of its own
        return [(SCRIPTS["eval"], input_path, out_dir.rstrip("/") + "/")]
    if kind != "dir":
        return [(pick_script(input_path, kind, evaluate), input_path, out_dir)]
    names = sorted(n for n in listing or {} if "/" not in n)
    runs = [(pick_script(n, "file", False), f"{input_path.rstrip('/')}/{n}", f"{out_dir.rstrip('/')}/{n}")
            for n in names if n.lower().endswith(IMAGE_SUFFIXES + (".pdf",))]
    if not runs:
        raise CannotRun(f"{input_path} holds no PDF or image ({', '.join(IMAGE_SUFFIXES)}) at its top level")
    return runs


def run_host(conn, host, input_path, output, evaluate, show, rules, gpu=None) -> dict:
    from ..provision.connection import LineStream

    try:
        stack = open_stack(conn, host, paths=[input_path], dirs=[input_path])
        entry = stack.facts["files"][input_path]
        if not entry.get("exists"):
            raise CannotRun(f"{input_path} does not exist on the host")
        out_dir = output or f"{stack.workdir}/deepseek-output"
        runs = plan_runs(input_path, entry.get("type", "file"), (stack.facts.get("dirs") or {}).get(input_path),
                         evaluate, out_dir)
        gpu = run_gpu(stack, gpu)
    except CannotRun as exc:
        return {"error": str(exc)}
    tag = time.strftime("%Y%m%d-%H%M%S")
    log = f"{stack.workdir}/.ocrdeploy/deepseek-runs/{tag}.log"
    marker = f"{log}.start"
    conn.run(["mkdir", "-p", out_dir, posixpath.dirname(log)])
    conn.run(["touch", marker])
    done, texts, failed = [], [], None
    for n, (script, inp, outp) in enumerate(runs, 1):
        if len(runs) > 1:
            show(host.name, f"[{n}/{len(runs)}] {posixpath.basename(inp)}: {script}")
        r = run_script(conn, stack, script, {"INPUT_PATH": inp, "OUTPUT_PATH": outp}, gpu=gpu,
                       out_stream=LineStream(lambda line: show(host.name, line)))
        text = r.stdout + ("\n" if r.stdout and r.stderr else "") + r.stderr
        texts.append(text if len(runs) == 1 else f"==> {inp} ({script}, exit {r.exit_code})\n{text}")
        done.append({"script": script, "input": inp, "output_dir": outp, "exit_code": r.exit_code,
                     "seconds": round(r.duration, 1)})
        if r.exit_code != 0:
            failed = (done[-1], text)
            break                        # the rest would meet the same settings: fix, then run again
    conn.put_data("\n".join(texts), log)
    found = conn.run(["find", out_dir, "-type", "f", "-newer", marker], ok_codes=range(0, 256)).stdout.split()
    conn.run(["rm", "-f", marker], ok_codes=range(0, 256))
    last = failed[0] if failed else done[-1]
    doc = {"script": last["script"], "input": input_path, "output_dir": out_dir, "log": log, "gpu": gpu,
           "exit_code": last["exit_code"], "seconds": round(sum(d["seconds"] for d in done), 1),
           "outputs": sorted(found), "findings": [], "runs": done,
           "not_run": [inp for _, inp, _ in runs[len(done):]]}
    if failed:
        doc["findings"] = _diagnose(failed[1], rules, host, oom_context(stack, failed[0]["script"], host))
    return doc


def tf_images(input_path: str, kind: str, listing) -> list[str]:
    """The images one transformers run takes: the image, or each image at a directory's top level.  The notes'
    transformers path is for single images and prompt tuning (section 6); PDFs go through the batch scripts."""
    if kind == "dir":
        images = [f"{input_path.rstrip('/')}/{n}" for n in sorted(listing or {})
                  if "/" not in n and n.lower().endswith(IMAGE_SUFFIXES)]
        if not images:
            raise CannotRun(f"{input_path} holds no image ({', '.join(IMAGE_SUFFIXES)}) at its top level")
        return images
    if input_path.lower().endswith(IMAGE_SUFFIXES):
        return [input_path]
    raise CannotRun(f"{input_path}: --backend transformers takes an image ({', '.join(IMAGE_SUFFIXES)}) or a "
                    f"directory of them; a PDF goes through the batch scripts (without --backend)")


def run_host_tf(conn, host, input_path, output, show, gpu=None) -> dict:
    """Each image through transformers' infer() (recipes/deepseek_tf.py) with config.py's model, prompt and mode, on
    the GPU the batch scripts would use; its result.mmd and the compression figures checked."""
    from ..provision.connection import LineStream
    from ..recipes.deepseek import tf_job, tf_report

    try:
        stack = open_stack(conn, host, paths=[input_path], dirs=[input_path])
        entry = stack.facts["files"][input_path]
        if not entry.get("exists"):
            raise CannotRun(f"{input_path} does not exist on the host")
        images = tf_images(input_path, entry.get("type", "file"), (stack.facts.get("dirs") or {}).get(input_path))
        gpu = run_gpu(stack, gpu)
    except CannotRun as exc:
        return {"error": str(exc)}
    out_dir = output or f"{stack.workdir}/deepseek-output"
    log = f"{stack.workdir}/.ocrdeploy/deepseek-runs/{time.strftime('%Y%m%d-%H%M%S')}-transformers.log"
    conn.run(["mkdir", "-p", out_dir, posixpath.dirname(log)])
    runs, texts = [], []
    for image in images:
        outp = f"{out_dir.rstrip('/')}/{posixpath.basename(image)}"
        job = tf_job(stack.values, image, outp)
        cmd = Command([stack.py, "-c", Script(TF_RUNNER, "deepseek_tf.py"), _json.dumps(job)], cwd=stack.workdir,
                      env={"PYTHONUNBUFFERED": "1", "CUDA_VISIBLE_DEVICES": gpu})
        r = conn.run(cmd, timeout=24 * 3600, ok_codes=range(0, 256),
                     out_stream=LineStream(lambda line: show(host.name, line)))
        listed = conn.run(["find", outp, "-maxdepth", "1", "-type", "f", "-printf", "%s %f\\n"],
                          ok_codes=range(0, 256)).stdout
        outputs = [{"name": f"{outp}/{line.split(' ', 1)[1]}", "size": int(line.split(' ', 1)[0])}
                   for line in listed.splitlines() if " " in line and line.split(" ", 1)[0].isdigit()]
        figures, checks = tf_report(r.stdout, outputs, stack.values)
        runs.append({"image": image, "output_dir": outp, "exit_code": r.exit_code, "seconds": round(r.duration, 1),
                     "figures": figures, "checks": checks, "outputs": [o["name"] for o in outputs]})
        texts.append(f"==> {image} (exit {r.exit_code})\n{r.stdout}\n{r.stderr}")
        if r.exit_code != 0:
            break
    conn.put_data("\n".join(texts), log)
    failed = next((x for x in runs if x["exit_code"] != 0), None)
    return {"backend": "transformers", "input": input_path, "output_dir": out_dir, "log": log, "gpu": gpu,
            "exit_code": failed["exit_code"] if failed else 0, "runs": runs,
            "ok": not failed and all(c["ok"] for x in runs for c in x["checks"]),
            "not_run": images[len(runs):], "seconds": round(sum(x["seconds"] for x in runs), 1)}


def oom_context(stack: Stack, script: str, host) -> dict:
    """What DeepSeek's out-of-memory remedy needs to name the next step on this host: the image script runs one
    image, so its OOM is the single-image case (BASE_SIZE 640)."""
    from ..recipes.deepseek import downgrade

    single = script == SCRIPTS["image"]
    try:
        why = downgrade(stack.values, single_image=single)[1]
    except UsageError as exc:
        why = str(exc)
    return {"stack": "deepseek", "host": host.name, "deepseek_next": why, "deepseek_single_image": single}


def _diagnose(text, rules, host, extra: dict) -> list[dict]:
    """The run's output against the diagnose table, read here: it is already on this machine.  A finding whose
    remedy differs for DeepSeek-OCR (an out-of-memory) gets DeepSeek's, with this host's next step as its fix."""
    from ..diagnose.engine import annotate, fix_context, scan_local
    from ..recipes.remedies import plan_remedy, remedy_for

    ctx = {**fix_context(host), **extra}
    with tempfile.TemporaryDirectory(prefix="ocrdeploy-") as d:
        path = os.path.join(d, "run.log")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        reports = annotate(scan_local([path], rules), rules, ctx)
    findings = [f for rep in reports for f in rep.get("findings", [])]
    for f in findings:
        remedy = remedy_for(f.get("remedy"), ctx["stack"])
        if remedy != f.get("remedy"):
            f["remedy"], f["fix"] = remedy, plan_remedy(remedy, f["id"], ctx).manual
    return findings


def run_deepseek_batch(*, host, inventory, input_path, output, evaluate, as_json, accept_new_host_keys,
                       connect_timeout, gpu=None, backend=None) -> int:
    from ..diagnose.table import load_table
    from ..provision.report import console
    from .hosts import map_hosts

    host_path_option("--input", input_path)
    host_path_option("--output", output)
    if not input_path:
        raise UsageError("--input PATH is required (a PDF, an image, or a directory of images)")
    gpu = gpu_option(gpu)
    backend = backend or "vllm"
    if backend not in BACKENDS:
        raise UsageError(f"--backend {backend}: vllm (the repository's batch scripts) or transformers (infer())")
    if backend == "transformers" and evaluate:
        raise UsageError("--eval runs the vLLM batch script; it does not go with --backend transformers")
    con = console(stderr=as_json)
    rules = load_table()

    def show(name, line):
        con.print(f"{name} | {line}", markup=False, highlight=False)

    if backend == "transformers":
        run = map_hosts(lambda conn, h: run_host_tf(conn, h, input_path, output, show, gpu), host=host,
                        inventory=inventory, accept_new_host_keys=accept_new_host_keys,
                        connect_timeout=connect_timeout, as_json=as_json, con=con)
        return _report_tf(run, con)
    run = map_hosts(lambda conn, h: run_host(conn, h, input_path, output, evaluate, show, rules, gpu), host=host,
                    inventory=inventory, accept_new_host_keys=accept_new_host_keys, connect_timeout=connect_timeout,
                    as_json=as_json, con=con)
    for name, r in run.answered():
        if r["exit_code"] != 0:
            run.failed = True
            con.print(f"[red]{name}: {r['script']} exited {r['exit_code']}[/red] after {r['seconds']:.0f} s "
                      f"(GPU {r['gpu']}); log: {r['log']}")
            if r["not_run"]:
                con.print(f"    not run: {len(r['not_run'])} more file(s) of {r['input']}", markup=False)
            for f in r["findings"]:
                con.print(f"    diagnosis {f['id']} (line {f['first_line']}): {f['cause']}", markup=False)
                con.print(f"    fix: {f['fix']}", markup=False)
            continue
        what = r["script"] if len(r["runs"]) == 1 else f"{len(r['runs'])} runs of " + " and ".join(
            sorted({d["script"] for d in r["runs"]}))
        con.print(f"[green]{name}: {what} done[/green] in {r['seconds']:.0f} s on GPU {r['gpu']}: "
                  f"{len(r['outputs'])} files in {r['output_dir']} (log: {r['log']})")
        for path in r["outputs"][:20]:
            con.print(f"    {path}", markup=False)
        if len(r["outputs"]) > 20:
            con.print(f"    ... and {len(r['outputs']) - 20} more", markup=False)
    return run.exit_code()


def _report_tf(run, con) -> int:
    for name, r in run.answered():
        run.failed = run.failed or not r["ok"]
        for x in r["runs"]:
            f = x["figures"]
            said = (f"{f['vision_tokens']} vision tokens, compression ratio {f['compression_ratio']}"
                    if {"vision_tokens", "compression_ratio"} <= set(f) else "no compression figures")
            con.print(f"{name}: {posixpath.basename(x['image'])}: exit {x['exit_code']}, {said} "
                      f"(GPU {r['gpu']}, {x['seconds']:.0f} s) -> {x['output_dir']}", markup=False)
            for c in x["checks"]:
                con.print(f"    {'ok  ' if c['ok'] else 'FAIL'} {c['check']}: {c['detail']}", markup=False)
        if r["not_run"]:
            con.print(f"    not run: {len(r['not_run'])} more image(s) (log: {r['log']})", markup=False)
    return run.exit_code()
