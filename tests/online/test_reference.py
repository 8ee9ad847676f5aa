"""online_metrics against an independent, loop-based pandas implementation on random logs.

The reference below follows the written definitions event by event (per user, in Python
loops), sharing no code with the SQL. Random logs are built to hit the edge cases: equal
timestamps, gaps of exactly the session gap, clicks far after their search (breaking the
session), clicks without ts or dwell, zero-result pages, searches without query, given
session ids that interleave in time.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from onlineeval import load_logs
from onlineeval.online import online_metrics
from onlineeval.online.definitions import COLUMNS

T0 = pd.Timestamp("2024-05-01")


def random_log(seed: int, given_sessions: bool = False):
    rng = np.random.default_rng(seed)
    searches, clicks, results = [], [], []
    sid = 0
    for u in range(int(rng.integers(20, 40))):
        t = float(rng.integers(0, 2 * 86400))
        variant = ["control", "treatment", "other"][int(rng.integers(0, 3))]
        for _ in range(int(rng.integers(1, 12))):
            gap = rng.choice([0, 1800, 1801, 1799, 30, 300, 2400, int(rng.integers(1, 4000))])
            t += float(gap)
            sid += 1
            n = 0 if rng.random() < 0.12 else int(rng.integers(1, 6))
            query = None if rng.random() < 0.1 else f"q{int(rng.integers(0, 5))}"
            session = f"S{int(rng.integers(0, 3))}"
            searches.append((f"s{sid}", f"u{u}", T0 + pd.Timedelta(seconds=t), query,
                             variant, n, session))
            results += [(f"s{sid}", r, f"d{sid}-{r}") for r in range(1, n + 1)]
            if n == 0:
                continue
            for _ in range(int(rng.choice([0, 0, 1, 1, 2, 3]))):
                rank = int(rng.integers(1, n + 1))
                cts = None if rng.random() < 0.1 else (
                    T0 + pd.Timedelta(seconds=t + float(rng.choice(
                        [0, 5, 29, 30, 1800, 1900, int(rng.integers(1, 600))]))))
                dwell = None if rng.random() < 0.4 else float(
                    rng.choice([30000, 29999, int(rng.integers(0, 90000))]))
                clicks.append((f"s{sid}", rank, cts, dwell))
    s = pd.DataFrame(searches, columns=["search_id", "user_id", "ts", "query", "variant",
                                        "n_results", "session_id"])
    if not given_sessions:
        s = s.drop(columns="session_id")
    c = pd.DataFrame(clicks, columns=["search_id", "rank", "ts", "dwell_ms"])
    c["ts"] = pd.to_datetime(c["ts"])
    r = pd.DataFrame(results, columns=["search_id", "rank", "doc_id"])
    return s, c, r


def _key(x):
    return (x is None, x if x is not None else 0)


def reference(s: pd.DataFrame, c: pd.DataFrame, by: list[str], sat_dwell_s: float,
              gap_min: float) -> dict[tuple, dict[str, float]]:
    """Every metric per group, straight from the definitions."""
    gap = gap_min * 60.0
    given = "session_id" in s.columns
    srows = {r.search_id: r for r in s.itertuples(index=False)}
    clicks_of: dict[str, list] = {k: [] for k in srows}
    for r in c.itertuples(index=False):
        clicks_of[r.search_id].append(r)

    def secs(ts) -> float | None:
        return None if ts is None or pd.isna(ts) else (ts - T0).total_seconds()

    # the streams: (ts, kind, search_id, rank, dwell, click or search row)
    streams: dict[tuple, list] = {}
    for r in srows.values():
        key = (r.user_id, r.session_id if given else None)
        streams.setdefault(key, []).append((secs(r.ts), 0, r.search_id, None, None, r))
        for k in clicks_of[r.search_id]:
            if secs(k.ts) is not None:
                dwell = None if pd.isna(k.dwell_ms) else k.dwell_ms
                streams[key].append((secs(k.ts), 1, k.search_id, k.rank, dwell, k))
    session_of: dict[str, tuple] = {}
    reformulated: dict[str, bool] = {}
    satisfied: dict[int, bool] = {}  # id(click row) -> satisfied
    for key, events in streams.items():
        events.sort(key=lambda e: (e[0], e[1], e[2], _key(e[3]), _key(e[4])))
        number = 0
        for i, e in enumerate(events):
            prev = events[i - 1] if i else None
            if given:
                nxt = events[i + 1] if i + 1 < len(events) else None
            else:
                if prev is None or e[0] - prev[0] > gap:
                    number += 1
                nxt = events[i + 1] if (i + 1 < len(events)
                                        and events[i + 1][0] - e[0] <= gap) else None
            if e[1] == 0:
                row = e[5]
                session_of[row.search_id] = key if given else (key, number)
                untimed = any(secs(k.ts) is None for k in clicks_of[row.search_id])
                reformulated[row.search_id] = bool(
                    nxt is not None and nxt[1] == 0 and not pd.isna(row.query)
                    and not pd.isna(nxt[5].query) and nxt[5].query != row.query
                    and not untimed)
            else:
                dwell = e[4]
                if dwell is None and nxt is not None:
                    dwell = (nxt[0] - e[0]) * 1000.0
                satisfied[id(e[5])] = (dwell >= sat_dwell_s * 1000.0 if dwell is not None
                                       else nxt is None)

    def sat(k) -> bool:
        if id(k) in satisfied:
            return satisfied[id(k)]
        return not pd.isna(k.dwell_ms) and k.dwell_ms >= sat_dwell_s * 1000.0

    # sessions: members, first search (by ts then search_id), outcomes
    members: dict[tuple, list] = {}
    for sid, sess in session_of.items():
        members.setdefault(sess, []).append(srows[sid])

    def group(row) -> tuple:
        out = []
        for b in by:
            out.append(row.ts.floor("D") if b == "day" else getattr(row, b))
        return tuple(out)

    acc: dict[tuple, dict[str, list]] = {}
    for rows in members.values():
        first = min(rows, key=lambda r: (r.ts, r.search_id))
        g = acc.setdefault(group(first), {"sessions": [], "searches": []})
        ks = [k for r in rows for k in clicks_of[r.search_id]]
        g["sessions"].append((len(ks) > 0, any(sat(k) for k in ks)))
    for row in srows.values():
        g = acc.setdefault(group(row), {"sessions": [], "searches": []})
        g["searches"].append(row)

    out = {}
    for key, g in acc.items():
        rows = g["searches"]
        n = len(rows)
        ks = {r.search_id: clicks_of[r.search_id] for r in rows}
        with_results = [r for r in rows if r.n_results > 0]
        timed = []
        for r in rows:
            t = [secs(k.ts) for k in ks[r.search_id] if secs(k.ts) is not None]
            if t:
                timed.append(min(t) - secs(r.ts))
        sess = g["sessions"]
        known_q = [r for r in rows if not pd.isna(r.query)]

        def ratio(a, b):
            return a / b if b else math.nan

        out[key] = {
            "searches": n,
            "sessions": len(sess),
            "users": len({r.user_id for r in rows}),
            "ctr": ratio(sum(1 for r in rows if ks[r.search_id]), n),
            "clicks_per_search": ratio(sum(len(v) for v in ks.values()), n),
            "abandonment_rate": ratio(sum(1 for r in with_results if not ks[r.search_id]),
                                      len(with_results)),
            "zero_result_rate": ratio(sum(1 for r in rows if r.n_results == 0), n),
            "session_abandonment_rate": ratio(sum(1 for h, _ in sess if not h), len(sess)),
            "session_success_rate": ratio(sum(1 for _, ok in sess if ok), len(sess)),
            "mean_time_to_first_click_s": ratio(sum(timed), len(timed)),
            "click_mrr": ratio(sum(1 / min(k.rank for k in v) for v in ks.values() if v), n),
            "reformulation_rate": ratio(sum(reformulated[r.search_id] for r in known_q),
                                        len(known_q)),
            "queries_per_session": ratio(n, len(sess)),
        }
    return out


def compare(got: pd.DataFrame, want: dict, by: list[str]) -> None:
    assert len(got) == len(want)
    for _, row in got.iterrows():
        key = tuple(row[b] for b in by)
        exp = want[key]
        for name in COLUMNS:
            g, w = row[name], exp[name]
            if isinstance(w, float) and math.isnan(w):
                assert pd.isna(g), (key, name, g)
            else:
                assert float(g) == pytest.approx(w, rel=1e-9, abs=1e-12), (key, name, g, w)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_random_logs_match_reference(seed):
    s, c, r = random_log(seed)
    logs = load_logs(searches=s, clicks=c, results=r)
    assert logs.report.excluded_total == 0
    for by in (["variant"], []):
        for sat, gap in ((30, 30), (10, 5)):
            got = online_metrics(logs, by=by, sat_dwell_s=sat, session_gap_min=gap)
            compare(got, reference(s, c, by, sat, gap), by)


@pytest.mark.parametrize("seed", [5, 6])
def test_random_logs_with_given_sessions_match_reference(seed):
    s, c, r = random_log(seed, given_sessions=True)
    logs = load_logs(searches=s, clicks=c, results=r)
    got = online_metrics(logs, by=["variant"])
    compare(got, reference(s, c, ["variant"], 30, 30), ["variant"])


def test_random_log_by_day_matches_reference():
    s, c, r = random_log(7)
    logs = load_logs(searches=s, clicks=c, results=r)
    got = online_metrics(logs, by=["variant", "day"])
    compare(got, reference(s, c, ["variant", "day"], 30, 30), ["variant", "day"])


# --- the two partitionings of the facts windows (onlineeval.online.facts) -------------------
# The windows partition by a 64-bit hash of the stream key only when online/partition_check
# finds it one-to-one on the log; otherwise by the key columns. Both must give the reference
# numbers. PK_SHIFT = 63 keeps one bit of the hash, so the 20-40 users of a random log
# collide and the check must fall back.


@pytest.mark.parametrize("plan", ["hash", "keys", "collide"])
@pytest.mark.parametrize("seed,given", [(0, False), (3, False), (5, True)])
def test_both_partitionings_match_reference(monkeypatch, plan, seed, given):
    from onlineeval.online import facts

    if plan == "keys":
        monkeypatch.setattr(facts, "FORCE_HASH_PARTITION", False)
    if plan == "collide":
        monkeypatch.setattr(facts, "PK_SHIFT", 63)
    s, c, r = random_log(seed, given_sessions=given)
    logs = load_logs(searches=s, clicks=c, results=r)
    key = ["user_id", "session_id"] if given else ["user_id"]
    assert facts.hash_partition_ok(logs, key) is (plan == "hash")
    for by in (["variant"], ["variant", "day"]):
        got = online_metrics(logs, by=by, sat_dwell_s=10, session_gap_min=5)
        compare(got, reference(s, c, by, 10, 5), by)


def test_colliding_hash_without_the_check_gives_wrong_numbers(monkeypatch):
    """Why the check exists: forcing the hash partitions while users collide merges their
    event streams, and the numbers no longer match the reference."""
    from onlineeval.online import facts

    monkeypatch.setattr(facts, "PK_SHIFT", 63)
    monkeypatch.setattr(facts, "FORCE_HASH_PARTITION", True)
    s, c, r = random_log(0)
    logs = load_logs(searches=s, clicks=c, results=r)
    got = online_metrics(logs, by=[])
    want = reference(s, c, [], 30, 30)
    with pytest.raises(AssertionError):
        compare(got, want, [])
    assert got["users"].iloc[0] < want[()]["users"]  # users are counted by the hash too


def test_hash_check_sees_the_views_of_the_moment(monkeypatch):
    """The check is not cached: a log loaded later into the same connection (which replaces
    the views an earlier Logs object reads) is checked again."""
    from onlineeval.online import facts

    monkeypatch.setattr(facts, "PK_SHIFT", 63)
    s, c, r = random_log(1)
    one = s[s["user_id"] == s["user_id"].iloc[0]]
    first = load_logs(searches=one, clicks=c[c["search_id"].isin(one["search_id"])])
    assert facts.hash_partition_ok(first, ["user_id"])  # one user: nothing to collide with
    load_logs(searches=s, clicks=c, results=r, con=first.con)
    assert not facts.hash_partition_ok(first, ["user_id"])
