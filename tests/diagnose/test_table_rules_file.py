"""A user's rules file (--rules) as the table loads it: what an entry may leave out or spell loosely, and
each mistake a one-line UsageError naming the file (a FIFO or a directory at once, not after a hang)."""

import os
import subprocess
import sys

import pytest
import yaml

from ocrdeploy.diagnose.engine import scan_local
from ocrdeploy.diagnose.table import load_table, parse_rules
from ocrdeploy.errors import UsageError

BASE = {"id": "my-rule", "stage": "start", "patterns": ["worker exploded on startup"], "cause": "c", "fix": "f"}


def one(**changes):
    entry = {**BASE, **changes}
    (rule,) = parse_rules([{k: v for k, v in entry.items() if v is not None}], "mine.yaml", "mine.yaml")
    return rule


def test_loose_spellings_a_rules_file_may_use():
    rule = one(patterns="worker exploded on startup", unless="dry run", title=None,
               cause="  the worker ran out of {workdir}\n", fix=42)
    assert rule.patterns == ["worker exploded on startup"] and rule.unless == ["dry run"]
    assert rule.title == "my-rule"                                     # no title: the id
    assert (rule.cause, rule.fix) == ("the worker ran out of {workdir}", "42")    # a YAML block's newline dropped
    assert (rule.severity, rule.within) == ("error", 20)


def test_given_literals_match_whatever_the_case(tmp_path):
    rules = parse_rules([{**BASE, "patterns": ["(?i)CUDA OOM at step \\d+"], "literals": ["CUDA OOM"]}], "m", "m")
    log = tmp_path / "run.log"
    log.write_text("INFO ok\nRuntimeError: cuda oom at step 7\n")
    (rep,) = scan_local([str(log)], rules)
    assert [f["id"] for f in rep["findings"]] == ["my-rule"]


@pytest.mark.parametrize("changes,message", [
    ({"unless": ["(unclosed"]}, "bad regex '(unclosed'"),
    ({"literals": ["ok", "long enough"]}, "literals must be 3+ characters"),
    ({"not_levels": ["FATAL"]}, "level 'FATAL' is not one of"),
    ({"overrides": ["no-such-rule"]}, "overrides unknown rule 'no-such-rule'"),
    ({"id": "my-rule!"}, "must be lowercase letters"),
    ({"fix": None}, "lacks 'fix'"),
    ({"bogus": 1, "alpha": 2}, "unknown field 'alpha'"),
], ids=["bad unless", "short literal", "bad not_levels", "unknown override", "id with junk after", "no fix",
        "unknown fields"])
def test_a_mistake_in_a_rules_file_is_an_input_error(tmp_path, changes, message):
    entry = {k: v for k, v in {**BASE, **changes}.items() if v is not None}
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump([entry]))
    with pytest.raises(UsageError) as exc:
        load_table([str(path)])
    assert message in str(exc.value) and str(exc.value).count("\n") == 0


def test_an_id_the_builtin_table_has_is_refused(tmp_path):
    builtin = load_table()[0].id
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump([{**BASE, "id": builtin}]))
    with pytest.raises(UsageError, match=f"rule id '{builtin}' is defined twice"):
        load_table([str(path)])


def test_a_fifo_or_a_directory_as_rules_is_refused_at_once(tmp_path):
    fifo = tmp_path / "rules.fifo"
    os.mkfifo(fifo)
    code = ("import sys; from ocrdeploy.diagnose.table import load_table\n"
            "try:\n    load_table([sys.argv[1]])\nexcept Exception as e:\n    print(e)")
    for path, said in ((fifo, "not a regular file"), (tmp_path, "is a directory, expected a YAML file")):
        out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=20).stdout
        assert said in out, out
