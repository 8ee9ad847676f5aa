"""Which searches an A/B readout counts: a unit's exposures from its first one on, inside the
analysis window; the searches before are its pre-period (CUPED), never outcome; nothing of
another experiment is pooled in. Every expected number is computed here with pandas from
the log's rows."""

import warnings

import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.abtest.units import EXCLUDED, load_units
from onlineeval.cli import main
from onlineeval.errors import InputError, InvalidParameterError

START = pd.Timestamp("2026-01-05")  # TrafficConfig.start: the simulated experiment's start


@pytest.fixture(scope="module")
def pre_days_study(tmp_path_factory):
    """``onlineeval simulate --pre-days 7``: a week of traffic before the experiment, served
    as control to every user."""
    out = tmp_path_factory.mktemp("study") / "s"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["simulate", str(out), "--seed", "5", "--users", "1200", "--queries",
                     "20", "--pairs", "s200:s100", "--pre-days", "7"]) == 0
    searches = pd.read_parquet(out / "ab" / "searches.parquet")
    clicks = pd.read_parquet(out / "ab" / "clicks.parquet")
    return out / "ab", searches, clicks


def _arm_ctr(searches, clicks, outcome):
    """CTR per arm over the ``outcome`` searches, summed per unit then per arm."""
    s = searches[outcome].assign(clicked=searches["search_id"].isin(clicks["search_id"]))
    per_unit = s.groupby(["variant", "user_id"])["clicked"].agg(["size", "sum"])
    arm = per_unit.groupby("variant").sum()
    return arm["sum"] / arm["size"], per_unit


def _served_by_arm(searches):
    """Ground truth of the simulator: a page is served its user's arm when its session
    started at or after the experiment start (earlier sessions are served control)."""
    return searches.groupby("session_id")["ts"].transform("min") >= START


def _post_exposure(searches, exposure):
    """The per-unit, post-exposure definition: a unit's exposures from its first one on."""
    first = searches[exposure].groupby("user_id")["ts"].min()
    return exposure & (searches["ts"] >= searches["user_id"].map(first))


def _ctr_row(df):
    return df.set_index("metric").loc["ctr"]


def test_simulated_pre_period_delta_is_the_post_exposure_delta(pre_days_study):
    # the audit: on `simulate --pre-days 7` logs abtest pooled the pre-period week (served
    # control to both arms) into the outcome and diluted the CTR delta (0.053 instead of
    # 0.096 on its seed)
    path, s, c = pre_days_study
    served = _served_by_arm(s)
    # the log says so: pre-period searches carry no experiment and no variant
    assert (s["variant"].notna() == served).all() and (s["experiment"].notna() == served).all()
    exposure = s["variant"].notna() & (s["experiment"] == "s200_vs_s100")
    ctr, per_unit = _arm_ctr(s, c, _post_exposure(s, exposure))
    truth, _ = _arm_ctr(s, c, served)
    pd.testing.assert_series_equal(ctr, truth)
    # pooling every search of a unit with its arm (what the old readout did) dilutes it
    arm_of = s.loc[exposure].groupby("user_id")["variant"].first()
    pooled, _ = _arm_ctr(s.assign(variant=s["user_id"].map(arm_of)), c,
                         pd.Series(True, index=s.index))
    delta, pooled_delta = ctr["treatment"] - ctr["control"], (
        pooled["treatment"] - pooled["control"])
    assert pooled_delta < 0.75 * delta

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = onlineeval.abtest(str(path), metrics="ctr")
    row = _ctr_row(df)
    assert row["control_value"] == pytest.approx(ctr["control"], rel=1e-12)
    assert row["treatment_value"] == pytest.approx(ctr["treatment"], rel=1e-12)
    assert row["estimate"] == pytest.approx(delta, rel=1e-9)
    assert row["units_control"] == len(per_unit.loc["control"])
    assert row["units_treatment"] == len(per_unit.loc["treatment"])
    assert df.attrs["experiment"] == "s200_vs_s100"
    assert df.attrs["excluded"]["pre_exposure_searches"] == int((~served).sum())
    window = df.attrs["window"]
    assert (window["start"], window["end"]) == (None, None)
    assert window["first_exposure"] == s.loc[exposure, "ts"].min() >= START
    assert window["last_exposure"] == s.loc[exposure, "ts"].max()


def test_a_log_tagging_the_pre_period_is_read_from_start(pre_days_study):
    # a log whose pre-period searches carry the experiment and the arm (assignment logged
    # before launch) says they are exposures; --start says where the experiment begins
    path, s, c = pre_days_study
    arm_of = s.dropna(subset=["variant"]).groupby("user_id")["variant"].first()
    tagged = s.assign(experiment="s200_vs_s100", variant=s["user_id"].map(arm_of))
    logs = onlineeval.load_logs(searches=tagged, clicks=c)
    everything, _ = _arm_ctr(tagged, c, pd.Series(True, index=s.index))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pooled = _ctr_row(onlineeval.abtest(logs, metrics="ctr"))
        df = onlineeval.abtest(logs, metrics="ctr", start="2026-01-05")
    assert pooled["treatment_value"] == pytest.approx(everything["treatment"], rel=1e-12)
    in_window = tagged["ts"] >= START
    ctr, _ = _arm_ctr(tagged, c, _post_exposure(tagged, in_window))
    row = _ctr_row(df)
    assert row["control_value"] == pytest.approx(ctr["control"], rel=1e-12)
    assert row["treatment_value"] == pytest.approx(ctr["treatment"], rel=1e-12)
    assert df.attrs["excluded"]["pre_exposure_searches"] == int((~in_window).sum())
    assert df.attrs["window"]["start"] == START
    # a zone is converted to UTC: 02:00 at +02:00 is midnight UTC
    same = onlineeval.abtest(logs, metrics="ctr", start="2026-01-05T02:00:00+02:00")
    pd.testing.assert_frame_equal(same, df)


def test_cuped_pre_period_is_the_traffic_before_the_first_exposure(pre_days_study):
    path, s, c = pre_days_study
    logs = onlineeval.load_logs(path)
    data = load_units(logs, cuped=True)
    exposure = s["variant"].notna()
    first = s[exposure].groupby("user_id")["ts"].min()
    pre = s[s["ts"] < s["user_id"].map(first)]
    want = pre.groupby("user_id").size()
    got = {}
    users = sorted(first.index)  # rows are in unit order within each arm
    for variant, arr in data.arms.items():
        ids = [u for u in users if s.loc[exposure & (s["user_id"] == u), "variant"].iloc[0]
               == variant]
        assert len(ids) == len(arr)
        got.update(zip(ids, arr[:, data.col("pre_searches")], strict=True))
        np.testing.assert_array_equal(
            arr[:, data.col("has_pre")], [float(u in want.index) for u in ids])
    assert got == {u: float(want.get(u, 0)) for u in users}
    assert 0 < len(want) < len(users)
    # the API: cuped=True is the same as giving the experiment start as pre_period (here
    # every pre-period search comes before the start)
    a = onlineeval.abtest(logs, metrics="ctr", cuped=True)
    b = onlineeval.abtest(logs, metrics="ctr", pre_period="2026-01-05")
    c2 = onlineeval.abtest(logs, metrics="ctr", start="2026-01-05", cuped=True)
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(b, c2)
    assert a["cuped_variance_reduction"].iloc[0] > 0


def test_window_bounds_and_exclusions_add_up(make_tables):
    s, c = make_tables(seed=30, days=20, users={"control": 60, "treatment": 60})
    # some searches without a variant, before and after their unit's exposures
    s.loc[s.index[::9], "variant"] = None
    start, end = pd.Timestamp("2024-01-04"), pd.Timestamp("2024-01-15 12:00")
    logs = onlineeval.load_logs(searches=s, clicks=c)
    with pytest.warns(UserWarning, match="after their unit's first exposure"):
        df = onlineeval.abtest(logs, metrics="ctr", start=str(start), end=end.to_pydatetime())
    exposure = s["variant"].notna() & (s["ts"] >= start) & (s["ts"] < end)
    outcome = _post_exposure(s, exposure)
    ctr, per_unit = _arm_ctr(s, c, outcome)
    row = _ctr_row(df)
    assert row["control_value"] == pytest.approx(ctr["control"], rel=1e-12)
    assert row["treatment_value"] == pytest.approx(ctr["treatment"], rel=1e-12)
    assert row["units_control"] + row["units_treatment"] == len(per_unit)
    first = s[exposure].groupby("user_id")["ts"].min()
    f = s["user_id"].map(first)
    ex = df.attrs["excluded"]
    assert ex["unexposed_unit_searches"] == int(f.isna().sum())
    assert ex["pre_exposure_searches"] == int((s["ts"] < f).sum())
    assert ex["after_window_searches"] == int((f.notna() & (s["ts"] >= end)).sum())
    assert ex["no_variant_searches"] == int(
        (s["variant"].isna() & (s["ts"] >= f) & (s["ts"] < end)).sum())
    assert ex["no_variant_searches"] > 0 and ex["after_window_searches"] > 0
    assert set(ex) == set(EXCLUDED)
    left_out = sum(v for k, v in ex.items() if k != "multi_variant_units")
    assert left_out + int(outcome.sum()) == len(s)
    window = df.attrs["window"]
    assert (window["start"], window["end"]) == (start, end)
    assert window["first_exposure"] == s.loc[outcome, "ts"].min()
    assert window["last_exposure"] == s.loc[outcome, "ts"].max()


def test_other_experiments_are_never_pooled_in(make_tables):
    # one experiment plus searches without an experiment that carry a variant (e.g. another
    # feature's arms): they are not the experiment's exposures, whether the experiment is
    # named or the log's only one
    s, c = make_tables(seed=31, users={"control": 40, "treatment": 40}, experiment="e1")
    stray = s.index[1::4]
    s.loc[stray, "experiment"] = None
    logs = onlineeval.load_logs(searches=s, clicks=c)
    exposure = s["experiment"].eq("e1")
    outcome = _post_exposure(s, exposure)
    ctr, _ = _arm_ctr(s, c, outcome)
    for kwargs in ({}, {"experiment": "e1"}):
        with pytest.warns(UserWarning, match="of another experiment or none"):
            df = onlineeval.abtest(logs, metrics="ctr", **kwargs)
        row = _ctr_row(df)
        assert row["control_value"] == pytest.approx(ctr["control"], rel=1e-12)
        assert row["treatment_value"] == pytest.approx(ctr["treatment"], rel=1e-12)
        first = s["user_id"].map(s[exposure].groupby("user_id")["ts"].min())
        after = s.loc[stray, "ts"] >= first.loc[stray]
        assert df.attrs["excluded"]["outside_experiment_searches"] == int(after.sum()) > 0
        assert df.attrs["excluded"]["pre_exposure_searches"] == int((~after).sum())
        assert df.attrs["experiment"] == "e1"


def test_a_unit_in_two_experiments_counts_only_its_exposures_to_the_one_analysed(make_tables):
    s1, c1 = make_tables(seed=32, users={"control": 30, "treatment": 30}, experiment="e1",
                         start="2024-01-01", days=7)
    s2, c2 = make_tables(seed=33, users={"control": 30, "treatment": 30}, experiment="e2",
                         start="2024-01-08", days=7)
    # the same users, in e2 after e1 (ids of s2 made distinct for searches only)
    s2["search_id"] = "b" + s2["search_id"]
    c2["search_id"] = "b" + c2["search_id"]
    s, c = pd.concat([s1, s2], ignore_index=True), pd.concat([c1, c2], ignore_index=True)
    logs = onlineeval.load_logs(searches=s, clicks=c)
    for name, other in (("e1", s2), ("e2", s1)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            df = onlineeval.abtest(logs, metrics="ctr", experiment=name)
        exposure = s["experiment"].eq(name)
        ctr, _ = _arm_ctr(s, c, _post_exposure(s, exposure))
        row = _ctr_row(df)
        assert row["control_value"] == pytest.approx(ctr["control"], rel=1e-12)
        assert row["treatment_value"] == pytest.approx(ctr["treatment"], rel=1e-12)
        first = s["user_id"].map(s[exposure].groupby("user_id")["ts"].min())
        ex = df.attrs["excluded"]
        assert ex["outside_experiment_searches"] == int(
            (~exposure & (s["ts"] >= first)).sum())
        assert ex["pre_exposure_searches"] == int((s["ts"] < first).sum())
        if name == "e1":  # e2 comes later: its searches after e1's first exposures
            assert ex["outside_experiment_searches"] == len(other)
            assert any("another experiment" in str(w.message) for w in caught)
        else:
            assert ex["pre_exposure_searches"] == len(other)


def test_window_arguments_are_checked(make_tables):
    s, c = make_tables(seed=34, users={"control": 10, "treatment": 10})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    for kwargs, match in (
        ({"start": "2024-01-05", "end": "2024-01-05"}, "before its end"),
        ({"start": "now"}, "timestamp like"),
        ({"end": "today"}, "timestamp like"),
        ({"start": 20240105}, "timestamp"),
        ({"start": "2024-01-06", "pre_period": "2024-01-01,2024-01-05"}, "give one of them"),
        ({"pre_period": "2024-01-05", "end": "2024-01-02"}, "after the experiment start"),
        ({"pre_period": "2024-01-05", "cuped": False}, "cuped=False"),
    ):
        with pytest.raises(InvalidParameterError, match=match):
            onlineeval.abtest(logs, metrics="ctr", **kwargs)
    no_ts = onlineeval.load_logs(searches=s.drop(columns="ts"), clicks=c.drop(columns="ts"))
    for kwargs in ({"start": "2024-01-05"}, {"end": "2024-01-05"}, {"cuped": True}):
        with pytest.raises(InputError, match="needs search timestamps"):
            onlineeval.abtest(no_ts, metrics="ctr", **kwargs)
    # a start given with the pre-period's end is the same window
    a = onlineeval.abtest(logs, metrics="ctr", pre_period="2024-01-01,2024-01-05")
    b = onlineeval.abtest(logs, metrics="ctr", pre_period="2024-01-01,2024-01-05",
                          start="2024-01-05")
    pd.testing.assert_frame_equal(a, b)
    assert a.attrs["window"]["pre_period_start"] == pd.Timestamp("2024-01-01")
