"""LoadReport arithmetic and its summary text."""

from __future__ import annotations

from onlineeval.logs.report import REASONS, LoadReport


def _report():
    return LoadReport(
        source="logs/",
        rows_read={"searches": 1200, "results": 0, "clicks": 40},
        excluded={("searches", "duplicate_search_id"): 4, ("clicks", "unknown_search"): 3,
                  ("clicks", "null_required"): 1},
    )


def test_totals():
    r = _report()
    assert r.excluded_total == 8
    assert r.excluded_in("clicks") == 4 and r.excluded_in("results") == 0
    assert r.rows_kept("searches") == 1196 and r.rows_kept("clicks") == 36


def test_summary_block():
    assert _report().summary().splitlines() == [
        "loaded logs/: searches 1,200 rows (4 excluded), results 0 rows, clicks 40 rows "
        "(4 excluded)",
        "  searches: 4 rows excluded (duplicate_search_id): " + REASONS["duplicate_search_id"],
        "  clicks: 3 rows excluded (unknown_search): its search_id is not in searches",
        "  clicks: 1 row excluded (null_required): a required column is null",
    ]
    assert str(_report()) == _report().summary()


def test_every_reason_is_described():
    assert set(REASONS) == {"null_required", "duplicate_search_id", "rank_below_1",
                            "duplicate_rank", "search_excluded", "unknown_search", "not_on_page"}
