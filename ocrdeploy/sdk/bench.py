"""The load and the scoring behind `inv bench`: pages per minute at a stated accuracy.

Why our own request loop (httpx, asyncio) and not an established load generator:
- GuideLLM 0.8.1 decodes every image and re-saves it as JPEG (guidellm/utils/vision.py: `save(buffer,
  format="JPEG")`), so the page the server reads is not the page on disk (read 2026-12-01).
- AIPerf 0.13.0 opens each image with PIL and encodes it again (aiperf/dataset/loader/mixins.py).
- `vllm bench serve` (vLLM 0.32, read in its source 2026-12-02) could send the pages as the SDK does:
  custom_image data URLs pass unchanged, --extra-body carries the backend body, --save-detailed keeps the
  answers.  It needs a vLLM (torch) install where it runs, which the controller and SDK-only hosts lack;
  driving it from the host's vLLM env is the open alternative.  We keep its names (TTFT, TPOT, E2EL,
  p50/p95/p99) so figures compare.
The accuracy is ours in any case: the content checks `inv verify` applies (sdk/driver.py), as shares.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import re
import resource
import threading
import time
from dataclasses import dataclass

import httpx

from ..services.argv import MM_PROCESSOR_KWARGS, SERVED_NAME
from ..services.control import accept_length
from . import driver
from .client import content_text
from .inflate import ACCEPT, adecoded, decoded
from .pages import Page

# What the pages are asked; the SDK's own prompt is not published, so the bench says which one it sent.
PROMPT = "Convert the document to markdown."
# Published throughput figures to put beside a run's, each with where it was said.
REFERENCES = [
    {"model": "MiniCPM-OCR-1.0", "figure": "1.2 pages/s (72 pages/min)", "pages_per_min": 72.0,
     "setting": "the model card's throughput comparison of open-source OCR models (GPU not stated there)",
     "source": "MiniCPM-OCR-1.0 model card, 'SOTA quality at higher throughput' (huggingface.co, the card's "
               "text as mirrored at huggingface.co/TechnoBaptist/MiniCPM-OCR-1.0; read 2026-12-02)"},
    {"model": "MiniCPM-OCR-1.0", "figure": "+55% end-to-end with DSpark (72 x 1.55 = about 112 pages/min, our "
                                           "arithmetic)", "pages_per_min": 111.6,
     "setting": "vLLM with the DSpark draft",
     "source": "huggingface.co/openbmb/MiniCPM-OCR-1.0-DSpark and OpenBMB/MiniCPM-OCR "
               "docs/minicpm_ocr_1dot0_en.md: 'improves end-to-end processing efficiency by 55%'"},
]


def extra_body(backend: str | None) -> dict:
    """What the SDK's backend config adds to each request: vllm.yaml the per-request mm_processor_kwargs,
    openai.yaml thinking off (the guide's engine.extra_body), llamacpp.yaml nothing."""
    config = driver.CONFIG_FOR.get(backend or "")
    if config == "vllm.yaml":
        return {"mm_processor_kwargs": dict(MM_PROCESSOR_KWARGS)}
    if config == "openai.yaml":
        return json.loads(driver.NO_THINKING)
    return {}


def request_body(page: Page, *, model: str = SERVED_NAME, prompt: str = PROMPT, max_tokens: int = 1024,
                 extra: dict | None = None) -> dict:
    """The chat request the SDK sends for one page: the image as on disk, base64 in an image_url data URL,
    then the prompt; streamed so the first token is seen, with usage in the last chunk."""
    url = f"data:{page.mime};base64,{base64.b64encode(page.image).decode()}"
    body = {"model": model, "max_tokens": max_tokens, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                                      {"type": "text", "text": prompt}]}]}
    body.update(extra or {})
    return body


# ---------------------------------------------------------------- accuracy

_TAG = re.compile(r"<[^>]+>")


def _html(md: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table").render(md)


def score(page: Page, answer: str) -> dict:
    """{accuracy (0-1 or None), checks [{check, passed, detail}]} for one answer.

    The project's pages: verify's checks (driver.check_output), the accuracy being the share its content
    check measures (words recalled, cells found, formula tokens in place).  A user page with a truth file:
    the same three measures against the truth (words always; cells where the truth has a table; formula
    tokens where it has math), averaged.  Without truth: None, said."""
    if page.kind in driver.CONTENT:
        checks = [{"check": c, "passed": ok, "detail": d} for c, ok, d in driver.check_output(answer, page.kind)]
        if page.kind == "text":
            acc = driver.word_recall(answer, " ".join(driver.samples.TEXT))[0]
        elif page.kind == "table":
            acc = driver.cell_recall(answer, [c for row in driver.samples.TABLE for c in row])[0]
        else:
            acc = driver.formula_parts(answer)["score"]
        return {"accuracy": acc, "checks": checks}
    if page.truth is None:
        return {"accuracy": None, "checks": [{"check": "ground truth", "passed": None,
                                              "detail": "no .md beside the page: timed, not scored"}]}
    truth_html, answer_html = _html(page.truth), _html(answer)
    parts, checks = [], []
    share, missing, n = driver.word_recall(_TAG.sub(" ", answer_html), _TAG.sub(" ", truth_html))
    parts.append(share)
    checks.append({"check": "words recalled", "passed": share >= driver.TEXT_RECALL_MIN,
                   "detail": f"{share:.0%} of {n} words" + (f"; missing {driver._missing(missing)}" if missing
                                                            else "")})
    cells = driver.html_cells(truth_html)
    if cells:
        share, missing = driver.cell_recall(answer_html, cells)
        parts.append(share)
        checks.append({"check": "table cells", "passed": share >= driver.TABLE_CELLS_MIN,
                       "detail": f"{len(cells) - len(missing)} of {len(cells)} cells" + (
                           f"; missing {driver._missing(missing)}" if missing else "")})
    tokens = driver.tex_tokens(driver.math_tex(page.truth))
    if tokens:
        share, missing = driver.recalled(tokens, set(driver.tex_tokens(driver.math_tex(answer))))
        parts.append(share)
        checks.append({"check": "formula tokens", "passed": share >= driver.FORMULA_TOKENS_MIN,
                       "detail": f"{len(tokens) - len(missing)} of {len(tokens)} tokens" + (
                           f"; missing {driver._missing(missing)}" if missing else "")})
    return {"accuracy": sum(parts) / len(parts), "checks": checks}


# ---------------------------------------------------------------- one request

@dataclass
class Outcome:
    page: str
    ok: bool
    start: float
    end: float
    ttft: float | None = None
    output_tokens: int | None = None
    tokens_from: str | None = None    # "usage" (the server's count) or "chunks" (a lower bound)
    text: str = ""
    error_kind: str | None = None
    error: str | None = None
    score: dict | None = None
    timing: dict | None = None        # --through sdk: the stages the SDK timed, in seconds, where it printed them


# The most of one answer read: 1024 output tokens streamed are some 200 KiB; an error page is cut shorter.
ANSWER_MAX = 4 * 2**20
ERROR_MAX = 64 * 2**10


class _Malformed(ValueError):
    """An answer no OpenAI-compatible server sends: one request's error, never the run's traceback."""


async def _lines(r, limit: int):
    """The answer's lines, from at most `limit` bytes: a server that never ends a line or the stream is cut."""
    buf, seen = b"", 0
    async for part in adecoded(r.aiter_raw(), r.headers.get("content-encoding")):
        seen += len(part)
        if seen > limit:
            raise _Malformed(f"answer longer than {limit // 2**20} MiB")
        buf += part
        *done, buf = buf.split(b"\n")
        for line in done:
            yield line.rstrip(b"\r").decode("utf-8", "replace")
    if buf:
        yield buf.decode("utf-8", "replace")


async def _read(r, limit: int, cut: bool = False) -> str:
    """The whole body up to `limit` bytes; beyond it an error, or (cut) the first `limit` bytes."""
    out, seen = [], 0
    async for part in adecoded(r.aiter_raw(), r.headers.get("content-encoding")):
        seen += len(part)
        out.append(part)
        if seen > limit:
            if cut:
                break
            raise _Malformed(f"answer longer than {limit // 2**20} MiB")
    return b"".join(out)[:limit].decode("utf-8", "replace")


def _obj(value, what: str) -> dict:
    if not isinstance(value, dict):
        raise _Malformed(f"{what} is not a JSON object: {str(value)[:80]}")
    return value


def _count(usage) -> int | None:
    """completion_tokens where it is a count, else None (the chunks are counted then)."""
    n = _obj(usage or {}, "usage").get("completion_tokens")
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None


def _timeout_text(exc: Exception, limits: httpx.Timeout) -> str:
    """httpx's timeouts often carry no message of their own: the report's example then says which wait ran out and
    after how long, not a bare "timeout"."""
    phase = {httpx.ConnectTimeout: "connect", httpx.WriteTimeout: "write", httpx.PoolTimeout: "pool"}.get(type(exc), "read")
    limit = getattr(limits, phase, None)
    return f"{type(exc).__name__}: no {phase} within {limit:g} s" if limit else type(exc).__name__


async def send(client: httpx.AsyncClient, body: dict, page: str) -> Outcome:
    """One streamed chat completion, timed: TTFT at the first content, E2EL at the end of the stream."""
    start = time.perf_counter()
    ttft, text, chunks, usage = None, [], 0, None
    try:
        async with client.stream("POST", "/v1/chat/completions", json=body) as r:
            if r.status_code >= 400:
                raw = await _read(r, ERROR_MAX, cut=True)
                try:
                    err = json.loads(raw).get("error")
                    message = err.get("message") if isinstance(err, dict) else (err or raw)
                except (ValueError, AttributeError):
                    message = raw
                return Outcome(page, False, start, time.perf_counter(), error_kind=f"HTTP {r.status_code}",
                               error=str(message or r.reason_phrase)[:300])
            if r.headers.get("content-type", "").startswith("application/json"):
                # a server that does not stream (the body's "stream" ignored): timed whole, no TTFT
                data = _obj(json.loads(await _read(r, ANSWER_MAX)), "the answer")
                choice = _obj((data.get("choices") or [{}])[0], "a choice")
                message = _obj(choice.get("message") or {}, "a message")
                text = (content_text(message.get("content"), "the message's content")
                        or content_text(choice.get("text"), "the choice's text"))
                tokens = _count(data.get("usage"))
                return Outcome(page, True, start, time.perf_counter(), None, tokens, "usage" if tokens is not None
                               else None, text)
            async for line in _lines(r, ANSWER_MAX):
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                chunk = _obj(json.loads(data), "a stream chunk")
                if chunk.get("error"):
                    err = chunk["error"]
                    return Outcome(page, False, start, time.perf_counter(), ttft, error_kind="error in stream",
                                   error=str(err.get("message") if isinstance(err, dict) else err)[:300])
                if chunk.get("usage"):
                    usage = _obj(chunk["usage"], "usage")
                for choice in chunk.get("choices") or []:
                    delta = _obj(_obj(choice, "a choice").get("delta") or {}, "a delta")
                    piece = content_text(delta.get("content"), "a delta's content")
                    if piece or delta.get("reasoning_content"):
                        if ttft is None:
                            ttft = time.perf_counter() - start
                        chunks += 1
                    text.append(piece)
    except httpx.TimeoutException as exc:
        return Outcome(page, False, start, time.perf_counter(), ttft, error_kind="timeout",
                       error=str(exc) or _timeout_text(exc, client.timeout))
    except httpx.HTTPError as exc:
        return Outcome(page, False, start, time.perf_counter(), ttft, error_kind="connection",
                       error=f"{type(exc).__name__}: {exc}"[:300])
    except (ValueError, TypeError, IndexError, KeyError) as exc:    # _Malformed too
        return Outcome(page, False, start, time.perf_counter(), ttft, error_kind="not an OpenAI stream",
                       error=str(exc)[:300])
    end = time.perf_counter()
    tokens = _count(usage)
    return Outcome(page, True, start, end, ttft, tokens if tokens is not None else chunks,
                   "usage" if tokens is not None else "chunks", "".join(text))


# ---------------------------------------------------------------- server and host readings

def _samples(text: str | None, name: str) -> float | None:
    if not text:
        return None
    from prometheus_client.parser import text_string_to_metric_families

    total = None
    try:
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                if s.name == name:
                    total = (total or 0.0) + s.value
    except ValueError:
        return None
    return total


def spec_delta(before: str | None, after: str | None) -> dict:
    """The accept length over a stretch of load: 1 + d(accepted) / d(drafts) from two scrapes of /metrics.
    The counters are totals since the server started; only their growth belongs to this run."""
    b, a = accept_length(before), accept_length(after)
    if "drafts" not in a or "drafts" not in b:
        return {"accept_length": None, "why": a.get("state") if "drafts" not in a else b.get("state")}
    drafts, accepted = a["drafts"] - b["drafts"], a["accepted"] - b["accepted"]
    if drafts <= 0:
        return {"accept_length": None, "drafts": drafts, "accepted": accepted, "why": "no drafts during the run"}
    return {"accept_length": round(1 + accepted / drafts, 3), "drafts": drafts, "accepted": accepted}


class Sampler:
    """Reads, every `every` seconds while a level runs, what the server and this machine say about the load:
    vLLM's vllm:num_requests_running (requests the engine is really running at once) and, where NVML
    answers, the GPUs' utilisation and memory."""

    def __init__(self, metrics, nvml: bool, every: float = 0.2):
        self.metrics, self.nvml, self.every = metrics, nvml, every
        self.running: list[float] = []
        self.gpu: list[tuple[float, float]] = []
        self.gpu_note = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self):
        handles = self._nvml_handles() if self.nvml else []
        while True:
            if self.metrics:
                v = _samples(self.metrics(), "vllm:num_requests_running")
                if v is not None:
                    self.running.append(v)
            for h in handles:
                import pynvml

                try:
                    u = pynvml.nvmlDeviceGetUtilizationRates(h)
                    m = pynvml.nvmlDeviceGetMemoryInfo(h)
                    self.gpu.append((float(u.gpu), m.used / 2**20))
                except pynvml.NVMLError as exc:
                    self.gpu_note = f"NVML: {exc}"
            if self._stop.wait(self.every):
                return

    def _nvml_handles(self):
        try:
            import pynvml

            pynvml.nvmlInit()
            return [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        except Exception as exc:  # noqa: BLE001 - no driver, no library: no GPU figures, said
            self.gpu_note = f"no NVML on this machine ({type(exc).__name__})"
            return []

    def gpu_figures(self) -> dict | None:
        figures = gpu_figures({0: self.gpu}) if self.gpu else None
        if figures:
            figures.pop("per_gpu")
            figures["source"] = "NVML on this machine"
        return figures


def parse_dmon(text: str) -> dict:
    """{gpu index: [(sm %, fb MiB), ...]} from `nvidia-smi dmon -s um` output.  The columns are found by the
    names in its `# gpu ...` header (drivers differ: R525+ add jpg, ofa, ccpm), which dmon prints again every
    so many lines; a value dmon cannot read is `-` and is left out; any other line is not a sample."""
    cols, out = None, {}
    for line in text.splitlines():
        if line.startswith("#"):
            names = line[1:].split()
            if names and names[0].lower() == "gpu":
                cols = [n.lower() for n in names]
            continue
        parts = line.split()
        if not cols or len(parts) != len(cols) or "sm" not in cols or not parts[0].isdigit():
            continue
        row = dict(zip(cols, parts))

        def num(name):
            try:
                return float(row[name])
            except (KeyError, ValueError):
                return None

        out.setdefault(int(parts[0]), []).append((num("sm"), num("fb")))
    return out


def gpu_figures(samples: dict) -> dict | None:
    """The level's GPU figures from {gpu: [(util %, memory MiB)]}: utilisation mean and max over every GPU's
    samples, the most memory any one GPU held, and the same per GPU."""
    util = [u for rows in samples.values() for u, _ in rows if u is not None]
    mem = [m for rows in samples.values() for _, m in rows if m is not None]
    if not util and not mem:
        return None
    per = {}
    for gpu, rows in sorted(samples.items()):
        u = [x for x, _ in rows if x is not None]
        m = [x for _, x in rows if x is not None]
        per[str(gpu)] = {"util_mean_pct": round(sum(u) / len(u), 1) if u else None,
                         "memory_max_mib": round(max(m)) if m else None, "samples": len(rows)}
    return {"util_mean_pct": round(sum(util) / len(util), 1) if util else None,
            "util_max_pct": max(util) if util else None, "memory_max_mib": round(max(mem)) if mem else None,
            "per_gpu": per}


class HostGpu:
    """The server host's GPUs during one level, read by `nvidia-smi dmon -s um -d 1` started there in the
    background (over the connection the bench already holds) before the level and stopped after it.
    A host without nvidia-smi, or where it fails, gives no figures and says why."""

    START = ('command -v nvidia-smi >/dev/null 2>&1 || { echo "none"; exit 0; }; f=$(mktemp); '
             'setsid nvidia-smi dmon -s um -d 1 >"$f" 2>&1 </dev/null & echo "$! $f"')
    STOP = 'kill "$1" 2>/dev/null; cat "$2"; rm -f "$2"'

    def __init__(self, conn, where: str):
        self.conn, self.where = conn, where
        self.pid = self.file = None
        self.note = None

    def start(self):
        self.pid = self.file = self.note = None
        r = self.conn.run(["sh", "-c", self.START], ok_codes=range(0, 256), timeout=60)
        word = (r.stdout or "").split()
        if r.exit_code != 0 or not word:
            self.note = f"nvidia-smi dmon could not start on {self.where} (exit {r.exit_code})"
        elif word == ["none"]:
            self.note = f"no nvidia-smi on {self.where}: no GPU readings"
        else:
            self.pid, self.file = word[0], word[-1]

    def stop(self) -> dict | None:
        if not self.pid:
            return None
        r = self.conn.run(["sh", "-c", self.STOP, "sh", self.pid, self.file], ok_codes=range(0, 256), timeout=60)
        figures = gpu_figures(parse_dmon(r.stdout or ""))
        if figures is None:
            said = " ".join((r.stdout or "").split())[:160]
            self.note = f"nvidia-smi dmon on {self.where} gave no readings" + (f": {said}" if said else "")
        else:
            figures["source"] = f"nvidia-smi dmon on {self.where}"
        return figures


# ---------------------------------------------------------------- a level and a run

def percentiles(values: list[float]) -> dict:
    """p50/p95/p99 by linear interpolation (numpy's default, what vllm bench serve reports), in ms."""
    if not values:
        return {"p50": None, "p95": None, "p99": None}
    v = sorted(values)

    def at(q):
        pos = (len(v) - 1) * q
        lo, hi = math.floor(pos), math.ceil(pos)
        return v[lo] + (v[hi] - v[lo]) * (pos - lo)

    return {f"p{int(q * 100)}": round(at(q) * 1000, 2) for q in (0.5, 0.95, 0.99)}


async def _level(base_url, bodies, concurrency, *, requests=None, duration=None, headers=None,
                 timeout=600.0):
    """Up to `concurrency` requests in flight, from the bodies in turn, until `requests` were sent or
    `duration` seconds passed (those in flight then finish and count)."""
    outcomes: list[Outcome] = []
    state = {"next": 0, "in_flight": 0, "max_in_flight": 0}
    limits = httpx.Limits(max_connections=concurrency + 1, max_keepalive_connections=concurrency + 1)
    async with httpx.AsyncClient(base_url=base_url, headers={"Accept-Encoding": ACCEPT, **(headers or {})}, timeout=timeout, trust_env=False,
                                 limits=limits) as client:
        start = time.perf_counter()
        deadline = start + duration if duration else None

        async def worker():
            while True:
                i = state["next"]
                if requests is not None and i >= requests:
                    return
                if deadline is not None and time.perf_counter() >= deadline:
                    return
                state["next"] = i + 1
                name, body = bodies[i % len(bodies)]
                state["in_flight"] += 1
                state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
                try:
                    outcomes.append(await send(client, body, name))
                finally:
                    state["in_flight"] -= 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - start
    return outcomes, wall, state["max_in_flight"]


def run_calls(call, pages: list[Page], concurrency: int, *, requests=None, duration=None):
    """Up to `concurrency` blocking calls of call(page) -> Outcome in flight (threads: each call is a
    process on the host, `minicpmvocr parse`), pages in turn, until `requests` were made or `duration`
    seconds passed; (outcomes, wall seconds, most in flight), as the API loop gives."""
    from concurrent.futures import ThreadPoolExecutor

    lock = threading.Lock()
    state = {"next": 0, "in_flight": 0, "max_in_flight": 0}
    outcomes: list[Outcome] = []
    start = time.perf_counter()
    deadline = start + duration if duration else None

    def worker():
        while True:
            with lock:
                i = state["next"]
                if (requests is not None and i >= requests) or (deadline is not None and time.perf_counter() >= deadline):
                    return
                state["next"] = i + 1
                state["in_flight"] += 1
                state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
            try:
                o = call(pages[i % len(pages)])
            finally:
                with lock:
                    state["in_flight"] -= 1
            with lock:
                outcomes.append(o)

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for f in [pool.submit(worker) for _ in range(concurrency)]:
            f.result()
    return outcomes, time.perf_counter() - start, state["max_in_flight"]


_STAGE = re.compile(r"(?im)^\W*([a-z][a-z _/-]{1,30}?)\s*(?:time)?\s*[:=]\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s)\b")


def sdk_timing(output: str) -> dict | None:
    """The SDK's own timing split from what `minicpmvocr parse` printed: lines `<stage>: <n> s` or `... ms`
    (the SDK's log format is not published; a stage it does not print this way is not invented), in seconds."""
    out = {}
    for stage, value, unit in _STAGE.findall(output or ""):
        out[" ".join(stage.lower().split())] = round(float(value) / (1000 if unit.lower() == "ms" else 1), 4)
    return out or None


def _timing_medians(outcomes) -> dict | None:
    stages: dict[str, list] = {}
    for o in outcomes:
        for k, v in (o.timing or {}).items():
            stages.setdefault(k, []).append(v)
    return {k: round(sorted(v)[len(v) // 2], 4) for k, v in stages.items()} or None


def run_level(base_url, pages: list[Page], bodies, concurrency: int, *, requests=None, duration=None,
              headers=None, metrics=None, nvml=False, timeout=600.0, host_gpu=None, load=None) -> dict:
    """One concurrency level, measured: the figures of the --json document's `levels` entry, and each
    succeeded answer scored.  `load()` -> (outcomes, wall, most in flight) replaces the API requests
    (--through sdk); `host_gpu` (HostGpu) reads the server host's GPUs instead of this machine's NVML."""
    by_name = {p.name: p for p in pages}
    before = metrics() if metrics else None
    if host_gpu:
        host_gpu.start()
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    with Sampler(metrics, nvml and not host_gpu) as sampler:
        if load:
            outcomes, wall, max_in_flight = load()
        else:
            outcomes, wall, max_in_flight = asyncio.run(_level(base_url, bodies, concurrency,
                                                               requests=requests, duration=duration,
                                                               headers=headers, timeout=timeout))
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    after = metrics() if metrics else None
    gpu = host_gpu.stop() if host_gpu else sampler.gpu_figures()
    if host_gpu:
        gpu_note = None if gpu else host_gpu.note
    else:
        gpu_note = None if gpu else (sampler.gpu_note or ("not sampled: the server is not on this machine"
                                                          if not nvml else "no GPU readings"))
    good = [o for o in outcomes if o.ok]
    scored = []
    answers = {}
    for o in good:
        s = score(by_name[o.page], o.text)
        o.score = s
        if s["accuracy"] is not None:
            scored.append(s["accuracy"])
        answers.setdefault(o.page, {"answer": o.text, **s})
    errors: dict[str, int] = {}
    examples: dict[str, str] = {}
    for o in outcomes:
        if not o.ok:
            errors[o.error_kind] = errors.get(o.error_kind, 0) + 1
            examples.setdefault(o.error_kind, o.error)
    tokens = sum(o.output_tokens or 0 for o in good)
    tpot = [(o.end - o.start - o.ttft) / (o.output_tokens - 1) for o in good
            if o.ttft is not None and (o.output_tokens or 0) > 1]
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    spec = spec_delta(before, after) if metrics else {"accept_length": None, "why": "no /metrics read"}
    return {
        "concurrency": concurrency,
        "requests": len(outcomes),
        "pages": len(good),
        "errors": len(outcomes) - len(good),
        "errors_by_kind": errors,
        "error_examples": examples,
        "wall_s": round(wall, 3),
        "pages_per_min": round(len(good) / wall * 60, 3) if wall > 0 else 0.0,
        "output_tokens": tokens,
        # the SDK's runs say no token counts: null there, not 0
        "output_tokens_per_s": None if load else (round(tokens / wall, 3) if wall > 0 else 0.0),
        "tokens_from": sorted({o.tokens_from for o in good if o.tokens_from}),
        "ttft_ms": percentiles([o.ttft for o in good if o.ttft is not None]),
        "tpot_ms": percentiles(tpot),
        "e2el_ms": percentiles([o.end - o.start for o in good]),
        "accuracy": round(sum(scored) / len(scored), 4) if scored else None,
        "scored_pages": len(scored),
        "accept_length": spec.get("accept_length"),
        "spec_decode": spec,
        "client_in_flight_max": max_in_flight,
        "server_running_max": max(sampler.running) if sampler.running else None,
        "gpu": gpu,
        "gpu_note": gpu_note,
        "sdk_timing_s": _timing_medians(good) if load else None,
        "controller_cpu_s": round(cpu, 3),
        "controller_cpu_share": round(cpu / wall, 3) if wall > 0 else None,
        "answers": answers,
    }


def verdict(levels: list[dict], min_accuracy: float) -> dict:
    """The best pages/min among the levels whose accuracy holds the floor, and where throughput stops
    growing: the first level that no later level beats by 10% or more (None while the last one still does)."""
    holding = [lv for lv in levels if lv["accuracy"] is not None and lv["accuracy"] >= min_accuracy and lv["pages"]]
    best = max(holding, key=lambda lv: lv["pages_per_min"]) if holding else None
    knee = None
    for i, lv in enumerate(levels[:-1]):
        if max(later["pages_per_min"] for later in levels[i + 1:]) < lv["pages_per_min"] * 1.10:
            knee = lv["concurrency"]
            break
    out = {"concurrency": best["concurrency"] if best else None,
           "pages_per_min": best["pages_per_min"] if best else None,
           "accuracy": best["accuracy"] if best else None,
           "min_accuracy": min_accuracy, "passed": best is not None, "throughput_stops_growing_at": knee}
    if best:
        out["line"] = (f"{best['pages_per_min']:.1f} pages/min at >= {min_accuracy:.0%} accuracy "
                       f"(measured {best['accuracy']:.1%}) at concurrency {best['concurrency']}")
    else:
        accs = [lv["accuracy"] for lv in levels if lv["accuracy"] is not None]
        out["line"] = (f"no level holds {min_accuracy:.0%} accuracy" +
                       (f" (best {max(accs):.1%})" if accs else " (nothing could be scored)"))
    return out


def compare_baseline(doc: dict, base: dict, tolerance: float) -> list[str]:
    """Why this run is worse than the baseline document: pages/min down more than `tolerance` (a share),
    or accuracy under the floor."""
    problems = []
    now, then = doc["verdict"], base.get("verdict") or {}
    if then.get("pages_per_min"):
        drop = 1 - (now.get("pages_per_min") or 0) / then["pages_per_min"]
        if drop > tolerance:
            problems.append(f"pages/min {now.get('pages_per_min')} is {drop:.0%} under the baseline's "
                            f"{then['pages_per_min']} (tolerance {tolerance:.0%})")
    if not now.get("passed"):
        problems.append(f"accuracy under the floor {now['min_accuracy']:.0%}")
    return problems


METRICS_MAX = 16 * 2**20     # vLLM's /metrics, histograms and all, is some hundreds of KiB


def metrics_reader(base_url: str, headers: dict | None = None):
    """A function returning the server's /metrics text, or None where it has none (transformers serve) or
    sends more than METRICS_MAX; its close() ends the connection."""
    client = httpx.Client(base_url=base_url, headers={"Accept-Encoding": ACCEPT, **(headers or {})}, timeout=30, trust_env=False)

    def read():
        try:
            with client.stream("GET", "/metrics") as r:
                if r.status_code != 200:
                    return None
                out, seen = [], 0
                for part in decoded(r.iter_raw(), r.headers.get("content-encoding")):
                    seen += len(part)
                    if seen > METRICS_MAX:
                        return None
                    out.append(part)
        except httpx.HTTPError:
            return None
        return b"".join(out).decode("utf-8", "replace")

    read.close = client.close
    return read


def run(base_url: str, pages: list[Page], *, levels=(1, 2, 4, 8), requests=None, duration=None, warmup=1,
        model=SERVED_NAME, backend=None, prompt=PROMPT, max_tokens=1024, api_key=None, min_accuracy=0.85,
        nvml=None, timeout=600.0, body=None, host_gpu=None, sdk_call=None) -> dict:
    """The whole bench: a warm-up, then each level; the document `inv bench --json` prints.
    `body(page)` replaces the SDK-shaped request (a test's text-only request to a text-only model).
    `sdk_call(page)` -> Outcome: --through sdk, one `minicpmvocr parse` per page on the host (base_url is
    then only where /metrics is read).  `host_gpu`: the server host's GPUs by nvidia-smi dmon."""
    from urllib.parse import urlsplit

    if nvml is None:                 # this machine's GPUs are the server's only when the server is here
        nvml = urlsplit(base_url).hostname in ("127.0.0.1", "localhost", "::1")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    extra = extra_body(backend)
    make = body or (lambda p: request_body(p, model=model, prompt=prompt, max_tokens=max_tokens, extra=extra))
    bodies = [(p.name, make(p)) for p in pages]
    metrics = metrics_reader(base_url, headers)
    try:
        has_metrics = metrics() is not None
        warm = None
        if warmup:
            warm = (run_calls(sdk_call, pages, 1, requests=warmup) if sdk_call else
                    asyncio.run(_level(base_url, bodies, 1, requests=warmup, headers=headers, timeout=timeout)))
        results = []
        for c in levels:
            n = requests if requests is not None or duration else max(len(pages), 4 * c)
            load = (lambda c=c, n=n: run_calls(sdk_call, pages, c, requests=n, duration=duration)) if sdk_call \
                else None
            results.append(run_level(base_url, pages, bodies, c, requests=n, duration=duration, headers=headers,
                                     metrics=metrics if has_metrics else None, nvml=nvml, timeout=timeout,
                                     host_gpu=host_gpu, load=load))
    finally:
        metrics.close()
    doc = {"server": base_url, "model": model, "backend": backend, "prompt": None if sdk_call else prompt,
           "extra_body": extra, "through": "sdk" if sdk_call else "api",
           "warmup": {"requests": warmup, "errors": sum(1 for o in warm[0] if not o.ok) if warm else 0},
           "pages": [{"name": p.name, "kind": p.kind, "source": p.source, "mime": p.mime, "bytes": len(p.image),
                      "scored": p.kind != "user" or p.truth is not None} for p in pages],
           "levels": results, "verdict": verdict(results, min_accuracy),
           # published figures are MiniCPM-OCR's: beside another model's run they would mislead
           "references": REFERENCES if "minicpm-ocr" in str(model).lower() else []}
    return doc
