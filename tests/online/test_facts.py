"""The per-search facts view, row by row, on the hand-made log (events in conftest.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from onlineeval import queries
from onlineeval.online import facts as facts_module
from onlineeval.online import search_facts
from onlineeval.online.facts import FACT_COLUMNS
from onlineeval.queries import quote_ident

# search_id: (session_first, has_click, n_clicks, n_sat_clicks, rr, ttfc_s, reformulated,
#             session_has_click, session_success, session_abandoned, session_no)
EXPECTED = {
    "s1": (1, 1, 1, 0, 0.5, 10.0, 0, 1, 1, 0, 1),
    "s2": (0, 0, 0, 0, 0.0, None, 1, 0, 0, 0, 1),
    "s3": (0, 0, 0, 0, 0.0, None, 0, 0, 0, 0, 1),
    "s4": (0, 1, 1, 1, 1.0, 30.0, 0, 0, 0, 0, 1),
    "s5": (1, 1, 2, 1, 1.0, 10.0, 0, 1, 1, 0, 2),
    "s6": (1, 1, 1, 0, 1.0, 5.0, 0, 1, 0, 0, 1),
    "s7": (0, 1, 1, 0, 0.25, 7.0, 0, 0, 0, 0, 1),
    "s8": (1, 0, 0, 0, 0.0, None, 0, 0, 0, 1, 2),
    "s9": (0, 0, 0, 0, 0.0, None, 0, 0, 0, 0, 2),
    "s10": (1, 1, 1, 0, 0.5, None, 0, 1, 0, 0, 1),
}
NAMES = ("session_first", "has_click", "n_clicks", "n_sat_clicks", "rr", "ttfc_s",
         "reformulated", "session_has_click", "session_success", "session_abandoned",
         "session_no")


def facts_frame(logs, **kw) -> pd.DataFrame:
    view = search_facts(logs, **kw)
    return logs.con.sql(f"SELECT * FROM {quote_ident(view)}").df().set_index("search_id")


def test_facts_row_by_row(hand_logs):
    df = facts_frame(hand_logs)
    assert sorted(df.index) == sorted(EXPECTED)
    for sid, values in EXPECTED.items():
        for name, want in zip(NAMES, values, strict=True):
            got = df.loc[sid, name]
            if want is None:
                assert pd.isna(got), (sid, name)
            else:
                assert got == pytest.approx(want), (sid, name, got)
    # zero-result / abandonment flags
    assert df.loc["s3", "zero_result"] == 1 and df.loc["s3", "nonzero"] == 0
    assert df.loc["s3", "abandoned"] == 0  # no results: not an abandonment
    assert df.loc["s2", "abandoned"] == 1
    assert df.loc["s9", "known_query"] == 0


def test_facts_columns_match_docs(hand_logs):
    view = search_facts(hand_logs)
    columns = list(hand_logs.con.table(quote_ident(view)).columns)
    searches = list(hand_logs.con.table("searches").columns)
    assert columns == searches + list(FACT_COLUMNS)
    # the SQL header documents each added column, in order, with a description
    # (then online/event_facts', the outcome facts of attributed events)
    header = [*queries.load("online/search_facts").columns,
              *queries.load("online/event_facts").columns]
    assert [c.name for c in header] == list(FACT_COLUMNS)
    assert all(len(c.doc) > 10 for c in header)
    # the module docstring points there instead of repeating the list
    assert "sql/online/search_facts.sql" in facts_module.__doc__


def test_click_facts_are_the_facts_without_sessions(hand_logs):
    """The session-free view has the same values, column for column, as the full one."""
    full = facts_frame(hand_logs)
    view = facts_module.click_facts(hand_logs)
    light = hand_logs.con.sql(f"SELECT * FROM {quote_ident(view)}").df().set_index("search_id")
    searches = [c for c in hand_logs.con.table("searches").columns if c != "search_id"]
    assert list(light.columns) == searches + list(facts_module.CLICK_FACT_COLUMNS)
    assert set(facts_module.CLICK_FACT_COLUMNS) < set(FACT_COLUMNS)
    assert "session_first" not in light.columns and "has_click" in light.columns
    pd.testing.assert_frame_equal(light.sort_index(), full[light.columns].sort_index())


def test_every_metric_is_a_ratio_of_fact_sums(hand_logs):
    """Summing the facts per variant by hand (in pandas) gives online_metrics exactly."""
    from onlineeval.online import online_metrics
    from onlineeval.online.definitions import COLUMNS, METRICS

    df = facts_frame(hand_logs).reset_index()
    df["searches"] = 1
    assert (df["known_rr"] == df["rr"].notna().astype(int)).all()
    sums = df.groupby("variant").sum(numeric_only=True)
    sums["users"] = df.groupby("variant")["user_id"].nunique()
    got = online_metrics(hand_logs).set_index("variant")
    for name in COLUMNS:
        m = METRICS.get(name)
        want = sums[m.numerator] if m.denominator is None else (
            sums[m.numerator] / sums[m.denominator])
        pd.testing.assert_series_equal(got[name].astype(float), want.astype(float),
                                       check_names=False)


def test_view_is_named_per_parameters(hand_logs):
    a = search_facts(hand_logs, sat_dwell_s=5)
    b = search_facts(hand_logs, sat_dwell_s=30)
    assert a != b
    count = hand_logs.con.sql(
        f"SELECT sum(n_sat_clicks) FROM {quote_ident(a)}").fetchall()[0][0]
    assert count == 6  # c1 (5 s), c2 (last), c3 (9 s), c4, c5 (15 s), c6 (10 s)
    count = hand_logs.con.sql(
        f"SELECT sum(n_sat_clicks) FROM {quote_ident(b)}").fetchall()[0][0]
    assert count == 2  # c2, c4


def test_metric_sums_are_the_fact_sums(hand_logs):
    """metric_sums (what H5-style per-unit code reuses) equals the sums of the facts view."""
    from onlineeval.online import metric_sums

    sums = metric_sums(hand_logs, by=()).iloc[0]
    df = facts_frame(hand_logs)
    assert sums["searches"] == len(df) == 10
    assert sums["users"] == df["user_id"].nunique() == 3
    for col in ("session_first", "has_click", "n_clicks", "session_success", "reformulated"):
        assert sums[col] == df[col].sum(), col
    assert sums["ttfc_s"] == pytest.approx(62.0)


def test_fact_column_types(hand_logs):
    """Every fact column has the type the SQL header documents (session_no is BIGINT: a
    plain sum() would make it HUGEINT; the counts ride the second window as INTEGER and are
    widened back at the end)."""
    view = search_facts(hand_logs)
    types = dict(zip(hand_logs.con.table(quote_ident(view)).columns,
                     (str(t) for t in hand_logs.con.table(quote_ident(view)).types),
                     strict=True))
    assert not [c for c in types if c.startswith("_oe_")]
    documented = {c.name: c.type for q in ("online/search_facts", "online/event_facts")
                  for c in queries.load(q).columns}
    assert documented["session_no"] == "BIGINT" and documented["n_clicks"] == "BIGINT"
    for col in FACT_COLUMNS:
        assert types[col] == documented[col], col
    light = facts_module.click_facts(hand_logs)
    for col, t in zip(hand_logs.con.table(quote_ident(light)).columns,
                      hand_logs.con.table(quote_ident(light)).types, strict=True):
        if col in documented:
            assert str(t) == documented[col], col


def test_keyed_view_counts_users_by_a_one_to_one_hash(hand, hand_logs):
    view, user = facts_module.facts_view(hand_logs, user_key=True)
    assert user == "_oe_pk"
    df = hand_logs.con.sql(f"SELECT * FROM {quote_ident(view)}").df()
    assert list(df.columns) == ["_oe_pk", *hand_logs.con.table("searches").columns,
                                *FACT_COLUMNS]
    # one hash per user and one user per hash
    pairs = df[["_oe_pk", "user_id"]].drop_duplicates()
    assert pairs["_oe_pk"].is_unique and pairs["user_id"].is_unique and len(pairs) == 3
    # with given sessions the windows' key is (user, session): users are counted by user_id
    from onlineeval import load_logs

    given = load_logs(searches=hand.searches_df(session_id={}), clicks=hand.clicks_df())
    assert facts_module.facts_view(given, user_key=True)[1] == "user_id"


def test_fractional_session_gap_keeps_an_exact_gap(hand):
    """session_gap_min=0.1 is a 6-second gap: 6 s later stays in the session, 6.000001 s
    later starts a new one (the gap is compared in whole microseconds)."""
    from onlineeval import load_logs

    t0 = hand.T0
    s = pd.DataFrame({
        "search_id": ["a1", "a2", "b1", "b2"], "user_id": ["ua", "ua", "ub", "ub"],
        "ts": [t0, t0 + pd.Timedelta(seconds=6), t0,
               t0 + pd.Timedelta(seconds=6, microseconds=1)],
        "query": ["x", "y", "x", "y"], "variant": ["v"] * 4, "n_results": [1] * 4,
    })
    c = pd.DataFrame({"search_id": ["a1"], "rank": [1], "ts": [t0], "dwell_ms": [1.0]})
    logs = load_logs(searches=s, clicks=c)
    df = facts_frame(logs, session_gap_min=0.1)
    assert df.loc["a2", "session_first"] == 0 and df.loc["a2", "session_no"] == 1
    assert df.loc["b2", "session_first"] == 1 and df.loc["b2", "session_no"] == 2
    assert facts_module._gap_us(0.1) == 6_000_000
    assert facts_module._gap_us(1e300) == 2**63 - 1


def test_view_names_keep_parameters_apart():
    # found by the online audit: ":g" formatting gave these the same view name
    from onlineeval.online.facts import view_name

    assert view_name(30, 30) != view_name(30.0000001, 30)
    assert view_name(30, 30) != view_name(30, 30.0000001)
    assert view_name(30, 30) == view_name(30.0, 30.0)
