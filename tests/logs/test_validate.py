"""Validation against an independent pandas implementation of the documented rules.

Random small logs full of problems (seeded) are loaded; the report's counts and the clean
views must equal what a row-by-row pandas classification of the same rules gives.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import onlineeval


def _random_log(seed: int, doc_only_clicks: bool = True,
                dup_ranks: bool = True) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)

    def pick(pool, n, p_null):
        vals = rng.choice(pool, n).astype(object)
        vals[rng.random(n) < p_null] = None
        return vals

    n_s, n_r, n_c = 60, 200, 80
    sid_pool = [f"s{i}" for i in range(70)]  # some repeats, some ids only in results/clicks
    searches = pd.DataFrame({
        "search_id": pick(sid_pool[:55], n_s, 0.03),
        "user_id": pick([f"u{i}" for i in range(10)], n_s, 0.05),
        "ts": pd.Series(pd.Timestamp("2024-01-01") + pd.to_timedelta(
            rng.integers(0, 10_000, n_s), unit="s")).where(rng.random(n_s) > 0.05),
    })
    results = pd.DataFrame({
        "search_id": pick(sid_pool, n_r, 0.02),
        "rank": pd.array(rng.integers(0, 8, n_r), dtype="Int64"),
        "doc_id": pick([f"d{i}" for i in range(12)], n_r, 0.03),
    })
    results.loc[rng.random(n_r) < 0.03, "rank"] = pd.NA
    if not dup_ranks:
        results = results.drop_duplicates(["search_id", "rank"]).reset_index(drop=True)
    clicks = pd.DataFrame({
        "search_id": pick(sid_pool, n_c, 0.03),
        "rank": pd.array(rng.integers(0, 8, n_c), dtype="Int64"),
        "doc_id": pick([f"d{i}" for i in range(12)], n_c, 0.5),
    })
    if doc_only_clicks:
        clicks.loc[rng.random(n_c) < 0.3, "rank"] = pd.NA
    return {"searches": searches, "results": results, "clicks": clicks}


def _reference(log, click_reasons: list | None = None):
    """Row-by-row classification written from the README rules, in plain pandas (each click's
    reason, None when kept, is appended to ``click_reasons`` when given)."""
    s, r, c = (log[t].copy() for t in ("searches", "results", "clicks"))
    excluded = {}

    def count(table, reason, mask):
        if mask.sum():
            excluded[(table, reason)] = int(mask.sum())

    s_null = s.search_id.isna() | s.user_id.isna() | s.ts.isna()
    # a search_id on several rows is a duplicate even when a twin lacks its user or ts
    counts = s.search_id.value_counts()
    s_dup = ~s_null & s.search_id.map(counts).gt(1)
    count("searches", "null_required", s_null)
    count("searches", "duplicate_search_id", s_dup)
    kept_s = s[~s_null & ~s_dup]
    kept_ids = set(kept_s.search_id)
    excl_ids = set(s[s_null | s_dup].search_id.dropna())

    r_null = r.search_id.isna() | r["rank"].isna() | r.doc_id.isna()
    r_low = ~r_null & (r["rank"].fillna(1) < 1)
    valid = ~r_null & ~r_low
    # a rank is repeated even when a twin lacks its doc_id
    pair_counts = r[r.search_id.notna() & r["rank"].notna() & (r["rank"].fillna(0) >= 1)
                    ].groupby(["search_id", "rank"]).size()
    r_dup = valid & pd.Series(
        [pair_counts.get((a, b), 0) > 1 for a, b in zip(r.search_id, r["rank"], strict=True)],
        index=r.index)
    rest = valid & ~r_dup
    r_lost = rest & ~r.search_id.isin(kept_ids)
    r_excl = r_lost & r.search_id.isin(excl_ids)
    for reason, mask in (("null_required", r_null), ("rank_below_1", r_low),
                         ("duplicate_rank", r_dup), ("search_excluded", r_excl),
                         ("unknown_search", r_lost & ~r_excl)):
        count("results", reason, mask)
    kept_r = r[rest & ~r_lost]

    by_rank = {(a, b): d for a, b, d in kept_r[["search_id", "rank", "doc_id"]].itertuples(
        index=False)}
    best_rank = kept_r.groupby(["search_id", "doc_id"])["rank"].min().to_dict()
    reasons, filled = [], []
    for sid, rank, doc in c[["search_id", "rank", "doc_id"]].itertuples(index=False):
        # pandas 3 stores missing text as NaN, not None
        sid, doc = (None if pd.isna(x) else x for x in (sid, doc))
        rank = None if pd.isna(rank) else int(rank)
        if sid is None or (rank is None and doc is None):
            reasons.append("null_required")
        elif rank is not None and rank < 1:
            reasons.append("rank_below_1")
        elif sid not in kept_ids:
            reasons.append("search_excluded" if sid in excl_ids else "unknown_search")
        elif rank is not None and ((sid, rank) not in by_rank
                                   or (doc is not None and by_rank[(sid, rank)] != doc)):
            reasons.append("not_on_page")
        elif rank is None and (sid, doc) not in best_rank:
            reasons.append("not_on_page")
        else:
            reasons.append(None)
            filled.append((sid, rank if rank is not None else int(best_rank[(sid, doc)]),
                           doc if doc is not None else by_rank[(sid, rank)]))
    if click_reasons is not None:
        click_reasons.extend(reasons)
    for reason in ("null_required", "rank_below_1", "search_excluded", "unknown_search",
                   "not_on_page"):
        count("clicks", reason, pd.Series([x == reason for x in reasons]))
    n_results = kept_r.search_id.value_counts()
    searches = sorted((sid, int(n_results.get(sid, 0))) for sid in kept_s.search_id)
    results = sorted((a, int(b), d) for a, b, d in kept_r.itertuples(index=False))
    return excluded, searches, results, sorted(filled)


@pytest.mark.parametrize("seed", range(12))
def test_random_logs_match_an_independent_pandas_classification(seed):
    log = _random_log(seed)
    excluded, searches, results, clicks = _reference(log)
    logs = onlineeval.load_logs(**log)
    assert logs.report.excluded == excluded
    assert logs.report.rows_read == {"searches": 60, "results": 200, "clicks": 80}
    q = logs.con.execute
    assert q("SELECT search_id, n_results FROM searches ORDER BY 1").fetchall() == searches
    assert q("SELECT search_id, rank, doc_id FROM results ORDER BY ALL").fetchall() == results
    assert q("SELECT search_id, rank, doc_id FROM clicks ORDER BY ALL").fetchall() == clicks


def test_random_logs_exercise_every_reason():
    """Guard for the test above: across the seeds, every reason actually occurs."""
    seen = set()
    for seed in range(12):
        seen |= set(_reference(_random_log(seed))[0])
    assert seen == {
        ("searches", "null_required"), ("searches", "duplicate_search_id"),
        ("results", "null_required"), ("results", "rank_below_1"),
        ("results", "duplicate_rank"), ("results", "search_excluded"),
        ("results", "unknown_search"), ("clicks", "null_required"),
        ("clicks", "rank_below_1"), ("clicks", "search_excluded"),
        ("clicks", "unknown_search"), ("clicks", "not_on_page"),
    }


@pytest.mark.parametrize("seed", range(8))
def test_random_logs_without_doc_only_clicks_or_repeated_ranks(seed):
    log = _random_log(seed, doc_only_clicks=False, dup_ranks=False)
    excluded, searches, results, clicks = _reference(log)
    logs = onlineeval.load_logs(**log)
    assert logs.report.excluded == excluded
    assert ("results", "duplicate_rank") not in excluded
    q = logs.con.execute
    assert q("SELECT search_id, rank, doc_id FROM clicks ORDER BY ALL").fetchall() == clicks
    assert q("SELECT search_id, n_results FROM searches ORDER BY 1").fetchall() == searches
    assert q("SELECT search_id, rank, doc_id FROM results ORDER BY ALL").fetchall() == results


def test_a_rank_clicked_with_different_docs():
    s = pd.DataFrame({"search_id": ["a", "b"], "user_id": ["u", "u"],
                      "ts": pd.to_datetime(["2024-01-01", "2024-01-02"])})
    r = pd.DataFrame({"search_id": ["a", "a", "b"], "rank": [1, 2, 1], "doc_id": ["x", "y", "z"]})
    c = pd.DataFrame({"search_id": ["a", "a", "a", "a", "b", "b"], "rank": [1, 1, 1, 2, 1, 3],
                      "doc_id": ["x", "y", None, "y", "z", None]})
    logs = onlineeval.load_logs(searches=s, results=r, clicks=c)
    # a rank 1 clicked as doc y (but x was shown), b rank 3 (not shown)
    assert logs.report.excluded == {("clicks", "not_on_page"): 2}
    assert logs.con.execute("SELECT search_id, rank, doc_id FROM clicks ORDER BY ALL").fetchall() \
        == [("a", 1, "x"), ("a", 1, "x"), ("a", 2, "y"), ("b", 1, "z")]


@pytest.mark.parametrize("seed", range(8))
def test_clicks_all_on_their_page_are_not_joined_to_the_searches(seed, monkeypatch):
    """When no click is off its page, the clicks' exclusions (here lacking a required value
    or a rank below 1) are counted by their first pass, without joining them to the kept
    searches: report and views equal the reference and those of the join, forced."""
    from onlineeval.logs import validate

    log = _random_log(seed)
    reasons: list = []
    _reference(log, reasons)
    log["clicks"] = log["clicks"][[r in (None, "null_required", "rank_below_1")
                                   for r in reasons]].reset_index(drop=True)
    excluded, searches, results, clicks = _reference(log)
    assert {("clicks", "null_required"), ("clicks", "rank_below_1")} & set(excluded)
    joined: list[str] = []
    real = validate._counted

    def spy(con, t, view, names):
        joined.append(view)
        return real(con, t, view, names)

    monkeypatch.setattr(validate, "_counted", spy)
    logs = onlineeval.load_logs(**log)
    assert validate._BY_SEARCH not in joined
    assert logs.report.excluded == excluded
    q = logs.con.execute
    assert q("SELECT search_id, n_results FROM searches ORDER BY 1").fetchall() == searches
    assert q("SELECT search_id, rank, doc_id FROM results ORDER BY ALL").fetchall() == results
    assert q("SELECT search_id, rank, doc_id FROM clicks ORDER BY ALL").fetchall() == clicks
    fast = _everything(logs)
    monkeypatch.setattr(validate, "_search_reasons", lambda con, t, facts, off_page: real(
        con, t, validate._BY_SEARCH, validate.CLICK_REASONS[:4]))
    assert _everything(onlineeval.load_logs(**log)) == fast


def test_clicks_of_excluded_searches_are_still_joined(monkeypatch):
    """A click of an excluded search is off every page: the join with the searches runs and
    tells it from a click off its page."""
    from onlineeval.logs import validate

    s = pd.DataFrame({"search_id": ["a", "b", "b"], "user_id": ["u", "u", "v"],
                      "ts": pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-03"])})
    r = pd.DataFrame({"search_id": ["a", "b"], "rank": [1, 1], "doc_id": ["x", "y"]})
    c = pd.DataFrame({"search_id": ["a", "a", "b", "z"], "rank": [1, 2, 1, 1],
                      "doc_id": ["x", None, "y", None]})
    joined: list[str] = []
    real = validate._counted
    monkeypatch.setattr(validate, "_counted", lambda con, t, view, names: (
        joined.append(view), real(con, t, view, names))[1])
    logs = onlineeval.load_logs(searches=s, results=r, clicks=c)
    assert joined == [validate._BY_SEARCH]
    assert logs.report.excluded == {
        ("searches", "duplicate_search_id"): 2, ("results", "search_excluded"): 1,
        ("clicks", "search_excluded"): 1, ("clicks", "unknown_search"): 1,
        ("clicks", "not_on_page"): 1}


# --- Parquet: pass 1 of the results from the footers -------------------------------------------

def _write_parquet(log: dict[str, pd.DataFrame], directory, results: str) -> None:
    """Write ``log`` as Parquet; ``results``: "raw" (nulls, ranks < 1 and all), "valid" (only
    rows with every field and rank >= 1), "rank_below_1" (every field, some ranks 0), or
    "null_search_id" / "null_doc_id" (ranks >= 1, the one problem some nulls in that column)."""
    log["results"] = log["results"].astype({"rank": "Int32"})
    log["clicks"] = log["clicks"].astype({"rank": "Int32"})
    r = log["results"]
    if results != "raw":
        nullable = results.removeprefix("null_") if results.startswith("null_") else None
        keep = r.drop(columns=[nullable] if nullable else []).notna().all(axis=1)
        if results != "rank_below_1":
            keep &= r["rank"].fillna(0).ge(1)
        log["results"] = r[keep].reset_index(drop=True)
        # the seed's log has the problem
        if results == "rank_below_1":
            assert log["results"]["rank"].lt(1).any()
        elif nullable:
            assert log["results"][nullable].isna().any()
    for name, frame in log.items():
        frame.to_parquet(directory / f"{name}.parquet", index=False)


def _spy_footer_path(monkeypatch) -> list[bool]:
    from onlineeval.logs import validate

    used: list[bool] = []
    real = validate._results_pass1_from_footer

    def spy(*args):
        row = real(*args)
        used.append(row is not None)
        return row

    monkeypatch.setattr(validate, "_results_pass1_from_footer", spy)
    return used


def _everything(logs) -> tuple:
    q = logs.con.execute
    return (logs.report.excluded, logs.report.rows_read, logs.report.empty_columns,
            logs.report.provided,
            q("SELECT * FROM searches ORDER BY ALL").fetchall(),
            q("SELECT * FROM results ORDER BY ALL").fetchall(),
            q("SELECT * FROM clicks ORDER BY ALL").fetchall())


@pytest.mark.parametrize("dup_ranks", [True, False])
@pytest.mark.parametrize("results", ["valid", "rank_below_1", "null_search_id", "null_doc_id",
                                     "raw"])
@pytest.mark.parametrize("seed", range(6))
def test_parquet_logs_take_the_footer_path_only_when_results_are_valid(
        seed, results, dup_ranks, tmp_path, monkeypatch):
    """The footer path (all result rows valid) and the full pass give the reference counts."""
    log = _random_log(seed, dup_ranks=dup_ranks)
    _write_parquet(log, tmp_path, results)
    _check_against_reference_and_full_pass(log, tmp_path, monkeypatch, results == "valid")


def _check_against_reference_and_full_pass(log, directory, monkeypatch, footer: bool) -> dict:
    """Load the Parquet log in ``directory`` (written from ``log``): whether the footer path
    was taken is ``footer``; report and views equal the reference and those of the full pass
    forced on the same files. Returns the excluded counts."""
    from onlineeval.logs import validate

    excluded, searches, results_rows, clicks = _reference(log)
    used = _spy_footer_path(monkeypatch)
    logs = onlineeval.load_logs(directory)
    assert used == [footer]
    assert logs.report.excluded == excluded
    q = logs.con.execute
    assert q("SELECT search_id, n_results FROM searches ORDER BY 1").fetchall() == searches
    assert q("SELECT search_id, rank, doc_id FROM results ORDER BY ALL").fetchall() \
        == results_rows
    assert q("SELECT search_id, rank, doc_id FROM clicks ORDER BY ALL").fetchall() == clicks
    # the full pass forced on the same files: the same report and views
    fast = _everything(logs)
    monkeypatch.setattr(validate, "_results_pass1_from_footer", lambda *args: None)
    assert _everything(onlineeval.load_logs(directory)) == fast
    return excluded


@pytest.mark.parametrize("seed", range(4))
def test_footer_path_ranks_above_63(seed, tmp_path, monkeypatch):
    """The repeated-rank pre-check (logs/results/rank_suspects: a bitmask of ranks 1..63 per
    hash of search_id) on Parquet results (the footer path) with ranks on both sides of 63:
    the same report and views as the reference and as the full pass."""
    log = _random_log(seed, doc_only_clicks=False)
    for t in ("results", "clicks"):  # ranks 1..7 become 60..66, on both sides of 63
        log[t]["rank"] = log[t]["rank"].where(log[t]["rank"] < 1, log[t]["rank"] + 59)
    _write_parquet(log, tmp_path, "valid")
    r = log["results"].dropna()
    big = r[r["rank"] > 63].groupby("search_id")["rank"]
    # the data hold what the pre-check must see through: a search with two different ranks
    # above 63 (no repeat) and a repeated rank above 63
    assert (big.nunique() > 1).any() and (big.size() > big.nunique()).any()
    excluded = _check_against_reference_and_full_pass(log, tmp_path, monkeypatch, True)
    assert ("results", "duplicate_rank") in excluded


def test_footer_path_counts_a_repeat_above_63_alone(tmp_path):
    """Searches whose only repeat is a rank above 63, or that hold two ranks above 63 and no
    repeat: counted by hand."""
    s = pd.DataFrame({"search_id": ["a", "b", "c"], "user_id": ["u", "v", "w"],
                      "ts": pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-03"])})
    r = pd.DataFrame({"search_id": ["a", "a", "a", "b", "b", "b", "c", "x"],
                      "rank": pd.array([1, 64, 64, 1, 64, 70, 2, 1], dtype="Int32"),
                      "doc_id": ["d1", "d2", "d3", "d1", "d2", "d3", "d4", "d5"]})
    c = pd.DataFrame({"search_id": ["a", "b"], "rank": pd.array([1, 70], dtype="Int32"),
                      "doc_id": ["d1", "d3"]})
    for name, frame in (("searches", s), ("results", r), ("clicks", c)):
        frame.to_parquet(tmp_path / f"{name}.parquet", index=False)
    logs = onlineeval.load_logs(tmp_path)
    # a's two rows at 64; x is no search of the log
    assert logs.report.excluded == {("results", "duplicate_rank"): 2,
                                    ("results", "unknown_search"): 1}
    assert logs.con.execute("SELECT search_id, rank FROM results ORDER BY ALL").fetchall() \
        == [("a", 1), ("b", 1), ("b", 64), ("b", 70), ("c", 2)]


def test_footer_path_logs_still_hold_every_results_reason_but_invalid_rows(tmp_path):
    """Guard for the test above: without repeated ranks (whose counts come from a row-by-row
    classification) its valid logs still have rows of excluded and of unknown searches."""
    seen = set()
    for seed in range(6):
        log = _random_log(seed, dup_ranks=False)
        _write_parquet(log, tmp_path, "valid")
        seen |= {k for k in _reference(log)[0] if k[0] == "results"}
    assert seen == {("results", "search_excluded"), ("results", "unknown_search")}


def test_parquet_results_with_a_checked_column_or_no_rows(tmp_path, monkeypatch):
    """A rank stored as text must be checked value by value: the full pass, same error."""
    s = pd.DataFrame({"search_id": ["a", "b"], "user_id": ["u", "v"],
                      "ts": pd.to_datetime(["2024-01-01", "2024-01-02"])})
    c = pd.DataFrame({"search_id": ["a", "c"], "rank": pd.array([1, 1], dtype="Int32"),
                      "doc_id": ["x", "y"]})
    s.to_parquet(tmp_path / "searches.parquet", index=False)
    c.to_parquet(tmp_path / "clicks.parquet", index=False)
    pd.DataFrame({"search_id": ["a", "b"], "rank": ["1", "one"], "doc_id": ["x", "z"]}) \
        .to_parquet(tmp_path / "results.parquet", index=False)
    used = _spy_footer_path(monkeypatch)
    with pytest.raises(onlineeval.errors.SchemaError, match=r"'rank'.*'one'"):
        onlineeval.load_logs(tmp_path)
    assert used == [False]
    # an empty results table: no row to read, the click of "a" is then not on its page
    pd.DataFrame({"search_id": pd.Series([], dtype="str"), "rank": pd.array([], dtype="Int32"),
                  "doc_id": pd.Series([], dtype="str")}) \
        .to_parquet(tmp_path / "results.parquet", index=False)
    with pytest.warns(UserWarning, match="no rows"):
        logs = onlineeval.load_logs(tmp_path)
    assert used == [False, True]
    assert logs.report.rows_read == {"searches": 2, "results": 0, "clicks": 2}
    assert logs.report.excluded == {("clicks", "unknown_search"): 1,
                                    ("clicks", "not_on_page"): 1}
