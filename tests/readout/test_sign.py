"""The interleaving sign is the treatment's in every command: readout, interleave, report."""

import json
import warnings
from pathlib import Path

import pytest

import onlineeval
from onlineeval.cli import main
from onlineeval.interleaving.teams import treatment_team

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "sample_logs" / "interleaving"
# control s060, treatment s100 (the worse ranker): alphabetically the control comes first,
# so a command that paired the teams alphabetically would show the control's side
EXP = "s060_vs_s100"


def test_treatment_team_rules():
    assert treatment_team("a", "b", treatment="b") == "b"
    assert treatment_team("a", "b", control="b") == "a"
    assert treatment_team("control", "treatment") == "treatment"
    assert treatment_team("s040", "s080", "s080_vs_s040") == "s040"
    assert treatment_team("s040", "s080", "s040_vs_s080") == "s080"
    assert treatment_team("x", "y", "s080_vs_s040") is None
    assert treatment_team("x", "y") is None


@pytest.fixture(scope="module")
def readout():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return onlineeval.readout(LOGS, experiment=EXP)


def test_readout_interleaving_is_the_treatments_side(readout):
    il = readout.interleaving
    assert readout.designs == ("interleaving",)
    assert (il.treatment_team, il.control_team) == ("s100", "s060")
    assert il.result.estimate < 0 and il.wins < il.losses and il.winner == "s060"
    # Δ_AB by its definition from the treatment's wins, losses and ties
    expected = (il.wins + il.ties / 2) / (il.wins + il.losses + il.ties) - 0.5
    assert il.result.estimate == pytest.approx(expected, rel=1e-12)


def test_interleave_cli_shows_the_same_sign(readout, capsys):
    assert main(["interleave", str(LOGS), "--experiment", EXP, "--format", "json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert (rec["team_a"], rec["team_b"]) == ("s100", "s060")
    assert rec["estimate"] == pytest.approx(readout.interleaving.result.estimate, rel=1e-12)
    # naming the control flips nothing: s080 is B either way
    assert main(["interleave", str(LOGS), "--experiment", EXP, "--control", "s060",
                 "--format", "json"]) == 0
    (same,) = json.loads(capsys.readouterr().out)
    assert same["estimate"] == rec["estimate"]
    # naming the other team as treatment shows the control's side, negated
    assert main(["interleave", str(LOGS), "--experiment", EXP, "--treatment", "s060",
                 "--format", "json"]) == 0
    (flip,) = json.loads(capsys.readouterr().out)
    assert flip["team_a"] == "s060" and flip["estimate"] == pytest.approx(-rec["estimate"])

# the report: tests/readout/test_report_without_runs.py (same experiment, same sign)


def test_per_query_section_equals_the_per_query_readout(readout):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = onlineeval.interleaving_readout(LOGS, EXP, per_query=True, team_a="s100")
    (rec,) = df.to_dict("records")
    q = readout.interleaving.per_query
    assert q.estimate == pytest.approx(rec["estimate"], rel=1e-12)
    assert (q.ci_low, q.ci_high) == pytest.approx((rec["ci_low"], rec["ci_high"]), rel=1e-12)
    assert readout.interleaving.n_queries == rec["queries_decided"]
    # the per-query table (by query text): its mean Δ_q over decided queries is the
    # per-query Δ_AB
    table = readout.interleaving.queries
    assert table["delta_q"].mean() == pytest.approx(q.estimate, rel=1e-12)
    assert table["delta_q"].notna().sum() == readout.interleaving.n_queries


def test_sensitivity_by_hand(sample_experiment_logs):
    """ab_units (t_IL / t_AB)^2, t_AB from the A/B row's estimate and standard error by hand,
    t_IL from the per-user test (scipy's one-sample t on the readout's user_delta / CI)."""
    import math

    from scipy import stats

    sample = sample_experiment_logs("s130_vs_s080")  # the experiment's users' rows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ro = onlineeval.readout([sample / "ab", sample / "interleaving"],
                                experiment="s130_vs_s080", secondary=())
        il = onlineeval.interleaving_readout(sample / "interleaving", "s130_vs_s080",
                                             team_a="s080")
    (row,) = ro.rows("primary")
    r = row.result
    se = (r.ci_high - r.ci_low) / (2 * stats.t.isf(0.025, row.df))
    t_ab = r.estimate / se
    rec = il.iloc[0]
    se_u = (rec["user_ci_high"] - rec["user_ci_low"]) / (2 * stats.t.isf(0.025, rec["df"]))
    t_il = rec["user_delta"] / se_u
    s = ro.interleaving.sensitivity
    units = r.units_control + r.units_treatment
    assert s.ab_units == units and s.interleaving_users == rec["n"]
    assert s.ab_t == pytest.approx(t_ab, rel=1e-6)
    assert s.interleaving_t == pytest.approx(t_il, rel=1e-6)
    assert s.ab_units_needed == pytest.approx(units * (t_il / t_ab) ** 2, rel=1e-6)
    assert s.ratio == pytest.approx(s.ab_units_needed / rec["n"], rel=1e-12)
    assert math.isfinite(s.ab_units_needed)
