"""The learned half of the 'looks like' lead: its arithmetic, how it is fused with the key tokens, that it is what
today's corpus and batches give, and what a user sees of it on a real unrecognised failure."""

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ocrdeploy.diagnose import docmodel, engine, leadmodel

ROOT = Path(__file__).parents[2]
HELDOUT = ROOT / "tests" / "fixtures" / "diagnose" / "heldout"


def tiny_model(path: Path) -> Path:
    # quokka-stall's word "quokka" (idf 2), wombat-crash's "wombat" (idf 1); "loader" speaks for both
    path.write_text(json.dumps({"entries": ["quokka-stall", "wombat-crash"],
                                "terms": {"quokka": [2.0, [0, 1.5]], "wombat": [1.0, [1, 2.0]],
                                          "loader": [1.0, [0, 0.5], [1, 0.25]]}}), encoding="utf-8")
    docmodel.load.cache_clear()
    return path


def test_the_arithmetic_is_tfidf_and_a_softmax(tmp_path):
    model = leadmodel.load(tiny_model(tmp_path / "m.json"))
    got = leadmodel.probabilities("Quokka quokka loader, and an unknown word", model)
    q, ld = (1 + math.log(2)) * 2.0, 1.0            # 1 + log(count), times the idf
    norm = math.hypot(q, ld)
    z = {"quokka-stall": (q * 1.5 + ld * 0.5) / norm, "wombat-crash": ld * 0.25 / norm}
    total = sum(math.exp(v) for v in z.values())
    assert got == pytest.approx({e: math.exp(v) / total for e, v in z.items()}, abs=1e-12)
    # an entry none of whose shipped words the text holds is not in the softmax at all; no shipped word: nothing
    assert list(leadmodel.probabilities("wombat", model)) == ["wombat-crash"]
    assert leadmodel.probabilities("nothing we know", model) == {}


def table(*entries):
    from ocrdeploy.diagnose.table import parse_rules

    return parse_rules([{"stage": "start", "cause": "c", "fix": "f", **e} for e in entries], "t.yaml", "t.yaml")


def test_the_model_leads_where_it_is_sure_and_the_key_tokens_keep_their_entries(tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "LEAD_MODEL", tiny_model(tmp_path / "m.json"))
    rules = table({"id": "quokka-stall", "patterns": ["quokka loader stalled"]},
                  {"id": "wombat-crash", "patterns": ["wombat crashed"]},
                  {"id": "kiwi-hang", "patterns": ["kiwi loader hung"]})
    index = engine.lead_index(rules, {})
    line = "loader stopped: kiwi quokka quokka quokka"
    # the key tokens alone: kiwi-hang ("kiwi", "loader": two tokens) before quokka-stall
    assert engine.looks_like(line, rules, index=index, learned=False)[0] == "kiwi-hang"
    # the model is sure of quokka-stall: it leads, and kiwi-hang (no learned words) is kept behind it
    assert engine.looks_like(line, rules, index=index) == ["quokka-stall", "kiwi-hang"]
    # and never an entry the lead may not name (a harmless one, left out of `rules`)
    assert engine.looks_like("wombat wombat", rules[:1], index=engine.lead_index(rules[:1], {})) == []
    # no model shipped: the key tokens alone
    monkeypatch.setattr(engine, "LEAD_MODEL", tmp_path / "absent.json")
    assert engine.looks_like(line, rules, index=index) == engine.looks_like(line, rules, index=index, learned=False)


def test_the_shipped_model_is_trained_on_todays_corpus_and_batches():
    """lead_model.json is what bench/build_lead_model.py makes of today's corpus and batches 1..LEAD_THROUGH (its
    training data's digest: the fit itself needs scikit-learn, which the tests do not)."""
    spec = importlib.util.spec_from_file_location("build_lead_model", ROOT / "bench" / "build_lead_model.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    shipped = json.loads(mod.MODEL.read_text(encoding="utf-8"))
    assert shipped["data"] == mod.digest(*mod.training()), "pip install scikit-learn; python bench/build_lead_model.py"
    assert shipped["through"] == mod.LEAD_THROUGH
    # every entry it names is one of the table's, and each keeps at most KEEP words
    from ocrdeploy.diagnose.table import load_table

    ids = {r.id for r in load_table()}
    assert set(shipped["entries"]) <= ids
    per_entry = {}
    for _, *pairs in shipped["terms"].values():
        for i, _ in pairs:
            per_entry[i] = per_entry.get(i, 0) + 1
    assert max(per_entry.values()) <= mod.KEEP


def test_a_real_unrecognised_failure_gets_the_entry_its_runs_are_like(tmp_path):
    """diffusers-rs#75 (batch 135): a Rust binary linking libtorch on Windows dies with STATUS_DLL_NOT_FOUND. No pattern
    names it; the key tokens alone lead with torch-cpu-only, the model with the entry of Windows' DLL refusals.
    (Round st54: the item this test first held, batch 141's PPOCRLabel#24, paddle's DLL refused in Turkish, is now named
    by torch-windows-dll-load-failed's pattern 9, as the last lines check.)"""
    doc = yaml.safe_load((HELDOUT / "batch135.yaml").read_text(encoding="utf-8"))
    (item,) = [c for c in doc["cases"] if "LaurentMazare/diffusers-rs/issues/75" in c["source"]]
    log = tmp_path / "run.log"
    log.write_text(item["log"], encoding="utf-8")
    env = dict(os.environ, COLUMNS="200")
    env.pop("OCRDEPLOY_INVENTORY", None)
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "diagnose", "--log", str(log), "--json"],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert p.returncode == 3, p.stdout + p.stderr
    (rep,) = json.loads(p.stdout)["reports"]
    assert not rep["findings"]
    assert rep["unrecognised"][0]["looks_like"][0] == item["entry"] == "torch-windows-dll-load-failed"
    shown = subprocess.run([sys.executable, "-m", "ocrdeploy", "diagnose", "--log", str(log)], capture_output=True,
                           text=True, cwd=ROOT, env=env, timeout=120)
    assert "looks like: torch-windows-dll-load-failed," in shown.stdout
    doc = yaml.safe_load((HELDOUT / "batch141.yaml").read_text(encoding="utf-8"))
    (item,) = [c for c in doc["cases"] if "PFCCLab/PPOCRLabel/issues/24" in c["source"]]
    log.write_text(item["log"], encoding="utf-8")
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "diagnose", "--log", str(log), "--json"],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    (rep,) = json.loads(p.stdout)["reports"]
    assert [(f["id"], f["patterns"]) for f in rep["findings"]] == [("torch-windows-dll-load-failed", [9])]


def test_an_entry_only_the_model_names_needs_learned_min(tmp_path, monkeypatch):
    """A line of words every failure shares spreads the model thin: an entry the key tokens do not name is a lead only
    at LEARNED_MIN or more."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"entries": ["quokka-stall", "wombat-crash"],
                                "terms": {"quokka": [2.0, [0, 1.5]], "marsupial": [1.0, [1, 2.55]]}}), encoding="utf-8")
    docmodel.load.cache_clear()
    monkeypatch.setattr(engine, "LEAD_MODEL", path)
    rules = table({"id": "quokka-stall", "patterns": ["quokka stalled"]}, {"id": "wombat-crash", "patterns": ["pouch torn"]})
    index = engine.lead_index(rules, {})
    p = leadmodel.probabilities("marsupial quokka", leadmodel.load(path))["wombat-crash"]
    assert 0.4 < p < engine.LEARNED_MIN == 0.5
    assert engine.looks_like("marsupial quokka", rules, index=index) == ["quokka-stall"]
    monkeypatch.setattr(engine, "LEARNED_MIN", 0.4)
    assert engine.looks_like("marsupial quokka", rules, index=index) == ["quokka-stall", "wombat-crash"]


def test_the_model_reads_the_lines_shown_about_the_line(tmp_path, monkeypatch):
    """The line says what failed; the lines about it often say which tool (a model of the line alone was no better
    than the key tokens on the held-out batches)."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"entries": ["wombat-crash"], "terms": {"marsupial": [1.0, [0, 2.0]]}}),
                    encoding="utf-8")
    docmodel.load.cache_clear()
    monkeypatch.setattr(engine, "LEAD_MODEL", path)
    rules = table({"id": "wombat-crash", "patterns": ["pouch torn"]})
    u = {"text": "RuntimeError: gave up", "context": [[1, "INFO marsupial runtime 2.1"], [2, "RuntimeError: gave up"]]}
    assert engine.unrecognised_lead(u, rules, engine.lead_index(rules, {})) == ["wombat-crash"]
    assert engine.unrecognised_lead({**u, "context": []}, rules, engine.lead_index(rules, {})) == []
