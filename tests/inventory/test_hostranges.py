import pytest

from ocrdeploy.inventory.hostranges import MAX_HOSTS, RangeError, expand, is_port, split_port


@pytest.mark.parametrize("pattern,names", [
    ("gpu1", ["gpu1"]),
    ("node[1:3]", ["node1", "node2", "node3"]),
    ("node[01:03]", ["node01", "node02", "node03"]),
    ("node[8:10]", ["node8", "node9", "node10"]),
    ("node[a:c]", ["nodea", "nodeb", "nodec"]),
    ("n[0:6:3].lab", ["n0.lab", "n3.lab", "n6.lab"]),
    ("r[1:2]-n[a:b]", ["r1-na", "r1-nb", "r2-na", "r2-nb"]),
    ("x[:1]", ["x0", "x1"]),
    ("n[0:10:5]", ["n0", "n5", "n10"]),      # a lone 0 is no zero padding: the end may be wider
])
def test_ranges_expand_like_ansible(pattern, names):
    assert expand(pattern) == names


@pytest.mark.parametrize("pattern,why", [
    ("n[1:]", "has no end"),
    ("n[3:1]", "runs backwards"),
    ("n[c:a]", "runs backwards"),
    ("n[01:100]", "same width"),
    ("n[1:2", "'[' without ']'"),
    ("n1:2]", "']' without '['"),
    ("n[1-3]", "[begin:end]"),
    ("n[x:yy]", "neither a number range nor a letter range"),
    ("n[1:4:0]", "step"),
    ("n[1:4:1:2]", "[begin:end] or [begin:end:step], got [1:4:1:2]"),
    (f"n[1:{MAX_HOSTS + 1}]", "at most"),
    ("a[1:200]b[1:200]", "at most"),
])
def test_bad_ranges_say_why(pattern, why):
    with pytest.raises(RangeError, match=None) as err:
        expand(pattern)
    assert why in str(err.value)


def test_port_after_a_name_or_a_range():
    assert split_port("gpu1:2222") == ("gpu1", 2222)
    assert split_port("node[1:3]:2200") == ("node[1:3]", 2200)
    assert split_port("node[1:3]") == ("node[1:3]", None)
    assert split_port("fe80::1") == ("fe80::1", None)
    assert split_port("[2001:db8::2]:2222") == ("2001:db8::2", 2222)      # Ansible's bracketed IPv6 and its port
    assert split_port("[1:3]:22") == ("[1:3]", 22)                        # a bracketed range is not an address


def test_exactly_max_hosts_expand_and_one_more_does_not():
    """The bound is MAX_HOSTS names, reached by one range or by two multiplied (73 x 137 = MAX_HOSTS + 1)."""
    names = expand(f"n[1:{MAX_HOSTS}]")
    assert len(names) == MAX_HOSTS and names[-1] == f"n{MAX_HOSTS}"
    with pytest.raises(RangeError, match=f"expands to {MAX_HOSTS + 1} hosts"):
        expand("r[1:73]-n[1:137]")


@pytest.mark.parametrize("pattern,names", [("n[a:a]", ["na"]), ("n[7:7]", ["n7"]), ("n[07:07]", ["n07"]),
                                           ("n[0:9:5]", ["n0", "n5"])])
def test_a_range_of_one_and_a_step_past_the_end(pattern, names):
    assert expand(pattern) == names


@pytest.mark.parametrize("value,ok", [(1, True), ("22", True), (65535, True), ("65535", True), (65536, False),
                                      ("65536", False), (0, False), (True, False), ("٢٢", False), ("+22", False)])
def test_a_port_is_1_to_65535_and_never_a_boolean(value, ok):
    assert is_port(value) is ok
