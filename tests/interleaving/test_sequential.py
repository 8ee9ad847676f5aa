"""Sequential interleaving (issue 17): each look is the fixed-horizon interleaving readout
with its window ended at the look (the per-user t test, run through the whole readout
again), the always-valid interval and p-value are the normal-mixture sequence written out
here by hand from that look's estimate and standard error, all looks come from one SQL pass,
the CLI prints the API's rows; simulated experiments without a preference show the any-look
false-positive rate within alpha (the fixed-horizon test read daily far above it), and
experiments with one show the sequence stopping."""

import datetime as dt
import io
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import onlineeval
from onlineeval.abtest.aa import clopper_pearson
from onlineeval.abtest.sequential import COLUMNS, sequential_readout
from onlineeval.errors import InvalidParameterError
from onlineeval.interleaving import interleaving_readout
from onlineeval.interleaving.sequential import preference_sequence, sequential_interleaving

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "interleaving"
EXP = "s130_vs_s080"


@pytest.fixture(scope="module")
def logs():
    return onlineeval.load_logs(str(SAMPLE))


def test_each_look_is_the_interleaving_readout_ended_there(logs, hand_sequence):
    seq = sequential_readout(logs, experiment=EXP)
    assert list(seq.columns) == list(COLUMNS) and len(seq) == 14
    assert seq.attrs["design"] == "interleaving"
    assert (seq.attrs["treatment"], seq.attrs["control"]) == ("s080", "s130")
    fixed = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for day in seq["look_end"]:
            r = interleaving_readout(logs, EXP, team_a="s080", n_resamples=1,
                                     end=str(day + dt.timedelta(days=1)))
            assert len(r) == 1
            fixed.append(r.iloc[0])
    fixed = pd.DataFrame(fixed)
    np.testing.assert_allclose(seq["estimate"], fixed["user_delta"], rtol=1e-12)
    np.testing.assert_allclose(seq["fixed_p_value"], fixed["p_value"], rtol=1e-12)
    np.testing.assert_allclose(seq["fixed_ci_low"], fixed["user_ci_low"], rtol=1e-12)
    np.testing.assert_allclose(seq["fixed_ci_high"], fixed["user_ci_high"], rtol=1e-12)
    assert list(seq["units_control"]) == list(fixed["users"])
    assert list(seq["units_treatment"]) == list(fixed["users"])
    # the standard error recovered from the readout's t interval; t = users with a decided page
    df = fixed["df"].to_numpy(dtype=float)
    se = (fixed["user_ci_high"] - fixed["user_ci_low"]).to_numpy() / (
        2 * stats.t.ppf(0.975, df))
    n = fixed["n"].to_numpy(dtype=float)
    two_log = -2 * np.log(0.05)
    rho2 = (two_log + np.log(two_log + 1)) / n[-1]
    lo, hi, p = hand_sequence(fixed["user_delta"].to_numpy(dtype=float), se, n, 0.05, rho2)
    np.testing.assert_allclose(seq["ci_low"], lo, rtol=1e-9)
    np.testing.assert_allclose(seq["ci_high"], hi, rtol=1e-9)
    np.testing.assert_allclose(seq["p_value"], p, rtol=1e-9)
    first = int(np.argmax(p < 0.05))
    assert p[first] < 0.05 and list(seq["stop"]) == [i >= first for i in range(len(p))]
    assert seq["srm_p_value"].isna().all() and seq["srm_sequential_p_value"].isna().all()


def test_teams_named_and_looks_and_errors(logs):
    aa = sequential_readout(logs, "s100/control", "s100/treatment", experiment="s100_vs_s100",
                            looks=3)
    assert len(aa) == 3 and not aa["stop"].any()
    assert aa["look_end"].iloc[-1] == dt.date(2026, 1, 18)
    # the other side: the estimate and interval mirror, the p-values are the same
    other = sequential_readout(logs, "s100/treatment", "s100/control",
                               experiment="s100_vs_s100", looks=3)
    np.testing.assert_allclose(other["estimate"], -aa["estimate"], rtol=1e-12)
    np.testing.assert_allclose(other["ci_low"], -aa["ci_high"], rtol=1e-12)
    np.testing.assert_allclose(other["p_value"], aa["p_value"], rtol=1e-12)
    with pytest.raises(InvalidParameterError, match="which interleaved team"):
        sequential_readout(logs, experiment="s100_vs_s100")
    with pytest.raises(InvalidParameterError, match="several experiments"):
        sequential_readout(logs)
    with pytest.raises(InvalidParameterError, match="one sequential metric"):
        sequential_readout(logs, experiment=EXP, metrics="ctr")
    with pytest.raises(InvalidParameterError, match="design must be"):
        sequential_readout(logs, experiment=EXP, design="sequential")


def test_all_looks_come_from_one_pass(counting_connection):
    counts = []
    for end, looks in ((None, "day"), ("2026-01-08", "day"), (None, 2), (None, "hour")):
        logs = onlineeval.load_logs(str(SAMPLE))
        counting = counting_connection(logs.con)
        logs.con = counting
        frame = sequential_interleaving(logs, experiment=EXP, end=end, looks=looks)
        counts.append((counting.statements, len(frame)))
    assert [n for _, n in counts] == [14, 3, 2, 14 * 24]
    assert counts[0][0] == counts[1][0] == counts[2][0] == counts[3][0]


def test_cli_readout_sequential_on_an_interleaving_log(logs, capsys):
    from onlineeval.cli import main

    rc = main(["readout", str(SAMPLE), "--experiment", EXP, "--sequential", "--looks", "4",
               "--format", "csv"])
    got = pd.read_csv(io.StringIO(capsys.readouterr().out))
    want = sequential_readout(logs, experiment=EXP, looks=4)
    assert rc == 0 and list(got.columns) == list(want.columns) and len(got) == 4
    np.testing.assert_allclose(got["p_value"], want["p_value"], rtol=1e-12)
    rc = main(["readout", str(SAMPLE), "--experiment", "s100_vs_s100", "--sequential",
               "--treatment-team", "s100/treatment", "--format", "csv"])
    got = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert rc == 0 and len(got) == 14 and (got["metric"] == "preference").all()
    assert main(["readout", str(SAMPLE), "--experiment", EXP, "--sequential",
                 "--primary", "ctr,abandonment_rate"]) == 2
    capsys.readouterr()
    assert main(["readout", str(SAMPLE), "--experiment", EXP, "--sequential",
                 "--expected-split", "s130=0.5,s080=0.5"]) == 2
    err = capsys.readouterr().err
    assert "--expected-split" in err and err.count("\n") == 1


def simulated(rng, users=300, days=14, effect=0.0):
    """One team-draft experiment's per-user, per-day wins and ties: each user has a taste
    for the treatment p_u ~ Beta(1.5, 1.5) shifted by ``effect`` (clipped to [0, 1]), joins
    on a uniform day and comes back on each later day with probability 0.4, with 1 to ~8
    pages a visit of which 70% are decided, 15% of the decided ones ties."""
    first = rng.integers(0, days, users)
    taste = np.clip(rng.beta(1.5, 1.5, users) + effect, 0, 1)
    visit = (np.arange(days)[None, :] == first[:, None]) | (
        (np.arange(days)[None, :] > first[:, None]) & (rng.random((users, days)) < 0.4))
    u, d = np.nonzero(visit)
    decided = rng.binomial(rng.geometric(0.3, u.size), 0.7)
    ties = rng.binomial(decided, 0.15)
    wins_t = rng.binomial(decided - ties, taste[u])
    return u, d, np.stack([wins_t, decided - ties - wins_t, ties], axis=1).astype(float)


def any_look_rejections(runs, effect, seed):
    rng = np.random.default_rng(seed)
    fixed = seq = 0
    stops = []
    for _ in range(runs):
        u, d, counts = simulated(rng, effect=effect)
        tests, _, s = preference_sequence(u, d, counts, 14)
        fixed += any(t.p_value < 0.05 for t in tests)
        seq += bool(s.stop.any())
        stops.append(int(np.argmax(s.stop)) + 1 if s.stop.any() else None)
    return fixed, seq, stops


@pytest.mark.slow
def test_no_preference_any_look_false_positives_within_alpha():
    runs = 400
    fixed, seq, _ = any_look_rejections(runs, 0.0, seed=17)
    seq_low, _ = clopper_pearson(seq, runs, 0.95)
    fixed_low, _ = clopper_pearson(fixed, runs, 0.95)
    # the sequence is within alpha (its interval's lower end below it), while the same
    # per-user t test read every day is clearly inflated
    assert seq_low <= 0.05 and seq / runs <= 0.05
    assert fixed_low > 0.05
    assert (fixed, seq) == (134, 11)  # 33.5% and 2.75% (the seeded run)


@pytest.mark.slow
def test_a_real_preference_is_found_and_stops_early():
    runs = 100
    _, seq, stops = any_look_rejections(runs, 0.08, seed=18)
    assert seq >= 80
    assert np.median([s for s in stops if s is not None]) < 14


def test_preference_sequence_is_the_user_test_per_look_by_hand(hand_sequence):
    # three users over two looks: look 1 sees u0 (2 wins of T) and u1 (1 win of C, 1 tie);
    # look 2 adds u1's win of T and u2's page without a decision
    users = np.array([0, 1, 1, 2])
    look = np.array([0, 0, 1, 1])
    counts = np.array([[2, 0, 0], [0, 1, 1], [1, 0, 0], [0, 0, 0]], dtype=float)
    tests, units, seq = preference_sequence(users, look, counts, 2, rho2=0.5)
    # Δ_u = (wins_T + ties / 2) / decided − 1/2
    d1 = np.array([0.5, 0.25 - 0.5])
    d2 = np.array([0.5, (1 + 0.5) / 3 - 0.5])
    for t, d in zip(tests, (d1, d2), strict=True):
        assert t.estimate == pytest.approx(d.mean(), rel=1e-12)
        assert t.se == pytest.approx(d.std(ddof=1) / np.sqrt(2), rel=1e-12)
    assert units == [2, 3] and list(seq.n) == [2, 2]
    lo, hi, p = hand_sequence([d1.mean(), d2.mean()], [t.se for t in tests], [2, 2], 0.05,
                              0.5)
    np.testing.assert_allclose(seq.ci_low, lo, rtol=1e-12)
    np.testing.assert_allclose(seq.p_value, p, rtol=1e-12)


def test_hand_made_pages_through_the_sql(hand_frames, raw_logs, hand_sequence):
    """The conftest's hand-made experiment e1 (teams x, y) with y as the treatment. Day 0:
    u1 has one page won by x and one by y (Δ_u 0), u2 a tie and an undecided page (0), u3 a
    page won by x (−1/2) and an undecided one; day 1: u4's page won by x (−1/2). p4 (u2's
    undecided page) loses its ts: it belongs to no look and is counted and warned (the raw
    views: load_logs would exclude the search itself)."""
    searches, results, clicks = hand_frames
    searches["ts"] = searches["ts"].astype(object)
    searches.loc[searches["search_id"] == "p4", "ts"] = None
    searches["ts"] = pd.to_datetime(searches["ts"])
    logs = raw_logs(searches, results, clicks)
    with pytest.warns(UserWarning, match="1 interleaved pages have no ts"):
        seq = sequential_readout(logs, "x", "y", experiment="e1", rho2=0.5)
    assert seq.attrs["excluded"] == {"pages_without_ts": 1}
    assert list(seq["units_control"]) == [3, 4]
    day0, day1 = np.array([0, 0, -0.5]), np.array([0, 0, -0.5, -0.5])
    np.testing.assert_allclose(seq["estimate"], [day0.mean(), day1.mean()], rtol=1e-12)
    se = [d.std(ddof=1) / np.sqrt(len(d)) for d in (day0, day1)]
    lo, hi, p = hand_sequence([day0.mean(), day1.mean()], se, [3, 4], 0.05, 0.5)
    np.testing.assert_allclose(seq["ci_low"], lo, rtol=1e-12)
    np.testing.assert_allclose(seq["ci_high"], hi, rtol=1e-12)
    np.testing.assert_allclose(seq["p_value"], p, rtol=1e-12)
    np.testing.assert_allclose(seq["fixed_p_value"], [
        stats.ttest_1samp(d, 0).pvalue for d in (day0, day1)], rtol=1e-12)


def test_hourly_looks_by_hand(hand_frames, hand_sequence):
    """The hand-made experiment e1 with y as the treatment, its pages moved to hours. 10:xx:
    u1's page won by x and one won by y (Δ_u 0), u3's page won by x (−1/2); 11:xx: u2's tie
    (0) and undecided page, u3's undecided page; next day 02:xx: u4's page won by x (−1/2).
    Every hour from the first page's to the last's is a look (17), the empty ones repeating
    the one before."""
    searches, results, clicks = hand_frames
    day0 = pd.Timestamp("2024-03-01")
    at = {"p1": "10:05:00", "p2": "10:10:00", "p6": "10:20:00", "p3": "11:15:00",
          "p4": "11:50:00", "p5": "11:40:00", "p7": "1 days 02:30:00", "p8": "1 days 02:35:00"}
    searches["ts"] = [day0 + pd.Timedelta(at[s]) if s in at else ts
                      for s, ts in zip(searches["search_id"], searches["ts"], strict=True)]
    logs = onlineeval.load_logs(searches=searches, results=results, clicks=clicks)
    seq = sequential_readout(logs, "x", "y", experiment="e1", looks="hour", rho2=0.5)
    assert list(seq["look_end"]) == [day0 + pd.Timedelta(hours=h) for h in range(11, 28)]
    first, second, last = np.array([0, -0.5]), np.array([0, 0, -0.5]), np.array(
        [0, 0, -0.5, -0.5])
    per_look = [first] + [second] * 15 + [last]
    assert list(seq["units_control"]) == [len(d) for d in per_look]
    est = [d.mean() for d in per_look]
    se = [d.std(ddof=1) / np.sqrt(len(d)) for d in per_look]
    np.testing.assert_allclose(seq["estimate"], est, rtol=1e-12)
    lo, hi, p = hand_sequence(est, se, [len(d) for d in per_look], 0.05, 0.5)
    np.testing.assert_allclose(seq["ci_low"], lo, rtol=1e-12)
    np.testing.assert_allclose(seq["ci_high"], hi, rtol=1e-12)
    np.testing.assert_allclose(seq["p_value"], p, rtol=1e-12)
    np.testing.assert_allclose(seq["fixed_p_value"],
                               [stats.ttest_1samp(d, 0).pvalue for d in per_look], rtol=1e-12)
    # the daily readout of the same log: its two looks are the hourly looks ending at
    # midnight and the last one
    daily = sequential_readout(logs, "x", "y", experiment="e1", rho2=0.5)
    np.testing.assert_allclose(daily["estimate"], [second.mean(), last.mean()], rtol=1e-12)


def test_hourly_looks_at_midnight_are_the_daily_looks(logs):
    daily = sequential_readout(logs, experiment=EXP)
    hourly = sequential_readout(logs, experiment=EXP, looks="hour",
                                rho2=daily.attrs["rho2"]["preference"])
    ends = pd.to_datetime(hourly["look_end"])
    assert (ends.diff().dropna() == pd.Timedelta(hours=1)).all() and len(hourly) == 14 * 24
    midnight = hourly[ends.dt.hour == 0]
    assert [t.date() - dt.timedelta(days=1) for t in midnight["look_end"]] == list(
        daily["look_end"])
    for col in ("units_control", "units_treatment"):
        assert list(midnight[col]) == list(daily[col])
    for col in ("estimate", "fixed_p_value", "fixed_ci_low", "fixed_ci_high"):
        np.testing.assert_allclose(midnight[col], daily[col], rtol=1e-9)
    # more looks: the running intersection is over more intervals, never wider
    assert (midnight["ci_low"].to_numpy() >= daily["ci_low"].to_numpy() - 1e-15).all()
    assert (midnight["ci_high"].to_numpy() <= daily["ci_high"].to_numpy() + 1e-15).all()
    assert (midnight["p_value"].to_numpy() <= daily["p_value"].to_numpy() + 1e-15).all()


@pytest.mark.slow
def test_anytime_coverage_of_a_known_preference():
    """Issue 17's coverage target: with a known preference the sequence holds the true mean
    Δ_u at every one of the 14 looks in >= 95% of runs. In :func:`simulated` a user's
    pages are decided with their taste p_u and 15% of decided pages are ties, so
    E[Δ_u | p_u] = 0.85 (p_u − 1/2) whatever their number of pages, and the true effect is
    0.85 (E[min(1, B + shift)] − 1/2) with B ~ Beta(1.5, 1.5), integrated here."""
    from scipy import integrate

    shift, runs = 0.05, 200
    beta = stats.beta(1.5, 1.5)
    mean_taste, _ = integrate.quad(lambda b: min(1.0, b + shift) * beta.pdf(b), 0, 1,
                                   points=[1 - shift], epsabs=1e-13)
    truth = 0.85 * (mean_taste - 0.5)
    rng = np.random.default_rng(19)
    covered = fixed = 0
    for _ in range(runs):
        u, d, counts = simulated(rng, effect=shift)
        tests, _, s = preference_sequence(u, d, counts, 14)
        covered += bool(((s.ci_low <= truth) & (truth <= s.ci_high)).all())
        fixed += all(t.ci_low <= truth <= t.ci_high for t in tests)
    # seeded: 98.5%; the per-look t intervals hold it at every look in only 74.5% of runs
    assert covered / runs >= 0.95 and fixed / runs < 0.85


def test_readout_and_sequential_readout_choose_the_pair_alike(logs):
    """Both readouts pick the team pair with interleaving.teams.one_pair: the same error,
    word for word, when the log holds several experiments or the treatment is not told."""
    for kwargs in ({}, {"experiment": "s100_vs_s100"}):
        messages = []
        for read in (sequential_readout, onlineeval.readout):
            with pytest.raises(InvalidParameterError) as info:
                read(logs, **kwargs)
            messages.append(str(info.value))
        assert messages[0] == messages[1]
    assert "several experiments" in messages[0] or "which interleaved team" in messages[0]


def test_one_pair_errors_and_choice():
    from onlineeval.interleaving.teams import UnknownTeamError, one_pair

    rows = pd.DataFrame({"experiment": ["e", "e", "e"], "team_a": ["x", "y", "x"],
                         "team_b": ["y", "z", "y"], "v": [1, 2, 3]})
    with pytest.raises(InvalidParameterError, match="more than two teams .multileaving."):
        one_pair(rows, None, None, None)
    assert one_pair(rows, None, "x", None)["v"] == 1
    with pytest.raises(UnknownTeamError, match="the control team 'z' is not a team"):
        one_pair(rows.iloc[[0]], None, "x", "z")
    with pytest.raises(InvalidParameterError, match="no interleaved page of experiment 'q'"):
        one_pair(rows.iloc[:0], "q", None, None)
    with pytest.raises(InvalidParameterError, match="which interleaved team"):
        one_pair(rows.iloc[[1]], None, None, None)
    named = pd.DataFrame({"experiment": ["c_vs_t"], "team_a": ["t"], "team_b": ["c"]})
    assert one_pair(named, None, None, None)["team_a"] == "t"


def test_of_experiment_matches_a_missing_experiment_with_the_missing_ones():
    """Both readouts keep the chosen pair's rows with interleaving.teams.of_experiment: a
    named experiment matches itself only; a missing one (None or NaN, however the engine
    returned it) matches every missing one and no named one."""
    from onlineeval.interleaving.teams import of_experiment

    col = pd.Series(["e1", None, np.nan, "e2", pd.NA], dtype=object)
    assert of_experiment(col, "e1").tolist() == [True, False, False, False, False]
    for missing in (None, np.nan, pd.NA):
        assert of_experiment(col, missing).tolist() == [False, True, True, False, True]
