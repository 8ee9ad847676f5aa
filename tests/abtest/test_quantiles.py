"""quantile_effects: per-search quantiles per arm with Deng, Knoblich & Lu's clustered
intervals. Checked by hand and by a reference written here from the definitions on a small
log, against the in-memory path on the sample logs, against a unit-level bootstrap (quick),
and for coverage on simulated clustered data (slow)."""

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import onlineeval
from onlineeval.abtest import quantile_effects
from onlineeval.abtest.quantiles import quantile_metrics
from onlineeval.errors import InvalidParameterError, UnknownNameError
from onlineeval.stats.quantile import compare_quantiles, quantile_arm, quantile_rank
from onlineeval.stats.results import RESULT_COLUMNS

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "ab"

# per-search values (seconds) by unit; None: a search without a value (no click)
ARMS = {
    "control": {"u1": [1, 2], "u2": [3, None], "u3": [4, 5, 6], "u4": [7]},
    "treatment": {"u5": [2, 2], "u6": [3, 9], "u7": [1], "u8": [5, 8]},
}


def small_logs():
    """The values twice: as the time to first click and as a latency_s column."""
    searches, clicks = [], []
    t0 = pd.Timestamp("2024-01-01")
    for variant, units in ARMS.items():
        for unit, values in units.items():
            for j, v in enumerate(values):
                sid = f"s{len(searches)}"
                ts = t0 + pd.Timedelta(hours=len(searches), minutes=j)
                searches.append({"search_id": sid, "user_id": unit, "ts": ts,
                                 "variant": variant, "latency_s": v})
                if v is not None:
                    clicks.append({"search_id": sid, "rank": 1,
                                   "ts": ts + pd.Timedelta(seconds=v)})
    return onlineeval.load_logs(searches=pd.DataFrame(searches), clicks=pd.DataFrame(clicks))


def reference(units, p, alpha=0.05):
    """(quantile, low, high, se) from the definitions: X_(ceil(pN)); the CDF there as a
    ratio of per-unit sums with its delta-method variance (the per-unit linearisation);
    ranks floor(N(p - z s)), ceil(N(p + z s)) clipped to [1, N]; se = width / 2z."""
    vals = {u: [v for v in vs if v is not None] for u, vs in units.items()}
    ordered = sorted(v for vs in vals.values() for v in vs)
    n = len(ordered)
    num = round(p * 100)
    rank = -(-num * n // 100)  # exact ceil(p n) for p with two decimals
    q = ordered[rank - 1]
    x = np.array([sum(v <= q for v in vs) for vs in vals.values()], float)
    y = np.array([len(vs) for vs in vals.values()], float)
    r = x.sum() / y.sum()
    lin = (x - r * y) / y.mean()
    s = math.sqrt(lin.var(ddof=1) / len(x))
    z = stats.norm.isf(alpha / 2)
    lo = min(n, max(1, math.floor(n * (p - z * s))))
    hi = min(n, max(1, math.ceil(n * (p + z * s))))
    return q, ordered[lo - 1], ordered[hi - 1], (ordered[hi - 1] - ordered[lo - 1]) / (2 * z)


@pytest.mark.parametrize("metric", ["time_to_first_click", "latency_s"])
def test_small_log_by_hand_and_by_reference(metric):
    logs = small_logs()
    assert quantile_metrics(logs) == ["time_to_first_click", "latency_s"]
    df = quantile_effects(logs, "control", "treatment", metric, q=(0.5, 0.9), min_units=2)
    assert list(df.columns[5:5 + len(RESULT_COLUMNS)]) == list(RESULT_COLUMNS)
    med, p90 = df.iloc[0], df.iloc[1]
    # by hand: control values 1..7, rank ceil(3.5) = 4; treatment 1,2,2,3,5,8,9 -> 3
    assert (med["control_value"], med["treatment_value"]) == (4.0, 3.0)
    # p90: rank ceil(6.3) = 7 of 7
    assert (p90["control_value"], p90["treatment_value"]) == (7.0, 9.0)
    # control median: sigma = 0.2185, so ranks floor(7 * 0.0717) -> 1 and ceil(7 * 0.928) = 7
    assert (med["control_ci_low"], med["control_ci_high"]) == (1.0, 7.0)
    assert (med["values_control"], med["values_treatment"]) == (7, 7)
    assert (med["units_control"], med["units_treatment"]) == (4, 4)
    assert df.attrs["searches_without_value"] == {"control": 1, "treatment": 0}
    assert not any(df.attrs["excluded"].values())
    z = stats.norm.isf(0.025)
    for row, p in ((med, 0.5), (p90, 0.9)):
        qc, lc, hc, sc = reference(ARMS["control"], p)
        qt, lt, ht, st = reference(ARMS["treatment"], p)
        assert (row["control_ci_low"], row["control_ci_high"]) == (lc, hc)
        assert (row["treatment_ci_low"], row["treatment_ci_high"]) == (lt, ht)
        se = math.sqrt(sc ** 2 + st ** 2)
        assert row["estimate"] == qt - qc
        assert row["ci_low"] == pytest.approx(qt - qc - z * se, rel=1e-12)
        assert row["ci_high"] == pytest.approx(qt - qc + z * se, rel=1e-12)
        assert row["p_value"] == pytest.approx(2 * stats.norm.sf(abs(qt - qc) / se), rel=1e-9)


def test_rank_reads_the_decimal():
    assert quantile_rank(10, 0.3) == 3  # 0.3 * 10 is 3.0000000000000004 in floats
    assert quantile_rank(7, 0.5) == 4
    assert quantile_rank(5, 0.01) == 1 and quantile_rank(5, 0.999) == 5


def test_bad_arguments():
    logs = small_logs()
    with pytest.raises(InvalidParameterError, match="quantile"):
        quantile_effects(logs, "control", "treatment", q=1.5)
    with pytest.raises(UnknownNameError, match="the log has: time_to_first_click, latency_s"):
        quantile_effects(logs, "control", "treatment", "dwell")
    with pytest.raises(UnknownNameError, match="per-search value"):
        quantile_effects(logs, "control", "treatment", "user_id")


@pytest.fixture(scope="module")
def sample_values():
    """Per-search time to first click of one sample experiment, from the raw files (every
    search of the sample logs is an exposure of its user's one experiment)."""
    exp = "s260_vs_s040"
    s = pd.read_parquet(SAMPLE / "searches.parquet")
    s = s[s["experiment"] == exp]
    c = pd.read_parquet(SAMPLE / "clicks.parquet").dropna(subset=["ts"])
    first = c.groupby("search_id")["ts"].min()
    s = s.assign(v=(s["search_id"].map(first) - s["ts"]).dt.total_seconds())
    return exp, s


def test_sample_logs_match_the_in_memory_path(sample_values):
    exp, s = sample_values
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = quantile_effects(onlineeval.load_logs(SAMPLE), "control", "treatment",
                              experiment=exp)
    for _, row in df.iterrows():
        arm = {a: quantile_arm(s.loc[s["variant"] == a, "v"].to_numpy(),
                               s.loc[s["variant"] == a, "user_id"].to_numpy(), row["quantile"])
               for a in ("control", "treatment")}
        assert row["control_value"] == arm["control"].value
        assert (row["control_ci_low"], row["control_ci_high"]) == (arm["control"].low,
                                                                   arm["control"].high)
        assert (row["treatment_ci_low"], row["treatment_ci_high"]) == (arm["treatment"].low,
                                                                       arm["treatment"].high)
        assert row["units_control"] == s.loc[(s["variant"] == "control") & s["v"].notna(),
                                              "user_id"].nunique()
        comp = compare_quantiles(arm["control"], arm["treatment"], 0.05)
        assert row["ci_low"] == pytest.approx(float(comp.abs_ci_low), rel=1e-12)
        assert row["values_treatment"] == s.loc[s["variant"] == "treatment", "v"].notna().sum()


def test_standard_error_agrees_with_a_unit_bootstrap(sample_values):
    # a unit-level bootstrap: users resampled with replacement in each arm, all their
    # searches with them, the quantile recomputed. Tolerance: 20% on the difference's se
    # (the bootstrap's own sampling error at 400 replicates is about 4%; the methods differ
    # in finite samples: measured 7% at the median, 5% at p90)
    _, s = sample_values
    rng = np.random.default_rng(0)
    for p in (0.5, 0.9):
        boot = {}
        arms = {}
        for a in ("control", "treatment"):
            part = s[s["variant"] == a].dropna(subset=["v"])
            groups = [g.to_numpy() for _, g in part.groupby("user_id")["v"]]
            reps = np.empty(400)
            for b in range(len(reps)):
                x = np.sort(np.concatenate([groups[i] for i in
                                            rng.integers(0, len(groups), len(groups))]))
                reps[b] = x[quantile_rank(len(x), p) - 1]
            boot[a] = reps
            arms[a] = quantile_arm(part["v"].to_numpy(), part["user_id"].to_numpy(), p)
        ours = float(compare_quantiles(arms["control"], arms["treatment"], 0.05).abs_se)
        theirs = float(np.std(boot["treatment"] - boot["control"], ddof=1))
        assert ours == pytest.approx(theirs, rel=0.2), p


def _clustered_arm(rng, units=200, tau=0.8, s=0.5):
    """Per-search values exp(mu_u + e): a unit effect mu_u ~ N(0, tau^2) shared by the
    unit's 1 + Poisson(4) searches, e ~ N(0, s^2). The per-search distribution is lognormal
    with log-variance tau^2 + s^2."""
    k = 1 + rng.poisson(4, size=units)
    mu = rng.normal(0, tau, size=units)
    u = np.repeat(np.arange(units), k)
    return np.exp(mu[u] + rng.normal(0, s, size=len(u))), u


@pytest.mark.slow
@pytest.mark.parametrize("p", [0.5, 0.9])
def test_coverage_on_clustered_data(p):
    # 600 A/A experiments of 200 units per arm; the true per-search quantile is that of
    # lognormal(0, 0.8^2 + 0.5^2). Measured: difference 0.953 (p50) / 0.975 (p90), arm
    # 0.944 / 0.954; the i.i.d. order-statistic interval (binomial sigma) covers only about
    # 0.71 / 0.76, which is why the clustered sigma is used.
    rng = np.random.default_rng(11)
    true = math.exp(stats.norm.ppf(p) * math.sqrt(0.8 ** 2 + 0.5 ** 2))
    reps = 600
    diff = arm = naive = 0
    for _ in range(reps):
        (vc, uc), (vt, ut) = _clustered_arm(rng), _clustered_arm(rng)
        c, t = quantile_arm(vc, uc, p), quantile_arm(vt, ut, p)
        comp = compare_quantiles(c, t, 0.05)
        diff += comp.abs_ci_low <= 0 <= comp.abs_ci_high
        arm += c.low <= true <= c.high
        n = len(vc)
        sd = math.sqrt(p * (1 - p) / n)
        o = np.sort(vc)
        lo = o[max(1, math.floor(n * (p - 1.96 * sd))) - 1]
        hi = o[min(n, math.ceil(n * (p + 1.96 * sd))) - 1]
        naive += lo <= true <= hi
    # binomial sd of a 0.95 coverage over 600 runs: 0.009
    assert 0.93 <= diff / reps <= 0.985
    assert 0.925 <= arm / reps <= 0.975
    assert naive / reps < 0.85
