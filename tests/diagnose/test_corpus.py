"""The table against the real corpus: every case on every engine, near-misses, the safety net, benign logs."""

import pytest

import corpus

CORPUS = corpus.load()
SCAN = corpus.Scanner()
MIN_REAL_CASES = 4


def _id(item):
    return f"{item['_file']}:{item.get('entry') or item.get('class') or item.get('file') or 'near-miss'}"


def test_every_case_names_a_real_entry_a_pattern_and_a_source():
    rules = {r.id: r for r in SCAN.rules}
    for item in CORPUS["cases"]:
        assert item["entry"] in rules, item
        assert 0 <= item["pattern"] < len(rules[item["entry"]].patterns), item
        assert item.get("source") and ("log" in item or "file" in item), item
        for other in item.get("not", []):
            assert other in rules, item
    for item in CORPUS["near_misses"]:
        assert item.get("source") and item["not"] and all(e in rules for e in item["not"]), item


def test_every_entry_has_a_case_and_every_pattern_is_proven():
    """No entry without a case, no pattern no case is written for (a dead pattern is a guess)."""
    proven = {(c["entry"], c["pattern"]) for c in CORPUS["cases"]}
    missing = [(r.id, i) for r in SCAN.rules for i in range(len(r.patterns)) if (r.id, i) not in proven]
    assert missing == []


def test_real_cases_per_entry_are_counted_apart_from_guide_wordings():
    real = {}
    for c in CORPUS["cases"]:
        if corpus.is_real(c):
            real[c["entry"]] = real.get(c["entry"], 0) + 1
    # the entries the public threads give at least four real wordings for; the others are guide-only
    # or rare and stay listed by bench/diagnose_corpus.py
    assert sum(1 for n in real.values() if n >= MIN_REAL_CASES) >= 25


def test_source_derived_wordings_stay_in_their_own_file_and_name_their_source():
    """A filled-in format string is never mixed with the real cases: it lives in derived.yaml, says where the
    format string was read (repository or vendor reference, file, versions), and is not counted as real."""
    for c in CORPUS["cases"]:
        in_file = c["_file"] == corpus.DERIVED_FILE
        assert in_file == bool(c.get("derived")), c
        if in_file:
            assert not corpus.is_real(c) and len(c["derived"]) > 20 and not c.get("guide"), c
    assert any(c["_file"] == corpus.DERIVED_FILE for c in CORPUS["cases"])


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("case", CORPUS["cases"], ids=_id)
def test_case_is_recognised_through_its_pattern(case, engine):
    assert corpus.judge_case(case, SCAN.scan(case, engine)) is None, corpus.judge_case(case, SCAN.scan(case, engine))


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("item", CORPUS["near_misses"], ids=_id)
def test_near_miss_does_not_match(item, engine):
    why = corpus.judge_near_miss(item, SCAN.scan(item, engine))
    assert why is None, why


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("item", CORPUS["unrecognised"], ids=_id)
def test_unnamed_failure_is_never_clean(item, engine):
    why = corpus.judge_unrecognised(item, SCAN.scan(item, engine))
    assert why is None, why


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("item", CORPUS["benign"], ids=_id)
def test_benign_real_log_is_clean(item, engine):
    why = corpus.judge_benign(SCAN.scan(item, engine))
    assert why is None, why


def test_engines_agree_on_every_corpus_item():
    for kind in ("cases", "near_misses", "unrecognised", "benign"):
        for item in CORPUS[kind]:
            reports = []
            for engine in corpus.ENGINES:
                rep = SCAN.scan(item, engine)
                rep.pop("engine")
                reports.append(rep)
            assert all(r == reports[0] for r in reports), _id(item)
