"""When `inv install` shares builds (commands/install.py _shared_builds), over local hosts (no SSH: the
SSH fleet is test_fleet.py's): on for two hosts or more that all run at once with something to build; off
with --no-shared-build, for one host, for steps that build nothing shareable, and when --forks holds hosts
back (their plans would wait for each other), which it says."""

import io

from rich.console import Console

from ocrdeploy.commands.install import _shared_builds
from ocrdeploy.inventory.model import Host
from ocrdeploy.provision.session import Session
from ocrdeploy.provision.step import Step


class Build(Step):
    name = "build"

    def build_inputs(self, facts, vars_):
        return {"src": "x"}


class Plain(Step):
    name = "plain"


def hosts(n):
    return [Host(f"h{i}", vars={"ansible_connection": "local"}) for i in range(1, n + 1)]


def shared(n, steps=Build, wanted=True, forks=16):
    out = io.StringIO()
    hs = hosts(n)
    with Session(hs, lazy=True, max_parallel=forks) as session:
        got = _shared_builds(session, {h.name: [steps()] for h in hs}, wanted, Console(file=out, width=200))
    if got is not None:
        got.close()
    return got, out.getvalue()


def test_every_host_running_at_once_shares():
    got, _ = shared(3)
    assert got is not None and got.order == ["h1", "h2", "h3"]
    got, _ = shared(2, forks=2)
    assert got is not None


def test_no_shared_build_one_host_nothing_to_share_or_too_few_forks_is_off():
    assert shared(3, wanted=False)[0] is None
    assert shared(1)[0] is None
    assert shared(3, steps=Plain)[0] is None
    got, said = shared(3, forks=2)
    assert got is None and "shared builds off: 3 hosts, 2 at once (--forks); each host builds its own" in said
