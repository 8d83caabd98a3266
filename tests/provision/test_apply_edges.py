"""The applier's edges with small steps whose commands are real shell commands on this machine (no pip): what a
step's result says it took, the progress read from a running command's log, and a failed step's log tail read
the way a remote host's is (`tail -c` run on the host).  Each test here was written against a mutant of
provision/apply.py that the rest of the provision suite let through."""

import time

from ocrdeploy.inventory.model import Host
from ocrdeploy.provision.apply import Applier
from ocrdeploy.provision.command import Command
from ocrdeploy.provision.connection import LocalConnection
from ocrdeploy.provision.step import Decision, Request, Step, file_fact, wd


class Marker(Step):
    """Done when its marker file exists; its command runs `script` in sh, then makes the marker."""

    def __init__(self, name, script, progress=None, after=()):
        self.name, self.script, self.progress, self.after = name, script, progress, after
        self.marker = wd(f"{name}.done")

    def request(self, v):
        return Request(paths={self.marker})

    def needs(self, facts, v):
        if file_fact(facts, self.marker)["exists"]:
            return Decision(False, "marked")
        return Decision(True, "no marker")

    def commands(self, facts, v):
        path = f"{facts['workdir']['path']}/{self.name}.done"
        return [Command(["sh", "-c", f'{self.script} && touch "$0"', path])]


class Recorder:
    def __init__(self):
        self.bars, self.steps, self.running_lines = [], [], []

    def running(self, host, step, reason, attempt):
        self.running_lines.append((step, reason, attempt))      # attempt 1 is the line the terminal shows

    def retrying(self, host, step, findings, commands):
        pass

    def step(self, host, result, check):
        self.steps.append(result)

    def progress(self, host, step, done, total, unit="items"):
        self.bars.append((step, done, total, unit))


class HostSideTail(LocalConnection):
    """This machine, with the log read as a remote host's is: `tail -c` run through the connection."""

    is_local = False


def run(tmp_path, steps, conn_class=LocalConnection, **kw):
    host = Host("localhost", vars={"workdir": str(tmp_path / "wd")})
    return Applier(conn_class(host), host, steps, host.vars, **kw).apply()


def test_a_steps_seconds_are_the_time_it_took(tmp_path):
    start = time.monotonic()
    result = run(tmp_path, [Marker("slow", "sleep 0.3")])
    took = time.monotonic() - start
    [r] = result.results
    assert r.status == "changed" and 0.3 <= r.seconds <= took


def test_byte_progress_is_read_from_the_log_while_the_command_runs(tmp_path):
    rec = Recorder()
    script = "echo '@@progress main.safetensors 512 2048'; sleep 1.6; echo '@@progress main.safetensors 2048 2048'"
    result = run(tmp_path, [Marker("download", script, progress="bytes")], reporter=rec)
    assert [r.status for r in result.results] == ["changed"]
    assert ("download main.safetensors", 512, 2048, "bytes") in rec.bars
    assert rec.running_lines == [("download", "no marker", 1)]


def test_a_failed_steps_tail_is_read_from_the_host_log(tmp_path):
    for conn_class in (LocalConnection, HostSideTail):
        out = tmp_path / conn_class.__name__
        result = run(out, [Marker("build", "echo compiling; echo 'error: no space left on device'; exit 3")],
                     conn_class=conn_class)
        [r] = result.results
        assert r.status == "failed" and r.exit_code == 3, conn_class
        assert r.tail.splitlines()[-2:] == ["compiling", "error: no space left on device"], conn_class


def test_an_unreachable_host_fails_the_run_and_its_recap_row_says_why(tmp_path):
    from ocrdeploy.provision.apply import summarize
    from ocrdeploy.provision.session import HostOutcome

    ok = run(tmp_path, [Marker("one", "true")])
    rows, hosts, failed = summarize({"gpu1": HostOutcome("gpu1", value=ok)})
    assert failed is False and hosts["gpu1"]["counts"]["changed"] == 1
    down = HostOutcome("gpu2", error="ssh: connect to host gpu2 port 22: Connection refused", unreachable=True)
    rows, hosts, failed = summarize({"gpu1": HostOutcome("gpu1", value=ok), "gpu2": down})
    assert failed is True and rows[1] == ("gpu2", None, down)
    assert hosts["gpu2"] == {"reachable": False, "error": down.error}
