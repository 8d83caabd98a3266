"""The held-out score counts only unseen threads: an item whose thread the corpus or rules.yaml cite is left out."""

import importlib.util
from pathlib import Path

import corpus

BATCH = {
    "note": "n",
    "cases": [{"entry": "cuda-oom", "source": "https://github.com/a/b/issues/1 (a comment)", "log": "x"},
              {"entry": "cuda-oom", "source": "https://github.com/a/b/issues/2#issuecomment-9", "log": "y"}],
    "near_misses": [{"not": ["cuda-oom"], "source": "https://www.github.com/A/B/issues/3/", "log": "z"}],
    "unrecognised": [{"class": "any", "source": "title: https://github.com/a/b/issues/4", "log": "w"}],
    "benign": [],
}


def _bench():
    """bench/diagnose_corpus.py as a module (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("diagnose_corpus_bench", Path(__file__).parents[2] / "bench"
                                                  / "diagnose_corpus.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


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
    bench = _bench()
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


def test_the_blind_aggregate_counts_every_batch_and_prints_no_source_or_log(capsys):
    """--blind is how a tuning round checks itself on batches it must not read: the figures of all of them in one
    aggregate (per stage, misses per expected entry and by kind, false alarms per entry), never an item's words."""
    bench = _bench()
    oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
           "23.65 GiB of which 3.06 MiB is free.\n")
    one = {"benign": [], "unrecognised": [],
           "cases": [{"entry": "cuda-oom", "source": "https://github.com/a/b/issues/1 (named)", "log": oom},
                     {"entry": "address-in-use", "source": "https://github.com/a/b/issues/2 (SECRET-A)",
                      "log": "the port was taken, I think\n"}],
           "near_misses": [{"not": ["cuda-oom"], "source": "https://github.com/a/b/pull/3 (SECRET-B)", "log": oom}]}
    two = {"benign": [], "near_misses": [],
           "cases": [{"entry": "address-in-use", "source": "https://github.com/a/b/issues/4 (SECRET-C)", "log": oom}],
           "unrecognised": [{"class": "any", "source": "https://github.com/a/b/issues/5 (SECRET-D)",
                             "log": "Segmentation fault (core dumped)\n"}]}
    scan = corpus.Scanner()
    try:
        stages = {r.id: r.stage for r in scan.rules}
        bys = [bench.score(d, scan, corpus.ENGINES[-1], stages, any_pattern=True) for d in (one, two)]
    finally:
        scan.close()
    bench.print_blind("t", bys)
    out = capsys.readouterr().out
    assert "SECRET" not in out and "github.com" not in out and "port was taken" not in out
    assert out.startswith("t: named 1/3 (33.3%)   false alarms 1/1   unnamed not clean 1/1")
    assert "  start      named 1/3   false alarms 1/1" in out
    assert "misses by expected entry: address-in-use 1 clean/1 named another" in out
    assert "false alarms by entry: cuda-oom 1" in out


def test_the_bench_with_blind_prints_only_the_aggregate(tmp_path):
    import subprocess
    import sys

    import yaml

    root = Path(__file__).parents[2]
    files = []
    for n, log in enumerate(["the port was taken, I think\n", "OSError: [Errno 98] Address already in use\n"]):
        p = tmp_path / f"batch{n}.yaml"
        p.write_text(yaml.safe_dump({"note": f"SECRET-NOTE-{n}", "cases": [
            {"entry": "address-in-use", "source": f"https://example.org/never-cited/{n} (SECRET-{n})", "log": log}],
            "near_misses": [], "unrecognised": []}))
        files += ["--heldout", str(p)]
    out = subprocess.run([sys.executable, str(root / "bench" / "diagnose_corpus.py"), "--blind", *files],
                         capture_output=True, text=True, cwd=root, timeout=300).stdout
    assert out.startswith("2 held-out batch(es), 0 cited thread(s) left out: named 1/2 (50.0%)"), out
    assert "SECRET" not in out and "example.org" not in out
