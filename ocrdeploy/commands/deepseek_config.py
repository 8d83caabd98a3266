"""`inv deepseek-config`: DeepSeek-OCR-vllm/config.py on the host from its facts (seed 003 section 2)."""

from __future__ import annotations

import re

from ..errors import UsageError
from ..provision.kinds import STATE_FILE, host_state
from ..provision.step import absolute
from ..recipes.deepseek import CONFIG, GROUNDING, config_values, downgrade, prompt_for, read_config, render_config

GPU_KEY = "OCRDEPLOY_GPU"   # in config.py: the GPU it is sized for, which deepseek-run/verify run the scripts on


def int_option(flag: str, value, low: int, high: int | None = None, why: str = ""):
    """An integer option given as text, or None when absent; anything else is one line and exit 2."""
    if value is None:
        return None
    try:
        n = int(str(value).strip())
    except ValueError:
        raise UsageError(f"{flag} {value}: a whole number") from None
    if n < low or (high is not None and n > high):
        raise UsageError(f"{flag} {value}: " + (f"{low}-{high}" if high is not None else f"at least {low}") + why)
    return n


def host_path_option(flag: str, value) -> str | None:
    """--input/--output of deepseek-config and deepseek-run: None, or an absolute path on the host."""
    if value is not None and not str(value).startswith("/"):
        raise UsageError(f"{flag} {value}: a path on the host, and it must be absolute")
    return value


def gpu_option(value) -> str | None:
    """--gpu: one GPU index, or auto/None (preflight's free GPU).  ASCII digits only: str.isdigit() holds for
    '²' (which int() refuses) and isdecimal for '٣' (which int() reads as 3), and the value ends up in
    CUDA_VISIBLE_DEVICES and config.py."""
    if value in (None, "", "auto"):
        return None
    if not re.fullmatch(r"[0-9]{1,3}", str(value)):
        raise UsageError(f"--gpu {value}: one GPU index (0, 1, ...) or auto")
    return str(int(value))


def pick_card(facts, gpu: str | None = None) -> dict:
    """The GPU config.py is sized for and the batch scripts run on: --gpu, else preflight's free GPU, else the
    largest."""
    from ..checks.preflight import free_gpu

    gpus = (facts.get("gpu") or {}).get("gpus") or []
    if not gpus:
        raise RuntimeError("no GPU found on the host (see inv preflight)")
    if gpu is not None:
        for g in gpus:
            if str(g["index"]) == gpu:
                return g
        raise RuntimeError(f"no GPU {gpu} on this host (GPUs: {', '.join(str(g['index']) for g in gpus)})")
    return free_gpu(facts) or max(gpus, key=lambda x: x.get("memory_total_mib") or 0)


def card_gb(card: dict) -> int:
    from ..checks.preflight import sold_gb

    return sold_gb(card.get("memory_total_mib"))


def run_deepseek_config(*, host, inventory, mode, max_crops, max_concurrency, input_path, output_path, prompt,
                        downgrade: bool, single_image, check, as_json, accept_new_host_keys, connect_timeout,
                        gpu=None) -> int:
    from ..provision import facts as facts_mod
    from ..recipes.deepseek import MAX_CROPS_LIMIT, MIN_CROPS, MODES
    from .hosts import map_hosts

    prompt = None if prompt is None else prompt_for(prompt)        # None: config.py's own PROMPT stays
    if single_image and not downgrade:
        raise UsageError("--single-image-oom goes with --downgrade")
    if mode is not None and mode not in MODES:
        raise UsageError(f"--mode {mode}: choose {', '.join(MODES)}")
    max_crops = int_option("--max-crops", max_crops, MIN_CROPS, MAX_CROPS_LIMIT,
                           f" (MIN_CROPS is {MIN_CROPS}; {MAX_CROPS_LIMIT} is the model's maximum)")
    max_concurrency = int_option("--max-concurrency", max_concurrency, 1)
    gpu = gpu_option(gpu)
    host_path_option("--input", input_path)        # before any host: config.py's own check names no option
    host_path_option("--output", output_path)

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
            state = host_state(facts)
            model = ((state.get("models") or {}).get("DeepSeek-OCR") or {}).get("path") or h.vars.get(
                "deepseek_model_path")
            if not model:
                return {"error": "DeepSeek-OCR is not verified on this host: inv models --model DeepSeek-OCR "
                                 "(or set deepseek_model_path)"}
            try:
                card = pick_card(facts, gpu)
                values, notes = config_values(card_gb(card), facts["cpu"].get("count") or 1, mode=mode,
                                              model_path=model, input_path=input_path or f"{wdir}/deepseek-input",
                                              output_path=output_path or f"{wdir}/deepseek-output",
                                              max_crops=max_crops, max_concurrency=max_concurrency,
                                              prompt=prompt)
            except RuntimeError as exc:
                return {"error": str(exc)}
            if prompt is None:
                own = read_config(text).get("PROMPT")
                if isinstance(own, str) and own:
                    notes.append(f"PROMPT kept as config.py has it ({own!r}; --prompt changes it)")
                else:
                    values["PROMPT"] = GROUNDING
            values[GPU_KEY] = str(card["index"])
            notes[0] += f" (GPU {card['index']}, {card.get('name')}, {card.get('memory_total_mib')} MiB)"
        if not check:
            conn.run(["cp", "-n", path, path + ".orig"], ok_codes=(0, 1))   # the first original is kept
            conn.put_data(render_config(text, values), path)
        return {"path": path, "values": values, "notes": notes, "written": not check}

    run = map_hosts(one, host=host, inventory=inventory, accept_new_host_keys=accept_new_host_keys,
                    connect_timeout=connect_timeout, as_json=as_json)
    con = run.con
    for name, r in run.answered():
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
