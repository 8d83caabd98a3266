import pytest

from ocrdeploy.errors import UsageError
from ocrdeploy.inventory import load_inventory, select_hosts
from ocrdeploy.inventory.patterns import split_pattern

INI = """\
[a100]
gpu[1:3]

[h100]
gpu4
gpu10

[ubuntu]
gpu2
gpu4
cpu1
"""


@pytest.fixture
def inv(tmp_path, monkeypatch):
    monkeypatch.setenv("OCRDEPLOY_SSH_CONFIG", str(tmp_path / "no-ssh-config"))
    p = tmp_path / "hosts"
    p.write_text(INI)
    return load_inventory(p)


def names(inv, host=None, limit=None, group=None):
    return [h.name for h in select_hosts(inv, host=host, group=group, limit=limit)]


@pytest.mark.parametrize("pattern,expected", [
    ("gpu*", ["gpu1", "gpu2", "gpu3", "gpu4", "gpu10"]),
    ("gpu?", ["gpu1", "gpu2", "gpu3", "gpu4"]),
    ("all:!gpu2", ["gpu1", "gpu3", "gpu4", "gpu10", "cpu1"]),
    ("all,!gpu2", ["gpu1", "gpu3", "gpu4", "gpu10", "cpu1"]),
    ("!gpu2", ["gpu1", "gpu3", "gpu4", "gpu10", "cpu1"]),
    ("a100:&ubuntu", ["gpu2"]),
    ("a100:h100:&ubuntu", ["gpu2", "gpu4"]),
    ("&ubuntu:a100", ["gpu2"]),              # the & term narrows whatever comes first
    ("ubuntu:!a100", ["gpu4", "cpu1"]),
    ("h100,gpu1", ["gpu4", "gpu10", "gpu1"]),
    ("~gpu[0-9]{2}", ["gpu10"]),
    ("gpu[2:3]", ["gpu2", "gpu3"]),          # the inventory's range, not a glob class
    ("gpu[24]", ["gpu2", "gpu4"]),           # a glob class
    ("a1*", ["gpu1", "gpu2", "gpu3"]),       # globs match group names too
])
def test_patterns_select_like_ansible(inv, pattern, expected):
    assert names(inv, pattern) == expected


def test_limit_narrows_the_selection(inv):
    assert names(inv, "all", limit="gpu[1:2]") == ["gpu1", "gpu2"]
    assert names(inv, "a100", limit="!gpu1") == ["gpu2", "gpu3"]
    assert names(inv, limit="h100") == ["gpu4", "gpu10"]   # --limit alone picks from every host
    with pytest.raises(UsageError, match="--limit 'cpu1' leaves none"):
        names(inv, "a100", limit="cpu1")


@pytest.mark.parametrize("pattern,message", [
    ("gpu9*", "pattern 'gpu9*' matches no host or group"),
    ("all:!gpu22", "unknown host 'gpu22'"),       # a typo in an exclusion is an error, not a no-op
    ("a100:&nope", "unknown host 'nope'"),
    ("a100:!a100", "selects no host"),
    ("~gpu(", "not a valid pattern"),
    ("all:!", "must be followed by a host or group"),
])
def test_patterns_that_select_nothing_say_so(inv, pattern, message):
    with pytest.raises(UsageError, match=None) as err:
        names(inv, pattern)
    assert message in str(err.value)


def test_split_keeps_ranges_and_known_names_whole():
    assert split_pattern("a:b") == ["a", "b"]
    assert split_pattern("node[1:3]:!node2") == ["node[1:3]", "!node2"]
    assert split_pattern("a , b") == ["a", "b"]
    assert split_pattern("fe80::1") == ["fe80::1"]
    assert split_pattern("odd:name", known={"odd:name"}) == ["odd:name"]


@pytest.mark.parametrize("pattern,expected", [
    ("a100[0]", ["gpu1"]), ("a100[-1]", ["gpu3"]), ("a100[-3]", ["gpu1"]), ("a100[2]", ["gpu3"]),
    ("a100[1:2]", ["gpu2", "gpu3"]), ("ubuntu[1:]", ["gpu4", "cpu1"]),
])
def test_group_subscripts_reach_both_ends(inv, pattern, expected):
    """group[-len] is the first host and group[len-1] the last, as in Ansible's _apply_subscript."""
    assert names(inv, pattern) == expected


@pytest.mark.parametrize("pattern", ["a100[3]", "a100[-4]"])
def test_a_subscript_past_either_end_says_how_many_hosts(inv, pattern):
    with pytest.raises(UsageError, match=r"group 'a100' has 3 hosts, none at that position"):
        names(inv, pattern)


def test_all_in_an_inventory_without_hosts_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("OCRDEPLOY_SSH_CONFIG", str(tmp_path / "no-ssh-config"))
    p = tmp_path / "hosts"
    p.write_text("[empty]\n")
    with pytest.raises(UsageError, match=r"--host all: no hosts \("):
        names(load_inventory(p), "all")
