"""Credit and outcome SQL against hand-computed pages (sql/interleaving/*.sql)."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onlineeval.errors import InputError, InvalidParameterError, SchemaError
from onlineeval.interleaving import outcome as interleaving_outcome
from onlineeval.interleaving import outcomes
from onlineeval.logs import load_logs
from onlineeval.queries import set_view_parameters


def page_rows(logs) -> pd.DataFrame:
    outcomes.page_outcomes(logs)
    return logs.con.execute(
        "SELECT * FROM interleaving_page_outcomes ORDER BY experiment, team_a, team_b, search_id"
    ).df()


def test_page_credit_and_outcomes_match_hand_computation(logs):
    rows = page_rows(logs)
    e1 = rows[rows.experiment == "e1"].set_index("search_id")
    assert list(e1.index) == ["p1", "p2", "p3", "p4", "p5", "p6", "p7"]  # p8 not interleaved
    assert set(e1.team_a) == {"x"} and set(e1.team_b) == {"y"}
    assert list(e1.credit_a) == [2, 0, 1, 0, 0, 2, 1]
    assert list(e1.credit_b) == [0, 1, 1, 0, 0, 1, 0]
    assert list(e1.outcome) == ["a", "b", "tie", "none", "none", "a", "a"]
    assert list(e1.has_click) == [1, 1, 1, 0, 1, 1, 1]
    assert e1.loc["p5", "clicks_without_team"] == 1 and e1.clicks_without_team.sum() == 1
    assert e1.loc["p2", "repeat_clicks"] == 1 and e1.repeat_clicks.sum() == 1
    assert e1.clicks_unmatched.sum() == 0
    assert pd.Timestamp(e1.loc["p7", "day"]) == pd.Timestamp("2024-03-02")


def test_multileaved_pages_give_every_pair(logs):
    rows = page_rows(logs)
    e2 = rows[rows.experiment == "e2"]
    got = {(r.team_a, r.team_b, r.search_id): (r.credit_a, r.credit_b, r.outcome)
           for r in e2.itertuples()}
    assert got == {
        ("r", "s", "m1"): (1, 0, "a"), ("r", "t", "m1"): (1, 1, "tie"),
        ("s", "t", "m1"): (0, 1, "b"), ("r", "s", "m2"): (0, 1, "b"),
        ("r", "t", "m2"): (0, 0, "none"), ("s", "t", "m2"): (1, 0, "a"),
    }


def test_user_stats_are_per_user_sums(logs):
    outcomes.page_outcomes(logs, "e1")
    st = outcomes.user_stats(logs).set_index("user_id").sort_index()
    assert list(st.index) == ["u1", "u2", "u3", "u4"]
    assert list(st.impressions) == [2, 2, 2, 1]
    assert list(st.impressions_with_clicks) == [2, 1, 2, 1]
    assert list(st.wins_a) == [1, 0, 1, 1]
    assert list(st.wins_b) == [1, 0, 0, 0]
    assert list(st.ties) == [0, 1, 0, 0]


def test_summary_sql_matches_hand_computation(logs, summary_oracle):
    out = summary_oracle(logs, "e1").iloc[0]
    assert (out.impressions, out.impressions_with_clicks) == (7, 6)
    assert (out.wins_a, out.wins_b, out.ties) == (3, 1, 1)
    # (3 + 1/2) / 5 - 1/2
    assert out.delta_ab == pytest.approx(0.2)
    assert out.share_a == pytest.approx(0.75)
    # per query: q1 {a, b} -> 0; q2 {tie} -> 0; q3 {a, a} -> 0.5; mean over 3 queries
    assert out.queries_decided == 3
    assert out.delta_ab_per_query == pytest.approx(0.5 / 3)
    assert (out.clicks_without_team, out.repeat_clicks) == (1, 1)


def test_summary_by_day(logs, summary_oracle):
    out = summary_oracle(logs, "e1", by=["day"]).sort_values("day")
    assert list(out.impressions) == [6, 1]
    assert list(out.wins_a) == [2, 1]


def test_unmatched_click_is_counted_not_credited(hand_frames, raw_logs):
    s, r, c = hand_frames
    bad = pd.DataFrame({"search_id": ["p4"], "rank": pd.array([9], "Int64"), "doc_id": [None]})
    logs = raw_logs(s, r, pd.concat([c, bad], ignore_index=True))
    rows = page_rows(logs).set_index(["experiment", "search_id"])
    p4 = rows.loc[("e1", "p4")]
    assert (p4.credit_a, p4.credit_b, p4.outcome) == (0, 0, "none")
    assert (p4.has_click, p4.clicks_unmatched) == (1, 1)


def test_null_experiment_is_a_group_of_its_own(hand_frames, summary_oracle):
    s, r, c = hand_frames
    s["experiment"] = s["experiment"].where(s["experiment"] != "e1", None)
    logs = load_logs(searches=s, results=r, clicks=c)
    out = summary_oracle(logs)
    assert out.experiment.isna().sum() == 1
    assert out[out.experiment.isna()].iloc[0].impressions == 7


def test_unknown_experiment_is_a_clear_error(logs):
    with pytest.raises(InputError, match=r"'nope'.*e1, e2"):
        outcomes.page_outcomes(logs, "nope")


def test_log_without_team_column_is_a_clear_error(hand_frames):
    s, r, c = hand_frames
    logs = load_logs(searches=s, results=r.drop(columns="team"), clicks=c)
    with pytest.raises(SchemaError, match="results.team"):
        outcomes.page_outcomes(logs)


def test_bad_breakdown_is_a_clear_error(logs, hand_frames):
    with pytest.raises(InvalidParameterError, match="variant, day"):
        outcomes.check_by(logs, ["user_id"])
    s, r, c = hand_frames
    no_ts = load_logs(searches=s.drop(columns="ts"), results=r, clicks=c)
    with pytest.raises(SchemaError, match="searches.ts"):
        outcomes.check_by(no_ts, ["day"])


@st.composite
def random_pages(draw):
    """Random interleaved pages: 1-6 results with teams from {x, y, z, None}, random clicks
    (repeats allowed) on shown ranks, users and queries drawn from small pools."""
    pages = []
    for i in range(draw(st.integers(1, 12))):
        teams = draw(st.lists(st.sampled_from(["x", "y", "z", None]), min_size=1, max_size=6))
        clicks = draw(st.lists(st.integers(1, len(teams)), max_size=5))
        pages.append((f"s{i}", draw(st.sampled_from(["u1", "u2", "u3"])),
                      draw(st.sampled_from(["q1", "q2"])), teams, clicks))
    return pages


@settings(max_examples=40, deadline=None)
@given(pages=random_pages())
def test_sql_matches_a_python_reference_on_random_pages(raw_logs, pages):
    day = pd.Timestamp("2024-01-01")
    searches = pd.DataFrame([(s, u, q, "e", day) for s, u, q, _, _ in pages],
                            columns=["search_id", "user_id", "query", "experiment", "ts"])
    results = pd.DataFrame([(s, r + 1, f"{s}-{r + 1}", t) for s, _, _, teams, _ in pages
                            for r, t in enumerate(teams)],
                           columns=["search_id", "rank", "doc_id", "team"])
    clicks = pd.DataFrame([(s, c, f"{s}-{c}") for s, _, _, _, cs in pages for c in cs],
                          columns=["search_id", "rank", "doc_id"])
    clicks["rank"] = clicks["rank"].astype("Int64")
    logs = raw_logs(searches, results, clicks)
    interleaved = [p for p in pages if any(t is not None for t in p[3])]
    all_teams = sorted({t for p in interleaved for t in p[3] if t is not None})
    if len(all_teams) < 2:
        with pytest.raises(InputError):
            outcomes.page_outcomes(logs)
        return
    got = page_rows(logs)
    expected = []
    for s, _, _, teams, cs in interleaved:
        credit = {t: 0 for t in all_teams}
        for rank in set(cs):
            if teams[rank - 1] is not None:
                credit[teams[rank - 1]] += 1
        without = sum(teams[r - 1] is None for r in set(cs))
        for a, b in itertools.combinations(all_teams, 2):
            expected.append((a, b, s, credit[a], credit[b], int(bool(cs)),
                             interleaving_outcome(credit[a], credit[b]), without,
                             len(cs) - len(set(cs))))
    cols = ["team_a", "team_b", "search_id", "credit_a", "credit_b", "has_click", "outcome",
            "clicks_without_team", "repeat_clicks"]
    rows = sorted(tuple(r) for r in got[cols].itertuples(index=False))
    assert rows == sorted(expected)


def test_pages_of_a_single_team_experiment_are_counted_not_dropped_silently(hand_frames):
    s, r, c = hand_frames
    # a third experiment whose only page names one team: nothing to compare it with
    s = pd.concat([s, s[s.search_id == "p1"].assign(search_id="z1", experiment="e3")])
    r = pd.concat([r, r[r.search_id == "p1"].assign(search_id="z1", team="x")])
    logs = load_logs(searches=s, results=r, clicks=c)
    with pytest.warns(UserWarning, match=r"^1 interleaved pages belong to experiments whose "
                                         r"pages name only one team"):
        n = outcomes.page_outcomes(logs)
    assert n.rows == 7 + 3 * 2  # e1: 7 pages x 1 pair; e2: 2 pages x 3 pairs; e3: none
    assert n.lonely == 1


def test_one_sided_pages_are_marked_per_pair(logs):
    rows = page_rows(logs)
    got = {(r.experiment, r.team_a, r.team_b, r.search_id): r.one_sided
           for r in rows.itertuples()}
    # e1: every page shows both x and y (p5's unteamed middle result does not matter)
    assert all(v == 0 for k, v in got.items() if k[0] == "e1")
    # e2: m1 shows r, s and t; m2 shows only t and s, so its pairs with r are one-sided
    assert {k[1:]: v for k, v in got.items() if k[0] == "e2"} == {
        ("r", "s", "m1"): 0, ("r", "t", "m1"): 0, ("s", "t", "m1"): 0,
        ("r", "s", "m2"): 1, ("r", "t", "m2"): 1, ("s", "t", "m2"): 0,
    }


def test_readout_counts_and_warns_one_sided_pages_of_two_team_experiments():
    from onlineeval.interleaving import interleaving_readout

    t0 = pd.Timestamp("2024-03-01 10:00")
    # e3, teams a and b: f1 shows a's results only (b ran out, a filled) and its click credits
    # a; f2 is an ordinary page won by b; f3 is a one-result page. e4 (three teams, pages of
    # two results) is one-sided for some pairs by design and draws no warning.
    pages = {"f1": ("e3", "aa", [1]), "f2": ("e3", "ab", [2]), "f3": ("e3", "b", []),
             "g1": ("e4", "ab", [1]), "g2": ("e4", "bc", [2]), "g3": ("e4", "ca", [])}
    searches = pd.DataFrame([(sid, f"u{i}", "q", e, t0 + pd.Timedelta(minutes=i))
                             for i, (sid, (e, _, _)) in enumerate(pages.items())],
                            columns=["search_id", "user_id", "query", "experiment", "ts"])
    results = pd.DataFrame([(sid, r + 1, f"{sid}-d{r + 1}", t)
                            for sid, (_, teams, _) in pages.items()
                            for r, t in enumerate(teams)],
                           columns=["search_id", "rank", "doc_id", "team"])
    clicks = pd.DataFrame([(sid, r) for sid, (_, _, ranks) in pages.items() for r in ranks],
                          columns=["search_id", "rank"])
    logs = load_logs(searches=searches, results=results, clicks=clicks)
    with pytest.warns(UserWarning, match=r"'e3': 2 of 3 interleaved pages .* only one of "
                                         r"'a' and 'b'") as caught:
        out = interleaving_readout(logs)
    assert not any("'e4'" in str(w.message) for w in caught)
    e3 = out[out.experiment == "e3"].iloc[0]
    assert (e3.one_sided_pages, e3.wins_a, e3.wins_b, e3.impressions) == (2, 1, 1, 3)
    e4 = out[out.experiment == "e4"].set_index(["team_a", "team_b"]).one_sided_pages
    # each page shows two of the three teams: one-sided for the two pairs with the third
    assert e4.to_dict() == {("a", "b"): 2, ("a", "c"): 2, ("b", "c"): 2}


def _sample_interleaving():
    from pathlib import Path

    return load_logs(Path(__file__).resolve().parents[2] / "sample_logs" / "interleaving")


@pytest.mark.parametrize("by", [[], ["variant", "day"], ["query"]])
def test_user_stats_read_in_buckets_are_the_one_read_sums(logs, monkeypatch, by):
    # DuckDB reads a page-outcome view too large for its memory limit in buckets of pages
    # (sql/interleaving/page_outcomes.sql, switch bucketed) and adds each user's rows: the
    # same rows as one read, on the hand-made pages (multileaved e2 included) and the sample
    for log in (logs, _sample_interleaving()):
        outcomes.page_outcomes(log)
        whole = outcomes.user_stats(log, by)
        monkeypatch.setattr(outcomes, "_buckets", lambda con, rows: 3)
        counts = outcomes.page_outcomes(log)
        sizes = []
        for b in range(3):
            set_view_parameters(log.con, outcomes.PAGE_TABLE, bucket=b)
            sizes.append(log.con.execute(
                f"SELECT count(*) FROM {outcomes.PAGE_TABLE}").fetchone()[0])
        set_view_parameters(log.con, outcomes.PAGE_TABLE, bucket=None)
        # the buckets split the pages (each pair of a page in the page's bucket)
        assert sum(sizes) == counts.rows and max(sizes) < counts.rows
        pd.testing.assert_frame_equal(outcomes.user_stats(log, by), whole)
        # the view answers for every page again afterwards
        assert log.con.execute(
            f"SELECT count(*) FROM {outcomes.PAGE_TABLE}").fetchone()[0] == counts.rows
        monkeypatch.undo()


def test_interleaving_readout_in_buckets_is_the_same(monkeypatch):
    from onlineeval import interleaving_readout

    log = _sample_interleaving()
    one = interleaving_readout(log)
    per_query = interleaving_readout(log, per_query=True)
    monkeypatch.setattr(outcomes, "_buckets", lambda con, rows: 4)
    pd.testing.assert_frame_equal(interleaving_readout(log), one)
    pd.testing.assert_frame_equal(interleaving_readout(log, per_query=True), per_query)


@pytest.mark.parametrize("by", [[], ["query"]])
def test_user_stats_fetch_is_the_query_as_df(logs, by):
    # user_stats fetches through a temporary table and Arrow (onlineeval.db.fetch_df) and
    # must keep the query's rows and their ORDER BY (the bootstrap numbers users by first
    # appearance): the same frame as .df() of the rendered query
    from onlineeval.queries import load

    for log in (logs, _sample_interleaving()):
        outcomes.page_outcomes(log)
        q = load("interleaving/user_stats")
        want = log.con.execute(q.render(by=by), q.bind()).df()
        pd.testing.assert_frame_equal(outcomes.user_stats(log, by), want)
