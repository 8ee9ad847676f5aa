"""CUPED in the sequential readout and the A/A harness: one look's CUPED estimate, standard
error, fixed-horizon and always-valid intervals computed by hand on a tiny log; the last look
is abtest's CUPED readout on the same data; on a simulated log whose pre-period predicts the
experiment the sequence is narrower; the CLI is the API; all looks come from one SQL pass; the
harness's CUPED split test on the real assignment is the readout's; and (slow) under 14 daily
looks the CUPED sequence keeps its false-positive rate at alpha on 500 salted A/A splits."""

import io
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import onlineeval
from onlineeval import queries
from onlineeval.abtest.aa import UnitDays, aa_test, split_tests
from onlineeval.abtest.over_time import over_time_units
from onlineeval.abtest.sequential import sequential_readout
from onlineeval.errors import InvalidParameterError

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "ab"
EXP = "s130_vs_s080"
#: the sample experiment from 2026-01-10 on, its searches before as the pre-period
PRE = "2026-01-05,2026-01-10"


@pytest.fixture(scope="module")
def logs():
    return onlineeval.load_logs(str(SAMPLE))


def tiny_logs():
    """Six units with pre-period searches (before 2024-01-10) and searches on the first
    experiment day; on the second day c1 and t3 search again and c4, without a pre-period,
    arrives. (unit, variant, pre-period searches, day-1 searches, day-2 searches)."""
    plan = [("c1", "control", 1, 1, 1), ("c2", "control", 3, 2, 0),
            ("c3", "control", 2, 2, 0), ("c4", "control", 0, 0, 2),
            ("t1", "treatment", 2, 2, 0), ("t2", "treatment", 4, 3, 0),
            ("t3", "treatment", 1, 1, 2)]
    rows = []
    for user, variant, *counts in plan:
        for day, k in zip(("2024-01-05", "2024-01-10", "2024-01-11"), counts, strict=True):
            rows += [(user, variant, pd.Timestamp(day) + pd.Timedelta(hours=1 + i))
                     for i in range(k)]
    searches = pd.DataFrame(rows, columns=["user_id", "variant", "ts"])
    searches["search_id"] = [f"s{i}" for i in range(len(searches))]
    searches["query"] = "q"
    clicks = pd.DataFrame({"search_id": ["s0"], "rank": [1]})
    return onlineeval.load_logs(searches=searches, clicks=clicks), plan


def test_first_look_by_hand():
    """searches_per_unit at the look of 2024-01-10: every unit read has a pre-period, so
    the one covariate that varies is the pre-period mean: theta = (Var_c(px)/n_c +
    Var_t(px)/n_t)^-1 (Cov_c(x, px)/n_c + Cov_t(x, px)/n_t)."""
    tiny, plan = tiny_logs()
    rho2 = 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seq = sequential_readout(tiny, "control", "treatment", "searches_per_unit",
                                 start="2024-01-10", cuped=True, rho2=rho2)
    first = seq.iloc[0]
    assert str(first["look_end"]) == "2024-01-10"
    arms = {}
    for variant in ("control", "treatment"):
        units = [p for p in plan if p[1] == variant and p[3] > 0]
        arms[variant] = (np.array([u[3] for u in units], float),
                         np.array([u[2] for u in units], float))
    (xc, pc), (xt, pt) = arms["control"], arms["treatment"]
    nc, nt = len(xc), len(xt)
    assert (first["units_control"], first["units_treatment"]) == (nc, nt) == (3, 3)
    cov = [np.cov(x, p, ddof=1) for x, p in ((xc, pc), (xt, pt))]
    theta = (cov[0][0, 1] / nc + cov[1][0, 1] / nt) / (cov[0][1, 1] / nc + cov[1][1, 1] / nt)
    est = (xt.mean() - xc.mean()) - theta * (pt.mean() - pc.mean())
    vc = (cov[0][0, 0] - 2 * theta * cov[0][0, 1] + theta ** 2 * cov[0][1, 1]) / nc
    vt = (cov[1][0, 0] - 2 * theta * cov[1][0, 1] + theta ** 2 * cov[1][1, 1]) / nt
    se = np.sqrt(vc + vt)
    n = nc + nt
    a = n * rho2 + 1
    half = se * np.sqrt(n) * np.sqrt(2 * a / (n * n * rho2) * np.log(np.sqrt(a) / 0.05))
    p = min(1.0, np.sqrt(a) * np.exp(-(est / se) ** 2 * n * rho2 / (2 * a)))
    df = (vc + vt) ** 2 / (vc ** 2 / (nc - 1) + vt ** 2 / (nt - 1))
    fixed_half = stats.t.ppf(0.975, df) * se
    assert first["estimate"] == pytest.approx(est, rel=1e-12)
    assert first["ci_low"] == pytest.approx(est - half, rel=1e-12)
    assert first["ci_high"] == pytest.approx(est + half, rel=1e-12)
    assert first["p_value"] == pytest.approx(p, rel=1e-12)
    assert first["fixed_ci_low"] == pytest.approx(est - fixed_half, rel=1e-12)
    assert first["fixed_p_value"] == pytest.approx(2 * stats.t.sf(abs(est) / se, df), rel=1e-9)
    plain_var = xc.var(ddof=1) / nc + xt.var(ddof=1) / nt
    assert first["cuped_variance_reduction"] == pytest.approx(1 - se ** 2 / plain_var,
                                                              rel=1e-12)
    assert first["cuped_applied"] and seq.attrs["cuped"]
    # the second look reads c4 (no pre-period) as well: it is abtest's CUPED on all units
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fixed = onlineeval.abtest(tiny, "control", "treatment", "searches_per_unit",
                                  start="2024-01-10", cuped=True)
    assert seq["units_control"].iloc[-1] == 4
    assert seq["estimate"].iloc[-1] == pytest.approx(fixed["estimate"].iloc[0], rel=1e-12)


@pytest.mark.parametrize("metric", ["ctr", "searches_per_unit"])
def test_last_look_is_the_fixed_horizon_cuped_readout(logs, metric):
    seq = sequential_readout(logs, "control", "treatment", metric, experiment=EXP,
                             pre_period=PRE)
    fixed = onlineeval.abtest(logs, "control", "treatment", metric, experiment=EXP,
                              pre_period=PRE)
    last, want = seq.iloc[-1], fixed.iloc[0]
    assert want["cuped_applied"] and last["cuped_applied"]
    assert (last["units_control"], last["units_treatment"]) == (
        want["units_control"], want["units_treatment"])
    assert last["estimate"] == pytest.approx(want["estimate"], rel=1e-9)
    assert last["fixed_ci_low"] == pytest.approx(want["ci_low"], rel=1e-9)
    assert last["fixed_ci_high"] == pytest.approx(want["ci_high"], rel=1e-9)
    assert last["fixed_p_value"] == pytest.approx(want["p_value"], rel=1e-7)
    assert last["cuped_variance_reduction"] == pytest.approx(
        want["cuped_variance_reduction"], rel=1e-7)
    # without CUPED the same window gives a different (plain) estimate
    plain = sequential_readout(logs, "control", "treatment", metric, experiment=EXP,
                               start="2026-01-10")
    assert plain["estimate"].iloc[-1] != pytest.approx(last["estimate"], rel=1e-6)


def simulated_tables(seed=0, users=1200, days=14, effect=0.0):
    """Users with their own search rate and click propensity: a pre-period week before
    2024-01-15 and ``days`` experiment days from then on, each user's searches spread
    uniformly over each period (so units arrive over the experiment). The treatment adds
    ``effect`` to the click propensity. No experiment column: every search carries its
    user's variant, and the window start makes the week before it the pre-period."""
    rng = np.random.default_rng(seed)
    rate = rng.gamma(2.0, 1.0, users)           # searches per day
    prop = rng.beta(2.0, 5.0, users)
    variant = np.where(np.arange(users) % 2 == 0, "control", "treatment")
    start = pd.Timestamp("2024-01-15")
    frames = []
    for first, length in ((start - pd.Timedelta(days=7), 7), (start, days)):
        counts = rng.poisson(rate * length * 0.3)
        user = np.repeat(np.arange(users), counts)
        secs = rng.integers(0, length * 86400, size=user.size)
        boost = np.where(variant[user] == "treatment", effect, 0.0) if first == start else 0.0
        frames.append(pd.DataFrame({
            "user_id": [f"u{u}" for u in user], "variant": variant[user],
            "ts": first + pd.to_timedelta(secs, unit="s"),
            "clicked": rng.random(user.size) < np.clip(prop[user] + boost, 0, 1)}))
    searches = pd.concat(frames, ignore_index=True)
    searches["search_id"] = [f"s{i}" for i in range(len(searches))]
    searches["query"] = "q"
    clicks = pd.DataFrame({"search_id": searches.loc[searches["clicked"], "search_id"],
                           "rank": 1})
    return searches.drop(columns="clicked"), clicks


@pytest.fixture(scope="module")
def simulated():
    searches, clicks = simulated_tables(seed=1)
    return onlineeval.load_logs(searches=searches, clicks=clicks)


@pytest.mark.parametrize("metric", ["searches_per_unit", "ctr"])
def test_correlated_pre_period_narrows_the_sequence(simulated, metric):
    plain = sequential_readout(simulated, "control", "treatment", metric, start="2024-01-15")
    cuped = sequential_readout(simulated, "control", "treatment", metric, start="2024-01-15",
                               cuped=True, rho2=plain.attrs["rho2"][metric])
    assert list(plain["units_control"]) == list(cuped["units_control"])
    width = (plain["ci_high"] - plain["ci_low"]).to_numpy()
    cuped_width = (cuped["ci_high"] - cuped["ci_low"]).to_numpy()
    # narrower at every look (about 1 - 4% at the first, 12 - 15% at the last)
    assert (cuped_width < width).all()
    assert cuped_width[-1] < 0.9 * width[-1]
    assert (cuped["cuped_variance_reduction"] > 0).all()
    # the fixed-horizon interval narrows by the variance reduction reported
    fixed = (cuped["fixed_ci_high"] - cuped["fixed_ci_low"]).iloc[-1]
    fixed_plain = (plain["fixed_ci_high"] - plain["fixed_ci_low"]).iloc[-1]
    assert (fixed / fixed_plain) ** 2 == pytest.approx(
        1 - cuped["cuped_variance_reduction"].iloc[-1], rel=0.02)


def test_cli_is_the_api(logs, capsys):
    from onlineeval.cli import main

    rc = main(["readout", str(SAMPLE), "--experiment", EXP, "--sequential", "--looks", "4",
               "--pre-period", PRE, "--guardrails", "abandonment_rate", "--format", "csv"])
    got = pd.read_csv(io.StringIO(capsys.readouterr().out))
    want = sequential_readout(logs, "control", "treatment", ["ctr", "abandonment_rate"],
                              experiment=EXP, looks=4, pre_period=PRE)
    assert rc == 0 and list(got.columns) == list(want.columns) and len(got) == 8
    for col in ("estimate", "ci_low", "ci_high", "p_value", "cuped_variance_reduction"):
        np.testing.assert_allclose(got[col], want[col], rtol=1e-12)
    assert list(got["cuped_applied"]) == list(want["cuped_applied"])
    base = ["readout", str(SAMPLE), "--experiment", EXP]
    assert main([*base, "--cuped"]) == 2  # the fixed-horizon readout: abtest --cuped
    assert "--sequential" in capsys.readouterr().err


def test_no_pre_period_traffic_is_the_plain_sequence_and_warned(logs):
    plain = sequential_readout(logs, "control", "treatment", "ctr", experiment=EXP)
    with pytest.warns(UserWarning, match="CUPED not applied to ctr"):
        cuped = sequential_readout(logs, "control", "treatment", "ctr", experiment=EXP,
                                   cuped=True)
    assert not cuped["cuped_applied"].any()
    np.testing.assert_allclose(cuped["ci_low"], plain["ci_low"], rtol=1e-9)
    np.testing.assert_allclose(cuped["p_value"], plain["p_value"], rtol=1e-9)


def test_interleaving_log_refuses_cuped():
    inter = onlineeval.load_logs(str(SAMPLE.parent / "interleaving"))
    with pytest.raises(InvalidParameterError, match="CUPED is for A/B logs"):
        sequential_readout(inter, cuped=True)


def test_harness_split_on_the_real_assignment_is_the_cuped_readout(logs):
    """aa's CUPED test (moments from numpy matrix products) on the served assignment equals
    the sequential readout's fixed-horizon CUPED columns (moments from DuckDB)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prep = over_time_units(logs, "ctr", experiment=EXP, unit="user_id", start=None,
                               end=None, cumulative=True, pre_period=PRE)
    q = queries.load("ab/aa_unit_days")
    cube = UnitDays.of(logs.con.execute(q.render(rows=[prep.view], cuped=True)).df(), "day")
    treat = (cube.variants == "treatment").astype(float)[None, :]
    got = split_tests(prep.metric, cube, treat, 0.05)
    want = sequential_readout(logs, "control", "treatment", "ctr", experiment=EXP,
                              pre_period=PRE)
    np.testing.assert_allclose(np.asarray(got.abs_diff)[0], want["estimate"], rtol=1e-9)
    np.testing.assert_allclose(np.asarray(got.abs_ci_low)[0], want["fixed_ci_low"], rtol=1e-9)
    np.testing.assert_allclose(np.asarray(got.p_value)[0], want["fixed_p_value"], rtol=1e-7)


@pytest.mark.slow
def test_cuped_sequence_holds_alpha_over_14_daily_looks(simulated):
    """500 salted A/A splits of the simulated log (no effect), CUPED at each of 14 daily
    looks: the sequential test's false-positive rate stays at or below alpha while the
    fixed-horizon CUPED test, read at every look, exceeds it."""
    res = aa_test(simulated, ["ctr", "searches_per_unit"], splits=500, looks="day", seed=0,
                  start="2024-01-15", cuped=True).set_index(["metric", "procedure"])
    assert res.attrs["cuped"] and (res["looks"] == 14).all()
    print(res[["false_positives", "fpr", "ci_low", "ci_high"]].to_string())
    for metric in ("ctr", "searches_per_unit"):
        seq = res.loc[(metric, "sequential, any look")]
        last = res.loc[(metric, "fixed-horizon, last look")]
        peek = res.loc[(metric, "fixed-horizon, any look")]
        assert seq["fpr"] <= 0.05
        assert last["ci_low"] <= 0.05 <= last["ci_high"]
        assert peek["fpr"] > 0.05 and peek["fpr"] > seq["fpr"]
