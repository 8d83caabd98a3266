"""yamlfile: the lines a loaded mapping remembers, and check_size's count and depth exactly at their limits."""

import pytest
import yaml

from ocrdeploy.errors import UsageError
from ocrdeploy.inventory import load_inventory
from ocrdeploy.inventory.yamlfile import TooLarge, check_size, load_yaml


def test_a_mapping_remembers_its_own_line_and_each_key_s(tmp_path):
    """A rules file's entry that lacks a key is reported at the entry's own line (diagnose/table.py's _where)."""
    p = tmp_path / "rules.yaml"
    p.write_text("# my rules\n\n- id: a\n  fix: f\n- id: b\n\n  cause: c\n")
    first, second = load_yaml(p)
    assert (first.line, first.line_of("id"), first.line_of("fix")) == (3, 3, 4)
    assert (second.line, second.line_of("cause"), second.line_of("missing")) == (5, 7, 5)


@pytest.mark.parametrize("value,values,depth", [
    ([], 1, 1), ("x", 1, 0), (["a", "b"], 3, 1), ({"k": "v"}, 3, 1), ([[]], 2, 2), ([["a"]], 3, 2),
    ({"k": [1, 2]}, 5, 2),
])
def test_values_are_counted_as_written_out_and_the_depth_is_the_containers(value, values, depth):
    """Each list or mapping counts 1, each key and scalar 1; the depth counts containers only (a scalar adds none)."""
    assert check_size(value) == values
    if depth:                               # a scalar alone is never refused
        assert check_size(value, limit=values) == values
        with pytest.raises(TooLarge, match=f"more than {values - 1} values"):
            check_size(value, limit=values - 1)
        check_size(value, max_depth=depth)
        with pytest.raises(TooLarge, match=f"nested more than {depth - 1} levels"):
            check_size(value, max_depth=depth - 1)


def test_a_shared_value_is_counted_once_per_place_it_is_written():
    inner = ["a"] * 9                       # 10 values
    assert check_size([inner, inner, inner]) == 31
    assert check_size({"x": inner, "y": [inner]}) == 1 + 2 + 10 + 11


def _var_inventory(tmp_path, value):
    p = tmp_path / "inv.yml"
    p.write_text(yaml.safe_dump({"all": {"hosts": {"h": {"v": value}}}}))    # repeated objects become aliases
    return p


def test_an_inventory_var_of_exactly_the_limit_loads_and_one_more_is_refused(tmp_path):
    """MAX_VAR_VALUES is 100000: 1 + 999 x (1 + 99) + 99 values loads, one scalar more does not."""
    inner = ["s"] * 99
    value = [inner] * 999 + ["t"] * 99
    assert check_size(value) == 100_000
    assert load_inventory(_var_inventory(tmp_path, value)).hosts["h"].vars["v"][-1] == "t"
    with pytest.raises(UsageError, match="inv.yml:4: host 'h': v stands for more than 100000 values"):
        load_inventory(_var_inventory(tmp_path, value + ["u"]))


def test_an_inventory_var_nested_exactly_100_deep_loads(tmp_path):
    """MAX_VALUE_DEPTH is 100 lists or mappings, whatever the innermost holds (nothing, a scalar, a key)."""
    for leaf in ([], ["leaf"], {"k": "v"}):
        value = leaf
        for _ in range(99):
            value = [value]
        check_size(value, max_depth=100)
        with pytest.raises(TooLarge):
            check_size(value, max_depth=99)
        load_inventory(_var_inventory(tmp_path, value))
        with pytest.raises(UsageError, match="v is nested more than 100 levels deep"):
            load_inventory(_var_inventory(tmp_path, [value]))
