"""Preflight: can this host take the recipe?  (seed 000 section 2, seed 003 section 1.1)

Every check reads facts and the recipe's Requirements and touches nothing, so
the same facts always give the same verdicts and each check is tested on
recorded tool output.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .requirements import DEEPSEEK_PYTHON, TOOLS_PYTHON, PythonRule, Requirements
from .result import FAIL, PASS, SKIP, WARN, CheckResult

GIB = 1024 ** 3


def _driver_major(version: str | None) -> int | None:
    try:
        return int(str(version).split(".")[0])
    except (TypeError, ValueError):
        return None


def check_driver(facts: dict, req: Requirements) -> CheckResult:
    name = "driver"
    if not req.needs_gpu:
        return CheckResult(name, SKIP, "this recipe needs no GPU on this host")
    gpu = facts["gpu"]
    if gpu.get("error") and not gpu.get("gpus"):
        return CheckResult(name, FAIL, f"no usable NVIDIA driver: {gpu['error']}",
                           fix="install the NVIDIA driver (>= %d) and reboot; `nvidia-smi` must list the GPUs"
                               % req.min_driver)
    version = gpu.get("driver")
    major = _driver_major(version)
    cuda = f", CUDA {gpu['cuda']}" if gpu.get("cuda") else ""
    if major is None:
        return CheckResult(name, FAIL, f"driver version unreadable ({version!r})")
    if major >= req.min_driver:
        return CheckResult(name, PASS, f"{version}{cuda} (>= {req.min_driver})", value=version)
    if req.driver_fallback_floor and major >= req.driver_fallback_floor:
        return CheckResult(
            name, FAIL,
            f"{version}{cuda}: drivers {req.driver_fallback_floor}-{req.min_driver - 1} cannot run the default "
            f"stack (torch cu130)",
            fix=f"upgrade the driver to >= {req.min_driver}, or switch to torch cu126 and build vLLM yourself "
                f"(verified on A100; not covered by the default recipe)", value=version)
    return CheckResult(name, FAIL, f"{version}{cuda} is older than {req.min_driver}",
                       fix=f"upgrade the NVIDIA driver to >= {req.min_driver}", value=version)


# The memory sizes NVIDIA sells cards with, in GB (the unit of the guides' ">= 24 GB" and "8-16 GB").
SOLD_SIZES = (1, 2, 3, 4, 5, 6, 8, 10, 11, 12, 16, 20, 24, 32, 40, 48, 64, 80, 94, 96, 141, 144, 180, 192, 288)
# ECC on GDDR6 and HBM keeps a sixteenth of the memory for itself, and the driver a few MiB more: an A10 or
# A10G (24 GB) reports 23028 MiB, an A40 or an RTX A6000 with ECC on (48 GB) 46068 MiB, a T4 (16 GB) 15360.
ECC_SHARE = 1 / 16
DRIVER_KEEPS_MIB = 64


def sold_gb(memory_total_mib) -> int:
    """The size a card is sold as, in GB, from the total nvidia-smi reports: the one unit of every threshold.

    nvidia-smi's total is the label less what the card keeps: a "16 GB" card reports 16376 MiB, an "8 GB" one
    8188 MiB, and with ECC on a sixteenth less (A10 23028 MiB for 24 GB, T4 15360 for 16).  So the sold size
    is the smallest label the total fits under whose ECC-less share the total reaches; a total no label
    explains is its whole GiB, rounded up.  Both the MiniCPM-OCR guide's ">= 24 GB" and the DeepSeek-OCR
    notes' modes by VRAM compare with this, as the guides compare cards by their label.
    """
    mib = int(memory_total_mib or 0)
    for label in SOLD_SIZES:
        if mib <= label * 1024 and mib >= label * 1024 * (1 - ECC_SHARE) - DRIVER_KEEPS_MIB:
            return label
    return -(-mib // 1024)


def mode_for_size(rows, gb: int):
    """The first (up to GB, mode) row that takes a card of `gb` sold GB (Requirements.vram_modes)."""
    for upto, mode in rows:
        if upto is None or gb <= upto:
            return mode
    return None


def check_vram(facts: dict, req: Requirements) -> CheckResult:
    name = "vram"
    if not req.needs_gpu:
        return CheckResult(name, SKIP, "this recipe needs no GPU on this host")
    gpus = facts["gpu"].get("gpus") or []
    if not gpus:
        return CheckResult(name, FAIL, "no GPU found", fix="see the driver check")
    best = max(gpus, key=lambda g: g.get("memory_total_mib") or 0)
    gb = sold_gb(best.get("memory_total_mib"))
    sizes = ", ".join(f"GPU {g['index']} {sold_gb(g.get('memory_total_mib'))} GB "
                      f"({g.get('memory_total_mib') or 0} MiB)" for g in gpus)
    if gb < req.min_vram_gib:
        return CheckResult(name, FAIL, f"largest GPU is a {gb} GB card; >= {req.min_vram_gib:g} GB needed ({sizes})",
                           fix="use a host with a larger GPU")
    if req.vram_modes:
        mode = mode_for_size(req.vram_modes, gb)
        best_mode = req.vram_modes[-1][1]
        if req.advised_vram_gib and gb < req.advised_vram_gib:
            return CheckResult(name, WARN, f"{mode.capitalize()} mode fits a {gb} GB card; {best_mode.capitalize()} "
                                           f"mode wants {req.advised_vram_gib:g} GB+ (tight at 24 GB) ({sizes})",
                               fix=f"run {mode.capitalize()} mode on this card, or use a {req.advised_vram_gib:g} GB+ "
                                   f"card for {best_mode.capitalize()}", value=mode)
        return CheckResult(name, PASS, f"{mode.capitalize()} mode on a {gb} GB card ({sizes})", value=mode)
    if req.advised_vram_gib and gb < req.advised_vram_gib:
        return CheckResult(name, WARN, f"a {gb} GB card is enough but tight; {req.advised_vram_gib:g} GB+ advised "
                                       f"({sizes})", value=gb)
    return CheckResult(name, PASS, f"{sizes} (>= {req.min_vram_gib:g} GB)", value=gb)


def free_gpus(facts: dict, min_vram_gib: float = 0.0) -> list[dict]:
    """The GPUs to use, best first: no compute process, then the most free memory, then the lowest index."""
    candidates = [g for g in facts["gpu"].get("gpus") or []
                  if not g.get("processes") and sold_gb(g.get("memory_total_mib")) >= min_vram_gib]
    return sorted(candidates, key=lambda g: (-(g.get("memory_free_mib") or 0), g["index"]))


def free_gpu(facts: dict, min_vram_gib: float = 0.0) -> dict | None:
    """The GPU preflight names as CUDA_VISIBLE_DEVICES; None when none is free."""
    best = free_gpus(facts, min_vram_gib)
    return best[0] if best else None


def check_free_gpu(facts: dict, req: Requirements) -> CheckResult:
    name = "free_gpu"
    if not req.needs_gpu:
        return CheckResult(name, SKIP, "this recipe needs no GPU on this host")
    gpus = facts["gpu"].get("gpus") or []
    if not gpus:
        return CheckResult(name, FAIL, "no GPU found")
    choice = free_gpu(facts, req.min_vram_gib)
    busy = [f"GPU {g['index']} (pid {', '.join(str(p['pid']) for p in g['processes'])})"
            for g in gpus if g.get("processes")]
    if choice is None:
        large = [g for g in gpus if sold_gb(g.get("memory_total_mib")) >= req.min_vram_gib]
        if not large:              # no process to stop would help: every card is below the guide's size
            return CheckResult(name, FAIL, f"no GPU is large enough: the largest is a "
                                           f"{max(sold_gb(g.get('memory_total_mib')) for g in gpus)} GB card; "
                                           f">= {req.min_vram_gib:g} GB needed",
                               fix="use a host with a larger GPU (see the vram check)")
        busy_large = [f"GPU {g['index']} (pid {', '.join(str(p['pid']) for p in g['processes'])})"
                      for g in large if g.get("processes")]
        return CheckResult(name, FAIL, f"every GPU of >= {req.min_vram_gib:g} GB is busy: {'; '.join(busy_large)}",
                           fix="stop the processes on one of them (nvidia-smi --query-compute-apps=pid,used_memory "
                               "--format=csv) or use another host")
    note = f"; busy: {'; '.join(busy)}" if busy else ""
    free_gib = (choice.get("memory_free_mib") or 0) / 1024
    return CheckResult(name, PASS, f"CUDA_VISIBLE_DEVICES={choice['index']} ({choice['name']}, "
                                   f"{free_gib:.1f} GiB free){note}", value=str(choice["index"]))


def check_disk(facts: dict, req: Requirements) -> CheckResult:
    name = "disk"
    wd = facts.get("workdir") or {}
    free = wd.get("free")
    if free is None:
        return CheckResult(name, FAIL, f"free space at {wd.get('path')} unknown: {wd.get('error', 'no reading')}")
    blocker = wd.get("disk_path")
    if not wd.get("exists") and blocker and (wd.get("disk_path_is_dir") is False or blocker == wd.get("path")):
        # the nearest existing path is no directory: nothing can be made under it, whatever the free space
        return CheckResult(name, FAIL, f"work dir {wd.get('path')}: {blocker} exists and is not a directory",
                           fix="point `workdir` in the inventory at a directory (or move that file away)")
    gib = free / GIB
    where = wd.get("path") if wd.get("exists") else f"{wd.get('path')} (not created yet; on {wd.get('disk_path')})"
    if gib < req.min_disk_gib:
        return CheckResult(name, FAIL, f"{gib:.1f} GiB free at {where}; >= {req.min_disk_gib:g} GiB needed",
                           fix="free space, or point `workdir` in the inventory at a larger disk", value=round(gib, 1))
    return CheckResult(name, PASS, f"{gib:.1f} GiB free at {where} (>= {req.min_disk_gib:g} GiB)", value=round(gib, 1))


def check_pythons(facts: dict, req: Requirements) -> list[CheckResult]:
    """Each env's interpreter by the same PythonRule the install plan follows, so the two cannot disagree."""
    results = []
    found = facts.get("pythons") or []
    have = ", ".join(p["version"] for p in found) or "none"
    for env, rule in req.pythons.items():
        rule = PythonRule.of(rule)
        name, want = f"python:{env}", rule.describe()
        pick = rule.pick(found)
        venvs = facts.get("venvs") or {}
        standing = venvs.get(env) or venvs.get("@/" + env)     # the env itself, made before (the probe's keys)
        if pick:
            results.append(CheckResult(name, PASS, f"{pick['version']} at {pick['path']} ({want})", value=pick["path"]))
        elif standing and rule.accepts(standing.get("python")):
            results.append(CheckResult(name, PASS, f"{env} already runs Python {standing.get('python')} ({want}); "
                                                   f"no interpreter needed", value=None))
        elif rule.managed and TOOLS_PYTHON.pick(found):
            results.append(CheckResult(name, WARN, f"no {want} on the host (found: {have}); inv install installs a "
                                                   f"managed CPython {rule.managed} with uv (no root; it lives in "
                                                   f"~/.local/share/uv/python)", value=None))
        else:
            how = (f"; uv, which would install {rule.managed}, needs a Python {TOOLS_PYTHON.spec} to run from"
                   if rule.managed else "")
            results.append(CheckResult(name, FAIL, f"{env} needs {want}; found {have}{how}",
                                       fix=f"install {rule.package()} (the distribution's package with its -venv, "
                                           f"the deadsnakes PPA, pyenv or uv)"))
    return results


def check_gcc13(facts: dict, req: Requirements) -> CheckResult:
    name = "gcc-13"
    if not req.needs_gcc13:
        return CheckResult(name, SKIP, "this recipe compiles nothing with gcc-13")
    comps = facts.get("compilers") or {}
    if comps.get("gcc-13") and comps.get("g++-13"):
        return CheckResult(name, PASS, f"gcc-13 {comps['gcc-13'].get('version') or ''}".strip())
    tools = facts.get("tools") or {}
    os_id = ((facts.get("host") or {}).get("os") or {}).get("id")
    can_sudo = facts.get("sudo_nopasswd")
    if tools.get("apt-get") and os_id == "ubuntu":
        how = "as root" if (facts["host"].get("uid") == 0) else ("with sudo" if can_sudo else "with sudo (asks a password)")
        return CheckResult(name, WARN if can_sudo else FAIL,
                           f"gcc-13/g++-13 missing; installable {how} from ppa:ubuntu-toolchain-r/test",
                           fix="inv install runs: add-apt-repository -y ppa:ubuntu-toolchain-r/test; apt-get install "
                               "-y gcc-13 g++-13 libdw-dev libelf-dev" + ("" if can_sudo else
                                                                          " (configure passwordless sudo first)"))
    if tools.get("apt-get"):
        return CheckResult(name, WARN if can_sudo else FAIL,
                           f"gcc-13/g++-13 missing; apt-get present on {os_id or 'this OS'} (the PPA is Ubuntu's)",
                           fix="apt-get install -y gcc-13 g++-13 where the distribution has it (Debian 13+), or "
                               "build on Ubuntu")
    return CheckResult(name, FAIL, "gcc-13/g++-13 missing and no apt-get to install them",
                       fix="install gcc-13 and g++-13 with the system's package manager")


def check_github(facts: dict, req: Requirements) -> CheckResult:
    name = "github"
    net = facts.get("network") or {}
    state = net.get("github", "unknown")
    if not req.needs_github:
        return CheckResult(name, SKIP, "this recipe fetches nothing from GitHub")
    if state == "reachable":
        return CheckResult(name, PASS, f"github.com:443 {net.get('detail', '')}".strip())
    fix = ("the vLLM compile will need the offline *_SRC_DIR variables pointing into an existing vLLM source's "
           ".deps, and CMAKE_ARGS=-DCUTLASS_ENABLE_TESTS=OFF (the MiniCPM-OCR guide, section 3.2, offline compilation)")
    if state == "unreachable":
        return CheckResult(name, WARN, f"github.com:443 unreachable ({net.get('detail')})", fix=fix)
    return CheckResult(name, SKIP, f"GitHub reachability unknown ({net.get('detail')})", fix=fix)


def check_no_proxy(facts: dict, req: Requirements) -> CheckResult:
    name = "no_proxy"
    proxy = facts.get("proxy") or {}
    if not (proxy.get("http_proxy") or proxy.get("https_proxy")):
        return CheckResult(name, PASS, "no proxy set")
    bypass = proxy.get("loopback_bypassed") or {}
    missing = [h for h, ok in bypass.items() if not ok]
    if missing:
        return CheckResult(name, WARN, f"a proxy is set but {', '.join(missing)} not in no_proxy: requests to the "
                                       f"local service would go through the proxy",
                           fix="export no_proxy=127.0.0.1,localhost,::1 (or set no_proxy in the inventory)")
    return CheckResult(name, PASS, "proxy set; loopback bypasses it")


def check_sources(facts: dict) -> CheckResult | None:
    """One HEAD from the host to each source the recipe downloads from (recipes/sources.py): slow or closed
    ones are warnings that name the var pointing at a mirror.  None when the probe was not asked."""
    name = "sources"
    src = facts.get("sources")
    if src is None:
        return None
    if src.get("skipped"):
        return CheckResult(name, SKIP, src["skipped"])
    holds = {"gpu": bool((facts.get("gpu") or {}).get("gpus")),
             "no-python3.12": not DEEPSEEK_PYTHON.pick(facts.get("pythons"))}
    rows = [r for r in src.get("results") or [] if not r.get("when") or holds.get(r["when"], True)]
    slow_after = src.get("slow_ms")
    bad = []
    for r in rows:
        if not r.get("reachable"):
            r["verdict"] = "closed"
        elif slow_after is not None and r.get("ms", 0) > slow_after:
            r["verdict"] = "slow"
        else:
            r["verdict"] = "ok"
        if r["verdict"] != "ok":
            bad.append(r)
    if not rows:
        return CheckResult(name, SKIP, "this recipe downloads from no network source", value=rows)
    if not bad:
        slowest = max(rows, key=lambda r: r.get("ms") or 0)
        return CheckResult(name, PASS, f"all {len(rows)} answer (slowest: {slowest['name']}, {slowest['ms']} ms)",
                           value=rows)
    what = "; ".join(f"{r['name']} {r['verdict']}" + (f" ({r['ms']} ms)" if r["verdict"] == "slow" else
                                                        f" ({r.get('error')})") for r in bad)
    fix = "; ".join(f"set {r['var']} ({r['advice']})" for r in bad)
    return CheckResult(name, WARN, f"{len(bad)} of {len(rows)} sources slow or closed: {what}", fix=fix, value=rows)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def check_verified(facts: dict, req: Requirements, host_vars: dict) -> list[CheckResult]:
    """The checkouts and the SDK against what the guide verified (Requirements.verified_*): the commit of each
    checkout as the facts read it from its .git (no git runs), the SDK's version as installed.  A difference is
    a warning: the procedure may still work, but nobody verified it there."""
    results = []
    heads = facts.get("git") or {}
    for var, what, commit in req.verified_commits:
        path, name = host_vars.get(var), f"commit:{var}"
        if not path or path not in heads:
            continue                      # not set, or not probed (facts recorded without it)
        head = heads[path] or {}
        have, ref = head.get("commit"), head.get("ref")
        on = f" ({ref.rsplit('/', 1)[-1]})" if ref else ""
        if not have:
            results.append(CheckResult(name, WARN, f"{what} at {path}: not a git checkout (or HEAD unreadable), so "
                                                   f"its commit is unknown; the guide verified {commit}",
                                       fix=f"use a clone of {what} checked out at {commit}"))
        elif have.lower().startswith(commit.lower()):
            results.append(CheckResult(name, PASS, f"{what} at {have[:12]}{on}: the commit the guide verified "
                                                   f"({commit})", value=have))
        else:
            results.append(CheckResult(name, WARN, f"{what} at {path} is at {have[:12]}{on}, not {commit}, the commit "
                                                   f"the guide verified: this stack was not verified with it",
                                       fix=f"git -C {path} checkout {commit} (or keep it, untested)", value=have))
    venvs = facts.get("venvs") or {}
    for env, dist_name, version in req.verified_dists:
        name = f"version:{dist_name}"
        dists = (venvs.get(env) or venvs.get("@/" + env) or {}).get("dists") or {}
        have = (dists.get(_norm(dist_name)) or {}).get("version")
        if have is None:
            results.append(CheckResult(name, SKIP, f"{dist_name} not in {env} yet; the guide verified {version}"))
        elif have == version:
            results.append(CheckResult(name, PASS, f"{dist_name} {have} in {env}: the version the guide verified",
                                       value=have))
        else:
            results.append(CheckResult(name, WARN, f"{dist_name} {have} in {env}, not {version}, the version the "
                                                   f"guide verified: this stack was not verified with it",
                                       fix=f"check out the SDK release {version} in sdk_repo (sdk_commit)",
                                       value=have))
    return results


# inventory var naming the user's own venv -> the recipe envs it stands in for
USER_ENVS = {"vllm_env": ("vllm-ocr-env", "ocr-env"), "tf_env": ("tf-ocr-env",)}
# ... and the checkouts nothing is built from then
USER_ENV_SOURCES = {"vllm_env": ("vllm_src", "transformers_src"), "tf_env": ("transformers_src",)}


def with_user_envs(req: Requirements, host_vars: dict) -> tuple[Requirements, list[CheckResult]]:
    """vllm_env / tf_env name a venv the user already has: its Python is theirs, and nothing of it is
    built here (so no gcc-13 or GitHub for a vLLM compile); say so instead of checking."""
    said, pythons, compiles, applied = [], dict(req.pythons), True, set()
    for var, envs in USER_ENVS.items():
        path = host_vars.get(var)
        for env in envs:
            if path and env in pythons:
                del pythons[env]
                said.append(CheckResult(f"python:{env}", SKIP, f"{var} is set: {path} is your own env "
                                        f"(preflight and install leave it alone)"))
                compiles = compiles and var != "vllm_env"
                applied.add(var)
    if not said:
        return req, []
    unused = {src for var in applied for src in USER_ENV_SOURCES[var]}
    return replace(req, pythons=pythons, needs_gcc13=req.needs_gcc13 and compiles,
                   needs_github=req.needs_github and compiles,
                   verified_commits=tuple(c for c in req.verified_commits if c[0] not in unused)), said


def run_preflight_checks(facts: dict, req: Requirements, host_vars: dict | None = None) -> list[CheckResult]:
    req, said = with_user_envs(req, host_vars or {})
    return said + [
        check_driver(facts, req),
        check_vram(facts, req),
        check_free_gpu(facts, req),
        check_disk(facts, req),
        *check_pythons(facts, req),
        check_gcc13(facts, req),
        check_github(facts, req),
        check_no_proxy(facts, req),
        *([sources] if (sources := check_sources(facts)) else []),
        *check_verified(facts, req, host_vars or {}),
    ]


def probe_git(req: Requirements, host_vars: dict) -> list[str]:
    """The checkouts whose commit the facts must carry for check_verified (the probe reads their .git)."""
    return [host_vars[var] for var, _, _ in req.verified_commits if host_vars.get(var)]
