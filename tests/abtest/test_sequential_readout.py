"""sequential_readout: each look's always-valid interval and p-value are the normal-mixture
confidence sequence computed here by hand from the fixed-horizon estimate and standard error
at that look (effect_over_time's row for the day), all looks come from one SQL pass, and the
SRM columns are scipy's chi-square and the Dirichlet-multinomial Bayes factor written out."""

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import gammaln

import onlineeval
from onlineeval.abtest import effect_over_time
from onlineeval.abtest.sequential import look_indices, sequential_readout
from onlineeval.errors import InvalidParameterError

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "ab"
EXP = "s130_vs_s080"


@pytest.fixture(scope="module")
def logs():
    return onlineeval.load_logs(str(SAMPLE))


@pytest.mark.parametrize("metric", ["ctr", "searches_per_unit"])
def test_each_look_is_the_sequence_of_the_fixed_horizon_estimate(logs, metric, hand_sequence):
    seq = sequential_readout(logs, "control", "treatment", metric, experiment=EXP)
    fixed = effect_over_time(logs, "control", "treatment", metric, experiment=EXP)
    assert list(seq["look_end"]) == list(fixed["day"])
    assert (seq["units_control"].to_numpy() == fixed["units_control"].to_numpy()).all()
    est = fixed["estimate"].to_numpy()
    # the fixed-horizon standard error, recovered from its t interval and df
    se = (fixed["ci_high"] - fixed["ci_low"]).to_numpy() / (
        2 * stats.t.ppf(0.975, fixed["df"].to_numpy()))
    n = (fixed["units_control"] + fixed["units_treatment"]).to_numpy(dtype=float)
    two_log = -2 * np.log(0.05)
    rho2 = (two_log + np.log(two_log + 1)) / n[-1]
    lo, hi, p = hand_sequence(est, se, n, 0.05, rho2)
    np.testing.assert_allclose(seq["estimate"], est, rtol=1e-12)
    np.testing.assert_allclose(seq["ci_low"], lo, rtol=1e-9)
    np.testing.assert_allclose(seq["ci_high"], hi, rtol=1e-9)
    np.testing.assert_allclose(seq["p_value"], p, rtol=1e-9)
    np.testing.assert_allclose(seq["fixed_p_value"], fixed["p_value"], rtol=1e-12)
    np.testing.assert_allclose(seq["fixed_ci_low"], fixed["ci_low"], rtol=1e-12)
    below = p < 0.05
    first = np.argmax(below) if below.any() else len(p)
    assert list(seq["stop"]) == [i >= first for i in range(len(p))]
    assert seq.attrs["rho2"][metric] == pytest.approx(rho2, rel=1e-12)


def test_ctr_effect_stops_and_given_rho2_is_used(logs):
    seq = sequential_readout(logs, "control", "treatment", "ctr", experiment=EXP, rho2=1e-3)
    assert seq.attrs["rho2"]["ctr"] == 1e-3
    assert seq["stop"].iloc[-1] and not seq["stop"].iloc[0]


def test_n_looks_are_a_subset_of_the_daily_looks(logs):
    daily = sequential_readout(logs, "control", "treatment", "ctr", experiment=EXP)
    four = sequential_readout(logs, "control", "treatment", "ctr", experiment=EXP, looks=4,
                              rho2=daily.attrs["rho2"]["ctr"])
    assert len(daily) == 15 and len(four) == 4
    picked = daily.set_index("look_end").loc[list(four["look_end"])]
    np.testing.assert_allclose(four["estimate"], picked["estimate"], rtol=1e-12)
    np.testing.assert_allclose(four["fixed_p_value"], picked["fixed_p_value"], rtol=1e-12)
    # fewer looks: the running intersection is over fewer intervals, never narrower
    assert (four["ci_low"].to_numpy() <= picked["ci_low"].to_numpy() + 1e-15).all()
    assert four["look_end"].iloc[-1] == daily["look_end"].iloc[-1]


def test_look_indices():
    assert list(look_indices(15, "day")) == list(range(15))
    assert list(look_indices(15, 4)) == [3, 7, 11, 14]
    assert list(look_indices(3, 10)) == [0, 1, 2]
    assert list(look_indices(14, 1)) == [13]
    assert list(look_indices(30, "hour")) == list(range(30))
    for bad in (0, -1, 2.5, "week", True):
        with pytest.raises(InvalidParameterError):
            look_indices(14, bad)


def test_srm_columns_by_hand(logs):
    seq = sequential_readout(logs, "control", "treatment", "ctr", experiment=EXP)
    for _, row in seq.iterrows():
        c, t = row["units_control"], row["units_treatment"]
        assert row["srm_p_value"] == pytest.approx(
            stats.chisquare([c, t], [(c + t) / 2] * 2).pvalue, rel=1e-12)
    # Lindon & Malek's Bayes factor with a = 100 * (1/2, 1/2), running minimum of 1 / BF
    c = seq["units_control"].to_numpy(dtype=float)
    t = seq["units_treatment"].to_numpy(dtype=float)
    log_bf = (gammaln(100) - gammaln(100 + c + t) + gammaln(50 + c) + gammaln(50 + t)
              - 2 * gammaln(50) + (c + t) * np.log(2))
    np.testing.assert_allclose(seq["srm_sequential_p_value"],
                               np.minimum.accumulate(np.minimum(1, np.exp(-log_bf))), rtol=1e-9)


def statements_for(counting_connection, window_end, looks, **kwargs):
    logs = onlineeval.load_logs(str(SAMPLE))
    counting = counting_connection(logs.con)
    logs.con = counting
    frame = sequential_readout(logs, "control", "treatment", "ctr", experiment=EXP,
                               end=window_end, looks=looks, **kwargs)
    return counting.statements, len(frame)


def test_all_looks_come_from_one_pass_whatever_their_number(counting_connection):
    few, n_few = statements_for(counting_connection, "2026-01-09", "day")
    many, n_many = statements_for(counting_connection, None, "day")
    assert (n_few, n_many) == (4, 15)
    # the same statements for 4 looks as for 15: the log is not re-read once per look
    assert few == many
    logs = onlineeval.load_logs(str(SAMPLE))
    two_metrics = counting_connection(logs.con)
    logs.con = two_metrics
    sequential_readout(logs, "control", "treatment", ["ctr", "abandonment_rate"],
                       experiment=EXP)
    # and one pass per metric over per-unit rows stored once: the second metric runs every
    # statement of the first but the store (abtest.units.shared_unit_rows)
    assert two_metrics.statements == 2 * many - 1


def test_cuped_looks_come_from_one_pass_too(counting_connection):
    """CUPED (the sample from 2026-01-10 on, the days before as the pre-period): the same
    statements for 2 looks as for 10."""
    pre = "2026-01-05,2026-01-10"
    few, n_few = statements_for(counting_connection, "2026-01-12", "day", pre_period=pre)
    many, n_many = statements_for(counting_connection, None, "day", pre_period=pre)
    assert (n_few, n_many) == (2, 10) and few == many


def test_duckdb_guard_is_real(counting_connection):
    con = counting_connection(duckdb.connect())
    con.execute("SELECT 1")
    assert con.statements == 1


def test_cli_readout_sequential_is_the_api(logs, capsys):
    import io

    import pandas as pd

    from onlineeval.cli import main

    rc = main(["readout", str(SAMPLE), "--experiment", EXP, "--sequential", "--looks", "3",
               "--guardrails", "abandonment_rate", "--format", "csv"])
    got = pd.read_csv(io.StringIO(capsys.readouterr().out))
    want = sequential_readout(logs, "control", "treatment", ["ctr", "abandonment_rate"],
                              experiment=EXP, looks=3)
    assert rc == 0 and list(got.columns) == list(want.columns) and len(got) == 6
    np.testing.assert_allclose(got["p_value"], want["p_value"], rtol=1e-12)
    assert list(got["stop"]) == list(want["stop"])
    assert main(["readout", str(SAMPLE), "--experiment", EXP, "--sequential",
                 "--looks", "0"]) == 2


@pytest.fixture(scope="module")
def uneven():
    """The sample experiment with 57% of its control users dropped (by a hash of the user
    id): about 650 control and 1480 treatment users, a 30/70 design."""
    return onlineeval.load_logs(**uneven_tables())


def uneven_tables():
    """The tables of :func:`uneven`: searches, results and clicks frames."""
    searches = pd.read_parquet(SAMPLE / "searches.parquet")
    searches = searches[searches["experiment"] == EXP]
    keep = (searches["variant"] != "control") | (
        pd.util.hash_pandas_object(searches["user_id"], index=False) % 100 >= 57)
    searches = searches[keep]
    ids = set(searches["search_id"])
    tables = {name: pd.read_parquet(SAMPLE / f"{name}.parquet") for name in ("results",
                                                                             "clicks")}
    return {"searches": searches, **{k: v[v["search_id"].isin(ids)] for k, v in tables.items()}}


def dirichlet_log_bf(counts, p0, concentration=100.0):
    """Lindon & Malek's Dirichlet-multinomial Bayes factor against the multinomial p0,
    written from the marginal likelihoods: Beta-function ratio over prod p0^x."""
    a = concentration * np.asarray(p0)
    x = np.asarray(counts, dtype=float)
    log_multi_beta = lambda v: gammaln(v).sum(axis=-1) - gammaln(v.sum(axis=-1))  # noqa: E731
    return log_multi_beta(a + x) - log_multi_beta(a) - (x * np.log(p0)).sum(axis=-1)


def test_srm_against_a_30_70_design(uneven):
    split = {"control": 0.3, "treatment": 0.7}
    seq = sequential_readout(uneven, "control", "treatment", "ctr", expected_split=split)
    c = seq["units_control"].to_numpy(dtype=float)
    t = seq["units_treatment"].to_numpy(dtype=float)
    share = c[-1] / (c[-1] + t[-1])
    assert 0.28 < share < 0.32 and seq.attrs["expected_split"] == split
    for a, b, p in zip(c, t, seq["srm_p_value"], strict=True):
        assert p == pytest.approx(stats.chisquare([a, b], [0.3 * (a + b), 0.7 * (a + b)]).pvalue,
                                  rel=1e-12)
    log_bf = dirichlet_log_bf(np.stack([c, t], axis=1), [0.3, 0.7])
    want = np.minimum.accumulate(np.minimum(1, np.exp(-log_bf)))
    np.testing.assert_allclose(seq["srm_sequential_p_value"], want, rtol=1e-9)
    assert seq["srm_sequential_p_value"].iloc[-1] > 0.001
    # read against the default equal split, the same counts are a mismatch by both tests
    equal = sequential_readout(uneven, "control", "treatment", "ctr")
    assert equal["srm_p_value"].iloc[-1] < 1e-50
    assert equal["srm_sequential_p_value"].iloc[-1] < 1e-40
    # the effect columns do not depend on the designed split
    np.testing.assert_allclose(equal["p_value"], seq["p_value"], rtol=1e-12)
    with pytest.raises(InvalidParameterError, match="sum to 1"):
        sequential_readout(uneven, "control", "treatment", "ctr",
                           expected_split={"control": 0.3, "treatment": 0.6})


def test_hourly_looks_at_midnight_are_the_daily_looks(logs):
    daily = sequential_readout(logs, "control", "treatment", "ctr", experiment=EXP)
    hourly = sequential_readout(logs, "control", "treatment", "ctr", experiment=EXP,
                                looks="hour", rho2=daily.attrs["rho2"]["ctr"])
    ends = pd.to_datetime(hourly["look_end"])
    # one look per hour from the first exposure's hour to the last's, in order
    assert (ends.diff().dropna() == pd.Timedelta(hours=1)).all()
    assert len(hourly) > 24 * (len(daily) - 1)
    # the look ending at midnight after day d reads what the daily look of d reads
    midnight = hourly[ends.dt.hour == 0].copy()
    midnight["day"] = (pd.to_datetime(midnight["look_end"]) - pd.Timedelta(days=1)).dt.date
    both = daily.merge(midnight, left_on="look_end", right_on="day", suffixes=("", "_h"))
    # every day but the last (its one exposure is at 00:00, so its last hour ends at 01:00):
    # that one is the last hourly look
    assert len(both) == len(daily) - 1
    last = hourly.iloc[-1]
    assert last["look_end"] == pd.Timestamp(daily["look_end"].iloc[-1]) + pd.Timedelta(hours=1)
    assert last["units_control"] == daily["units_control"].iloc[-1]
    assert last["estimate"] == pytest.approx(daily["estimate"].iloc[-1], rel=1e-9)
    for col in ("units_control", "units_treatment"):
        assert (both[col] == both[f"{col}_h"]).all()
    for col in ("estimate", "fixed_p_value", "fixed_ci_low", "srm_p_value"):
        np.testing.assert_allclose(both[f"{col}_h"], both[col], rtol=1e-9)
    # more looks: the running intersection is over more intervals, never wider
    assert (both["ci_low_h"] >= both["ci_low"] - 1e-15).all()
    assert (both["ci_high_h"] <= both["ci_high"] + 1e-15).all()


def test_hourly_looks_come_from_one_pass_too(counting_connection):
    daily, _ = statements_for(counting_connection, None, "day")
    hourly, n = statements_for(counting_connection, None, "hour")
    assert hourly == daily and n > 300


def test_cli_expected_split_for_both_sample_ratio_checks(uneven, tmp_path, capsys):
    """``readout --expected-split`` is the API's expected_split, for the sequential readout's
    two SRM columns and for the fixed-horizon readout's check (chi-square by hand)."""
    import io
    import json

    from onlineeval.cli import main

    log_dir = tmp_path / "uneven"
    log_dir.mkdir()
    for name, frame in uneven_tables().items():
        frame.to_parquet(log_dir / f"{name}.parquet")
    split = "control=0.3,treatment=0.7"
    base = ["readout", str(log_dir), "--experiment", EXP]
    assert main([*base, "--sequential", "--expected-split", split, "--format", "csv"]) == 0
    got = pd.read_csv(io.StringIO(capsys.readouterr().out))
    want = sequential_readout(uneven, "control", "treatment", "ctr", experiment=EXP,
                              expected_split={"control": 0.3, "treatment": 0.7})
    assert list(got["units_control"]) == list(want["units_control"])
    np.testing.assert_allclose(got["srm_p_value"], want["srm_p_value"], rtol=1e-3)
    np.testing.assert_allclose(got["srm_sequential_p_value"], want["srm_sequential_p_value"],
                               rtol=1e-3)
    assert got["srm_sequential_p_value"].iloc[-1] > 0.001
    assert main([*base, "--expected-split", split, "--secondary", "none", "--fail-on-srm",
                 "--format", "json"]) == 0
    srm = json.loads(capsys.readouterr().out)["srm"]
    a, b = srm["observed"]["control"], srm["observed"]["treatment"]
    assert srm["p_value"] == pytest.approx(
        stats.chisquare([a, b], [0.3 * (a + b), 0.7 * (a + b)]).pvalue, rel=1e-12)
    assert srm["status"] == "ok" and srm["expected_shares"] == {"control": 0.3,
                                                                "treatment": 0.7}
    for extra, bad, says in (
            (["--sequential"], "control:0.3", "--expected-split must look like"),
            ([], "control=0.3,=0.7", "--expected-split must look like"),
            (["--sequential"], "control=0.3,treatment=0.6", "sum to 1")):
        assert main([*base, *extra, "--expected-split", bad]) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1, err


def test_per_unit_mean_against_growthbooks_sequential_t_test(logs, growthbook_sequence):
    """searches_per_unit at every look, from the sample's searches counted per user with
    pandas (not the package's SQL) and GrowthBook's parameterisation of the sequence
    (conftest), tuned for the units of the last look as the readout's default."""
    seq = sequential_readout(logs, "control", "treatment", "searches_per_unit",
                             experiment=EXP)
    searches = pd.read_parquet(SAMPLE / "searches.parquet")
    searches = searches[searches["experiment"] == EXP]
    est, var, n = [], [], []
    for day in seq["look_end"]:
        seen = searches[searches["ts"] < pd.Timestamp(day) + pd.Timedelta(days=1)]
        per_user = seen.groupby(["variant", "user_id"]).size()
        c, t = (per_user[v].to_numpy(dtype=float) for v in ("control", "treatment"))
        est.append(t.mean() - c.mean())
        var.append(t.var(ddof=1) / len(t) + c.var(ddof=1) / len(c))
        n.append(len(c) + len(t))
    lo, hi, p = growthbook_sequence(est, var, n, n[-1], 0.05)
    np.testing.assert_allclose(seq["estimate"], est, rtol=1e-12)
    assert list(seq["units_control"] + seq["units_treatment"]) == n
    # GrowthBook reports each look alone; the readout keeps the running intersection and
    # minimum (the sequence is valid over all looks at once, so both are)
    np.testing.assert_allclose(seq["ci_low"], np.maximum.accumulate(lo), rtol=1e-9)
    np.testing.assert_allclose(seq["ci_high"], np.minimum.accumulate(hi), rtol=1e-9)
    np.testing.assert_allclose(seq["p_value"], np.minimum.accumulate(p), rtol=1e-9)
