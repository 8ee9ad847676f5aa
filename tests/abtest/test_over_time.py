"""effect_over_time: the cumulative effect per calendar day and the effect per day since
exposure. Expected numbers are written out by hand from a small log, with the delta-method
variance computed here from its definition (the per-unit linearisation); the last calendar
day is checked against abtest on the simulated sample logs."""

import datetime as dt
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import onlineeval
from onlineeval.abtest import effect_over_time
from onlineeval.errors import InputError, InvalidParameterError, UnknownNameError
from onlineeval.stats.results import RESULT_COLUMNS

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "ab"

D1 = "2024-01-01"
D2 = "2024-01-02"
D3 = "2024-01-03"

# (unit, variant, ts, clicked); experiment "e" on every row with a variant
ROWS = [
    ("u1", None, f"{D1} 08:00", True),     # before u1's first exposure: pre-period, no outcome
    ("u1", "control", f"{D1} 10:00", True),
    ("u1", "control", f"{D1} 12:00", False),
    ("u1", "control", f"{D3} 09:00", True),   # 47 h after its first exposure: day 1
    ("u2", "control", f"{D2} 08:00", False),
    ("u2", "control", f"{D2} 20:00", True),
    ("u3", "control", f"{D1} 07:00", True),
    ("u3", "control", f"{D2} 07:00", False),  # exactly 24 h later: exposure day 1
    ("u4", "treatment", f"{D1} 23:00", True),
    ("u4", "treatment", f"{D2} 01:00", True),   # next calendar day, exposure day 0
    ("u4", "treatment", f"{D2} 22:59", False),  # 23:59 h after: exposure day 0
    ("u5", "treatment", f"{D2} 10:00", False),
    ("u5", "treatment", f"{D3} 11:00", True),   # 25 h after: exposure day 1
    ("u6", "treatment", f"{D3} 12:00", True),
    ("u7", "control", f"{D1} 09:00", True),     # u7 is in both variants: left out
    ("u7", "treatment", f"{D2} 09:00", True),
]


def small_logs():
    searches = pd.DataFrame({
        "search_id": [f"s{i}" for i in range(len(ROWS))],
        "user_id": [r[0] for r in ROWS],
        "ts": pd.to_datetime([r[2] for r in ROWS]),
        "query": "q",
        "experiment": ["e" if r[1] else None for r in ROWS],
        "variant": [r[1] for r in ROWS],
        "n_results": 10,
    })
    clicked = [i for i, r in enumerate(ROWS) if r[3]]
    clicks = pd.DataFrame({
        "search_id": [f"s{i}" for i in clicked], "rank": 1,
        "ts": searches["ts"].iloc[clicked].to_numpy() + pd.Timedelta(seconds=5),
        "dwell_ms": 60000.0,
    })
    return onlineeval.load_logs(searches=searches, clicks=clicks)


def delta_var(x, y):
    """Variance of sum(x)/sum(y) over units by the delta method: the sample variance of the
    per-unit linearisation (x - R y) / mean(y), over n."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    r = x.sum() / y.sum()
    lin = (x - r * y) / y.mean()
    return lin.var(ddof=1) / len(x)


def expected(c, t, alpha=0.05):
    """(estimate, ci_low, ci_high, p) of the delta-method t with Welch-Satterthwaite df from
    per-unit (clicks, searches) lists."""
    (xc, yc), (xt, yt) = c, t
    vc, vt = delta_var(xc, yc), delta_var(xt, yt)
    est = sum(xt) / sum(yt) - sum(xc) / sum(yc)
    df = (vc + vt) ** 2 / (vc ** 2 / (len(xc) - 1) + vt ** 2 / (len(xt) - 1))
    se = np.sqrt(vc + vt)
    q = stats.t.isf(alpha / 2, df)
    return est, est - q * se, est + q * se, 2 * stats.t.sf(abs(est) / se, df)


def check_row(row, c, t):
    est, lo, hi, p = expected(c, t)
    assert row["estimate"] == pytest.approx(est, abs=1e-12)
    assert row["ci_low"] == pytest.approx(lo, abs=1e-12)
    assert row["ci_high"] == pytest.approx(hi, abs=1e-12)
    assert row["p_value"] == pytest.approx(p, rel=1e-9)
    assert (row["units_control"], row["units_treatment"]) == (len(c[0]), len(t[0]))


def run(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return effect_over_time(small_logs(), "control", "treatment", "ctr", min_units=2,
                                **kw)


def test_cumulative_by_calendar_day_by_hand():
    df = run()
    assert list(df["day"]) == [dt.date(2024, 1, 1), dt.date(2024, 1, 2), dt.date(2024, 1, 3)]
    assert list(df.columns[5:5 + len(RESULT_COLUMNS)]) == list(RESULT_COLUMNS)
    # day 1: control u1 (1 click / 2 searches), u3 (1/1); treatment u4 (1/1) alone
    d1 = df.iloc[0]
    assert (d1["control_value"], d1["treatment_value"]) == (pytest.approx(2 / 3), 1.0)
    assert (d1["units_control"], d1["units_treatment"]) == (2, 1)
    assert np.isnan(d1["ci_low"]) and np.isnan(d1["p_value"])  # one treatment unit
    # day 2: u3's second search (no click) and u2 join control; u4's day-2 searches, u5
    c2 = ([1, 1, 1], [2, 2, 2])
    t2 = ([2, 0], [3, 1])
    assert df.iloc[1]["control_value"] == pytest.approx(0.5)
    assert df.iloc[1]["treatment_value"] == pytest.approx(0.5)
    check_row(df.iloc[1], c2, t2)
    # day 3: everything (u7, in both variants, never)
    c3 = ([2, 1, 1], [3, 2, 2])
    t3 = ([2, 1, 1], [3, 2, 1])
    assert df.iloc[2]["control_value"] == pytest.approx(4 / 7)
    assert df.iloc[2]["treatment_value"] == pytest.approx(4 / 6)
    check_row(df.iloc[2], c3, t3)
    assert df.iloc[2]["rel_diff"] == pytest.approx((4 / 6) / (4 / 7) - 1)
    assert list(df["enough_units"]) == [False, True, True]
    assert df["p_adjusted"].isna().all() and df.attrs["intervals"] == "pointwise"


def test_last_calendar_day_is_the_readout_on_the_small_log():
    df = run()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ab = onlineeval.abtest(small_logs(), metrics=["ctr"]).iloc[0]
    last = df.iloc[-1]
    for col in ("control_value", "treatment_value", "estimate", "ci_low", "ci_high",
                "p_value", "rel_ci_low", "rel_ci_high", "df"):
        assert last[col] == pytest.approx(ab[col], rel=1e-12), col
    for col in ("units_control", "units_treatment", "n", "test", "unit"):
        assert last[col] == ab[col], col


def test_what_is_left_out_is_counted_and_warned():
    with pytest.warns(UserWarning, match="1 units appear in more than one variant"):
        df = effect_over_time(small_logs(), "control", "treatment", min_units=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ab = onlineeval.abtest(small_logs(), metrics=["ctr"])
    assert df.attrs["excluded"] == ab.attrs["excluded"]
    assert df.attrs["excluded"]["multi_variant_searches"] == 2
    assert df.attrs["excluded"]["pre_exposure_searches"] == 1


def test_by_days_since_exposure_by_hand():
    df = run(by="exposure_day")
    assert list(df["days_since_exposure"]) == [0, 1]
    # day 0 (first 24 h of each unit): control u1 1/2, u2 1/2, u3 1/1; treatment u4 2/3,
    # u5 0/1, u6 1/1
    check_row(df.iloc[0], ([1, 1, 1], [2, 2, 1]), ([2, 0, 1], [3, 1, 1]))
    assert df.iloc[0]["control_value"] == pytest.approx(3 / 5)
    # day 1: control u1 (1/1), u3 (the search at exactly 24 h, 0/1); treatment u5 (1/1)
    d1 = df.iloc[1]
    assert (d1["control_value"], d1["treatment_value"]) == (0.5, 1.0)
    assert (d1["units_control"], d1["units_treatment"]) == (2, 1)


def test_per_unit_mean_uses_welch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = effect_over_time(small_logs(), "control", "treatment", "searches_per_unit")
    last = df.iloc[-1]
    c, t = np.array([3.0, 2, 2]), np.array([3.0, 2, 1])
    ref = stats.ttest_ind(t, c, equal_var=False)
    assert last["estimate"] == pytest.approx(t.mean() - c.mean())
    assert last["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert last["test"].startswith("Welch")


def test_window_limits_the_days_and_matches_the_readout():
    df = run(end=f"{D3} 00:00")
    assert list(df["day"]) == [dt.date(2024, 1, 1), dt.date(2024, 1, 2)]
    check_row(df.iloc[-1], ([1, 1, 1], [2, 2, 2]), ([2, 0], [3, 1]))


def test_bad_arguments():
    logs = small_logs()
    with pytest.raises(UnknownNameError, match="treatmnt"):
        effect_over_time(logs, "control", "treatmnt")
    with pytest.raises(InvalidParameterError, match="by must be"):
        effect_over_time(logs, "control", "treatment", by="week")
    s = pd.DataFrame({"search_id": ["a", "b"], "user_id": ["u", "v"],
                      "variant": ["control", "treatment"]})
    no_ts = onlineeval.load_logs(searches=s, clicks=pd.DataFrame(
        {"search_id": ["a"], "rank": [1]}))
    with pytest.raises(InputError, match="timestamps"):
        effect_over_time(no_ts, "control", "treatment")


@pytest.fixture(scope="module")
def sample_logs():
    """The sample A/B log, loaded once for the metrics below (they only read it)."""
    return onlineeval.load_logs(SAMPLE)


@pytest.mark.parametrize("metric", ["ctr", "click_mrr", "searches_per_unit"])
def test_sample_logs_last_day_is_the_readout(sample_logs, metric):
    logs = sample_logs
    exp = "s260_vs_s040"
    df = effect_over_time(logs, "control", "treatment", metric, experiment=exp)
    ab = onlineeval.abtest(logs, metrics=[metric], experiment=exp).iloc[0]
    last = df.iloc[-1]
    for col in ("control_value", "treatment_value", "estimate", "ci_low", "ci_high",
                "rel_diff", "rel_ci_low", "rel_ci_high", "df"):
        assert last[col] == pytest.approx(ab[col], rel=1e-12), col
    # a p-value far in the tail magnifies the sums' last-digit rounding (t is about 21 here)
    assert last["p_value"] == pytest.approx(ab["p_value"], rel=1e-9)
    for col in ("units_control", "units_treatment", "n", "test"):
        assert last[col] == ab[col], col
    # cumulative: units never leave, so the counts never fall
    assert df["units_control"].is_monotonic_increasing
    assert (np.diff([d.toordinal() for d in df["day"]]) == 1).all()
    by_k = effect_over_time(logs, "control", "treatment", metric, experiment=exp,
                            by="exposure_day")
    # every analysed unit has exposures on its day 0
    assert by_k.iloc[0]["units_control"] == ab["units_control"]


def _frames_equal(got, want):
    # not to the bit: two identical calls differ in the last bits of DuckDB's variance sums
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-9, atol=0)
    assert got.attrs == want.attrs


def test_shared_unit_rows_runs_one_query_once_and_answers_as_alone(monkeypatch):
    """In shared_unit_rows (the readout's effect over time), the per-unit rows of one query
    and parameters are stored once; a call with another window gets its own rows. Every
    frame is the one computed without sharing."""
    from onlineeval import queries
    from onlineeval.abtest.units import shared_unit_rows

    logs = small_logs()
    calls = [("ctr", "day", None), ("ctr", "exposure_day", None),
             ("searches_per_unit", "day", None), ("ctr", "day", D2),
             ("ctr", "exposure_day", None)]

    def run(metric, by, start):
        return effect_over_time(logs, "control", "treatment", metric, by=by, start=start,
                                min_units=2)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = [run(*c) for c in calls]
        made = []
        create = queries.create

        def counting(con, name, sql, **kw):
            made.append(name)
            return create(con, name, sql, **kw)

        monkeypatch.setattr(queries, "create", counting)
        with shared_unit_rows():
            shared = [run(*c) for c in calls]
    for got, want in zip(shared, alone, strict=True):
        _frames_equal(got, want)
    # the first three calls share their rows (another metric reads the same sums); the
    # window has its own; the last stores the whole window's rows anew
    assert made.count("ab_over_time_unit_rows") == 3
