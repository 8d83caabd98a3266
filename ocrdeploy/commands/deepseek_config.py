"""`inv deepseek-config`: DeepSeek-OCR-vllm/config.py on the host from its facts (seed 003 section 2)."""

from __future__ import annotations

import json as _json

from ..errors import UsageError
from ..provision.kinds import STATE_FILE
from ..provision.step import absolute
from ..recipes.deepseek import CONFIG, GROUNDING, config_values, downgrade, read_config, render_config

FREE_PROMPT = "<image>\nFree OCR."


def card_gib(facts) -> float:
    """The memory of the card the batch will use: preflight's free GPU, else the largest."""
    from ..checks.preflight import free_gpu

    gpus = (facts.get("gpu") or {}).get("gpus") or []
    if not gpus:
        raise RuntimeError("no GPU found on the host (see inv preflight)")
    g = free_gpu(facts) or max(gpus, key=lambda x: x.get("memory_total_mib") or 0)
    return (g.get("memory_total_mib") or 0) / 1024


def run_deepseek_config(*, host, inventory, mode, max_crops, max_concurrency, input_path, output_path, prompt,
                        downgrade: bool, single_image, check, as_json, accept_new_host_keys, connect_timeout) -> int:
    from ..provision import facts as facts_mod
    from .hosts import map_hosts

    if prompt not in ("grounding", "free"):
        raise UsageError("--prompt: grounding or free")
    if single_image and not downgrade:
        raise UsageError("--single-image-oom goes with --downgrade")

    def one(conn, h):
        facts = facts_mod.gather(conn, facts_mod.probe_request(h.workdir, reads=[CONFIG, STATE_FILE], net_timeout=0))
        wdir = facts["workdir"]["path"]
        text = (facts.get("reads") or {}).get(CONFIG)
        path = absolute(facts, CONFIG)
        if text is None:
            return {"error": f"{path} not found: clone the repository first (inv install --recipe "
                             f"deepseek-ocr-vllm085)"}
        if downgrade:
            values, why = downgrade_step(text, single_image)
            notes = [why]
        else:
            state = _json.loads((facts.get("reads") or {}).get(STATE_FILE) or "{}")
            model = ((state.get("models") or {}).get("DeepSeek-OCR") or {}).get("path") or h.vars.get(
                "deepseek_model_path")
            if not model:
                return {"error": "DeepSeek-OCR is not verified on this host: inv models --model DeepSeek-OCR "
                                 "(or set deepseek_model_path)"}
            try:
                values, notes = config_values(card_gib(facts), facts["cpu"].get("count") or 1, mode=mode,
                                              model_path=model, input_path=input_path or f"{wdir}/deepseek-input",
                                              output_path=output_path or f"{wdir}/deepseek-output",
                                              max_crops=max_crops, max_concurrency=max_concurrency,
                                              prompt=GROUNDING if prompt == "grounding" else FREE_PROMPT)
            except RuntimeError as exc:
                return {"error": str(exc)}
        if not check:
            conn.run(["cp", "-n", path, path + ".orig"], ok_codes=(0, 1))   # the first original is kept
            conn.put_data(render_config(text, values), path)
        return {"path": path, "values": values, "notes": notes, "written": not check}

    run = map_hosts(one, host=host, inventory=inventory, accept_new_host_keys=accept_new_host_keys,
                    connect_timeout=connect_timeout, as_json=as_json)
    con = run.con
    for name, r in run.hosts:
        run.doc["hosts"][name] = r
        if r.get("error"):
            run.failed = True
            con.print(f"{name}: {r['error']}", markup=False)
            continue
        con.print(f"{name}: {'; '.join(r['notes'])}" + ("" if r["written"] else " (not written: --check)"),
                  markup=False)
        for k, v in r["values"].items():
            con.print(f"  {k} = {v!r}", markup=False)
        if r["written"]:
            con.print(f"  written to {r['path']} (the original kept as config.py.orig)", markup=False)
    return run.exit_code()


def downgrade_step(text: str, single_image: bool):
    current = read_config(text)
    missing = [k for k in ("BASE_SIZE", "IMAGE_SIZE", "CROP_MODE", "MAX_CROPS", "MAX_CONCURRENCY") if k not in current]
    if missing:
        raise UsageError(f"config.py lacks {', '.join(missing)}: run inv deepseek-config without --downgrade first")
    new, why = downgrade(current, single_image=single_image)
    return {k: v for k, v in new.items() if current.get(k) != v}, why
