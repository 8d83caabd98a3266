"""Every table entry against its recorded real excerpt and its near-miss (tests/fixtures/diagnose/cases.yaml)."""

from pathlib import Path

import pytest
import yaml

from ocrdeploy.diagnose import scanner
from ocrdeploy.diagnose.table import load_table

CASES = yaml.safe_load((Path(__file__).parents[1] / "fixtures" / "diagnose" / "cases.yaml").read_text())
RULES = load_table()
WIRE = [r.to_dict() for r in RULES]


def found_ids(tmp_path, text, engine):
    log = tmp_path / "case.log"
    log.write_bytes(text.replace("\\e", "\x1b").encode("utf-8"))
    report = scanner.scan(str(log), WIRE, engine=engine)
    return {f["id"] for f in report["findings"] + report["harmless"]}


def test_every_entry_has_a_case_with_a_source_and_a_near_miss():
    covered = {c["rule"] for c in CASES}
    assert covered == {r.id for r in RULES}
    for c in CASES:
        assert c.get("source") and c.get("near_miss") and c.get("log"), c["rule"]


@pytest.mark.parametrize("engine", ["grep", "python"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c["rule"])
def test_excerpt_matches_and_near_miss_does_not(case, engine, tmp_path):
    ids = found_ids(tmp_path, case["log"], engine)
    assert case["rule"] in ids, f"{case['rule']} not found in its excerpt (found {sorted(ids)})"
    for other in case.get("not", []):
        assert other not in ids, f"{other} should be overridden by {case['rule']}"
    assert case["rule"] not in found_ids(tmp_path, case["near_miss"], engine)
