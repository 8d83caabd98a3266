"""Automatic remedies for the findings that have a mechanical fix (`inv diagnose --fix`).

Each remedy becomes exact commands (argument lists) or, when it needs a person
or a part that is not there, a line saying what to do by hand; nothing is run
before it has been printed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..provision.command import Command
from .cuda_layout import repair_command


@dataclass
class Plan:
    remedy: str
    finding: str
    commands: list[Command] = field(default_factory=list)
    manual: str | None = None     # set when nothing can be run automatically
    restart: dict | None = None   # {"service": name, "change": {...}, "says": "..."}: restart it with the remedy


# A finding's remedy where the log comes from another stack than the table's default assumes: the same
# "CUDA out of memory" is fixed with --gpu-memory-utilization for a MiniCPM-OCR service, but through
# config.py for a DeepSeek-OCR batch run (seed 003 5.4).
STACK_REMEDIES = {"deepseek": {"lower-gpu-memory-utilization": "deepseek-oom-downgrade"}}


DEEPSEEK_RUN_LOGS = "/.ocrdeploy/deepseek-runs/"    # where inv deepseek-run keeps each run's output


def remedy_for(remedy: str | None, stack: str | None) -> str | None:
    return STACK_REMEDIES.get(stack or "", {}).get(remedy, remedy)


STACK_HEADS = {"minicpm": "MiniCPM-OCR", "deepseek": "DeepSeek-OCR"}


def fix_for_stack(fix: str, stack: str) -> str:
    """A rule's fix text with the paragraphs for other stacks left out: a paragraph that begins with a
    stack's name ("MiniCPM-OCR on vLLM: ...", "DeepSeek-OCR batch runs ...") is that stack's; the rest
    is everyone's.  A MiniCPM-OCR serve failure is not fixed through DeepSeek's config.py."""
    keep, owner = [], None
    for line in fix.splitlines():
        head = next((k for k, name in STACK_HEADS.items() if line.startswith(name)), None)
        if head or not line.strip():
            owner = head
        if owner in (None, stack):
            keep.append(line)
    return "\n".join(keep).strip() or fix


def stack_of_log(path: str | None) -> str | None:
    """The stack a log file comes from, where its place says so."""
    return "deepseek" if path and DEEPSEEK_RUN_LOGS in str(path) else None


# The remedies of the guide's section 8 that are a serve option: the change to the service's tuning
# (services.argv.Tuning) and the `inv serve` option that says it.
SERVE_REMEDIES = {
    "restart-enforce-eager": ({"enforce_eager": True}, "--enforce-eager"),
    "lower-gpu-memory-utilization": ({"gpu_memory_utilization": 0.7}, "--gpu-memory-utilization 0.7"),
    "restart-no-flashinfer-sampler": ({"flashinfer_sampler": False}, "--no-flashinfer-sampler "
                                                                     "(VLLM_USE_FLASHINFER_SAMPLER=0)"),
}


def plan_remedy(remedy: str, finding: str, ctx: dict, libcuda: str | None = None, service: str | None = None) -> Plan:
    """service: the `inv serve` service whose log the finding is in; serve remedies then restart it."""
    remedy = remedy_for(remedy, ctx.get("stack"))
    if remedy in SERVE_REMEDIES:
        change, option = SERVE_REMEDIES[remedy]
        if service:
            return Plan(remedy, finding, restart={"service": service, "change": change, "says": option})
        return Plan(remedy, finding, manual=f"restart the service with `inv serve ... {option}` (or run "
                                            f"`inv diagnose --service --fix`, which restarts it)")
    venv, sdk = ctx["vllm_env"], ctx["sdk_env"]
    pip, sdk_pip = f"{venv}/bin/pip", f"{sdk}/bin/pip"
    if remedy == "relink-cuda":
        return Plan(remedy, finding, [repair_command(ctx["cu13"], libcuda)])
    if remedy == "reinstall-transformers":
        src = ctx.get("transformers_src")
        if not src:
            return Plan(remedy, finding, manual="set transformers_src (inventory var) to the feat-ocr transformers "
                                                "source, then re-run; pip install --no-deps -e <TRANSFORMERS_SRC>")
        return Plan(remedy, finding, [Command([pip, "install", "--no-deps", "-e", src])])
    if remedy == "uninstall-torchcodec":
        return Plan(remedy, finding, [Command([pip, "uninstall", "-y", "torchcodec"])])
    if remedy == "uninstall-flashinfer-cubin":
        return Plan(remedy, finding, [Command([pip, "uninstall", "-y", "flashinfer-cubin"])])
    if remedy == "install-pypdfium2":
        return Plan(remedy, finding, [Command([sdk_pip, "install", "pypdfium2>=4"])])
    if remedy == "install-cccl":
        return Plan(remedy, finding, [Command([pip, "install", "nvidia-cuda-cccl==13.3.4.3.1"])])
    if remedy == "retry-half-jobs":
        return Plan(remedy, finding, manual="re-run `inv install`: the compile step retries once with half the jobs "
                                            "when its log shows compilers killed for memory")
    if remedy == "deepseek-oom-downgrade":
        host = f" --host {ctx['host']}" if ctx.get("host") and ctx["host"] != "localhost" else ""
        flag = " --single-image-oom" if ctx.get("deepseek_single_image") else ""
        step = (f"; next here: {ctx['deepseek_next']}" if ctx.get("deepseek_next") else "")
        return Plan(remedy, finding, manual=f"inv deepseek-config{host} --downgrade{flag}, then run again{step} "
                                            f"(the order: MAX_CONCURRENCY halved, to 30; MAX_CROPS 4; a smaller "
                                            f"mode; one image alone: BASE_SIZE 640)")
    return Plan(remedy, finding, manual=f"no automatic remedy for {remedy!r}")
