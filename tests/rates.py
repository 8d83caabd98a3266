"""The check that a bench level's pages/min is its good pages over its wall time.  The report rounds wall_s to 1 ms,
so on a short run (a stand-in answering in ~40 ms) the rounding alone moves pages/wall by over 1% (CI on a fresh clone,
2026-12-05: 8282 vs 8372): the bound is wall_s's rounding interval, not a percentage."""


def assert_pages_per_min(lv: dict, pages: int) -> None:
    lo = pages * 60 / (lv["wall_s"] + 0.0005)
    hi = pages * 60 / max(lv["wall_s"] - 0.0005, 1e-9)
    assert lo - 0.001 <= lv["pages_per_min"] <= hi + 0.001, (lo, lv["pages_per_min"], hi)
