"""A small hand-made click log whose metrics are worked out by hand in test_metrics.py.

Times are seconds after 2024-01-01 00:00. Events per user, in time order:

u1 (control), no session_id, derived sessions with the 30-minute gap:
  s1   0  q=a  n=3   click c1 rank 2 at 10, dwell 5000 ms
  s2  60  q=b  n=2   no click
  s3 120  q=c  n=0   zero results
  s4 1920 q=c  n=2   (exactly 1800 s after s3: same session)  click c2 rank 1 at 1950, no dwell
  s5 3751 q=d  n=3   (1801 s after c2: new session)  click c3 rank 3 at 3761 (no dwell),
                     click c4 rank 1 at 3770, dwell 40000 ms
u2 (treatment):
  s6   0  q=x  n=2   click c5 rank 1 at 5, no dwell
  s7  20  q=y  n=4   click c6 rank 4 at 27, dwell 10000 ms
  s8 1887 q=z  n=1   (1860 s after c6: new session)  no click
  s9 1947 q=NULL n=1 no click
u3 (treatment), on the next day:
  s10 86400 q=a n=2  click c7 rank 2 without ts or dwell
u4 (control): searches "dup" twice (both rows excluded, with their click) — and one click on
  the unknown search "ghost" (excluded as an orphan).
"""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

T0 = pd.Timestamp("2024-01-01 00:00:00")

SEARCHES = [
    # search_id, user_id, seconds, query, variant, n_results
    ("s1", "u1", 0, "a", "control", 3),
    ("s2", "u1", 60, "b", "control", 2),
    ("s3", "u1", 120, "c", "control", 0),
    ("s4", "u1", 1920, "c", "control", 2),
    ("s5", "u1", 3751, "d", "control", 3),
    ("s6", "u2", 0, "x", "treatment", 2),
    ("s7", "u2", 20, "y", "treatment", 4),
    ("s8", "u2", 1887, "z", "treatment", 1),
    ("s9", "u2", 1947, None, "treatment", 1),
    ("s10", "u3", 86400, "a", "treatment", 2),
    ("dup", "u4", 50, "q", "control", 1),
    ("dup", "u4", 70, "q", "control", 1),
]

CLICKS = [
    # search_id, rank, seconds (None: no ts), dwell_ms (None: unknown)
    ("s1", 2, 10, 5000.0),
    ("s4", 1, 1950, None),
    ("s5", 3, 3761, None),
    ("s5", 1, 3770, 40000.0),
    ("s6", 1, 5, None),
    ("s7", 4, 27, 10000.0),
    ("s10", 2, None, None),
    ("dup", 1, 55, 1000.0),
    ("ghost", 1, 100, 1000.0),
]


def _ts(sec: float | None) -> pd.Timestamp | None:
    return None if sec is None or pd.isna(sec) else T0 + pd.Timedelta(seconds=float(sec))


def searches_df(ts: bool = True, session_id: dict[str, str] | None = None) -> pd.DataFrame:
    df = pd.DataFrame(SEARCHES, columns=["search_id", "user_id", "sec", "query", "variant",
                                         "n_results"])
    if ts:
        df["ts"] = pd.to_datetime([_ts(s) for s in df["sec"]])
    if session_id is not None:
        df["session_id"] = [session_id.get(s, "x") for s in df["search_id"]]
    return df.drop(columns="sec")


def clicks_df(ts: bool = True) -> pd.DataFrame:
    df = pd.DataFrame(CLICKS, columns=["search_id", "rank", "sec", "dwell_ms"])
    if ts:
        df["ts"] = pd.to_datetime([_ts(s) for s in df["sec"]])
    return df.drop(columns="sec")


def results_df() -> pd.DataFrame:
    rows = []
    seen = set()
    for sid, _u, _s, _q, _v, n in SEARCHES:
        if sid in seen:
            continue
        seen.add(sid)
        rows += [(sid, r, f"d-{sid}-{r}") for r in range(1, n + 1)]
    return pd.DataFrame(rows, columns=["search_id", "rank", "doc_id"])


@pytest.fixture
def hand():
    """The builders of the hand-made log (``hand.searches_df(ts=False)``, ...)."""
    return SimpleNamespace(searches_df=searches_df, clicks_df=clicks_df,
                           results_df=results_df, T0=T0)


def _load_hand_logs():
    from onlineeval import load_logs

    return load_logs(searches=searches_df(), clicks=clicks_df(), results=results_df())


@pytest.fixture
def hand_logs():
    return _load_hand_logs()


@pytest.fixture(scope="module")
def module_hand_logs():
    """The hand-made log loaded once per test module, for modules whose tests only compute
    from it (their file rebinds ``hand_logs`` to this): no test may monkeypatch the package
    or replace ``logs.con`` while using it."""
    return _load_hand_logs()
