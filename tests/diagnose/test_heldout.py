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
