"""Interleaving credit by satisfied clicks (interleave --credit satisfied): the team whose
result got a satisfied click is credited, with the satisfied-click rule of the online
metrics (online/search_facts): dwell >= sat_dwell_s, where dwell is dwell_ms when given,
else the time to the user's next event in the session; a click of unknown dwell that is the
last event of its session is satisfied; a click with neither ts nor dwell is not."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.cli import main
from onlineeval.errors import SchemaError
from onlineeval.logs import load_logs

T = pd.Timestamp
S = pd.Timedelta(seconds=1)
SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "interleaving"

# Two results per page: rank 1 by team control, rank 2 by team treatment. No session_id, so
# sessions are derived (a gap of more than 30 min ends one). Page by page, with the click
# credit -> satisfied credit at the defaults (sat_dwell_s 30, session_gap_min 30):
#   p1 u1 10:00:00  clicks r2 at +10 s, r1 at +20 s; next event p2 at +80 s
#                   r2 dwell 10 s (to the next click: unsatisfied), r1 60 s (satisfied)
#                   -> clicks tie, satisfied control
#   p2 u1 10:01:20  click r2 at +10 s, next event p3 10 s later: unsatisfied
#                   -> clicks treatment, satisfied none
#   p3 u1 10:01:40  click r1 at +5 s, the last event of u1: dwell unknown, the last click
#                   of its session -> satisfied -> clicks control, satisfied control
#   p4 u2 11:00:00  click r2 at +5 s; next event p5 at 12:00 (a new session): the last click
#                   of its session -> satisfied -> treatment, treatment
#   p5 u2 12:00:00  click r2 at +5 s, the last event -> treatment, treatment
#   p6 u3 13:00:00  clicks r1 at +5 s with dwell_ms 5000 (given dwell wins over the 5 s
#                   to the next click, and it is short), r2 at +10 s with dwell_ms 45000;
#                   next event p7 at 13:10 -> clicks tie, satisfied treatment
#   p7 u3 13:10:00  click r1 at +5 s, no dwell_ms, the last event -> control, control
#   p8 u4 14:00:00  click r2 with neither ts nor dwell_ms: never satisfied
#                   -> clicks treatment, satisfied none
PAGES = ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"]
USERS = ["u1", "u1", "u1", "u2", "u2", "u3", "u3", "u4"]
STARTS = [T("2024-01-01 10:00:00"), T("2024-01-01 10:01:20"), T("2024-01-01 10:01:40"),
          T("2024-01-01 11:00:00"), T("2024-01-01 12:00:00"), T("2024-01-01 13:00:00"),
          T("2024-01-01 13:10:00"), T("2024-01-01 14:00:00")]
START = dict(zip(PAGES, STARTS, strict=True))
CLICKS = [  # search_id, rank, seconds after the search (None: no ts), dwell_ms
    ("p1", 2, 10, None), ("p1", 1, 20, None), ("p2", 2, 10, None), ("p3", 1, 5, None),
    ("p4", 2, 5, None), ("p5", 2, 5, None), ("p6", 1, 5, 5000.0), ("p6", 2, 10, 45000.0),
    ("p7", 1, 5, None), ("p8", 2, None, None),
]


def _log() -> dict[str, pd.DataFrame]:
    searches = pd.DataFrame({"search_id": PAGES, "user_id": USERS, "ts": STARTS,
                             "experiment": "control_vs_treatment"})
    results = pd.DataFrame([(p, r, f"{p}-d{r}", "control" if r == 1 else "treatment")
                            for p in PAGES for r in (1, 2)],
                           columns=["search_id", "rank", "doc_id", "team"])
    clicks = pd.DataFrame({
        "search_id": [c[0] for c in CLICKS],
        "rank": [c[1] for c in CLICKS],
        "ts": [pd.NaT if c[2] is None else START[c[0]] + c[2] * S for c in CLICKS],
        "dwell_ms": [np.nan if c[3] is None else c[3] for c in CLICKS],
    })
    return {"searches": searches, "results": results, "clicks": clicks}


def _counts(credit: str, log=None, **kw) -> tuple[int, int, int, int]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing on this log is worth a warning
        out = onlineeval.interleaving_readout(_log() if log is None else log, credit=credit,
                                              treatment_first=True, n_resamples=20, **kw)
    assert len(out) == 1 and out.loc[0, "team_a"] == "treatment"
    assert out.attrs["credit"] == credit
    r = out.iloc[0]
    return int(r["wins_a"]), int(r["wins_b"]), int(r["ties"]), int(r["impressions_with_clicks"])


def test_click_credit_of_the_log_by_hand():
    # wins treatment p2 p4 p5 p8, control p3 p7, ties p1 p6; every page has a click
    assert _counts("clicks") == (4, 2, 2, 8)


def test_satisfied_credit_by_hand():
    # treatment p4 p5 p6, control p1 p3 p7; no satisfied click on p2 and p8
    assert _counts("satisfied") == (3, 3, 0, 6)


def test_satisfied_credit_follows_sat_dwell_s_and_the_session_gap():
    # 5 s: p1's 10 s click and p2's are satisfied too (p1 a tie, p2 treatment); p6's 5000 ms
    # click reaches it (a tie): then satisfied credit is click credit, p8 aside
    assert _counts("satisfied", sat_dwell_s=5) == (3, 2, 2, 7)
    # 4000 s: only the last clicks of sessions (p3, p4, p5, p7) are satisfied
    assert _counts("satisfied", sat_dwell_s=4000) == (2, 2, 0, 4)
    # ... and with a 120 min gap p4's click is no longer the last of its session: its
    # dwell is the 3595 s to p5, short of 4000 s
    assert _counts("satisfied", sat_dwell_s=4000, session_gap_min=120) == (1, 2, 0, 3)
    # the click credit ignores both
    assert _counts("clicks", sat_dwell_s=4000, session_gap_min=120) == (4, 2, 2, 8)


def test_satisfied_credit_agrees_with_the_online_metrics_count_of_satisfied_clicks():
    # one rule: the satisfied clicks credited are those search_facts counts (n_sat_clicks)
    logs = load_logs(**_log())
    facts = onlineeval.online.search_facts(logs)
    n_sat = dict(logs.con.execute(
        f'SELECT search_id, n_sat_clicks FROM "{facts}" ORDER BY 1').fetchall())
    assert n_sat == {"p1": 1, "p2": 0, "p3": 1, "p4": 1, "p5": 1, "p6": 1, "p7": 1, "p8": 0}


def test_satisfied_credit_needs_a_dwell_or_a_click_time():
    log = _log()
    log["clicks"] = log["clicks"].drop(columns=["ts", "dwell_ms"])
    with pytest.raises(SchemaError, match="neither dwell_ms nor ts"):
        onlineeval.interleaving_readout(log, credit="satisfied")


def test_the_cli_credits_satisfied_clicks(tmp_path, capsys):
    for name, df in _log().items():
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    for extra, want in (([], (3, 3, 0)), (["--sat-dwell-s", "4000"], (2, 2, 0)),
                        (["--sat-dwell-s", "4000", "--session-gap-min", "120"], (1, 2, 0))):
        assert main(["interleave", str(tmp_path), "--credit", "satisfied", "--n-resamples",
                     "20", "--format", "csv", *extra]) == 0
        out = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
        assert out.loc[0, "team_a"] == "treatment"
        assert (out.loc[0, "wins_a"], out.loc[0, "wins_b"], out.loc[0, "ties"]) == want


# -- an independent computation on the simulated sample log -----------------------------

def _pandas_satisfied_outcomes(searches: pd.DataFrame, clicks: pd.DataFrame,
                               results: pd.DataFrame, sat_dwell_s: float,
                               gap_min: float) -> pd.DataFrame:
    """Per experiment and team pair (byte order): wins of each team, ties and pages with a
    satisfied click, from the rule as the docs state it, in pandas."""
    c = clicks.merge(searches[["search_id", "user_id"]], on="search_id")
    ev = pd.concat([
        searches.assign(is_click=False, rank=np.nan, dwell_ms=np.nan, cid=-1)[
            ["user_id", "ts", "is_click", "search_id", "rank", "dwell_ms", "cid"]],
        c.assign(is_click=True, cid=np.arange(len(c)))[
            ["user_id", "ts", "is_click", "search_id", "rank", "dwell_ms", "cid"]],
    ], ignore_index=True)
    ev = ev.sort_values(["user_id", "ts", "is_click", "search_id", "rank", "dwell_ms"],
                        na_position="last", kind="stable").reset_index(drop=True)
    nxt = ev.groupby("user_id")["ts"].shift(-1)
    gap = (nxt - ev["ts"]) <= pd.Timedelta(minutes=gap_min)
    next_in = ev["ts"].notna() & nxt.notna() & gap
    derived = ((nxt - ev["ts"]).dt.total_seconds() * 1000).where(next_in)
    dwell = ev["dwell_ms"].where(ev["dwell_ms"].notna(), derived)
    sat = (dwell >= sat_dwell_s * 1000) | (ev["dwell_ms"].isna() & ev["ts"].notna()
                                             & ~next_in)
    good = ev[ev["is_click"] & sat.fillna(False).astype(bool)]
    hit = good[["search_id", "rank"]].drop_duplicates().merge(
        results, on=["search_id", "rank"])
    credit = hit.groupby(["search_id", "team"]).size().unstack(fill_value=0)
    rows = []
    for exp, pages in searches.groupby("experiment"):
        teams = sorted(results.loc[results["search_id"].isin(pages["search_id"]), "team"]
                       .dropna().unique())
        a, b = teams
        cr = credit.reindex(index=pages["search_id"], columns=[a, b], fill_value=0)
        wa, wb = (cr[a] > cr[b]).sum(), (cr[b] > cr[a]).sum()
        tie = ((cr[a] == cr[b]) & (cr[a] > 0)).sum()
        with_sat = pages["search_id"].isin(good["search_id"]).sum()
        rows.append((exp, a, b, int(wa), int(wb), int(tie), int(with_sat)))
    return pd.DataFrame(rows, columns=["experiment", "team_a", "team_b", "wins_a", "wins_b",
                                       "ties", "impressions_with_clicks"])


@pytest.mark.parametrize(("sat_dwell_s", "gap_min"), [(30, 30), (60, 5)])
def test_satisfied_credit_matches_an_independent_pandas_computation(sat_dwell_s, gap_min):
    searches = pd.read_parquet(SAMPLE / "searches.parquet")
    results = pd.read_parquet(SAMPLE / "results.parquet")
    clicks = pd.read_parquet(SAMPLE / "clicks.parquet")
    # a quarter of the users, sessions derived, a third of the dwells unknown (so that the
    # derived dwell and the last-click rule decide those clicks)
    searches = searches[searches["user_id"].str[-1].isin(["0", "4", "8"])]
    searches = searches.drop(columns=["session_id"]).reset_index(drop=True)
    keep = set(searches["search_id"])
    results = results[results["search_id"].isin(keep)].reset_index(drop=True)
    clicks = clicks[clicks["search_id"].isin(keep)].reset_index(drop=True)
    clicks["dwell_ms"] = clicks["dwell_ms"].astype("float64").where(
        np.arange(len(clicks)) % 3 != 0)
    want = _pandas_satisfied_outcomes(searches, clicks, results, sat_dwell_s, gap_min)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = onlineeval.interleaving_readout(
            {"searches": searches, "results": results, "clicks": clicks},
            credit="satisfied", sat_dwell_s=sat_dwell_s, session_gap_min=gap_min,
            n_resamples=10)
        clicked = onlineeval.interleaving_readout(
            {"searches": searches, "results": results, "clicks": clicks}, n_resamples=10)
    cols = list(want.columns)
    got = got[cols].sort_values("experiment").reset_index(drop=True)
    pd.testing.assert_frame_equal(got.astype(want.dtypes.to_dict()), want,
                                  check_dtype=False)
    # not vacuous: satisfied credit decides fewer pages than click credit
    assert (want["impressions_with_clicks"].sum()
            < clicked["impressions_with_clicks"].sum())
    assert want["wins_a"].sum() > 100
