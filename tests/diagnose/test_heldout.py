"""The held-out score counts only unseen threads: an item whose thread the corpus or rules.yaml cite is left out."""

import corpus

BATCH = {
    "note": "n",
    "cases": [{"entry": "cuda-oom", "source": "https://github.com/a/b/issues/1 (a comment)", "log": "x"},
              {"entry": "cuda-oom", "source": "https://github.com/a/b/issues/2#issuecomment-9", "log": "y"}],
    "near_misses": [{"not": ["cuda-oom"], "source": "https://www.github.com/A/B/issues/3/", "log": "z"}],
    "unrecognised": [{"class": "any", "source": "title: https://github.com/a/b/issues/4", "log": "w"}],
    "benign": [],
}


def test_thread_of_ignores_scheme_case_fragment_and_comment():
    assert corpus.thread_of({"source": "https://github.com/A/B/issues/2#issuecomment-9 (x)"}) == "github.com/a/b/issues/2"
    assert corpus.thread_of({"source": "http://www.github.com/a/b/issues/2/"}) == "github.com/a/b/issues/2"


def test_items_from_cited_threads_are_left_out_and_named():
    cited = corpus.cited_threads({"cases": [{"source": "https://github.com/a/b/issues/2 (corpus)"}]},
                                 rules_text="# seen in https://github.com/a/b/issues/3\n")
    kept, dropped = corpus.without_cited(BATCH, cited)
    assert dropped == ["github.com/a/b/issues/2", "github.com/a/b/issues/3"]
    assert [c["source"] for c in kept["cases"]] == ["https://github.com/a/b/issues/1 (a comment)"]
    assert kept["near_misses"] == [] and len(kept["unrecognised"]) == 1 and kept["note"] == "n"


def test_the_real_corpus_and_table_are_cited():
    cited = corpus.cited_threads()
    data = corpus.load()
    some = next(c for c in data["cases"] if "github.com" in str(c.get("source")))
    assert corpus.thread_of(some) in cited
    assert all("/" in t for t in cited)


def test_the_strict_count_takes_an_error_finding_of_an_entry_outside_the_not_list(capsys):
    """A near-miss is not a run: an error finding of ANY entry misleads, though its `not` list (written before that
    entry existed) cannot name it.  The `not`-list count stays as it was; the strict line counts both kinds."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[2] / "bench" / "diagnose_corpus.py"
    spec = importlib.util.spec_from_file_location("diagnose_corpus_bench", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
           "23.65 GiB of which 3.06 MiB is free.\n")
    data = {"cases": [], "benign": [], "unrecognised": [], "near_misses": [
        {"not": ["address-in-use"], "source": "https://github.com/a/b/pull/1 (a PR quoting an OOM)", "log": oom},
        {"not": ["cuda-oom"], "source": "https://github.com/a/b/pull/2 (the same, its not list naming it)", "log": oom},
        {"not": ["cuda-oom"], "source": "https://github.com/a/b/pull/3 (no error in it)", "log": "Docs: how to serve.\n"}]}
    scan = corpus.Scanner()
    try:
        by = bench.score(data, scan, corpus.ENGINES[-1], {r.id: r.stage for r in scan.rules})
    finally:
        scan.close()
    assert sum(r["alarms"] for r in by.values()) == 1 and sum(r.get("strict", 0) for r in by.values()) == 2
    bench.print_score("t", by)
    out = capsys.readouterr().out
    assert "false alarms 1/3" in out and "strict     2/3 near-misses produce an error finding of any entry" in out
    assert "pull/1 (a PR quoting an OOM): error finding of an entry outside its `not` list: ['cuda-oom']" in out
