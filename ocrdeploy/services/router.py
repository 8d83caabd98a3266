"""vLLM's router (the `vllm-router` package) in front of the instances `inv serve` starts: its venv, its
argv, its worker API, the drain wait on the engine's own counters, and the rolling order.

The router is not ours: it balances, health-checks, retries and breaks circuits.  What it does not do
is what a deploy tool must: let a worker in only once it can serve (ready AND answered a smoke request,
Kubernetes' readiness gate), take one out before it stops, and wait until the engine itself says it
holds no request (vllm:num_requests_running and vllm:num_requests_waiting at 0) -- the check neither
Ansible's load-balancer pattern nor a Deployment's maxUnavailable makes.  A rolling restart is Ansible's
`serial:` with a stop at the first failure: out, drain, stop, start, ready + smoke, back in, next.

Every call reaches the router and the workers from the host itself (services.control.request), so a
router bound to 127.0.0.1 on a remote host needs no tunnel for its own management.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from . import control
from ..provision.command import Command

PIN = "vllm-router==0.1.17"
ENV = "router-env"                 # under the workdir, beside vllm-ocr-env
EXE = "vllm-router"
DEFAULT_PORT = 18490
POLICY = "round_robin"             # the DSpark form serves one request at a time: spread them evenly
POLICIES = ("round_robin", "random", "power_of_two", "cache_aware")
HEALTH_INTERVAL_S = 5              # the router's defaults (60 s, 3 failures) leave a dead worker in for minutes
HEALTH_FAILURES = 2
RECORDS = ".ocrdeploy/router"      # its record lives apart, so verify/parse/status never take it for an engine
DRAIN_TIMEOUT_S = 600.0
IN_FLIGHT = ("vllm:num_requests_running", "vllm:num_requests_waiting")


def name_for(port: int) -> str:
    return f"vllm-router-{port}"


def is_router_name(name) -> bool:
    return isinstance(name, str) and name.startswith("vllm-router-") and name[12:].isdigit()


def records_dir(workdir: str) -> str:
    """hostside keeps records under <dir>/.ocrdeploy/services; the router's <dir> is this one."""
    return f"{workdir}/{RECORDS}"


def argv(exe: str, port: int, bind: str = "127.0.0.1", workers=(), policy: str = POLICY) -> list:
    """The router's command line.  --prometheus-port is given because its default (29000) is one port for
    every router on the host: a second one would fail to bind it.  Workers join through /add_worker once
    they answer, so none is named at start unless it already serves."""
    out = [exe, "--host", bind, "--port", str(port), "--policy", policy,
           "--prometheus-port", str(port + 1), "--prometheus-host", "127.0.0.1",
           "--health-check-interval-secs", str(HEALTH_INTERVAL_S), "--health-failure-threshold", str(HEALTH_FAILURES),
           "--worker-startup-timeout-secs", "60", "--log-level", "info"]
    if workers:
        out += ["--worker-urls", *workers]
    return out


def install_commands(python: str, env_dir: str) -> list:
    """The router's own venv from the pinned wheel (a prebuilt Rust binary and a few pure-Python deps)."""
    from ..provision.installer import install_command

    # no facts here (the router installs outside a plan): install_command gives pip
    return [Command([python, "-m", "venv", env_dir]),
            install_command(None, {}, f"{env_dir}/bin/python", [PIN], pip_flags=["-q", "--disable-pip-version-check"])]


def in_flight(metrics_text: str | None) -> dict | None:
    """{"running": n, "waiting": n} summed over engines from a vLLM /metrics page; None without the gauges."""
    if not metrics_text:
        return None
    from prometheus_client.parser import text_string_to_metric_families

    got = {}
    for family in text_string_to_metric_families(metrics_text):
        for sample in family.samples:
            if sample.name in IN_FLIGHT:
                got[sample.name] = got.get(sample.name, 0.0) + sample.value
    if not all(k in got for k in IN_FLIGHT):
        return None
    return {"running": int(got[IN_FLIGHT[0]]), "waiting": int(got[IN_FLIGHT[1]])}


class RouterError(RuntimeError):
    pass


@dataclass
class Host:
    """What the router code needs of a host: HTTP from the host itself to one of its loopback ports."""
    conn: object

    def http(self, port: int, path: str, post: bool = False, body=None, timeout: float = 60) -> dict:
        return control.request(self.conn, port, path, ({} if body is None else body) if post else None,
                               timeout=timeout)


@dataclass
class Router:
    host: Host
    port: int

    def _call(self, path, post=False, timeout=60):
        r = self.host.http(self.port, path, post=post, timeout=timeout)
        if r.get("status") is None:
            raise RouterError(f"router on port {self.port} does not answer: {r.get('error')}")
        return r

    def alive(self) -> bool:
        return self.host.http(self.port, "/liveness", timeout=5).get("status") == 200

    def urls(self) -> list:
        r = self._call("/list_workers")
        return list(json.loads(r["body"]).get("urls") or [])

    def workers(self) -> list:
        """The router's own view: url, is_healthy, load."""
        r = self._call("/workers")
        try:
            return list(json.loads(r["body"]).get("workers") or [])
        except ValueError:
            return []

    def add(self, url: str) -> str:
        """Idempotent: a worker already in the pool is left alone ("kept"), else it is added ("added")."""
        if url in self.urls():
            return "kept"
        r = self._call(f"/add_worker?url={url}", post=True, timeout=90)
        if r["status"] == 200 or "already exists" in r.get("body", ""):
            return "added"
        raise RouterError(f"the router refused {url}: {r['status']} {r.get('body', '')[:200]}")

    def remove(self, url: str) -> None:
        r = self._call(f"/remove_worker?url={url}", post=True)
        if r["status"] != 200:
            raise RouterError(f"the router did not remove {url}: {r['status']} {r.get('body', '')[:200]}")
        if url in self.urls():
            raise RouterError(f"the router still lists {url} after remove_worker")


def worker_load(host: Host, port: int, key=None) -> dict | None:
    r = control.request(host.conn, port, "/metrics", None, key=key, timeout=10)
    return in_flight(r.get("body")) if r.get("status") == 200 else None


def wait_drained(read, timeout: float, interval: float = 0.5, clock=time.monotonic, sleep=time.sleep) -> dict:
    """Poll the worker's own in-flight gauges until both are 0 (or the time is up: then say what is left,
    which the stop will cut off).  A worker that no longer answers /metrics holds nothing any more."""
    start = clock()
    last = None
    while True:
        load = read()
        if load is None:
            return {"drained": True, "waited": clock() - start, "note": "no /metrics answer (not running)"}
        last = load
        if load["running"] == 0 and load["waiting"] == 0:
            return {"drained": True, "waited": clock() - start, **load}
        if clock() - start >= timeout:
            return {"drained": False, "waited": clock() - start, **last,
                    "cut_off": f"{last['running']} running and {last['waiting']} waiting request(s) cut off "
                               f"after the {timeout:g} s drain timeout"}
        sleep(interval)


# ---------------------------------------------------------------- smoke before a worker joins
SMOKE_PROMPT = "Read all text in the image."


def smoke_bodies(served: str, image_png: bytes, mm_kwargs: dict | None) -> dict:
    """The two requests a worker may be asked before it joins: the SDK-shaped image request (a multimodal
    model must answer it) and a plain text request (for a text-only model such as the tests' tiny one)."""
    import base64

    url = "data:image/png;base64," + base64.b64encode(image_png).decode()
    image = {"model": served, "max_tokens": 16, "temperature": 0, "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": SMOKE_PROMPT}]}]}
    if mm_kwargs:
        image["mm_processor_kwargs"] = mm_kwargs
    text = {"model": served, "max_tokens": 8, "temperature": 0,
            "messages": [{"role": "user", "content": "Say OK."}]}
    return {"image": image, "text": text}


def smoke(host: Host, port: int, bodies: dict, key=None, timeout: float = 300) -> dict:
    """{"ok", "kind", "detail"}: the image request first; a server that says the model takes no image (a
    text-only model) is asked the text request, and the result says which one was used."""
    def ask(body):
        return control.request(host.conn, port, "/v1/chat/completions", body, key=key, timeout=timeout)

    r = ask(bodies["image"])
    kind = "image"
    if r.get("status") == 400 and "multimodal" in (r.get("body") or ""):
        r, kind = ask(bodies["text"]), "text (the model takes no image)"
    if r.get("status") != 200:
        said = (r.get("body") or r.get("error") or "")[:300]
        return {"ok": False, "kind": kind, "detail": f"{r.get('status')}: {said}"}
    try:
        content = json.loads(r["body"])["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return {"ok": False, "kind": kind, "detail": "not a chat completion: " + r["body"][:200]}
    if not (content or "").strip():
        return {"ok": False, "kind": kind, "detail": "empty answer"}
    return {"ok": True, "kind": kind, "detail": content.strip()[:60]}


def key_mismatch(host: Host, ports, key) -> str | None:
    """Why a worker started with `key` (None: no key) may not join a pool whose workers answer on these ports
    of the router host, or None.  vllm-router 0.1.17 passes each client's Authorization header on to the
    worker it picks and adds none of its own (its --api-key is not sent with proxied requests; tried: a
    keyed worker behind it answers 401 to a client without the key), and it health-checks /health, which
    vLLM serves without the key.  So a keyed fleet works through the router when every worker requires the
    same key and the clients send it; a pool that mixes keys (or keyed and open workers) would answer one
    client's request or refuse it by the worker the router happened to pick."""
    for port in ports:
        with_key = control.request(host.conn, port, "/v1/models", None, key=key, timeout=10).get("status")
        if with_key is None:
            continue                            # not answering: the router's health check takes it out
        if key is None and with_key == 401:
            return (f"the pool's worker on port {port} requires an API key and this one none: every worker "
                    f"behind one router must require the same key (serve them all with the same --api-key)")
        if key is None:
            continue
        if with_key == 401:
            return (f"the pool's worker on port {port} requires another API key (or this one's key is wrong): every "
                    f"worker behind one router must require the same key")
        without = control.request(host.conn, port, "/v1/models", None, key=None, timeout=10).get("status")
        if without == 200:
            return (f"the pool's worker on port {port} requires no API key and this one does: every worker behind "
                    f"one router must require the same key (serve them all with the same --api-key)")
    return None


# ---------------------------------------------------------------- the rolling order
@dataclass
class Roll:
    """The steps of a rolling restart, each a callable on a worker (its URL), so the order is one place:
    out(url) takes it out of the router, drain(url) waits on its counters, restart(url) stops it and starts
    it with the new options (-> {"ready": bool, ...}), back(url) smokes it and puts it back in."""
    out: object
    drain: object
    restart: object
    back: object
    log: list = field(default_factory=list)

    def run(self, urls: list, batch: int = 1) -> dict:
        done, drains = [], {}
        for i in range(0, len(urls), batch):
            group = urls[i:i + batch]
            for u in group:
                self.out(u)
                self.log.append(("out", u))
            for u in group:
                drains[u] = self.drain(u)
                self.log.append(("drained", u))
            for u in group:
                res = self.restart(u)
                self.log.append(("restarted", u))
                if not res.get("ready"):
                    # stop here: the failed one stays out (unless it was refused before anything stopped:
                    # still_serving); the rest keep their old version, and those of this batch not yet
                    # restarted (still the old one, still running) go back in
                    rest = group[group.index(u) + 1:] + ([u] if res.get("still_serving") else [])
                    for x in rest:
                        self.back(x)
                        self.log.append(("back", x))
                    return {"ok": False, "failed": u, "result": res, "done": done, "drains": drains,
                            "untouched": [x for x in urls if x not in done and x != u]}
                self.back(u)
                self.log.append(("back", u))
                done.append(u)
        return {"ok": True, "done": done, "drains": drains, "untouched": []}


def check_rollable(in_pool: int, batch: int, allow_downtime: bool) -> str | None:
    """Why a rolling restart may not begin (None when it may): with fewer than two in the pool, or a batch
    that takes the whole pool out, the service goes down -- that is a restart, not a roll."""
    if allow_downtime:
        return None
    if in_pool < 2:
        return (f"{in_pool} instance(s) in the router's pool: a rolling restart of one instance is a restart "
                f"(the URL answers nothing meanwhile); pass --allow-downtime to do it anyway")
    if batch >= in_pool:
        return (f"--batch {batch} takes all {in_pool} instances out at once (the URL answers nothing "
                f"meanwhile); use a smaller --batch or pass --allow-downtime")
    return None


def uptime(started_at) -> float | None:
    return time.time() - started_at if isinstance(started_at, (int, float)) else None
