"""The literals the table derives from a pattern (table.derive_literals) and the filling of cause/fix texts
(table.fill): every line a pattern matches holds one of its literals (else the scanner never runs the regex
on it), and the literal chosen is the most selective one that is required."""

import re

import pytest

from ocrdeploy.diagnose.table import derive_literals, fill

# (pattern, lines it matches): each line must contain one of the derived literals
MATCHED = [
    (r"xy(?:optional_part)?zzz found", ["xyzzz found", "xyoptional_partzzz found"]),
    (r"worker(?: process)* died: cuda", ["worker died: cuda", "worker process process died: cuda"]),
    (r"(?:cuda_error_xyz|\d{5}) happened", ["12345 happened", "cuda_error_xyz happened"]),
    (r"(?:sm_90|sm_120a) is not (?:supported|compatible)", ["sm_120a is not compatible", "sm_90 is not supported"]),
    (r"^\s*Killed\b", ["  Killed"]),
]


@pytest.mark.parametrize("pattern,lines", MATCHED, ids=[p for p, _ in MATCHED])
def test_every_line_a_pattern_matches_holds_one_of_its_literals(pattern, lines):
    lits = derive_literals(pattern)
    assert lits, pattern
    for line in lines:
        assert re.search(pattern, line), line
        assert any(lit in line.lower() for lit in lits), (line, lits)


@pytest.mark.parametrize("pattern,literals", [
    (r"abc(?:defgh)+?ijk", ["defgh"]),                          # a lazy repeat of one or more is required too
    (r"abc(?:defgh)+ijk", ["defgh"]),
    (r"(?:ab|longalternative) rest_of_it", [" rest_of_it"]),      # a choice is as selective as its shortest
    (r"(?:tritonbackend|ptxas_compiler) fatal: (?:OOM|lost)", ["ptxas_compiler", "tritonbackend"]),
    (r"fatal\b: oom_killer", ["fatal: oom_killer"]),                # an anchor consumes nothing: one run
], ids=["lazy repeat", "repeat", "short alternative", "alternatives", "anchor inside"])
def test_the_most_selective_required_literal_is_chosen(pattern, literals):
    assert derive_literals(pattern) == literals


def test_a_choice_with_a_short_alternative_has_no_literal():
    """Two characters would match on most lines: the entry must name its literals itself."""
    assert derive_literals(r"ab|longalternative") is None


@pytest.mark.parametrize("value", ["", None])
def test_an_empty_value_is_filled_as_its_name(value):
    assert fill("rm -rf {workdir}/cache", {"workdir": value}) == "rm -rf <WORKDIR>/cache"


@pytest.mark.parametrize("text", ["a } b", "a { b", "{workdir!r}"])
def test_a_text_that_is_not_a_valid_template_is_given_back_as_it_is(text):
    assert fill(text, {"workdir": "/w"}) == text
