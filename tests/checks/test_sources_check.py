"""preflight's `sources` check over recorded probe results: slow or closed sources warn and name the var."""

from ocrdeploy.checks.preflight import check_sources


def facts(results, gpus=(), slow_ms=1000):
    return {"gpu": {"gpus": list(gpus)}, "sources": {"slow_ms": slow_ms, "give_up_s": 3.0, "results": results}}


def row(name, var, reachable=True, ms=40, **kw):
    return {"name": name, "url": f"https://{name}.example", "var": var, "advice": f"a mirror for {name}",
            "reachable": reachable, "ms": ms, "status": 200 if reachable else None, "proxy": None, **kw}


def test_all_answer():
    r = check_sources(facts([row("pip index", "pip_index_url", ms=30), row("ModelScope", "modelscope_endpoint", ms=90)]))
    assert r.status == "pass" and r.message == "all 2 answer (slowest: ModelScope, 90 ms)"
    assert [x["verdict"] for x in r.value] == ["ok", "ok"]


def test_slow_and_closed_warn_and_name_the_var():
    r = check_sources(facts([row("pip index", "pip_index_url", ms=1800),
                             row("model hub", "hf_endpoint", reachable=False, ms=3000, error="no answer within 3.0 s"),
                             row("ModelScope", "modelscope_endpoint", ms=999)]))
    assert r.status == "warn"
    assert r.message == ("2 of 3 sources slow or closed: pip index slow (1800 ms); model hub closed "
                         "(no answer within 3.0 s)")
    assert r.fix == "set pip_index_url (a mirror for pip index); set hf_endpoint (a mirror for model hub)"
    assert [x["verdict"] for x in r.value] == ["slow", "closed", "ok"]


def test_gpu_only_sources_count_on_gpu_hosts_only():
    results = [row("pip index", "pip_index_url"), row("paddle GPU index", "paddle_index_url", reachable=False,
                                                       error="refused", when="gpu")]
    assert check_sources(facts([dict(r) for r in results])).status == "pass"
    assert check_sources(facts([dict(r) for r in results], gpus=[{"index": 0}])).status == "warn"


def test_skipped_or_not_asked():
    assert check_sources({"gpu": {}}) is None                 # install's preflight does not probe sources
    r = check_sources({"gpu": {}, "sources": {"skipped": "not tested (--network-timeout 0)", "results": []}})
    assert r.status == "skip" and r.message == "not tested (--network-timeout 0)"


def test_uvs_python_build_counts_only_where_python_3_12_is_missing():
    results = [row("Python builds (uv)", "python_install_mirror", reachable=False, error="refused",
                   when="no-python3.12")]
    with_312 = dict(facts([dict(r) for r in results]), pythons=[{"version": "3.12.9", "path": "/usr/bin/python3.12"}])
    assert check_sources(with_312).status == "skip"
    assert check_sources(dict(facts([dict(r) for r in results]), pythons=[{"version": "3.10.12"}])).status == "warn"
