"""Audit of the online numbers against the issue's definitions (the contract).

Two kinds of checks, neither sharing code with onlineeval:

* an adversarial log worked out BY HAND from the contract (zero-result page whose given
  n_results disagrees with the results table, a click before its search, a search and a
  click at the same ts, two searches at the same ts, a click without ts, a click on a rank
  the page did not show, a late click that starts a session, a gap of exactly 30 minutes,
  a user in two variants, a session across midnight);
* loop-based implementations of position_ctr, top_queries and queries_over_time, and of
  the per-unit sums of sql/ab/unit_sums.sql, compared on random logs. (online_metrics
  itself is compared with a loop-based reference in test_reference.py.)

The three discrepancies this audit found (n_results null or empty not counted from results;
searches without session_id merged into one session) are fixed; their tests say so.
"""

from __future__ import annotations

import warnings
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest

from onlineeval import load_logs
from onlineeval.abtest.units import unit_rows
from onlineeval.errors import StrictModeError
from onlineeval.online import online_metrics, position_ctr, queries_over_time, top_queries
from onlineeval.online.metrics import metric_sums

T = pd.Timestamp("2024-03-01 23:50:00")  # a Friday; the log crosses midnight


def _t(seconds: float) -> pd.Timestamp:
    return T + pd.Timedelta(seconds=seconds)


def adversarial_log():
    """The log of the module docstring. Seconds after 2024-03-01 23:50:00:

    u1  s1   0     q=a  A  n_results=0 given, but results shows ranks 1-2 (given wins)
        s2   0     q=b  A  n=3 (same ts as s1: s1 first by search_id)
        s3   1800  q=c  B  n=2 (exactly 30 min after the click at 0: same session)
        s4   3601  q=c  B  n=1 (1801 s after s3: new session)
        clicks: s1 rank 1 at -5 (before its search, no dwell: dwell 5 s to s1, not sat);
                s2 rank 2 at 0 (same ts as s2), dwell 40 s (sat);
                s3 rank 2 without ts or dwell (not sat; s3 cannot be reformulated)
    u2  s5   100   q=NULL A n=2
        s6   2160  q=d  A  n=2
        clicks: s5 rank 3 at 150: not on the page (excluded, counted);
                s5 rank 1 at 2100: 2000 s after s5, so it starts a new session that s6
                joins; it counts for s5's session; its dwell is 60 s (to s6): sat.
    """
    searches = pd.DataFrame(
        [("s1", "u1", _t(0), "a", "A", 0), ("s2", "u1", _t(0), "b", "A", 3),
         ("s3", "u1", _t(1800), "c", "B", 2), ("s4", "u1", _t(3601), "c", "B", 1),
         ("s5", "u2", _t(100), None, "A", 2), ("s6", "u2", _t(2160), "d", "A", 2)],
        columns=["search_id", "user_id", "ts", "query", "variant", "n_results"])
    shown = [("s1", 2), ("s2", 3), ("s3", 2), ("s4", 1), ("s5", 2), ("s6", 2)]
    results = pd.DataFrame([(s, r, f"d{r}") for s, k in shown for r in range(1, k + 1)],
                           columns=["search_id", "rank", "doc_id"])
    clicks = pd.DataFrame(
        [("s1", 1, _t(-5), None), ("s2", 2, _t(0), 40000.0), ("s3", 2, None, None),
         ("s5", 3, _t(150), None), ("s5", 1, _t(2100), None)],
        columns=["search_id", "rank", "ts", "dwell_ms"])
    clicks["ts"] = pd.to_datetime(clicks["ts"])
    return load_logs(searches=searches, results=results, clicks=clicks)


def test_adversarial_log_whole(recwarn):
    logs = adversarial_log()
    assert logs.report.excluded == {("clicks", "not_on_page"): 1}
    row = online_metrics(logs, by=()).iloc[0]
    # sessions: u1 {s1,s2,s3} {s4}; u2 {s5} {s6} (s6 joins the session the late click began)
    expected = {
        "searches": 6, "sessions": 4, "users": 2,
        "ctr": 4 / 6,  # s1 s2 s3 s5
        "clicks_per_search": 4 / 6,  # the off-page click is excluded
        "abandonment_rate": 2 / 5,  # n>0: s2..s6; no click: s4 s6
        "zero_result_rate": 1 / 6,  # s1 (the given n_results, not the 2 results rows)
        "session_abandonment_rate": 2 / 4,  # {s4} {s6}
        "session_success_rate": 2 / 4,  # s2's 40 s click; s5's click with 60 s to s6
        "mean_time_to_first_click_s": (-5 + 0 + 2000) / 3,  # negative time kept
        "click_mrr": (1 + 1 / 2 + 1 / 2 + 0 + 1 + 0) / 6,
        "reformulation_rate": 1 / 5,  # s1 -> s2 (a -> b); s5 has no query
        "queries_per_session": 6 / 4,
    }
    for name, value in expected.items():
        assert row[name] == pytest.approx(value), name


def test_adversarial_log_by_variant_and_day(recwarn):
    logs = adversarial_log()
    v = online_metrics(logs, by="variant").set_index("variant")
    # A: s1 s2 s5 s6 (sessions first in A: u1's first, both of u2's); B: s3 s4 (u1's second)
    assert v["searches"].tolist() == [4, 2]
    assert v["sessions"].tolist() == [3, 1]
    assert v["users"].tolist() == [2, 1]  # u1 counts in both variants
    assert v.loc["A", "session_success_rate"] == pytest.approx(2 / 3)
    assert v.loc["B", "session_abandonment_rate"] == pytest.approx(1.0)
    assert v.loc["A", "click_mrr"] == pytest.approx((1 + 0.5 + 1 + 0) / 4)
    assert v.loc["A", "reformulation_rate"] == pytest.approx(1 / 3)
    assert np.isnan(v.loc["B", "mean_time_to_first_click_s"])
    d = online_metrics(logs, by="day")
    assert d["day"].tolist() == [pd.Timestamp("2024-03-01"), pd.Timestamp("2024-03-02")]
    # 03-01: s1 s2 s5; 03-02: s3 (00:20) s6 (00:26) s4 (00:50:01). u1's first session spans
    # midnight and counts on the day of its first search.
    assert d["searches"].tolist() == [3, 3]
    assert d["sessions"].tolist() == [2, 2]
    assert d["session_success_rate"].tolist() == pytest.approx([1.0, 0.0])
    assert d["abandonment_rate"].tolist() == pytest.approx([0.0, 2 / 3])
    assert d["zero_result_rate"].tolist() == pytest.approx([1 / 3, 0.0])
    assert d["click_mrr"].tolist() == pytest.approx([2.5 / 3, 0.5 / 3])
    assert d["reformulation_rate"].tolist() == pytest.approx([1 / 2, 0.0])


def test_adversarial_log_traffic_and_positions(recwarn):
    logs = adversarial_log()
    p = position_ctr(logs)
    # rank 1 shown on all 6 pages, clicked on s1 and s5; rank 2 on 5 (s2, s3 clicked);
    # rank 3 only on s2 (the rank-3 click on s5 was not on its page)
    assert p["rank"].tolist() == [1, 2, 3]
    assert p["shown"].tolist() == [6, 5, 1]
    assert p["clicked"].tolist() == [2, 2, 0]
    assert p["ctr"].tolist() == pytest.approx([2 / 6, 2 / 5, 0.0])
    q = top_queries(logs, n=10)
    assert q["query"].tolist() == ["c", "a", "b", "d"]
    assert q["searches"].tolist() == [2, 1, 1, 1]
    assert q["ctr"].tolist() == pytest.approx([0.5, 1.0, 1.0, 0.0])
    h = queries_over_time(logs, "hour")
    assert h["hour"].tolist() == [pd.Timestamp("2024-03-01 23:00"),
                                  pd.Timestamp("2024-03-02 00:00")]
    assert h["searches"].tolist() == [3, 3]
    assert h["queries"].tolist() == [2, 2]  # NULL query not counted
    assert h["ctr"].tolist() == pytest.approx([1.0, 1 / 3])
    w = queries_over_time(logs, "week")
    assert w["week"].tolist() == [pd.Timestamp("2024-02-26")]  # the Monday
    assert w["searches"].tolist() == [6]
    assert w["queries"].tolist() == [4]


# --- discrepancies in the loader (onlineeval/logs/validate.py), found by this audit -------

def _n_results_log(n_results: list[object]):
    searches = pd.DataFrame({
        "search_id": ["s1", "s2", "s3"], "user_id": ["u1", "u1", "u2"],
        "ts": [_t(0), _t(60), _t(0)],
        "n_results": pd.array(n_results, dtype="Int64"),
    })
    # s1 shows 2 results, s2 none, s3 one; s3 is clicked
    results = pd.DataFrame({"search_id": ["s1", "s1", "s3"], "rank": [1, 2, 1],
                            "doc_id": ["a", "b", "c"]})
    clicks = pd.DataFrame({"search_id": ["s3"], "rank": [1], "ts": [_t(5)]})
    return load_logs(searches=searches, results=results, clicks=clicks)


def test_empty_n_results_column_is_counted_from_results(recwarn):
    logs = _n_results_log([None, None, None])
    row = online_metrics(logs, by=()).iloc[0]
    # counted from results: s1 = 2, s2 = 0, s3 = 1
    assert row["zero_result_rate"] == pytest.approx(1 / 3)
    assert row["abandonment_rate"] == pytest.approx(1 / 2)  # s1 (n>0, no click) of s1, s3


# found by the audit (a null n_results stayed null although the log has results); the
# contract's "when absent" applies per search
def test_missing_n_results_values_are_counted_from_results(recwarn):
    logs = _n_results_log([None, None, 1])
    row = online_metrics(logs, by=()).iloc[0]
    assert row["zero_result_rate"] == pytest.approx(1 / 3)  # s2 has no results rows
    assert row["abandonment_rate"] == pytest.approx(1 / 2)


def test_given_n_results_wins_over_the_results_table(recwarn):
    """Control for the two tests above: given, fully known n_results is used as is."""
    logs = _n_results_log([0, 4, 1])
    row = online_metrics(logs, by=()).iloc[0]
    assert row["zero_result_rate"] == pytest.approx(1 / 3)  # s1 (given 0, 2 rows shown)
    assert row["abandonment_rate"] == pytest.approx(1 / 2)  # s2 of s2, s3


# --- random logs against loop-based implementations ----------------------------------------

def random_log(seed: int, *, sessions: bool = False, two_experiments: bool = False):
    """Small random log full of ties, off-page and untimed clicks, late clicks, users
    switching variants, days crossing midnight."""
    rng = np.random.default_rng(seed)
    searches, results, clicks = [], [], []
    sid = 0
    for u in range(int(rng.integers(3, 9))):
        t = float(rng.choice([0, 600, 3000]))
        for _ in range(int(rng.integers(1, 7))):
            t += float(rng.choice([0, 1, 10, 1799, 1800, 1801, 7200, 20000]))
            sid += 1
            s = f"s{sid:03d}"
            searches.append((s, f"u{u}", _t(t), f"S{int(rng.integers(0, 2))}",
                             [None, "a", "b", "c", "B"][int(rng.integers(0, 5))],
                             ["e1", "e2"][int(rng.integers(0, 2))] if two_experiments else "e1",
                             ["A", "B"][int(rng.integers(0, 2))]))
            k = int(rng.integers(0, 4))
            results += [(s, r, f"d{r}") for r in range(1, k + 1)]
            for _ in range(int(rng.choice([0, 0, 1, 2, 3]))):
                off = [None, 0, -5, 3, 40, 1801][int(rng.integers(0, 6))]
                clicks.append((s, int(rng.integers(1, 5)),
                               None if off is None else _t(t + off),
                               [None, 1000.0, 30000.0, 60000.0][int(rng.integers(0, 4))]))
    s = pd.DataFrame(searches, columns=["search_id", "user_id", "ts", "session_id", "query",
                                        "experiment", "variant"])
    if not sessions:
        s = s.drop(columns="session_id")
    r = pd.DataFrame(results, columns=["search_id", "rank", "doc_id"])
    c = pd.DataFrame(clicks, columns=["search_id", "rank", "ts", "dwell_ms"])
    c["ts"] = pd.to_datetime(c["ts"])
    return s, r, c


def _kept_clicks(s: pd.DataFrame, r: pd.DataFrame, c: pd.DataFrame) -> list[tuple]:
    shown = set(zip(r["search_id"], r["rank"], strict=True))
    return [(sid, rank) for sid, rank in zip(c["search_id"], c["rank"], strict=True)
            if (sid, rank) in shown]


def _bucket(ts: pd.Timestamp, freq: str) -> pd.Timestamp:
    day = ts.normalize()
    return {"hour": ts.floor("h"), "day": day,
            "week": day - pd.Timedelta(days=ts.weekday())}[freq]


def ref_position_ctr(s, r, c, by):
    group = {row.search_id: tuple(getattr(row, b) for b in by) for row in s.itertuples()}
    n_at = defaultdict(int)
    for key in _kept_clicks(s, r, c):
        n_at[key] += 1
    acc = defaultdict(lambda: [0, 0, 0])
    for sid, rank in zip(r["search_id"], r["rank"], strict=True):
        a = acc[(*group[sid], rank)]
        a[0] += 1
        a[1] += n_at[(sid, rank)] > 0
        a[2] += n_at[(sid, rank)]
    return {k: (a[0], a[1], a[2], a[1] / a[0]) for k, a in acc.items()}


def ref_top_queries(s, r, c, n, by):
    clicked = {sid for sid, _ in _kept_clicks(s, r, c)}
    acc = defaultdict(lambda: defaultdict(lambda: [0, set(), 0]))
    for row in s.itertuples():
        if pd.isna(row.query):
            continue
        a = acc[tuple(getattr(row, b) for b in by)][row.query]
        a[0] += 1
        a[1].add(row.user_id)
        a[2] += row.search_id in clicked
    out = {}
    for g, per_query in acc.items():
        ranked = sorted(per_query.items(), key=lambda kv: (-kv[1][0], kv[0]))[:n]
        for pos, (q, a) in enumerate(ranked, 1):
            out[(*g, pos)] = (q, a[0], len(a[1]), a[2] / a[0])
    return out


def ref_queries_over_time(s, r, c, freq, by):
    clicked = {sid for sid, _ in _kept_clicks(s, r, c)}
    acc = defaultdict(lambda: [0, set(), set(), 0])
    for row in s.itertuples():
        a = acc[(_bucket(row.ts, freq), *(getattr(row, b) for b in by))]
        a[0] += 1
        a[1].add(row.user_id)
        if not pd.isna(row.query):
            a[2].add(row.query)
        a[3] += row.search_id in clicked
    return {k: (a[0], len(a[1]), len(a[2]), a[3] / a[0]) for k, a in acc.items()}


def _as_dict(df: pd.DataFrame, keys: list[str], values: list[str]) -> dict:
    out = {}
    for rec in df.to_dict("records"):
        key = tuple(rec[k] for k in keys)
        out[key] = tuple(rec[v] for v in values)
    return out


def _same(mine: dict, theirs: dict) -> None:
    assert set(mine) == set(theirs)
    for k in mine:
        for a, b in zip(mine[k], theirs[k], strict=True):
            if isinstance(a, float):
                assert b == pytest.approx(a), k
            else:
                assert a == b, k


@pytest.mark.parametrize("seed", range(6))
def test_traffic_and_positions_match_loops(seed):
    s, r, c = random_log(seed)
    logs = load_logs(searches=s, results=r, clicks=c)
    for by in ([], ["variant"], ["experiment", "variant"]):
        _same(ref_position_ctr(s, r, c, by),
              _as_dict(position_ctr(logs, by=by), [*by, "rank"],
                       ["shown", "clicked", "clicks", "ctr"]))
        for n in (1, 2, 50):
            _same(ref_top_queries(s, r, c, n, by),
                  _as_dict(top_queries(logs, n=n, by=by), [*by, "position"],
                           ["query", "searches", "users", "ctr"]))
        for freq in ("hour", "day", "week"):
            _same(ref_queries_over_time(s, r, c, freq, by),
                  _as_dict(queries_over_time(logs, freq, by=by), [freq, *by],
                           ["searches", "users", "queries", "ctr"]))


@pytest.mark.parametrize(("seed", "sessions"), [(0, False), (1, True), (2, False), (3, True)])
def test_unit_sums_add_up_to_the_online_totals(seed, sessions):
    """sql/ab/unit_sums per user, summed per variant, = online/metrics per variant, for
    every statistic; users in two variants appear once per variant in both."""
    s, r, c = random_log(seed, sessions=sessions, two_experiments=True)
    logs = load_logs(searches=s, results=r, clicks=c)
    totals = metric_sums(logs, by=["experiment", "variant"])
    stats = [col for col in totals.columns if col not in ("experiment", "variant", "users")]
    for experiment in ("e1", "e2"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            units, _ = unit_rows(logs, experiment=experiment)
        units = units[units["period"] == "exp"]
        mine = units.groupby("variant")[stats].sum()
        theirs = totals[totals["experiment"] == experiment].set_index("variant")[stats]
        assert sorted(mine.index) == sorted(theirs.index)
        for v in mine.index:
            for col in stats:
                assert float(mine.loc[v, col]) == pytest.approx(
                    float(np.nan_to_num(float(theirs.loc[v, col])))), (experiment, v, col)
        users = units.groupby("variant")["unit"].nunique()
        per_variant = s[s["experiment"] == experiment].groupby("variant")["user_id"].nunique()
        assert users.to_dict() == per_variant.to_dict()


def test_searches_without_session_id_are_excluded_and_counted(recwarn):
    # found by the audit: such searches were merged into ONE session per user however far
    # apart, silently. In a log that gives sessions, session_id is required like ts: the row is
    # excluded and counted (null_required), and --strict refuses it.
    searches = pd.DataFrame({
        "search_id": ["s1", "s2", "s3"], "user_id": ["u1"] * 3,
        "ts": [_t(0), _t(5 * 3600), _t(10 * 3600)], "session_id": ["A", None, None]})
    clicks = pd.DataFrame({"search_id": ["s1"], "rank": [1], "ts": [_t(5)]})
    logs = load_logs(searches=searches, clicks=clicks)
    assert logs.report.excluded == {("searches", "null_required"): 2}
    row = online_metrics(logs, by=()).iloc[0]
    assert (row["searches"], row["sessions"]) == (1, 1)
    assert row["session_abandonment_rate"] == 0.0
    with pytest.raises(StrictModeError, match="null_required"):
        load_logs(searches=searches, clicks=clicks, strict=True)


def test_an_empty_session_id_column_means_derived_sessions(recwarn):
    # a session_id column without a single value is treated as absent: sessions are derived
    # (s1, s2 5 hours apart: two sessions), nothing is excluded
    searches = pd.DataFrame({
        "search_id": ["s1", "s2"], "user_id": ["u1"] * 2, "ts": [_t(0), _t(5 * 3600)],
        "session_id": pd.Series([None, None], dtype="string")})
    clicks = pd.DataFrame({"search_id": ["s1"], "rank": [1], "ts": [_t(5)]})
    logs = load_logs(searches=searches, clicks=clicks)
    assert logs.report.excluded == {}
    assert "session_id" in logs.report.empty_columns["searches"]
    assert online_metrics(logs, by=()).iloc[0]["sessions"] == 2
