"""The controller's side of a shared build without hosts (provision/fleet.py): which hosts form a group,
what the run's summary says about each group, and the wheel's sha256 line and copy as they arrive from the
builder (over a real LocalConnection).  test_fleet.py runs whole fleets over SSH; these are the edges."""

import hashlib
import threading

import pytest

from ocrdeploy.inventory.model import Host
from ocrdeploy.provision.connection import LocalConnection
from ocrdeploy.provision.fleet import SharedBuilds, Wheel, WheelMismatch, inputs_key

SAME, OTHER = {"vllm_src": "1", "python": "3.13"}, {"vllm_src": "2", "python": "3.13"}


def planned(order, inputs_by_host):
    """A SharedBuilds over `order` once every host has planned its inputs ({host: {step: inputs}})."""
    shared = SharedBuilds(order)
    threads = [threading.Thread(target=shared.plan, args=(h, i)) for h, i in inputs_by_host.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in threads)
    return shared


def test_a_host_whose_inputs_no_other_shares_builds_alone_and_is_no_group():
    shared = planned(["a", "b", "c"], {h: {"vllm-compile": SAME if h != "c" else OTHER} for h in "abc"})
    assert shared.role("c", "vllm-compile") is None            # the usual editable build, not a wheel of one
    assert [g.members for g in shared.groups()] == [["a", "b"]]
    assert len(shared.summary()) == 1
    shared.close()


def test_the_key_does_not_depend_on_the_order_the_inputs_were_written_in():
    assert inputs_key({"a": 1, "b": {"x": 1, "y": 2}}) == inputs_key({"b": {"y": 2, "x": 1}, "a": 1})


def test_the_summary_says_who_built_who_installed_and_who_built_their_own():
    order = ["gpu1", "gpu2", "gpu3", "gpu4", "gpu5"]
    shared = planned(order, {h: {"vllm-compile": SAME} for h in order})
    group = shared.role("gpu1", "vllm-compile").group
    shared.publish("gpu1", group, Wheel("vllm-0.1-cp313.whl", "ab" * 32, "/nowhere", SAME))
    for h in ("gpu4", "gpu2", "gpu3"):                        # arrivals in any order, listed in the run's order
        shared.installed(h, group)
    shared.installed("gpu5", group, own=True)
    assert group.installed == ["gpu2", "gpu3", "gpu4"]
    assert shared.summary() == ["vllm-compile: built on gpu1, installed from wheel on gpu2..gpu4; "
                                "built their own (inputs differed): gpu5"]
    shared.close()


def test_a_failed_build_is_summed_up_once_naming_the_hosts_left_without_it():
    order = ["gpu1", "gpu2", "gpu3"]
    shared = planned(order, {h: {"vllm-compile": SAME} for h in order})
    group = shared.role("gpu2", "vllm-compile").group
    shared.fail("gpu1", group, "nvcc killed")
    assert shared.summary() == ["vllm-compile: build on gpu1 failed (nvcc killed); not installed on gpu2, gpu3"]
    shared.close()


# ---------------------------------------------------------------- the builder's sha256 line and the copy
@pytest.fixture
def local():
    return LocalConnection(Host("localhost"))


@pytest.fixture
def shared_group():
    shared = planned(["a", "b"], {h: {"vllm-compile": SAME} for h in "ab"})
    yield shared, shared.role("a", "vllm-compile").group
    shared.close()


def test_the_sha256_line_names_one_wheel_in_text_or_binary_mode(tmp_path, local, shared_group):
    shared, group = shared_group
    sums = tmp_path / ".sha256"
    sums.write_text(f"{'c' * 64}  vllm-0.1-cp313-linux_x86_64.whl\n")
    assert shared.built_sum(local, group, str(sums)) == ("vllm-0.1-cp313-linux_x86_64.whl", "c" * 64)
    sums.write_text(f"{'c' * 64} *vllm-0.1-cp313-linux_x86_64.whl\n")       # sha256sum -b's marker
    assert shared.built_sum(local, group, str(sums)) == ("vllm-0.1-cp313-linux_x86_64.whl", "c" * 64)


def test_two_wheels_beside_each_other_are_refused(tmp_path, local, shared_group):
    shared, group = shared_group
    sums = tmp_path / ".sha256"
    sums.write_text(f"{'c' * 64}  vllm-0.1-a.whl\n{'d' * 64}  vllm-0.1-b.whl\n")
    with pytest.raises(OSError, match="expected one wheel in .*, found 2"):
        shared.built_sum(local, group, str(sums))


def test_the_fetched_wheel_is_kept_only_when_its_sha256_is_the_builders(tmp_path, local, shared_group):
    shared, group = shared_group
    built = tmp_path / "vllm-0.1.whl"
    built.write_bytes(b"the wheel's bytes")
    good = hashlib.sha256(built.read_bytes()).hexdigest()
    wheel = shared.fetch(local, group, str(built), built.name, good, SAME)
    assert wheel.sha256 == good and open(wheel.local, "rb").read() == b"the wheel's bytes"
    with pytest.raises(WheelMismatch, match=f"has sha256 {good}, the builder computed {'0' * 64}"):
        shared.fetch(local, group, str(built), built.name, "0" * 64, SAME)
    import os

    assert not os.path.exists(wheel.local)                   # the bad copy is not left for a follower


def test_a_check_plans_builder_stays_the_builder_when_its_check_ends_first():
    """--check builds nothing: the builder's run ending (often first: it has nothing to wait for) must not
    hand the build to the next host, or the hosts' plans name two builders (seen in CI: gpu1 and gpu2 both
    "builds the wheel for ... too")."""
    shared = planned(["a", "b", "c"], {h: {"vllm-compile": SAME} for h in ("a", "b", "c")})
    group = shared.role("a", "vllm-compile").group
    assert shared.shown("a", group) == "a"
    shared.leave("a")                       # a's check ended
    assert shared.role("b", "vllm-compile").kind == "install"
    assert shared.shown("b", group) == "a" and shared.role("c", "vllm-compile").group.builder == "a"


def test_a_builder_that_ends_before_showing_its_build_hands_it_over():
    """An earlier step of the builder failed (its plan never reached the build): the next host builds."""
    shared = planned(["a", "b", "c"], {h: {"vllm-compile": SAME} for h in ("a", "b", "c")})
    group = shared.role("b", "vllm-compile").group
    assert shared.shown("b", group) == "a"  # a follower showing its plan claims nothing
    shared.leave("a")
    assert shared.role("b", "vllm-compile").kind == "build" and shared.shown("b", group) == "b"
