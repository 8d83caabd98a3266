"""Apply a plan to a host: one facts round trip, then only the steps that have work.

Every command's output goes to a log on the host (<workdir>/.ocrdeploy/logs/<run>/<step>.log)
and, with -v, to the terminal.  A failed step reports its command, exit code and last
lines, and the diagnose scanner reads its log; a step whose failure has a known
cure (compilers killed for memory) gets one more try.  After a step runs, the facts
are read again and the step must verify against them before it is "changed".
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import asdict, dataclass, field, replace

from . import facts as facts_mod
from .command import Command, Script
from .connection import CommandFailed
from .probe import mask_url
from .step import CHANGED, FAILED, OK, SKIPPED, NotYet, Request, StepError

# The log and its directory are the user's alone (0600/0700): a command's output may hold what it was
# given; the command itself runs with the caller's umask.
_OPEN_LOG = '(umask 077; mkdir -p "${log%/*}"; : >> "$log"); chmod 600 "$log"; '
_WRAP = ('log=$1; shown=$2; shift 2; ' + _OPEN_LOG +
         'printf "\\n$ %s\\n" "$shown" >> "$log"; exec "$@" >> "$log" 2>&1')
_WRAP_TEE = ('log=$1; shown=$2; shift 2; ' + _OPEN_LOG + 'printf "\\n$ %s\\n" "$shown" >> "$log"; '
             '{ "$@" 2>&1; echo $? > "$log.rc"; } | tee -a "$log"; rc=$(cat "$log.rc"); rm -f "$log.rc"; exit "$rc"')
# a shared wheel on arrival ($1), checked in the command that installs it (one round trip): a copy whose
# sha256 is not the builder's ($2) is deleted and refused (exit ARRIVAL_REFUSED), else the install runs
ARRIVAL_REFUSED = 86
_CHECK_ARRIVAL = ('sum=$(sha256sum -- "$0") || exit 2; sum=${sum%% *}; '
                  'if [ "$sum" != "$1" ]; then rm -f -- "$0"; echo "sha256 $sum on arrival"; '
                  f'exit {ARRIVAL_REFUSED}; fi; shift; exec "$@"')
# the shared build's `pip wheel` ($@) into a wheel directory ($0) emptied first (no wheel of an earlier
# build left beside the new one), then in the same command the sha256 of the wheel, written beside it for
# the controller to fetch: no round trips before and after the build to clean up and to hash
_WHEEL_THEN_SUM = 'rm -rf -- "$0" || exit $?; "$@" || exit $?; cd -- "$0" && sha256sum -- *.whl > .sha256'
NINJA = re.compile(rb"\[(\d+)/(\d+)\]")
BYTES = re.compile(rb"@@progress (\S+) (\d+) (\d+)")


@dataclass
class StepResult:
    step: str
    status: str
    reason: str
    commands: list = field(default_factory=list)
    log: str | None = None
    exit_code: int | None = None
    tail: str | None = None
    findings: list = field(default_factory=list)
    seconds: float = 0.0
    outcome: str | None = None    # a changed step: what the re-read facts show now (e.g. which source served)

    def to_dict(self):
        return asdict(self)


@dataclass
class HostRun:
    host: str
    results: list = field(default_factory=list)
    preflight: list = field(default_factory=list)
    preflight_failed: bool = False
    error: str | None = None
    check_mode: bool = False
    facts_round_trips: int = 0
    commands_run: int = 0

    def counts(self) -> dict:
        c = {OK: 0, CHANGED: 0, FAILED: 0, SKIPPED: 0}
        for r in self.results:
            c[r.status] += 1
        return c

    def to_dict(self) -> dict:
        return {"reachable": True, "counts": self.counts(), "preflight_failed": self.preflight_failed,
                "preflight": [r.to_dict() for r in self.preflight], "steps": [r.to_dict() for r in self.results],
                "commands_run": self.commands_run}

    @property
    def failed(self) -> bool:
        return bool(self.error) or self.preflight_failed or any(r.status == FAILED for r in self.results)


def _request_dict(host, req: Request, net_timeout: float) -> dict:
    return facts_mod.probe_request(host.workdir, paths=sorted(req.paths), venvs=sorted(req.venvs),
                                   git=sorted(req.git), globs=sorted(req.globs), reads=sorted(req.reads),
                                   dirs=sorted(req.dirs), imports=req.imports, net_timeout=net_timeout,
                                   git_status=sorted(req.git_status))


class Applier:
    def __init__(self, conn, host, steps, vars_, *, check=False, force=False, verbose=False, run_id=None,
                 reporter=None, requirements=None, skip_preflight=False, facts=None, net_timeout=1.0,
                 diagnose=None, shared=None):
        self.conn, self.host, self.steps, self.vars = conn, host, steps, vars_
        self.check, self.force, self.verbose = check, force, verbose
        self.run_id = run_id or time.strftime("%Y%m%d-%H%M%S")
        self.reporter = reporter
        self.requirements, self.skip_preflight = requirements, skip_preflight
        self.recorded_facts = facts
        self.net_timeout = net_timeout
        # (conn, host, log path) -> findings; injected by the commands, since the engine knows no error table
        self.diagnose = diagnose
        self.shared = shared        # fleet.SharedBuilds: builds shared with the other hosts of this run
        self.base_request = Request()
        for s in steps:
            self.base_request.merge(s.request(vars_))
        if requirements is not None:          # the checkouts preflight compares with the guide's commits
            from ..checks.preflight import probe_git
            self.base_request.merge(Request(git=set(probe_git(requirements, vars_))))
        self.run = HostRun(host.name, check_mode=check)

    # -------------------------------------------------------------- facts
    def gather(self, extra: Request | None = None) -> dict:
        if self.recorded_facts is not None:
            return self.recorded_facts
        req = Request().merge(self.base_request)
        if extra:
            req.merge(extra)
        self.run.facts_round_trips += 0 if self.conn.is_local else 1
        return facts_mod.gather(self.conn, _request_dict(self.host, req, self.net_timeout))

    def _report(self, kind, *args):
        if self.reporter:
            getattr(self.reporter, kind)(self.host, *args)

    # -------------------------------------------------------------- main loop
    def apply(self) -> HostRun:
        try:
            return self._apply()
        except KeyboardInterrupt:
            if self.shared is not None:          # before leave(): a builder's leave would hand its build over
                self.shared.interrupt(self.host.name)
            raise
        finally:
            if self.shared is not None:
                self.shared.leave(self.host.name)

    def _plan_shared(self, facts):
        """Which of this host's builds could be shared: the steps that would build, with their inputs."""
        inputs = {}
        for step in self.steps:
            found = step.build_inputs(facts, self.vars)
            if found is not None and (self.force or step.needs(facts, self.vars).needed):
                inputs[step.name] = found
        self.shared.plan(self.host.name, inputs)

    def _apply(self) -> HostRun:
        from ..checks import FAIL, run_preflight_checks

        facts = self.gather()
        if self.requirements is not None:
            self.run.preflight = run_preflight_checks(facts, self.requirements, self.vars)
            if any(r.status == FAIL for r in self.run.preflight) and not self.skip_preflight:
                self.run.preflight_failed = True
                self._report("preflight_failed", self.run.preflight)
                return self.run
        if self.shared is not None:
            self._plan_shared(facts)
        failed: set[str] = set()
        pending: set[str] = set()    # check mode: steps that would run
        self._by_name = {s.name: s for s in self.steps}
        for step in self.steps:
            start = time.monotonic()
            if failed:      # what did not succeed in this run, for the choices made from the facts (installer.py)
                facts = {**facts, "run_failed": sorted(failed)}
            blocked = [d for d in step.after if d in failed and not step.runs_without(d, self.vars)]
            if blocked:
                failed.add(step.name)
                self._done(StepResult(step.name, SKIPPED, f"not run: {blocked[0]} did not succeed"), start)
                continue
            try:
                decision = step.needs(facts, self.vars)
            except StepError as exc:    # it cannot even decide: an input the user named is not what it says
                failed.add(step.name)
                self._done(StepResult(step.name, FAILED, str(exc)), start)
                continue
            if not decision.needed and not self.force:
                waiting = [d for d in self._deps(step) if d in pending] if self.check and step.judges_after else []
                if waiting:
                    pending.add(step.name)
                    self._done(StepResult(step.name, CHANGED, f"runs again after {waiting[-1]} changes (now: "
                                                              f"{decision.reason})"), start)
                    continue
                self._done(StepResult(step.name, OK, decision.reason), start)
                continue
            reason = mask_url(decision.reason if decision.needed else f"forced ({decision.reason})")
            role = self.shared.role(self.host.name, step.name) if self.shared is not None else None
            if role is not None and not self.check:
                result, facts = self._shared_build(step, role, reason, facts)
                if result is not None:
                    if result.status == FAILED:
                        failed.add(step.name)
                    self._done(result, start)
                    continue
                reason += "; building its own: its inputs differ from the shared build's"
            try:
                if role is not None and self.check:
                    cmds, reason = self._shared_plan(step, role, reason, facts)
                else:
                    cmds = step.commands(facts, self.vars)
            except StepError as exc:
                waiting = [d for d in self._deps(step) if d in pending]
                if self.check and waiting and isinstance(exc, NotYet):
                    # its input comes from a step that has not run: decided after that one
                    pending.add(step.name)
                    why = "" if str(exc) == reason else f" ({exc})"
                    self._done(StepResult(step.name, CHANGED, f"{reason}; commands decided after {waiting[-1]} "
                                                              f"runs{why}"), start)
                    continue
                failed.add(step.name)
                self._done(StepResult(step.name, FAILED, str(exc)), start)
                continue
            shown = [self._show(c) for c in cmds]
            if self.check:
                pending.add(step.name)
                self._done(StepResult(step.name, CHANGED, reason, commands=shown), start)
                continue
            result, facts = self._execute(step, cmds, reason, facts)
            if result.status == FAILED:
                failed.add(step.name)
                tolerated = step.tolerated_failure(facts, self.vars)
                if tolerated:
                    result = replace(result, status=SKIPPED, reason=f"{tolerated} ({result.reason})")
            self._done(result, start)
        return self.run

    # -------------------------------------------------------------- shared builds
    def _wheel_dir(self, facts, inputs) -> str:
        from .fleet import inputs_key

        return f"{facts['workdir']['path'].rstrip('/')}/.ocrdeploy/wheels/{inputs_key(inputs)}"

    def _shared_plan(self, step, role, reason, facts):
        """--check: the builder's plan is the wheel build and its install, a follower's the install."""
        from .fleet import host_ranges

        builder = self.shared.shown(self.host.name, role.group)
        wheel_dir = self._wheel_dir(facts, step.build_inputs(facts, self.vars))
        wheel = f"{wheel_dir}/<wheel built on {builder}>"
        install = step.wheel_install_commands(facts, self.vars, wheel)
        if role.kind == "build":
            return (step.wheel_commands(facts, self.vars, wheel_dir) + install,
                    f"{reason}; builds the wheel for {host_ranges(role.others)} too")
        return install, f"{reason}; installs the wheel built on {builder}"

    def _shared_build(self, step, role, reason, facts):
        """Build the group's wheel here, or wait for it and install it; (None, facts) when this host's inputs
        turn out to differ from the builder's (it then builds on its own, the usual way)."""
        from .fleet import WheelMismatch

        shared, group, me = self.shared, role.group, self.host.name
        inputs = step.build_inputs(facts, self.vars)
        wheel_dir = self._wheel_dir(facts, inputs)
        kind = role.kind
        if kind == "install":
            # the wheel's directory is made while the builder compiles: one round trip less once it is there
            # (should it fail, the copy says why)
            self.conn.run(["mkdir", "-p", "--", wheel_dir], timeout=60, ok_codes=range(0, 256))
            kind = {"wheel": "install", "failed": "failed", "build": "build"}[shared.wait(me, group)]
            if kind == "failed":
                return StepResult(step.name, FAILED, f"not built here: the shared build on {group.built_by} failed: "
                                                     f"{group.failure}"), facts
            if kind == "install" and group.wheel.inputs != inputs:
                shared.leave(me, group)
                shared.installed(me, group, own=True)
                return None, facts
        log = self._log_path(facts, step)
        ran: list[str] = []
        if kind == "build":
            shared.building(me, group)      # from here on this build is the group's only one (fleet.py)
            try:
                cmds = step.wheel_commands(facts, self.vars, wheel_dir)
            except StepError as exc:
                shared.fail(me, group, str(exc))
                return StepResult(step.name, FAILED, str(exc)), facts
            self._report("running", step.name, f"{reason}; building the wheel shared with "
                                               f"{len(group.members) - 1} more host(s)", 1)
            code, ran, failure = self._run_with_retries(step, cmds, log, facts, wheel_dir=wheel_dir,
                                                        wrap=lambda c: self._summed(c, wheel_dir))
            if failure is not None:
                ids = [f["id"] for f in failure.findings]
                shared.fail(me, group, failure.reason + (f" [{', '.join(ids)}]" if ids else "") + f"; log {log}")
                return failure, facts
            try:
                name, sha = shared.built_sum(self.conn, group, f"{wheel_dir}/.sha256")
                wheel = shared.fetch(self.conn, group, f"{wheel_dir}/{name}", name, sha, inputs)
            except (WheelMismatch, CommandFailed, OSError) as exc:
                shared.fail(me, group, f"the wheel could not be copied from {me}: {exc}")
                return StepResult(step.name, FAILED, f"built, but the wheel could not be fetched: {exc}",
                                  commands=ran, log=log), facts
            shared.publish(me, group, wheel)
        else:
            wheel = group.wheel
        path = f"{wheel_dir}/{wheel.name}"
        install = step.wheel_install_commands(facts, self.vars, path)
        if kind != "build":         # the copy, then its check on arrival and the install in one round trip
            try:
                self.conn.put(wheel.local, path)
            except (CommandFailed, OSError) as exc:
                return StepResult(step.name, FAILED, f"the wheel from {group.built_by} could not be copied here: "
                                                     f"{exc}"), facts
            first = install[0]
            install[0] = Command(["sh", "-c", Script(_CHECK_ARRIVAL, "sha256-on-arrival"), path, wheel.sha256,
                                  *first.argv], env=first.env, cwd=first.cwd, sudo=first.sudo, stdin=first.stdin)
        code, shown = self._run_logged(step, install, log)
        ran.extend(shown)
        if code == ARRIVAL_REFUSED and kind != "build":
            got = re.findall(r"sha256 (\S+) on arrival", self._tail(log, 5))
            return StepResult(step.name, FAILED, f"refused the wheel from {group.built_by}: sha256 "
                                                 f"{got[-1] if got else '?'} on arrival, the builder's is "
                                                 f"{wheel.sha256}", commands=ran, log=log), facts
        if kind != "build":
            shared.installed(me, group)
        if code != 0:
            return StepResult(step.name, FAILED, f"`{shown[-1]}` exited with {code}", commands=ran, log=log,
                              exit_code=code, tail=self._tail(log), findings=self._diagnose(log)), facts
        facts = self.gather(step.verify_request(self.vars))
        verdict = step.verify(facts, self.vars)
        if verdict.needed:
            return StepResult(step.name, FAILED, f"ran, but verification failed: {verdict.reason}", commands=ran,
                              log=log), facts
        where = "built here" if kind == "build" else f"installed from the wheel built on {group.built_by}"
        return StepResult(step.name, CHANGED, f"{reason}; {where} (sha256 {wheel.sha256[:12]})", commands=ran,
                          log=log, outcome=verdict.reason), facts

    @staticmethod
    def _summed(cmds, wheel_dir):
        """The wheel build's commands with its last one (the `pip wheel`) run in an emptied wheel_dir and
        followed, in the same command, by the sha256 of the wheel it built (fetched with the wheel:
        fleet.SharedBuilds.built_sum)."""
        last = cmds[-1]
        return [*cmds[:-1], Command(["sh", "-c", Script(_WHEEL_THEN_SUM, "fresh-wheel-dir-then-sha256"), wheel_dir, *last.argv],
                                    env=last.env, cwd=last.cwd, sudo=last.sudo, stdin=last.stdin)]

    def _deps(self, step) -> list[str]:
        """All steps this one depends on, directly or not, in plan order."""
        out, todo = [], list(step.after)
        while todo:
            d = todo.pop()
            if d not in out:
                out.append(d)
                if d in self._by_name:
                    todo.extend(self._by_name[d].after)
        names = [s.name for s in self.steps]
        return sorted(out, key=lambda n: names.index(n) if n in names else -1)

    def _show(self, cmd) -> str:
        return self.conn.shell(self.conn.prepare(cmd), mask=True)

    def _done(self, result: StepResult, start: float):
        result.seconds = round(time.monotonic() - start, 3)
        result.reason, result.tail = mask_url(result.reason), mask_url(result.tail)   # what is shown and kept
        self.run.results.append(result)
        self._report("step", result, self.check)

    def _log_path(self, facts, step) -> str:
        return f"{facts['workdir']['path'].rstrip('/')}/.ocrdeploy/logs/{self.run_id}/{step.name}.log"

    def _run_with_retries(self, step, cmds, log, facts, wheel_dir=None, wrap=None):
        """The commands, and the step's retry after a failure it knows (fewer compile jobs after an OOM kill),
        the shared build's `pip wheel` as the install (each attempt's commands through `wrap`): (exit code,
        commands shown, failed StepResult or None)."""
        attempt = 1
        ran: list[str] = []
        while True:
            code, shown = self._run_logged(step, wrap(cmds) if wrap else cmds, log)
            ran.extend(shown)
            if code == 0:
                return code, ran, None
            tail = self._tail(log)
            findings = self._diagnose(log)
            ids = [f["id"] for f in findings]
            retry = (step.retry(attempt, ids, facts, self.vars, wheel_dir=wheel_dir) if wheel_dir is not None
                     else step.retry(attempt, ids, facts, self.vars))
            if retry is None:
                return code, ran, StepResult(step.name, FAILED, f"`{shown[-1]}` exited with {code}", commands=ran,
                                             log=log, exit_code=code, tail=tail, findings=findings)
            attempt += 1
            self._report("retrying", step.name, findings, [self._show(c) for c in retry])
            cmds = retry

    def _execute(self, step, cmds, reason, facts):
        log = self._log_path(facts, step)
        self._report("running", step.name, reason, 1)
        code, ran, failure = self._run_with_retries(step, cmds, log, facts)
        if failure is not None:
            return failure, facts
        facts = self.gather(step.verify_request(self.vars))
        verdict = step.verify(facts, self.vars)
        if verdict.needed:
            return StepResult(step.name, FAILED, f"ran, but verification failed: {verdict.reason}", commands=ran,
                              log=log), facts
        return StepResult(step.name, CHANGED, reason, commands=ran, log=log, outcome=verdict.reason), facts

    # -------------------------------------------------------------- commands
    def _run_logged(self, step, cmds, log):
        shown = []
        for cmd in cmds:
            cmd = self.conn.prepare(cmd)  # the host's interpreter goes in before the log wrapper hides it
            text = self._show(cmd)
            shown.append(text)
            wrapped = Command(["sh", "-c", Script(_WRAP_TEE if self.verbose else _WRAP, "log-wrapper"), "sh", log, text,
                               *cmd.argv],
                              env=cmd.env, cwd=cmd.cwd, sudo=cmd.sudo)
            stop = threading.Event()
            poller = None
            if step.progress and self.reporter:
                poller = threading.Thread(target=self._poll_progress, args=(step.name, log, stop, step.progress),
                                          daemon=True)
                poller.start()
            try:
                self.run.commands_run += 1
                result = self.conn.run(wrapped, timeout=step.timeout, ok_codes=range(-1, 256), echo=self.verbose,
                                       stdin=cmd.stdin)
            except CommandFailed as exc:   # timed out
                result = exc.result
            finally:
                stop.set()
                if poller:
                    poller.join(timeout=5)
            if result.exit_code != 0:
                return (result.exit_code if result.exit_code is not None else -1), shown
        return 0, shown

    def _read_tail(self, log, nbytes=8192) -> bytes:
        if self.conn.is_local:
            try:
                with open(log, "rb") as fh:
                    fh.seek(max(0, os.path.getsize(log) - nbytes))
                    return fh.read()
            except OSError:
                return b""
        try:
            return self.conn.run(["tail", "-c", str(nbytes), log], ok_codes=range(0, 256), timeout=30).stdout.encode()
        except Exception:  # noqa: BLE001 - progress is best effort
            return b""

    def _poll_progress(self, name, log, stop, kind="ninja"):
        """Progress read from the log while the command runs: ninja's [N/M] or our byte counters."""
        while not stop.wait(1.0 if kind == "bytes" else 2.0):
            tail = self._read_tail(log)
            if kind == "bytes":
                latest = {}
                for label, done, total in BYTES.findall(tail):
                    latest[label.decode()] = (int(done), int(total))
                for label, (done, total) in latest.items():
                    self._report("progress", f"{name} {label}", done, total, "bytes")
            else:
                found = NINJA.findall(tail)
                if found:
                    done, total = found[-1]
                    self._report("progress", name, int(done), int(total))

    def _tail(self, log, lines=30) -> str:
        data = self._read_tail(log, 16384).decode("utf-8", "replace")
        return "\n".join(data.splitlines()[-lines:])

    def _diagnose(self, log) -> list[dict]:
        return self.diagnose(self.conn, self.host, log) if self.diagnose else []


def summarize(outcomes) -> tuple[list, dict, bool]:
    """Recap rows, the JSON per host and whether anything failed, from Session.map's outcomes of appliers."""
    rows, hosts, failed = [], {}, False
    for name, o in outcomes.items():
        if o.error:
            failed = True
            rows.append((name, None, o))
            hosts[name] = {"reachable": not o.unreachable, "error": o.error}
            continue
        failed |= o.value.failed
        rows.append((name, o.value.counts(), None))
        hosts[name] = o.value.to_dict()
    return rows, hosts, failed
