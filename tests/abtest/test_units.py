"""The unit aggregation SQL: per-unit sums by hand in pandas, consistency with the online
metrics (no drift), exclusions counted, periods and experiments."""

import warnings

import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.abtest.metrics import METRICS, UNIT_SUMS
from onlineeval.abtest.units import load_units, parse_pre_period
from onlineeval.errors import InvalidParameterError, UnknownNameError
from onlineeval.online.definitions import METRICS as ONLINE_METRICS


def _by_hand(searches, clicks):
    per_search = searches.copy()
    n = clicks.groupby("search_id").size()
    per_search["n_clicks"] = per_search["search_id"].map(n).fillna(0)
    per_search["has_click"] = (per_search["n_clicks"] > 0).astype(int)
    per_search["nonzero"] = (per_search["n_results"] > 0).astype(int)
    per_search["zero_result"] = (per_search["n_results"] == 0).astype(int)
    per_search["abandoned"] = per_search["nonzero"] * (1 - per_search["has_click"])
    first = clicks.groupby("search_id")["rank"].min()
    per_search["rr"] = 1.0 / per_search["search_id"].map(first)
    per_search["rr"] = per_search["rr"].fillna(0.0)
    per_search["searches"] = 1
    cols = ["searches", "has_click", "n_clicks", "nonzero", "zero_result", "abandoned", "rr"]
    return per_search.groupby(["user_id", "variant"])[cols].sum().reset_index()


def test_unit_sums_match_pandas_by_hand(make_tables):
    s, c = make_tables(seed=3)
    data = load_units(onlineeval.load_logs(searches=s, clicks=c))
    expected = _by_hand(s, c)
    for variant, arr in data.arms.items():
        # rows are in unit order (string order of user_id here), so units compare row by row
        exp = expected[expected["variant"] == variant].sort_values("user_id")
        assert len(arr) == len(exp)
        for col in ["searches", "has_click", "n_clicks", "nonzero", "zero_result", "abandoned",
                    "rr"]:
            np.testing.assert_allclose(arr[:, data.col(col)], exp[col].to_numpy(float),
                                       rtol=1e-12, err_msg=col)
        assert (arr[:, data.col("units")] == 1).all()


def test_every_online_ratio_metric_is_a_ratio_of_unit_sums(small_logs):
    # the A/B metrics cannot drift from the online metrics: pooled unit sums reproduce
    # online_metrics per variant, for every ratio metric of the online registry
    data = load_units(small_logs)
    online = onlineeval.online_metrics(small_logs, by="variant").set_index("variant")
    # (per user, the outcome metrics' events_per_user and revenue_per_user, are per-unit
    # means in the A/B registry; a log without events has no outcome columns)
    ratio_metrics = [m for _, m in ONLINE_METRICS.items()
                     if m.denominator not in (None, "users") and m.name in online.columns]
    assert len(ratio_metrics) >= 10
    assert {m.name for m in ratio_metrics} <= set(METRICS)
    for m in ratio_metrics:
        assert m.numerator in UNIT_SUMS and m.denominator in UNIT_SUMS
        for variant, arr in data.arms.items():
            ours = arr[:, data.col(m.numerator)].sum() / arr[:, data.col(m.denominator)].sum()
            assert ours == pytest.approx(online.loc[variant, m.name], rel=1e-12), m.name


def test_exclusions_are_counted(make_tables):
    s, c = make_tables(seed=4, users={"control": 20, "treatment": 20})
    # one user seen in both variants, and two searches without a variant
    moved = s.index[s["user_id"] == "u1"][0]
    s.loc[moved, "variant"] = "treatment"
    s.loc[s.index[-2:], "variant"] = None
    u1_searches = int((s["user_id"] == "u1").sum())
    with pytest.warns(UserWarning, match="more than one variant"):
        data = load_units(onlineeval.load_logs(searches=s, clicks=c))
    assert data.excluded["multi_variant_units"] == 1
    assert data.excluded["multi_variant_searches"] == u1_searches
    # a search without a variant is pre-period when it comes before its unit's first exposure
    # (a search with a variant), else left out as no_variant
    first = s[s["variant"].notna()].groupby("user_id")["ts"].min()
    untagged = s[s["variant"].isna()]
    before = untagged["ts"] < untagged["user_id"].map(first)
    assert data.excluded["no_variant_searches"] == int((~before).sum())
    assert data.excluded["pre_exposure_searches"] == int(before.sum())
    total = sum(arr[:, data.col("searches")].sum() for arr in data.arms.values())
    assert total == len(s) - u1_searches - 2


def test_pre_period_split_and_units_without_pre_data(make_tables):
    s, c = make_tables(seed=5, days=20)
    start, end = pd.Timestamp("2024-01-01"), pd.Timestamp("2024-01-08")
    data = load_units(onlineeval.load_logs(searches=s, clicks=c),
                      pre_period=parse_pre_period(f"{start},{end}"))
    pre = s[(s["ts"] >= start) & (s["ts"] < end)].groupby("user_id").size()
    exp = s[s["ts"] >= end].groupby("user_id").size()
    arr = np.concatenate(list(data.arms.values()))
    assert len(arr) == len(exp)
    assert arr[:, data.col("searches")].sum() == exp.sum()
    # pre-period searches of users who are in the experiment period
    assert arr[:, data.col("pre_searches")].sum() == pre[pre.index.isin(exp.index)].sum()
    n_with_pre = int(exp.index.isin(pre.index).sum())
    assert arr[:, data.col("has_pre")].sum() == n_with_pre
    assert 0 < n_with_pre < len(exp)


def test_parse_pre_period_forms():
    a, b = pd.Timestamp("2024-01-01"), pd.Timestamp("2024-01-08")
    assert parse_pre_period("2024-01-01,2024-01-08") == (a, b, b)
    assert parse_pre_period(("2024-01-01", "2024-01-08")) == (a, b, b)
    assert parse_pre_period("2024-01-08") == (None, b, b)
    with pytest.raises(InvalidParameterError, match="before its end"):
        parse_pre_period("2024-01-08,2024-01-01")
    with pytest.raises(InvalidParameterError, match="timestamp"):
        parse_pre_period("yesterday,today")


def test_experiments_and_unit_column(make_tables):
    s1, c1 = make_tables(seed=6, users={"control": 10, "treatment": 10}, experiment="e1")
    s2, c2 = make_tables(seed=7, users={"control": 10, "treatment": 10}, experiment="e2")
    s2["search_id"] = "b" + s2["search_id"]
    s2["user_id"] = "b" + s2["user_id"]
    c2["search_id"] = "b" + c2["search_id"]
    logs = onlineeval.load_logs(searches=pd.concat([s1, s2]), clicks=pd.concat([c1, c2]))
    with pytest.raises(InvalidParameterError, match="several experiments.*e1, e2"):
        load_units(logs)
    with pytest.raises(UnknownNameError, match="e3.*e1, e2"):
        load_units(logs, experiment="e3")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = load_units(logs, experiment="e2")
    assert sum(len(a) for a in data.arms.values()) == 20
    with pytest.raises(UnknownNameError, match="randomization unit.*user_id"):
        load_units(logs, unit="usr")


def test_custom_unit_column(make_tables):
    s, c = make_tables(seed=8, users={"control": 40, "treatment": 40})
    # households of two consecutive users (same variant: users are numbered by variant)
    s["household"] = "h" + ((s["user_id"].str[1:].astype(int) + 1) // 2).astype(str)
    data = load_units(onlineeval.load_logs(searches=s, clicks=c), unit="household")
    by_hand = s.groupby(["variant", "household"]).size()
    for variant, arr in data.arms.items():
        assert len(arr) == 20
        np.testing.assert_array_equal(np.sort(arr[:, data.col("searches")]),
                                      np.sort(by_hand.loc[variant].to_numpy()))


def test_extra_log_columns_do_not_shadow_the_query_columns(make_tables):
    # the facts view passes a log's extra columns through; one named like a column the
    # aggregation makes (period, unit) once made every unit vanish from the analysis
    s, c = make_tables(seed=9, users={"control": 30, "treatment": 30})
    extra = s.assign(period="2024Q1", unit="h" + s["user_id"], searches=7)
    for pre in (None, parse_pre_period("2024-01-05")):
        plain = load_units(onlineeval.load_logs(searches=s, clicks=c), pre_period=pre)
        data = load_units(onlineeval.load_logs(searches=extra, clicks=c), pre_period=pre)
        assert sum(len(a) for a in data.arms.values()) > 50
        assert data.columns == plain.columns and data.arms.keys() == plain.arms.keys()
        for v, arr in plain.arms.items():
            np.testing.assert_array_equal(data.arms[v], arr)
    # the extra column can itself be the unit
    by_unit = load_units(onlineeval.load_logs(searches=extra, clicks=c), unit="unit")
    plain = load_units(onlineeval.load_logs(searches=s, clicks=c))
    for v, arr in plain.arms.items():
        np.testing.assert_array_equal(by_unit.arms[v], arr)


def test_unit_arrays_copies_no_whole_frame():
    # 500k units through the A/B readout went ~175 MB over its memory budget at a 500 MB
    # limit: unit_arrays copied the frame of per-unit rows (~30 columns) four times. Its peak
    # allocation (mostly the arrays it returns) must stay well below that (measured on this
    # frame: 3.3x its size before, 1.6x now)
    import tracemalloc
    from pathlib import Path

    from onlineeval.abtest.units import analysis_window, unit_arrays, unit_sums_query

    logs = onlineeval.load_logs(Path(__file__).resolve().parents[2] / "sample_logs" / "ab")
    sql, params, known = unit_sums_query(logs, "user_id", "s100_vs_s080",
                                         window=analysis_window())
    one = logs.con.execute(sql, params).df()
    # the log's rows 40 times over, as 40x as many units (names made unique)
    df = pd.concat([one.assign(unit=one["unit"] + f"#{i}") for i in range(40)],
                   ignore_index=True)
    frame = df.memory_usage(deep=True).sum()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        data = unit_arrays(df, known, cuped=False)
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    assert sum(len(a) for a in data.arms.values()) > 100_000
    assert peak < 2 * frame, (peak / frame)


@pytest.mark.parametrize("cuped", [False, True])
def test_load_units_fetch_gives_the_arrays_of_a_plain_df(cuped):
    # load_units fetches the per-unit rows through a temporary table and Arrow
    # (onlineeval.db.fetch_df) to lower the peak: the arms, ids, exclusions and window must be
    # those of the rows fetched with .df() (float sums to 1e-12: DuckDB adds doubles in
    # an order that varies from run to run, by an ulp, on either path)
    from onlineeval.abtest.units import analysis_window, unit_arrays, unit_sums_query

    logs = onlineeval.load_logs("sample_logs/ab")
    window = analysis_window(cuped=cuped)
    sql, params, known = unit_sums_query(logs, "user_id", "s100_vs_s080", window=window)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = unit_arrays(logs.con.execute(sql, params).df(), known, cuped)
        got = load_units(logs, experiment="s100_vs_s080", cuped=cuped)
    assert got.columns == want.columns and sorted(got.arms) == sorted(want.arms)
    for v in want.arms:
        np.testing.assert_allclose(got.arms[v], want.arms[v], rtol=1e-12, atol=0)
        np.testing.assert_array_equal(got.ids[v], want.ids[v])
    assert got.excluded == want.excluded
    assert {k: got.window[k] for k in want.window} == want.window


def test_per_unit_rows_stored_once_give_the_views_numbers(monkeypatch):
    # exposure_rows stores the per-unit rows in a DuckDB table that the exclusions, moments,
    # quantile counts and order statistics all read, instead of a view that ran the query
    # for each: the same frames (floats to 1e-12) as through the view, for two experiments
    # read one after the other from one connection (a table left from the first must not
    # answer for the second).
    # atol 1e-15: an interval end near 0 is a difference of sums DuckDB adds in a varying
    # order, so it moves by ~1e-17 between any two runs
    from onlineeval.abtest import effect_over_time, quantile_effects

    def run():
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            logs = onlineeval.load_logs("sample_logs/ab")
            for exp in ("s100_vs_s080", "s060_vs_s100"):
                c, t = sorted(logs.con.execute(
                    "SELECT DISTINCT variant FROM searches WHERE experiment = $e",
                    {"e": exp}).fetchall())
                out.append(quantile_effects(logs, c[0], t[0], experiment=exp))
                out.append(effect_over_time(logs, c[0], t[0], "ctr", experiment=exp))
        return out

    stored = run()
    from onlineeval import queries

    create = queries.create

    def as_view(con, name, sql, *, table=False, params=None):
        return create(con, name, sql, params=params, table=table and
                      not name.endswith("_unit_rows"))

    monkeypatch.setattr(queries, "create", as_view)
    viewed = run()
    for a, b in zip(stored, viewed, strict=True):
        pd.testing.assert_frame_equal(a, b, rtol=1e-12, atol=1e-15)
    assert stored[0]["control_value"].to_list() != stored[2]["control_value"].to_list()


def _hostile_logs(make_tables):
    # a unit in both variants (left out and counted), NULL units, a unit with pre-period
    # searches of no experiment, on top of the simulator's users
    s, c = make_tables(seed=5, experiment="e1")
    s = s.copy()
    s.loc[s.index[:3], "user_id"] = s.loc[s.index[-1], "user_id"]
    s.loc[s.index[3:5], "user_id"] = None
    first = s.loc[s.index[10]].copy()
    first["search_id"], first["experiment"], first["variant"] = "pre1", None, None
    first["ts"] = s["ts"].min() - pd.Timedelta(hours=1)
    return onlineeval.load_logs(searches=pd.concat([s, first.to_frame().T]), clicks=c)


@pytest.mark.parametrize("cuped", [False, True])
@pytest.mark.parametrize("sums", [["rr", "known_rr", "searches"], list(UNIT_SUMS)])
def test_lean_units_are_the_chosen_columns_of_the_whole_rows(make_tables, cuped, sums):
    # load_units(sums=...) keeps the per-unit rows in DuckDB and fetches each arm's chosen
    # columns (sql/ab/arm_rows, in unit order): the arms must be those columns of the
    # arrays unit_arrays makes from the rows fetched whole with .df(), and the exclusions,
    # warnings and window the same (float sums to 1e-12: DuckDB adds doubles in an order
    # that varies between runs, by an ulp)
    from onlineeval.abtest.units import analysis_window, unit_arrays, unit_sums_query

    for logs, experiment in ((onlineeval.load_logs("sample_logs/ab"), "s100_vs_s080"),
                             (_hostile_logs(make_tables), None)):
        logs.con.execute("SET threads = 4")
        window = analysis_window(cuped=cuped)
        sql, params, known = unit_sums_query(logs, "user_id", experiment, window=window)
        with warnings.catch_warnings(record=True) as want_warned:
            warnings.simplefilter("always")
            want = unit_arrays(logs.con.execute(sql, params).df(), known, cuped)
        with warnings.catch_warnings(record=True) as got_warned:
            warnings.simplefilter("always")
            got = load_units(logs, experiment=experiment, cuped=cuped, sums=sums)
        chosen = [c for c in UNIT_SUMS if c in sums]
        cols = [*chosen, "units"]
        if cuped:
            cols += [f"pre_{c}" for c in chosen] + ["has_pre"]
        assert got.columns == cols and sorted(got.arms) == sorted(want.arms)
        for v in want.arms:
            np.testing.assert_allclose(got.arms[v], want.arms[v][:, [want.col(c) for c in cols]],
                                       rtol=1e-12, atol=0)
        assert got.ids == {}
        assert got.excluded == want.excluded
        if experiment is None:
            assert got.excluded["multi_variant_units"] == 1
        assert {k: got.window[k] for k in want.window} == want.window
        assert [str(w.message) for w in got_warned if "left out" in str(w.message)] == \
            [str(w.message) for w in want_warned if "left out" in str(w.message)]


def test_lean_units_need_known_sums(small_logs):
    for bad in ([], ["units"], ["nope"]):
        with pytest.raises(InvalidParameterError, match="sums must name"):
            load_units(small_logs, sums=bad)


@pytest.mark.parametrize("options", [
    {}, {"test": "bootstrap", "bootstrap_reps": 200}, {"test": "mannwhitney"},
    {"cuped": True},
])
def test_abtest_on_the_chosen_columns_equals_abtest_on_the_whole_rows(monkeypatch, options):
    # abtest reads only its metrics' columns (load_units(sums=...)); the old path, every
    # sum of the rows fetched whole, must give the same frame (to 1e-12, see above)
    import onlineeval.abtest.readout as readout
    from onlineeval.abtest.units import load_units as lean

    logs = onlineeval.load_logs("sample_logs/ab")
    metrics = ["ctr", "click_mrr", "abandonment_rate", "searches_per_unit", "revenue_per_unit"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = onlineeval.abtest(logs, metrics=metrics, experiment="s100_vs_s080", **options)
        monkeypatch.setattr(readout, "load_units",
                            lambda *a, sums=None, **k: lean(*a, **k))
        want = onlineeval.abtest(logs, metrics=metrics, experiment="s100_vs_s080", **options)
    pd.testing.assert_frame_equal(got, want, rtol=1e-12, atol=0)
    assert got.attrs == want.attrs
