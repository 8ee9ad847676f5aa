"""aa_test: the vectorised per-split test equals effect_over_time (SQL moments) when the split
is the real assignment; the false-positive counts are recounted here from the per-split
statistics with the confidence sequence written out by hand; the binomial interval is the
beta-quantile form of Clopper–Pearson; the salted hash is reproducible and balanced. The slow
test is the calibration target of issue 17 on the sample logs."""

import hashlib
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import onlineeval
from onlineeval import queries
from onlineeval.abtest import effect_over_time
from onlineeval.abtest.aa import (
    PROCEDURES,
    UnitDays,
    aa_test,
    clopper_pearson,
    salted_arms,
    split_tests,
    unit_hashes,
)
from onlineeval.abtest.over_time import over_time_units
from onlineeval.errors import InvalidParameterError

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "ab"
EXP = "s130_vs_s080"


@pytest.fixture(scope="module")
def logs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return onlineeval.load_logs(str(SAMPLE))


def cube_of(logs, metric, looks="day", experiment=EXP):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prep = over_time_units(logs, metric, experiment=experiment, unit="user_id",
                               start=None, end=None, cumulative=True,
                               hourly=looks == "hour")
    rows = logs.con.execute(queries.load("ab/aa_unit_days").render(rows=[prep.view],
                                                                   cuped=False)).df()
    return prep.metric, UnitDays.of(rows, looks)


# mean_time_to_first_click_s: units without a click have a 0 denominator, which the df's
# units with data must leave out
@pytest.mark.parametrize("metric", ["ctr", "searches_per_unit", "mean_time_to_first_click_s"])
def test_split_on_the_real_assignment_is_effect_over_time(logs, metric):
    chosen, cube = cube_of(logs, metric)
    treat = (cube.variants == "treatment").astype(float)[None, :]
    got = split_tests(chosen, cube, treat, 0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = effect_over_time(logs, "control", "treatment", metric, experiment=EXP)
    assert [d.date() for d in cube.looks] == list(want["day"])
    np.testing.assert_allclose(np.asarray(got.abs_diff)[0], want["estimate"], rtol=1e-9)
    np.testing.assert_allclose(np.asarray(got.p_value)[0], want["p_value"], rtol=1e-7)
    np.testing.assert_allclose(np.asarray(got.abs_ci_low)[0], want["ci_low"], rtol=1e-9)


def test_counts_recounted_from_the_splits(logs):
    res = aa_test(logs, "ctr", splits=40, looks=5, seed=3, experiment=EXP)
    chosen, cube = cube_of(logs, "ctr", looks=5)
    salts = np.random.default_rng(3).integers(0, np.iinfo(np.uint64).max, size=40,
                                              dtype=np.uint64, endpoint=True)
    treat = salted_arms(unit_hashes(cube.units), salts).astype(float)
    t = split_tests(chosen, cube, treat, 0.05)
    p, est, se = (np.asarray(a) for a in (t.p_value, t.abs_diff, t.abs_se))
    n = cube.present.sum(axis=0)
    two_log = -2 * np.log(0.05)
    rho2 = (two_log + np.log(two_log + 1)) / n[-1]
    a = n * rho2 + 1
    seq_p = np.sqrt(a) * np.exp(-(est / se) ** 2 * n * rho2 / (2 * a))
    want = [int((p[:, -1] < 0.05).sum()), int((p < 0.05).any(axis=1).sum()),
            int((seq_p < 0.05).any(axis=1).sum())]
    assert list(res["procedure"]) == list(PROCEDURES)
    assert list(res["false_positives"]) == want
    assert (res["looks"] == 5).all() and res.attrs["rho2"]["ctr"] == pytest.approx(rho2)
    # the peeking count includes the last-look count, and sequential never exceeds peeking
    assert want[0] <= want[1] and want[2] <= want[1]


def test_clopper_pearson_is_the_beta_quantiles():
    lo, hi = clopper_pearson(7, 50)
    assert lo == pytest.approx(stats.beta.ppf(0.025, 7, 44), rel=1e-9)
    assert hi == pytest.approx(stats.beta.ppf(0.975, 8, 43), rel=1e-9)
    assert clopper_pearson(0, 50)[0] == 0.0
    assert clopper_pearson(0, 50)[1] == pytest.approx(1 - 0.025 ** (1 / 50), rel=1e-9)


def test_salted_hash_reproducible_balanced_and_salt_dependent():
    units = [f"u{i}" for i in range(4000)]
    h = unit_hashes(units)
    assert int(h[0]) == int.from_bytes(hashlib.blake2b(b"u0", digest_size=8).digest(), "little")
    salts = np.array([1, 2, 2**63 + 5], dtype=np.uint64)
    arms = salted_arms(h, salts)
    assert arms.shape == (3, 4000) and set(np.unique(arms)) == {0, 1}
    assert (arms == salted_arms(h, salts)).all()
    # each split about half and half; different salts give different splits
    assert all(abs(row.mean() - 0.5) < 4 * 0.5 / np.sqrt(4000) for row in arms)
    assert 0.4 < (arms[0] != arms[1]).mean() < 0.6


def test_bad_parameters(logs):
    for bad in (0, -5, 2.5, True):
        with pytest.raises(InvalidParameterError):
            aa_test(logs, "ctr", splits=bad, experiment=EXP)
    with pytest.raises(InvalidParameterError):
        aa_test(logs, "ctr", splits=5, looks="week", experiment=EXP)


def test_cli_aa_runs_tiny(capsys):
    from onlineeval.cli import main

    rc = main(["aa", str(SAMPLE), "--experiment", EXP, "--splits", "8", "--looks", "3",
               "--format", "csv"])
    out = capsys.readouterr().out.splitlines()
    assert rc == 0 and out[0].startswith("metric,procedure,looks,splits")
    assert len(out) == 4 and all(",3,8," in line for line in out[1:])
    assert main(["aa", str(SAMPLE), "--looks", "hourly"]) == 2


@pytest.mark.slow
def test_sequential_holds_alpha_while_peeking_inflates(logs):
    res = aa_test(logs, ["ctr", "searches_per_unit"], splits=500, looks="day", seed=0,
                  experiment=EXP).set_index(["metric", "procedure"])
    for metric in ("ctr", "searches_per_unit"):
        seq = res.loc[(metric, "sequential, any look")]
        peek = res.loc[(metric, "fixed-horizon, any look")]
        last = res.loc[(metric, "fixed-horizon, last look")]
        assert seq["looks"] == 15
        assert seq["ci_low"] <= 0.05  # at most alpha, within its binomial interval
        assert peek["ci_low"] > 0.05  # peeking at 15 looks: inflated beyond doubt
        assert last["ci_low"] <= 0.05 <= last["ci_high"]


@pytest.mark.slow
def test_calibrated_simulator_sequential_holds_alpha_over_14_daily_looks():
    """Issue 17's target on the Yandex-calibrated simulator: an A/A log (both arms serve
    s100) of 2,000 users over 14 days, clicks from CALIBRATED (per-topic and per-user
    propensity: a user's pages are correlated), 500 salted splits read every day."""
    import json

    from onlineeval.simulate.calibrated import CALIBRATED, calibrated_ab_log, study_world

    root = Path(__file__).resolve().parents[2]
    collection, runs = study_world(json.loads((root / "sample_logs" / "manifest.json")
                                              .read_text()))
    log = calibrated_ab_log(collection, {"control": runs["s100"], "treatment": runs["s100"]},
                            CALIBRATED, 2000, 14, np.random.default_rng(17))
    logs = onlineeval.load_logs(searches=log.searches, results=log.results, clicks=log.clicks)
    res = aa_test(logs, ["ctr", "clicks_per_unit"], splits=500, looks="day",
                  seed=0).set_index(["metric", "procedure"])
    assert (res["looks"] == 14).all() and (res["splits"] == 500).all()
    for metric in ("ctr", "clicks_per_unit"):
        seq = res.loc[(metric, "sequential, any look")]
        peek = res.loc[(metric, "fixed-horizon, any look")]
        last = res.loc[(metric, "fixed-horizon, last look")]
        assert seq["fpr"] <= 0.05 and seq["ci_low"] <= 0.05
        assert peek["ci_low"] > 0.05  # daily peeking inflates beyond doubt
        assert last["ci_low"] <= 0.05 <= last["ci_high"]


def test_hourly_cube_by_hand_and_hourly_aa_runs():
    """Four users over three hours: each unit's cumulative searches and clicked searches at
    the end of every hour, written out by hand; the harness reads those hours as looks."""
    import pandas as pd

    rows = [("s1", "u1", "control", "2026-03-01 10:15", True),
            ("s2", "u1", "control", "2026-03-01 10:40", False),
            ("s3", "u2", "treatment", "2026-03-01 10:30", True),
            ("s4", "u2", "treatment", "2026-03-01 12:05", False),
            ("s5", "u3", "control", "2026-03-01 11:10", False),
            ("s6", "u4", "treatment", "2026-03-01 12:50", True)]
    searches = pd.DataFrame({"search_id": [r[0] for r in rows], "user_id": [r[1] for r in rows],
                             "variant": [r[2] for r in rows],
                             "ts": pd.to_datetime([r[3] for r in rows]),
                             "query": "q", "experiment": "e"})
    clicks = pd.DataFrame({"search_id": [r[0] for r in rows if r[4]], "rank": 1})
    tiny = onlineeval.load_logs(searches=searches, clicks=clicks)
    _, cube = cube_of(tiny, "ctr", looks="hour", experiment="e")
    assert [str(k) for k in cube.looks] == ["2026-03-01 10:00:00", "2026-03-01 11:00:00",
                                            "2026-03-01 12:00:00"]
    order = np.argsort(cube.units)
    assert list(cube.units[order]) == ["u1", "u2", "u3", "u4"]
    np.testing.assert_array_equal(cube.present[order], [[1, 1, 1], [1, 1, 1], [0, 1, 1],
                                                         [0, 0, 1]])
    np.testing.assert_array_equal(cube.x[order], [[1, 1, 1], [1, 1, 1], [0, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(cube.y[order], [[2, 2, 2], [1, 1, 2], [0, 1, 1], [0, 0, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = aa_test(tiny, "ctr", splits=4, looks="hour", experiment="e")
    assert list(res["looks"]) == [3] * 3 and res.attrs["looks"] == "hour"


def test_hourly_looks_at_midnight_are_the_daily_looks(logs):
    """Each split's test at the hourly look ending at midnight after day d is its daily look
    at d (the last daily look: the last hourly one); so aa_test by hour counts the same
    last-look false positives as by day and, reading a superset of the looks, at least as
    many any-look ones."""
    import pandas as pd

    chosen, daily = cube_of(logs, "ctr")
    _, hourly = cube_of(logs, "ctr", looks="hour")
    assert np.array_equal(np.sort(daily.units), np.sort(hourly.units))
    ends = pd.DatetimeIndex(hourly.looks)
    at = [int(np.flatnonzero((ends.hour == 23) & (ends.date == d.date()))[0])
          for d in daily.looks[:-1]] + [len(ends) - 1]
    assert ends[-1].date() == daily.looks[-1].date()
    salts = np.random.default_rng(5).integers(0, np.iinfo(np.uint64).max, size=30,
                                              dtype=np.uint64, endpoint=True)
    tests = []
    for cube in (daily, hourly):
        treat = salted_arms(unit_hashes(cube.units), salts).astype(float)
        tests.append(split_tests(chosen, cube, treat, 0.05))
    for field in ("abs_diff", "abs_se", "p_value"):
        np.testing.assert_allclose(np.asarray(getattr(tests[1], field))[:, at],
                                   np.asarray(getattr(tests[0], field)), rtol=1e-9)
    by_day = aa_test(logs, "ctr", splits=30, looks="day", seed=5, experiment=EXP)
    by_hour = aa_test(logs, "ctr", splits=30, looks="hour", seed=5, experiment=EXP)
    assert by_hour["looks"].iloc[0] == len(hourly.looks) > 24 * (len(daily.looks) - 1)
    k_day, k_hour = by_day["false_positives"].to_numpy(), by_hour["false_positives"].to_numpy()
    assert k_hour[0] == k_day[0] and (k_hour[1:] >= k_day[1:]).all()
