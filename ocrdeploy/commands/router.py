"""The router on the command side: `inv serve --router`, the router in `inv status`, `inv stop --drain`,
`inv restart --rolling`, and the router's URL for `inv verify --router` / `inv parse --router`.

One router per host, in front of the instances `inv serve` started there; its record is kept like a
service's (services.hostside) in a directory of its own, so the commands that pick "the ready service"
(verify, parse, diagnose) never take the router for an engine.  Workers are reached by the router on the
host's loopback.  Workers on other hosts stay on their own loopback too and are reached through SSH tunnels
the router host holds (`ssh -N -L`, each recorded and stopped like a service): no worker port is ever
open to the network and no key crosses it in clear (README: "One URL for many instances").  Rolling
restarts and stops find that pool router the way serve placed it (--router-host, the inventory group
`router`) and act on a worker of another host through the tunnel's URL on the router host.
"""

from __future__ import annotations

import posixpath
import time

from ..errors import UsageError
from ..provision.command import Command
from ..provision.step import absolute, wd
from ..services import router as rt
from ..services.control import Instance, accept_length, start_instance, status_all, stop_service
from ..terminal import safe
from .options import api_key as api_key_option, number

LIVE_WAIT_S = 60.0


def check_router_options(router_port, public, policy=None):
    port = number(router_port, "router-port", rt.DEFAULT_PORT, whole=True, minimum=1, maximum=65534)
    if public:
        raise UsageError("--router with --public: vllm-router has no key of its own for clients (its --api-key is "
                         "what it sends to workers), so it stays on 127.0.0.1; reach it with ssh -L")
    policy = policy or rt.POLICY
    if policy not in rt.POLICIES:
        raise UsageError(f"--router-policy {policy!r}: choose {', '.join(rt.POLICIES)}")
    return port, policy


def _exists(conn, path) -> bool:
    return conn.run(["test", "-x", path], ok_codes=range(0, 256), timeout=30).exit_code == 0


def env_dir(facts, host) -> str:
    """The inventory var router_env (a venv that holds vllm-router) or <workdir>/router-env."""
    return str(host.vars.get("router_env") or absolute(facts, wd(rt.ENV)))


def ensure_env(conn, host, facts, con=None) -> dict:
    """The router's venv, made from the pinned wheel when its executable is missing (serve and install
    call this; a re-run with it in place runs nothing)."""
    d = env_dir(facts, host)
    exe = f"{d}/bin/{rt.EXE}"
    if _exists(conn, exe):
        return {"exe": exe, "changed": False}
    if host.vars.get("router_env"):
        raise RuntimeError(f"inventory var router_env: {d} has no bin/{rt.EXE} (give a venv that holds {rt.PIN})")
    if con:
        con.print(f"[dim]{host.name} | installing {rt.PIN} into {d}[/dim]")
    for cmd in rt.install_commands("python3", d):
        r = conn.run(cmd, ok_codes=range(0, 256), timeout=900)
        if r.exit_code != 0:
            raise RuntimeError(f"installing {rt.PIN} into {d} failed (exit {r.exit_code}): {safe(r.tail(5))}")
    if not _exists(conn, exe):
        raise RuntimeError(f"{rt.PIN} installed into {d}, but it has no bin/{rt.EXE}")
    return {"exe": exe, "changed": True}


def install_for(conn, host, con) -> dict:
    """`inv install` on a host whose inventory says `router: true`: the router's venv beside the engines'."""
    from .services import _facts

    done = ensure_env(conn, host, _facts(conn, host), con)
    con.print(f"{host.name} | router: {rt.PIN} {'installed' if done['changed'] else 'already there'} "
              f"({done['exe']})", markup=False)
    return done


def routers(conn, workdir) -> list:
    """The router records on this host (alive or not), as hostside's status reads them."""
    return status_all(conn, rt.records_dir(workdir))["services"]


def live_router(conn, workdir, port=None):
    for r in routers(conn, workdir):
        if r.get("alive") and (port is None or r.get("port") == port):
            return r
    return None


def start_router(conn, host, facts, port, policy, con) -> dict:
    """The router detached, with a record like a service's (pid, port, policy, started_at), on 127.0.0.1;
    ready once /liveness answers (its /v1/models says 503 while the pool is empty)."""
    workdir = facts["workdir"]["path"]
    exe = ensure_env(conn, host, facts, con)["exe"]
    name = rt.name_for(port)
    rdir = rt.records_dir(workdir)
    inst = Instance(name, port, None, rt.argv(exe, port, "127.0.0.1", policy=policy), {}, "router", "127.0.0.1",
                    posixpath.join(workdir, ".ocrdeploy", "router", name + ".log"),
                    options={"policy": policy}, also_ports=((port + 1, "the router's --prometheus-port"),),
                    port_flag=("--router-port", 0))
    started = start_instance(conn, rdir, inst, served_name=None)
    if not started.get("ok"):
        raise RuntimeError(f"the router did not start: {started.get('error')}; choose another --router-port")
    router = rt.Router(rt.Host(conn), port)
    deadline = time.monotonic() + LIVE_WAIT_S
    while not router.alive():
        rec = live_router(conn, workdir, port)
        if rec is None or time.monotonic() > deadline:
            tail = conn.run(["tail", "-n", "15", inst.log], ok_codes=range(0, 256)).stdout
            raise RuntimeError(f"the router on port {port} did not answer /liveness: {safe(tail)}")
        time.sleep(0.3)
    return {"name": name, "pid": started.get("pid"), "port": port, "policy": policy, "started": True,
            "warnings": started.get("warnings") or []}


def _bodies(kind, served):
    from ..sdk import samples
    from ..sdk.driver import sends_mm_kwargs
    from ..services.argv import MM_PROCESSOR_KWARGS

    return rt.smoke_bodies(served, samples.png(), MM_PROCESSOR_KWARGS if sends_mm_kwargs(kind) else None)


def join(conn, router, inst: dict, key=None) -> dict:
    """A ready instance joins the pool only after it answers a smoke request (the readiness gate), and only
    where the workers already in the pool take the same API key (services.router.key_mismatch)."""
    host = rt.Host(conn)
    sm = rt.smoke(host, inst["port"], _bodies(inst.get("kind"), inst.get("served") or "minicpm-ocr"), key=key)
    if not sm["ok"]:
        return {"joined": False, "smoke": sm}
    pool = router.urls()
    if inst["url"] not in pool:
        why = rt.key_mismatch(host, [int(u.rsplit(":", 1)[1]) for u in pool], key)
        if why:
            return {"joined": False, "smoke": {**sm, "ok": False, "kind": "API key", "detail": why}}
    return {"joined": True, "smoke": sm, "pool": router.add(inst["url"])}


NOT_STARTED = ("not started: no instance of this serve is ready to join it, and a router over none would answer "
               "every request 503")
NONE_JOINED = ("stopped again: no instance joined it (each failed its smoke request or its tunnel), and a router "
               "over none would answer every request 503")


def after_serve(conn, host, facts, result, *, port, policy, key, con, others_ready=False) -> dict:
    """serve --router on one host: every ready instance smoked and added (idempotent), the router started
    first when none runs there, but only when an instance (here or, with `others_ready`, on another host of
    the pool) is ready to join it, and stopped again when none joined: a new router over an empty pool is a
    URL that serves nothing, left running after the serve that failed.  With `others_ready` the caller joins
    the other hosts' instances and makes that last check itself (unless_empty)."""
    workdir = facts["workdir"]["path"]
    ready = [r for r in result.get("instances") or [] if r.get("ready")]
    rec = live_router(conn, workdir, port)
    if not rec and not ready and not others_ready:
        return {"error": NOT_STARTED}
    out = ({"name": rec["name"], "pid": rec["pid"], "port": port, "policy": (rec.get("options") or {}).get("policy"),
            "started": False} if rec else start_router(conn, host, facts, port, policy, con))
    router = rt.Router(rt.Host(conn), port)
    for r in ready:
        r["router"] = join(conn, router, r, key)
    out["url"] = f"http://127.0.0.1:{port}"
    out["workers"] = router.urls()
    return out if others_ready else unless_empty(conn, workdir, out)


def unless_empty(conn, workdir, out) -> dict:
    """The router serve has just started, stopped again when its pool is still empty; else `out` as it is (a
    router that was running before is never stopped here)."""
    if out.get("started") and not out.get("workers"):
        stop_service(conn, rt.records_dir(workdir), out["name"], 10.0)
        return {"error": NONE_JOINED}
    return out


# ---------------------------------------------------------------- several hosts: one router, SSH tunnels
TUNNELS = "tunnels"          # <workdir>/.ocrdeploy/tunnels/<name>.json, records like a service's


def tunnels_dir(workdir) -> str:
    return posixpath.join(workdir, ".ocrdeploy", TUNNELS)


def pick_router_host(hosts, router_host=None, inventory=None) -> str:
    """The host the router runs on: --router-host, else the inventory group `router`'s first host, else the
    first selected host."""
    found = pool_router_host(router_host, inventory)
    return found.name if found else hosts[0].name


def pool_router_host(router_host=None, inventory=None):
    """The host whose router pools workers of other hosts, for the commands that act on a pool after serve
    (restart --rolling, stop): --router-host, else the inventory group `router`'s first host, else None (each
    host's own router, as serve puts it on the first selected host)."""
    from .hosts import selected_hosts

    if router_host:
        try:
            found = selected_hosts(router_host, None, inventory)
        except UsageError as exc:
            raise UsageError(f"--router-host {router_host}: {exc}") from None
        if len(found) != 1:
            raise UsageError(f"--router-host {router_host}: names {len(found)} hosts of the inventory; give one")
        return found[0]
    try:
        group = selected_hosts(None, "router", inventory)
    except UsageError:
        group = []
    return group[0] if group else None


def pool_members(conn, workdir, router_host_name, urls) -> dict:
    """{url: (host name, port on that host)} of a router's pool: a worker behind a tunnel the router host holds
    is on the tunnel's host at its worker port; any other URL is the router host's own loopback."""
    via = {f"http://127.0.0.1:{t.get('port')}": t.get("options") or {} for t in tunnels(conn, workdir)}
    out = {}
    for url in urls:
        o = via.get(url)
        if o and o.get("host"):
            out[url] = (o["host"], int(o["worker_port"]))
        else:
            out[url] = (router_host_name, int(url.rsplit(":", 1)[1]))
    return out


def tunnel_name(worker_host, port) -> str:
    import re

    return f"tunnel-{re.sub(r'[^A-Za-z0-9_.-]', '_', worker_host.name)[:80]}-{port}"


def tunnel_argv(worker_host, local_port, worker_port, router_is_controller) -> list:
    """OpenSSH on the router host forwarding its 127.0.0.1:local_port to the worker host's own loopback.
    Host keys are checked strictly (never accepted on the fly) and it never prompts; where the router host
    is this machine, the inventory's key and known_hosts are the ones ocrdeploy itself uses."""
    from ..provision.connection import known_hosts_path

    argv = ["ssh", "-N", "-o", "BatchMode=yes", "-o", "ExitOnForwardFailure=yes", "-o", "StrictHostKeyChecking=yes",
            "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3", "-p", str(worker_host.port),
            "-L", f"127.0.0.1:{local_port}:127.0.0.1:{worker_port}"]
    if router_is_controller:
        argv += ["-o", f"UserKnownHostsFile={known_hosts_path(worker_host)}"]
        if worker_host.key_file:
            argv += ["-o", "IdentitiesOnly=yes", "-i", worker_host.key_file]
    return argv + [f"{worker_host.user}@{worker_host.address}" if worker_host.user else worker_host.address]


def _free_port(conn) -> int:
    r = conn.run(["python3", "-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); "
                                   "print(s.getsockname()[1])"], ok_codes=range(0, 256), timeout=30)
    if r.exit_code != 0:
        raise RuntimeError(f"no free port on the router host: {safe(r.tail(3))}")
    return int(r.stdout.strip().splitlines()[-1])


def ensure_tunnel(conn, workdir, router_host, worker_host, worker_port, wait_s=30.0) -> dict:
    """The router host's tunnel to one worker, started once: a live one is reused (serve re-runs are
    idempotent).  Ready when the worker's /health answers through it."""
    name = tunnel_name(worker_host, worker_port)
    tdir = tunnels_dir(workdir)
    live = next((t for t in status_all(conn, tdir, name)["services"] if t["name"] == name and t.get("alive")), None)
    if live:
        return {"name": name, "url": f"http://127.0.0.1:{live['port']}", "started": False}
    lport = _free_port(conn)
    inst = Instance(name, lport, None, tunnel_argv(worker_host, lport, worker_port, conn.is_local), {}, "ssh-tunnel",
                    "127.0.0.1", posixpath.join(tdir, name + ".log"),
                    options={"host": worker_host.name, "worker_port": worker_port}, ready="health", port_flag=None)
    started = start_instance(conn, tdir, inst, served_name=None)
    if not started.get("ok"):
        raise RuntimeError(f"the SSH tunnel to {worker_host.name}:{worker_port} did not start: {started.get('error')}")
    host = rt.Host(conn)
    deadline = time.monotonic() + wait_s
    while host.http(lport, "/health", timeout=5).get("status") != 200:
        alive = [t for t in status_all(conn, tdir, name)["services"] if t.get("alive")]
        if not alive or time.monotonic() > deadline:
            tail = conn.run(["tail", "-n", "5", inst.log], ok_codes=range(0, 256)).stdout
            stop_service(conn, tdir, name, 5.0)
            raise RuntimeError(f"the SSH tunnel from {router_host.name} to {worker_host.name}:{worker_port} did not "
                               f"carry /health (the router host must reach the worker host by ssh, key and host "
                               f"key known): {safe(tail)}")
        time.sleep(0.3)
    return {"name": name, "url": f"http://127.0.0.1:{lport}", "started": True}


def tunnels(conn, workdir) -> list:
    return status_all(conn, tunnels_dir(workdir))["services"]


def after_serve_pool(conn, rhost, facts, by_host, hosts, *, port, policy, key, con) -> dict:
    """serve --router over several hosts, run on the router host once every host's instances are up: the
    router started when none runs, the router host's own ready instances smoked and added, every other
    host's through a tunnel (smoked through it, so the gate is what the router will see)."""
    workdir = facts["workdir"]["path"]
    own = by_host.get(rhost.name) or {"instances": []}
    others = any(r.get("ready") for h, v in by_host.items() if h != rhost.name for r in v.get("instances") or [])
    out = after_serve(conn, rhost, facts, own, port=port, policy=policy, key=key, con=con, others_ready=others)
    if out.get("error"):
        return out
    router = rt.Router(rt.Host(conn), port)
    for hname, v in by_host.items():
        if hname == rhost.name:
            continue
        for r in [r for r in v.get("instances") or [] if r.get("ready")]:
            try:
                t = ensure_tunnel(conn, workdir, rhost, hosts[hname], r["port"])
            except RuntimeError as exc:
                r["router"] = {"joined": False, "smoke": {"ok": False, "kind": "tunnel", "detail": str(exc)}}
                continue
            via = {**r, "port": int(t["url"].rsplit(":", 1)[1]), "url": t["url"]}
            r["router"] = {**join(conn, router, via, key), "tunnel": t["name"], "via": t["url"]}
    out["workers"] = router.urls()
    return unless_empty(conn, workdir, out)


def print_serve(con, hname, doc):
    if not doc:
        return
    if doc.get("error"):
        con.print(f"[red]{hname} | router: {safe(doc['error'])}[/red]")
        return
    how = "started" if doc.get("started") else "already running"
    con.print(f"[green]{hname} | {doc['name']} {how}[/green]: {doc['url']} (pid {doc['pid']}, policy "
              f"{doc['policy']}); pool: {' '.join(doc['workers']) or 'empty'}", highlight=False)
    for w in doc.get("warnings") or []:
        con.print(f"{hname} | {doc['name']}: warning: {w}", style="yellow", markup=False, highlight=False)


def report_joins(con, hname, instances) -> bool:
    """Each ready instance's join, printed; False when one did not join."""
    ok = True
    for r in instances:
        j = r.get("router")
        if not j:
            continue
        sm = j["smoke"]
        if j["joined"]:
            via = f" (through {j['tunnel']})" if j.get("tunnel") else ""
            con.print(f"{hname} | {r['name']}: smoke request ({sm['kind']}) answered; {j['pool']} in the pool{via}",
                      markup=False)
        else:
            ok = False
            con.print(f"[red]{hname} | {r['name']}: smoke request ({sm['kind']}) failed, kept out of the pool: "
                      f"{safe(sm['detail'])}[/red]")
    return ok


# ---------------------------------------------------------------- status
def dead_worker_findings(conn, host, svc) -> list:
    """What `inv diagnose` finds in the log of a worker that is no longer running (killed, OOM), as
    {id, cause, fix, first_line}; [] when the log names no known cause."""
    from .services import diagnose_log

    if svc.get("alive") is not False or not svc.get("log"):
        return []
    try:
        found = diagnose_log(conn, host, svc["log"], port=svc.get("port"))
    except Exception as exc:            # the scan is a hint on a status page: its failure is shown, not raised
        return [{"id": "scan-failed", "cause": f"the log could not be scanned: {exc}", "fix": "", "first_line": None}]
    return [{k: f.get(k) for k in ("id", "cause", "fix", "first_line")} for f in found]


def status_section(conn, workdir, services, host=None) -> list:
    """Per router: its record and every worker as the router sees it (in the pool, healthy), with the
    worker's own in-flight gauges and accept length from the /metrics hostside's status already read, and
    for a worker that died, what diagnose finds in its log."""
    out = []
    for rec in routers(conn, workdir):
        doc = {"name": rec["name"], "pid": rec.get("pid"), "port": rec.get("port"), "alive": rec.get("alive"),
               "policy": (rec.get("options") or {}).get("policy"), "uptime": rec.get("uptime"), "workers": []}
        pool, health = [], {}
        if rec.get("alive"):
            router = rt.Router(rt.Host(conn), rec["port"])
            try:
                pool = router.urls()
                health = {w.get("url"): w.get("is_healthy") for w in router.workers()}
            except rt.RouterError as exc:
                doc["error"] = str(exc)
        seen = set()
        for s in services:
            url = f"http://127.0.0.1:{s.get('port')}"
            seen.add(url)
            load = rt.in_flight(s.get("metrics")) if s.get("alive") else None
            doc["workers"].append({"url": url, "service": s["name"], "in_pool": url in pool,
                                   "healthy": health.get(url) if url in pool else None,
                                   "alive": s.get("alive"), "ready": s.get("ready"), "in_flight": load,
                                   "spec_decode": accept_length(s.get("metrics")) if s.get("alive") else None,
                                   "diagnosis": dead_worker_findings(conn, host, s) if host is not None else []})
        via = {f"http://127.0.0.1:{t.get('port')}": t for t in tunnels(conn, workdir)}
        for url in pool:
            if url in via and url not in seen:      # a worker on another host, through the router host's tunnel
                t = via[url]
                o = t.get("options") or {}
                doc["workers"].append({"url": url, "service": f"{o.get('host')}:{o.get('worker_port')} via {t['name']}",
                                       "in_pool": True, "healthy": health.get(url), "alive": t.get("alive"),
                                       "ready": None, "in_flight": None, "spec_decode": None, "diagnosis": [],
                                       "tunnel": t["name"]})
            elif url not in seen:      # in the pool, but no service of ours: started by hand, or its record gone
                doc["workers"].append({"url": url, "service": None, "in_pool": True, "healthy": health.get(url),
                                       "alive": None, "ready": None, "in_flight": None, "spec_decode": None,
                                       "diagnosis": []})
        out.append(doc)
    return out


def print_status(con, hname, docs) -> bool:
    """The router tables; False when a router is dead or a worker in its pool is not healthy."""
    from rich.table import Table

    ok = True
    for d in docs or []:
        up = f"{d['uptime'] / 60:.1f} min" if d.get("uptime") and d.get("alive") else "-"
        con.print(f"{hname} | router {d['name']}: pid {d['pid']}, port {d['port']}, policy {d.get('policy')}, "
                  f"{'up ' + up if d.get('alive') else 'NOT RUNNING'}", markup=False)
        ok &= bool(d.get("alive"))
        if d.get("error"):
            con.print(f"{hname} | router: {safe(d['error'])}", markup=False)
        t = Table(title=f"{hname}: workers behind {d['name']}", title_justify="left")
        for col in ("worker", "service", "in pool", "healthy", "alive", "running", "waiting", "DSpark accept length"):
            t.add_column(col)
        for w in d["workers"]:
            load = w.get("in_flight") or {}
            acc = w.get("spec_decode") or {}
            if w["in_pool"] and (w.get("healthy") is False or w.get("alive") is False):
                ok = False
            t.add_row(w["url"], w.get("service") or "(not ours)", "yes" if w["in_pool"] else "no",
                      {True: "yes", False: "NO", None: "-"}[w.get("healthy")],
                      {True: "yes", False: "NO", None: "?"}[w.get("alive")],
                      str(load.get("running", "-")), str(load.get("waiting", "-")),
                      str(acc.get("accept_length") or acc.get("state") or "-"))
        con.print(t)
        for w in d["workers"]:
            if w.get("alive") is False:
                con.print(f"{hname} | worker {w['url']} ({w.get('service')}) is not running"
                          + ("; diagnose finds in its log:" if w.get("diagnosis") else
                             "; its log names no known cause (inv diagnose --service shows it)"), markup=False)
                for f in w.get("diagnosis") or []:
                    con.print(safe(f"    {f['id']} (line {f.get('first_line')}): {f['cause']}"), markup=False)
                    if f.get("fix"):
                        con.print(safe(f"    fix: {f['fix']}"), markup=False)
    return ok


# ---------------------------------------------------------------- drain and stop
def drain(conn, workdir, svc, timeout, key=None, elsewhere=None) -> dict:
    """Out of every router on the host, and out of the pool router on another host (elsewhere(port): the
    names of the routers it was taken out of there), then wait until the engine holds no request (bounded)."""
    url = f"http://127.0.0.1:{svc['port']}"
    removed = []
    for rec in routers(conn, workdir):
        if rec.get("alive"):
            router = rt.Router(rt.Host(conn), rec["port"])
            if url in router.urls():
                router.remove(url)
                removed.append(rec["name"])
    if elsewhere is not None:
        removed += elsewhere(svc["port"])
    host = rt.Host(conn)
    waited = rt.wait_drained(lambda: rt.worker_load(host, svc["port"], key), timeout)
    return {"removed_from": removed, **waited}


class RemotePool:
    """The pool router on another host (the inventory group `router` or --router-host), reached on its own
    connection, opened the first time a worker has to leave it and shared by the threads of the hosts being
    stopped: out(H, P) takes host H's worker on port P out through the URL of the router host's tunnel to it."""

    def __init__(self, host, accept_new_host_keys=False, connect_timeout=None, port=None):
        import threading

        from ..provision.session import Session
        from .options import number

        self.host, self.port, self.lock = host, port, threading.Lock()
        self.session = Session([host], connect_timeout=number(connect_timeout, "connect-timeout", 10, above=0),
                               accept_new_host_keys=accept_new_host_keys)
        self.conn = self.router = None

    def _open(self):
        from ..provision.session import HostError
        from .services import _facts

        if self.conn is not None:
            return
        try:
            self.conn = self.session.connection(self.host)
        except HostError as exc:
            raise rt.RouterError(f"the router host {self.host.name} is unreachable: {exc.message}") from None
        self.workdir = _facts(self.conn, self.host)["workdir"]["path"]
        self.rec = live_router(self.conn, self.workdir, self.port)
        self.router = rt.Router(rt.Host(self.conn), self.rec["port"]) if self.rec else None

    def out(self, worker_host, port) -> list:
        with self.lock:
            self._open()
            if self.router is None:
                return []
            members = pool_members(self.conn, self.workdir, self.host.name, self.router.urls())
            urls = [u for u, (h, p) in members.items() if h == worker_host and p == port]
            for u in urls:
                self.router.remove(u)
        return [f"{self.rec['name']} on {self.host.name}"] if urls else []

    def close(self):
        self.session.close()


def stop_host(conn, workdir, name, grace, drain_on, drain_timeout, key=None, elsewhere=None) -> dict:
    """inv stop on one host: a router name stops that router alone; an instance (or all of them) is taken
    out of the router first (and with --drain waited on); a plain stop of everything ends the routers too."""
    if name and rt.is_router_name(name):
        return {name: stop_service(conn, rt.records_dir(workdir), name, grace)}
    services = status_all(conn, workdir, name, key)["services"]
    if name and not services:
        return {name: stop_service(conn, workdir, name, grace)}      # its own "no service ... recorded"
    out = {}
    for s in services:
        drained = None
        if s.get("alive") and s.get("port"):
            try:
                drained = drain(conn, workdir, s, drain_timeout if drain_on else 0.0, key, elsewhere)
            except rt.RouterError as exc:
                drained = {"error": str(exc)}
        res = stop_service(conn, workdir, s["name"], grace)
        if drain_on and drained is not None:
            res["drain"] = drained
        out[s["name"]] = res
    if not name:
        for r in routers(conn, workdir):
            out[r["name"]] = stop_service(conn, rt.records_dir(workdir), r["name"], grace)
        for t in tunnels(conn, workdir):
            out[t["name"]] = stop_service(conn, tunnels_dir(workdir), t["name"], grace)
    return out


def drain_note(res) -> str | None:
    d = res.get("drain")
    if not d:
        return None
    if d.get("error"):
        return f"drain: {d['error']}"
    where = f"out of {', '.join(d['removed_from'])}; " if d.get("removed_from") else ""
    if d.get("drained"):
        return f"drained ({where}{d['waited']:.1f} s until 0 running, 0 waiting)"
    return f"{where}{d['cut_off']}"


# ---------------------------------------------------------------- rolling restart
def run_restart(*, host, inventory, rolling, change, timeout, batch, allow_downtime, drain_timeout, router_port,
                api_key, as_json, accept_new_host_keys, connect_timeout, model_dir=None, router_host=None) -> int:
    """With a pool router (--router-host, or the inventory group `router`) the workers of every selected host
    roll one at a time through that one router; without one, each host rolls behind its own router."""
    from ..provision.report import console
    from .hosts import map_hosts

    if not rolling:
        raise UsageError("restart needs --rolling (one instance at a time behind the router); to restart one "
                         "service with a remedy, use inv diagnose --fix")
    api_key_option(api_key)
    if model_dir is not None and not str(model_dir).startswith(("/", "~")):
        raise UsageError(f"--model-dir {model_dir}: give the model directory's absolute path on the host")
    timeout = number(timeout, "timeout", 900, above=0)
    batch = number(batch, "batch", 1, whole=True, minimum=1, maximum=16)
    drain_timeout = number(drain_timeout, "drain-timeout", rt.DRAIN_TIMEOUT_S, minimum=0)
    port = number(router_port, "router-port", None, whole=True, minimum=1, maximum=65534) if router_port else None
    con = console(stderr=as_json)
    roll = dict(change=change, timeout=timeout, batch=batch, allow_downtime=allow_downtime,
                drain_timeout=drain_timeout, api_key=api_key, model_dir=model_dir, con=con)
    rhost = pool_router_host(router_host, inventory)

    def one(conn, h):
        from .services import _facts

        workdir = _facts(conn, h)["workdir"]["path"]
        rec = live_router(conn, workdir, port)
        if not rec:
            return {"ok": False, "error": "no router runs on this host: inv serve ... --router first"}
        router = rt.Router(rt.Host(conn), rec["port"])
        by_url = {f"http://127.0.0.1:{s['port']}": s for s in status_all(conn, workdir, key=api_key)["services"]}
        pool = router.urls()
        members = [{"url": u, "conn": conn, "host": h, "svc": by_url[u]} for u in pool if u in by_url]
        return _roll(conn, router, members, len(members), **roll)

    def pooled(rconn, rh):
        from ..provision.session import HostError, Session
        from .hosts import current_options, selected_hosts
        from .services import _facts

        rwd = _facts(rconn, rh)["workdir"]["path"]
        rec = live_router(rconn, rwd, port)
        if not rec:
            return {"ok": False, "error": f"no router runs on the router host {rh.name}: inv serve ... --router first"}
        router = rt.Router(rt.Host(rconn), rec["port"])
        chosen = {x.name: x for x in selected_hosts(host, None, inventory, current_options().limit)}
        pool = router.urls()
        by_host = {}
        for url, (hname, wport) in pool_members(rconn, rwd, rh.name, pool).items():
            if hname in chosen:
                by_host.setdefault(hname, []).append((url, wport))
        if not by_host:
            return {"ok": False, "error": f"no worker of {', '.join(chosen)} is in the pool of {rec['name']} on "
                                          f"{rh.name}"}
        others = [chosen[n] for n in by_host if n != rh.name]
        with Session(others, connect_timeout=number(connect_timeout, "connect-timeout", 10, above=0),
                     accept_new_host_keys=accept_new_host_keys) as session:
            members = []
            for hname, urls in by_host.items():
                wh = chosen[hname]
                try:
                    wconn = rconn if hname == rh.name else session.connection(wh)
                except HostError as exc:
                    return {"ok": False, "error": f"{hname} is unreachable: {exc.message}; nothing was rolled"}
                wwd = _facts(wconn, wh)["workdir"]["path"]
                svcs = {s["port"]: s for s in status_all(wconn, wwd, key=api_key)["services"]}
                members += [{"url": u, "conn": wconn, "host": wh, "svc": svcs[p]} for u, p in urls if p in svcs]
            res = _roll(rconn, router, members, len(pool), **roll)
        res["router_host"] = rh.name
        return res

    if rhost is not None:
        run = map_hosts(pooled, host=rhost.name, inventory=inventory, accept_new_host_keys=accept_new_host_keys,
                        connect_timeout=connect_timeout, as_json=as_json, con=con)
    else:
        run = map_hosts(one, host=host, inventory=inventory, accept_new_host_keys=accept_new_host_keys,
                        connect_timeout=connect_timeout, as_json=as_json, con=con)
    for hname, v in run.hosts:
        run.doc["hosts"][hname] = v
        if v.get("ok"):
            where = f" on {', '.join(v['worker_hosts'])}" if rhost is not None else ""
            con.print(f"[green]{hname}: rolled {len(v['done'])} instance(s){where} in {v['seconds']:.0f} s[/green]; "
                      f"pool: {' '.join(v['pool'])}", highlight=False)
            continue
        run.failed = True
        if v.get("error"):
            con.print(f"[red]{hname}: {safe(v['error'])}[/red]")
            continue
        r = v.get("result") or {}
        con.print(f"[red]{hname}: the roll stopped at {v['failed']}: "
                  f"{safe(r.get('error') or str(r.get('reason')) + ' during ' + str(r.get('phase') or 'start-up'))}"
                  f"; it stays out of the pool, {len(v.get('untouched') or [])} instance(s) keep the old version"
                  f"[/red]")
        for f in r.get("findings") or []:
            con.print(f"    diagnosis {f['id']} (line {f['first_line']}): {safe(f['cause'])}", markup=False)
            con.print(f"    fix: {safe(f['fix'])}", markup=False)
    return run.exit_code()


def _roll(rconn, router, members, in_pool, *, change, timeout, batch, allow_downtime, drain_timeout, api_key,
          model_dir, con) -> dict:
    """The one rolling order (services.router.Roll) over members {url, conn, host, svc}: out of the router on
    the router host's connection, drained by the worker's own /metrics on its host, stopped and started on its
    host, smoked through the URL the router uses (its tunnel for a worker on another host), back in."""
    from .services import restart_service

    by_url = {m["url"]: m for m in members}
    why = rt.check_rollable(in_pool, batch, allow_downtime) or _unrestartable([m["svc"] for m in members], api_key)
    if why:
        return {"ok": False, "error": why, "refused": True}
    t0 = time.monotonic()

    def restart(url):
        m = by_url[url]
        s = m["svc"]
        what = {**change, **({"model_dir": model_dir} if model_dir else {})} or "the same options"
        con.print(f"[dim]{m['host'].name} | {s['name']}: drained; restarting with {safe(str(what))}[/dim]")
        res = restart_service(m["conn"], m["host"], s["name"], change, timeout, con, api_key, model_dir=model_dir)
        if "ready" not in res:        # refused before the stop (a plan error): the old one still serves
            res["still_serving"] = True
        return res

    def back(url):
        m = by_url[url]
        s = m["svc"]
        j = join(rconn, router, {"port": int(url.rsplit(":", 1)[1]), "url": url,
                                 "kind": (s.get("options") or {}).get("backend"), "served": s.get("served_name")},
                 api_key)
        if not j["joined"]:
            raise rt.RouterError(f"{s['name']} is ready but its smoke request failed: {j['smoke']['detail']}")
        con.print(f"{m['host'].name} | {s['name']}: back in the pool (smoke {j['smoke']['kind']})", markup=False)

    def drain(url):
        m = by_url[url]
        return rt.wait_drained(lambda: rt.worker_load(rt.Host(m["conn"]), m["svc"]["port"], api_key), drain_timeout)

    roll = rt.Roll(out=router.remove, drain=drain, restart=restart, back=back)
    try:
        res = roll.run([m["url"] for m in members], batch)
    except rt.RouterError as exc:
        res = {"ok": False, "error": str(exc), "done": []}
    res["seconds"] = round(time.monotonic() - t0, 1)
    res["steps"] = [list(s) for s in roll.log]
    res["pool"] = router.urls()
    res["worker_hosts"] = sorted({m["host"].name for m in members})
    return res


def _unrestartable(services, api_key) -> str | None:
    """What restart_service would refuse, asked before the first one leaves the pool (a refusal mid-roll
    would leave a running instance out of it)."""
    from .services import VLLM_BACKENDS

    for s in services:
        backend = (s.get("options") or {}).get("backend")
        if backend not in VLLM_BACKENDS:
            return (f"{s['name']} is a {backend or 'unrecorded'} service: restart --rolling changes the vLLM serve "
                    f"options (--dspark, --standard)")
        if s.get("has_key") and not api_key:
            return f"{s['name']} requires an API key, which is never stored: give it again (--api-key KEY)"
    return None


def router_url(router_port) -> str:
    port = number(router_port, "router-port", rt.DEFAULT_PORT, whole=True, minimum=1, maximum=65534)
    return f"http://127.0.0.1:{port}"


def router_target(router, router_port, server_urls, what: str) -> str | None:
    """--router's URL for verify, parse and bench (None without it), the options it goes with checked: a
    --router-port without --router, or --router beside --server-url, was dropped without a word, and the
    report then spoke of a server the user did not name."""
    if not router:
        if router_port is not None:
            raise UsageError("--router-port goes with --router")
        return None
    if server_urls:
        raise UsageError(f"--router {what} the router `inv serve --router` started; --server-url a server by its URL")
    return router_url(router_port)
