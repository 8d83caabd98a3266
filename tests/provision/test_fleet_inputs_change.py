"""A follower whose build inputs changed between the plan and its build step (an earlier step of its run
changed torch, the source moved on) must not install the wheel built from the plan's inputs: it builds its
own, and the run's summary says so.  Two local hosts with the stand-in source (test_fleet.py's local_pair);
the change is made where the follower reads its inputs the second time, at its build step."""

from test_fleet import compiles, local_pair  # noqa: F401 - local_pair is the fixture

from ocrdeploy.recipes.cuda_steps import VllmCompile


def test_a_follower_whose_inputs_changed_before_its_build_builds_its_own(local_pair, monkeypatch):  # noqa: F811
    marker, vars_, run = local_pair
    real, reads = VllmCompile.build_inputs, []

    def build_inputs(self, facts, v):
        got = real(self, facts, v)
        if got is not None and self.src == vars_["b"]["vllm_src"]:
            reads.append(got)
            if len(reads) > 1:                     # at its build step: torch changed since the plan
                got = dict(got, pins={**got["pins"], "torch": "2.99.0"})
        return got

    monkeypatch.setattr(VllmCompile, "build_inputs", build_inputs)
    shared, runs, errors = run()
    assert not errors and len(reads) >= 2
    assert [r.status for r in runs["a"].results] == [r.status for r in runs["b"].results] == ["changed"]
    [group] = shared.groups()
    assert group.built_by == "a" and group.own == ["b"] and group.installed == []
    assert compiles(marker) == 2                   # a's wheel, and b's own build
    assert "building its own: its inputs differ" in runs["b"].results[0].reason
    assert shared.summary() == ["vllm-compile: built on a; built their own (inputs differed): b"]
