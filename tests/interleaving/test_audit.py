"""Adversarial audit of team-draft interleaving against independent implementations.

Everything onlineeval computes here is compared with code written in this file from the
published definitions, sharing nothing with onlineeval:

- Team-draft (Radlinski, Kurup & Joachims, "How does clickthrough data reflect retrieval
  quality?", CIKM 2008; restated as an algorithm by Chapelle, Joachims, Radlinski & Yue,
  "Large-scale validation and analysis of interleaved search evaluation", TOIS 2012): while
  both rankings have an unplaced document, the team with fewer picks picks, a fair coin
  decides when the teams are level, and a team picks its highest-ranked unplaced document.
- Credit: a page's clicked results are counted per team that placed them; the team with more
  wins the page, equal positive counts tie (Radlinski et al. 2008).
- Δ_AB = (wins_A + ties / 2) / (wins_A + wins_B + ties) − 0.5 (Chapelle et al. 2012).
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from onlineeval.interleaving import (
    interleaving_readout,
    team_draft,
    team_draft_distribution,
    team_draft_multileave,
)
from onlineeval.logs import load_logs

# ---------------------------------------------------------------------------------------------
# independent reference: the team-draft distribution by recursion over draft states


def reference_distribution(a: list, b: list, k: int, fill: bool) -> Counter:
    """Exact P(merged list, team labels) of team-draft, as Fractions.

    ``fill=False`` is the published loop condition (stop once either ranking is used up);
    ``fill=True`` lets the remaining ranking continue alone (onlineeval's default)."""
    out: Counter = Counter()

    def step(shown: list, labels: list, n_a: int, n_b: int, p: Fraction) -> None:
        next_a = next((d for d in a if d not in shown), None)
        next_b = next((d for d in b if d not in shown), None)
        done = len(shown) >= k or (next_a is None and next_b is None)
        if done or (not fill and (next_a is None or next_b is None)):
            out[(tuple(shown), tuple(labels))] += p
            return
        if next_b is None or (next_a is not None and n_a < n_b):
            moves = [("A", next_a, Fraction(1))]
        elif next_a is None or n_b < n_a:
            moves = [("B", next_b, Fraction(1))]
        else:
            moves = [("A", next_a, Fraction(1, 2)), ("B", next_b, Fraction(1, 2))]
        for team, doc, q in moves:
            step([*shown, doc], [*labels, team], n_a + (team == "A"), n_b + (team == "B"),
                 p * q)

    step([], [], 0, 0, Fraction(1))
    return out


def random_rankings(rnd: random.Random) -> tuple[list, list, int | None]:
    pool = [f"d{i}" for i in range(rnd.randint(1, 8))]
    a = rnd.sample(pool, rnd.randint(0, len(pool)))
    b = rnd.sample(pool, rnd.randint(0, len(pool)))
    return a, b, rnd.choice([None, 0, 1, 2, 3, 5, 8, 20])


@pytest.mark.parametrize("fill", [True, False])
def test_exact_distribution_matches_an_independent_enumeration(fill):
    # rankings overlapping, disjoint, empty, shorter and longer than the page
    rnd = random.Random(7)
    for _ in range(300):
        a, b, k = random_rankings(rnd)
        n = len(set(a) | set(b)) if k is None else min(k, len(set(a) | set(b)))
        want = reference_distribution(a, b, n, fill)
        got: Counter = Counter()
        for merged, p in team_draft_distribution(a, b, k, fill=fill):
            got[(tuple(merged.docs), tuple(merged.teams))] += p
        assert set(got) == set(want), (a, b, k)
        for key, p in want.items():
            assert got[key] == pytest.approx(float(p), abs=1e-12), (a, b, k, key)


@pytest.mark.parametrize(
    ("a", "b", "k", "fill"),
    [
        (list("abcdef"), list("bdafce"), 6, True),      # same documents, other order
        (list("abcdefgh"), list("xyzabq"), 5, True),    # partial overlap, truncated page
        (list("abc"), list("defghij"), 10, True),       # A shorter than the page
        (list("abc"), list("defghij"), 10, False),      # the same, published stop rule
    ],
)
def test_sampled_lists_follow_the_exact_distribution(a, b, k, fill):
    # 20,000 draws: a chi-square goodness-of-fit test against the independent exact law
    want = reference_distribution(a, b, k, fill)
    gen = np.random.default_rng(2024)
    n = 20_000
    seen = Counter()
    for _ in range(n):
        m = team_draft(a, b, k, rng=gen, fill=fill)
        seen[(tuple(m.docs), tuple(m.teams))] += 1
    assert set(seen) <= set(want)
    keys = sorted(want)
    res = stats.chisquare([seen[x] for x in keys], [float(want[x]) * n for x in keys])
    assert res.pvalue > 1e-4


def test_team_balance_per_rank_and_first_pick_coin():
    # Radlinski et al.: with rankings long enough, ranks 2i-1 and 2i hold one document of
    # each team, and the coin makes each team equally likely at every rank
    gen = np.random.default_rng(3)
    n = 20_000
    at_rank = np.zeros(10)
    for _ in range(n):
        m = team_draft(list("abcdefghij"), list("jihgfedcba"), 10, rng=gen)
        for r in range(0, 10, 2):
            assert sorted(m.teams[r:r + 2]) == ["A", "B"]
        at_rank += [t == "A" for t in m.teams]
    for count in at_rank:
        assert stats.binomtest(int(count), n).pvalue > 1e-4


def test_published_stop_rule_keeps_team_sizes_within_one():
    # the loop condition (∃i: A[i] ∉ I) ∧ (∃j: B[j] ∉ I) of the published algorithm: in every
    # possible list the teams differ by at most one document; filling can break that
    rnd = random.Random(11)
    fill_breaks = False
    for _ in range(300):
        a, b, k = random_rankings(rnd)
        for merged, _p in team_draft_distribution(a, b, k, fill=False):
            assert abs(merged.teams.count("A") - merged.teams.count("B")) <= 1
        fill_breaks |= any(abs(m.teams.count("A") - m.teams.count("B")) > 1
                           for m, _p in team_draft_distribution(a, b, k))
    assert fill_breaks
    # worked example: A = [a], B = [b, c, d, e]. Coin A: A places a, A is used up -> stop.
    # Coin B: B places b, A places a, A is used up -> stop.
    lists = {(tuple(m.docs), tuple(m.teams)): p
             for m, p in team_draft_distribution(["a"], list("bcde"), fill=False)}
    assert lists == {(("a",), ("A",)): 0.5, (("b", "a"), ("B", "A")): 0.5}
    assert team_draft([], list("bcde"), 3, rng=0, fill=False).docs == []


def test_multileave_rounds_are_uniform_permutations():
    # Schuth et al. 2014: each round every ranker places one document, in a random order
    gen = np.random.default_rng(5)
    n = 12_000
    orders = Counter()
    for _ in range(n):
        m = team_draft_multileave({"x": list("abc"), "y": list("def"), "z": list("ghi")}, 9,
                                  rng=gen)
        for r in range(0, 9, 3):
            assert sorted(m.teams[r:r + 3]) == ["x", "y", "z"]
        orders[tuple(m.teams[:3])] += 1
    assert len(orders) == 6
    assert stats.chisquare(list(orders.values())).pvalue > 1e-4


# ---------------------------------------------------------------------------------------------
# independent reference for the log readout


def reference_readout(searches: pd.DataFrame, results: pd.DataFrame,
                      clicks: pd.DataFrame) -> dict:
    """Per (experiment, team_a, team_b): page counts and Δ_AB, page by page in plain Python.

    A click without a rank hits the first (highest-placed) result with its doc_id."""
    shown = defaultdict(list)
    for sid, rank, doc, team in results[["search_id", "rank", "doc_id", "team"]].itertuples(
            index=False):
        shown[sid].append((int(rank), doc, None if pd.isna(team) else team))
    clicked = defaultdict(list)
    for sid, rank, doc in clicks[["search_id", "rank", "doc_id"]].itertuples(index=False):
        clicked[sid].append((None if pd.isna(rank) else int(rank), doc))
    pages, teams = [], defaultdict(set)
    for sid, exp, query, user in searches[["search_id", "experiment", "query",
                                           "user_id"]].itertuples(index=False):
        page_teams = {t for _r, _d, t in shown[sid] if t is not None}
        if page_teams:
            pages.append((sid, exp, query, user))
            teams[exp] |= page_teams
    out = {}
    for exp, names in teams.items():
        names = sorted(names)
        for i, ta in enumerate(names):
            for tb in names[i + 1:]:
                c, per_query, per_user = Counter(), defaultdict(Counter), defaultdict(Counter)
                for sid, e, query, user in pages:
                    if e != exp:
                        continue
                    team_at = {r: t for r, _d, t in shown[sid]}
                    first = {}
                    for r, d, _t in sorted(shown[sid], key=lambda x: x[0]):
                        first.setdefault(d, r)
                    hit, matched_rows = set(), 0
                    for r, d in clicked[sid]:
                        r = first.get(d) if r is None else r
                        if r in team_at:
                            hit.add(r)
                            matched_rows += 1
                        else:
                            c["clicks_unmatched"] += 1
                    credit = Counter(team_at[r] for r in hit)
                    c["clicks_without_team"] += credit[None]
                    c["repeat_clicks"] += matched_rows - len(hit)
                    c["impressions"] += 1
                    c["impressions_with_clicks"] += bool(clicked[sid])
                    side = ("wins_a" if credit[ta] > credit[tb] else
                            "wins_b" if credit[tb] > credit[ta] else
                            "ties" if credit[ta] > 0 else "none")
                    c[side] += 1
                    per_query[query][side] += 1
                    per_user[user][side] += 1
                decided = c["wins_a"] + c["wins_b"] + c["ties"]
                c["delta_ab"] = ((c["wins_a"] + c["ties"] / 2) / decided - 0.5 if decided
                                 else math.nan)
                # per-query variant: Δ_q per query with a decided page, then their mean;
                # the sign test counts queries with Δ_q > 0 against Δ_q < 0
                d_q = [(q["wins_a"] + q["ties"] / 2) / (q["wins_a"] + q["wins_b"] + q["ties"])
                       - 0.5 for q in per_query.values() if q["wins_a"] + q["wins_b"] + q["ties"]]
                c["delta_pq"] = sum(d_q) / len(d_q) if d_q else math.nan
                c["q_pos"] = sum(d > 0 for d in d_q)
                c["q_neg"] = sum(d < 0 for d in d_q)
                # per-user preferences, for the headline test
                c["d_u"] = [(u["wins_a"] + u["ties"] / 2) / (u["wins_a"] + u["wins_b"] + u["ties"])
                            - 0.5 for u in per_user.values()
                            if u["wins_a"] + u["wins_b"] + u["ties"]]
                out[(exp, ta, tb)] = c
    return out


def _user_p(d_u: list[float]) -> float:
    """scipy's one-sample t test of the per-user preferences; the exact sign test over users
    when they are all equal (and nonzero); nan with fewer than 2 users."""
    if len(d_u) < 2 or all(d == 0 for d in d_u):
        return math.nan
    if len(set(d_u)) == 1:
        return stats.binomtest(len(d_u), len(d_u)).pvalue
    return stats.ttest_1samp(d_u, 0.0).pvalue


def random_log(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Small adversarial logs: two-team and three-team experiments, results without a team,
    pages without clicks, a doc shown at two ranks, clicks by rank, by doc_id, by both,
    repeated clicks, searches without results."""
    rnd = random.Random(seed)
    s, r, c = [], [], []
    for p in range(50):
        sid, exp = f"s{p}", rnd.choice(["e1", "e2"])
        s.append((sid, f"u{rnd.randint(0, 9)}", f"q{rnd.randint(0, 3)}", exp))
        names = ["x", "y"] if exp == "e1" else ["x", "y", "z"]
        n = rnd.randint(0, 6)
        docs = [f"d{rnd.randint(0, 5)}" for _ in range(n)]
        for i in range(n):
            r.append((sid, i + 1, docs[i], rnd.choice([*names, None])))
        for _ in range(rnd.choice([0, 0, 1, 2, 3]) if n else 0):
            i = rnd.randint(1, n)
            how = rnd.random()
            c.append((sid, i, docs[i - 1]) if how < 0.5 else
                     (sid, i, None) if how < 0.75 else (sid, None, docs[i - 1]))
    clicks = pd.DataFrame(c, columns=["search_id", "rank", "doc_id"])
    clicks["rank"] = clicks["rank"].astype("Int64")
    return (pd.DataFrame(s, columns=["search_id", "user_id", "query", "experiment"]),
            pd.DataFrame(r, columns=["search_id", "rank", "doc_id", "team"]), clicks)


COUNTS = ("impressions", "impressions_with_clicks", "wins_a", "wins_b", "ties",
          "clicks_without_team", "clicks_unmatched", "repeat_clicks")


@pytest.mark.parametrize("seed", range(4))
def test_readout_counts_match_an_independent_page_by_page_count(seed):
    s, r, c = random_log(seed)
    want = reference_readout(s, r, c)
    with pytest.warns(UserWarning):  # results without a team get clicked in these logs
        got = interleaving_readout(load_logs(searches=s, results=r, clicks=c), n_resamples=5)
    assert len(got) == len(want)
    for row in got.to_dict("records"):
        ref = want[(row["experiment"], row["team_a"], row["team_b"])]
        assert {k: row[k] for k in COUNTS} == {k: ref[k] for k in COUNTS}
        assert row["estimate"] == pytest.approx(ref["delta_ab"], nan_ok=True)
        wa, wb = ref["wins_a"], ref["wins_b"]
        assert row["sign_test_p"] == pytest.approx(
            stats.binomtest(wa, wa + wb).pvalue if wa + wb else math.nan, nan_ok=True)
        assert row["p_value"] == pytest.approx(_user_p(ref["d_u"]), nan_ok=True, rel=1e-12)



def test_click_without_rank_on_a_doc_shown_twice_is_credited_once(raw_logs):
    # Bug found by this audit: a click logged by doc_id only, on a doc the page shows at two
    # ranks (placed by different teams), was joined to both results and credited to both
    # teams, turning a win into a tie. One click is one clicked result (Radlinski et al. 2008
    # count clicked results); like load_logs, it hits the highest-placed copy (rank 1, x).
    s = pd.DataFrame({"search_id": ["p1"], "user_id": ["u1"], "query": ["q"],
                      "experiment": ["e"]})
    r = pd.DataFrame({"search_id": ["p1"] * 3, "rank": [1, 2, 3], "doc_id": ["d1", "d2", "d1"],
                      "team": ["x", "y", "y"]})
    c = pd.DataFrame({"search_id": ["p1"], "rank": pd.array([None], "Int64"),
                      "doc_id": ["d1"]})
    for logs in (raw_logs(s, r, c), load_logs(searches=s, results=r, clicks=c)):
        row = interleaving_readout(logs, n_resamples=5).iloc[0]
        assert (row["wins_a"], row["wins_b"], row["ties"]) == (1, 0, 0)
        assert (row["repeat_clicks"], row["clicks_unmatched"]) == (0, 0)


@pytest.mark.parametrize("seed", range(3))
def test_raw_views_and_loaded_logs_give_the_same_counts(seed, raw_logs):
    # the SQL's own click matching (no loader) agrees with the reference on adversarial logs
    s, r, c = random_log(seed)
    want = reference_readout(s, r, c)
    with pytest.warns(UserWarning):
        got = interleaving_readout(raw_logs(s, r, c), n_resamples=5)
    for row in got.to_dict("records"):
        ref = want[(row["experiment"], row["team_a"], row["team_b"])]
        assert {k: row[k] for k in COUNTS} == {k: ref[k] for k in COUNTS}


@pytest.mark.parametrize("seed", range(2))
def test_per_query_readout_matches_the_independent_count(seed):
    s, r, c = random_log(seed)
    want = reference_readout(s, r, c)
    with pytest.warns(UserWarning):
        got = interleaving_readout(load_logs(searches=s, results=r, clicks=c), per_query=True,
                                   n_resamples=5)
    for row in got.to_dict("records"):
        ref = want[(row["experiment"], row["team_a"], row["team_b"])]
        assert {k: row[k] for k in COUNTS} == {k: ref[k] for k in COUNTS}
        assert row["estimate"] == pytest.approx(ref["delta_pq"], abs=1e-12, nan_ok=True)
        pos, neg = ref["q_pos"], ref["q_neg"]
        assert row["sign_test_p"] == pytest.approx(
            stats.binomtest(pos, pos + neg).pvalue if pos + neg else math.nan, nan_ok=True)
        # the headline test does not depend on the per-query grouping
        assert row["p_value"] == pytest.approx(_user_p(ref["d_u"]), nan_ok=True, rel=1e-12)


def test_balanced_published_stop_rule():
    # Joachims 2003 (and Chapelle et al. 2012): the merge loop runs while ka <= |A| and
    # kb <= |B|. A = [a], B = [b, c, d], A first: a (ka becomes 2 > |A|): the list is [a].
    # B first: b (kb=2), then ka < kb so a (ka=2), and A is used up: [b, a].
    from onlineeval.interleaving import balanced

    assert balanced(["a"], list("bcd"), a_first=True, fill=False) == ["a"]
    assert balanced(["a"], list("bcd"), a_first=False, fill=False) == ["b", "a"]
    assert balanced(["a"], list("bcd"), a_first=True) == ["a", "b", "c", "d"]
    # overlapping rankings of equal length: the rule never matters
    a, b = list("abcdef"), list("cafbed")
    for first in (True, False):
        assert balanced(a, b, 4, a_first=first, fill=False) == balanced(a, b, 4, a_first=first)
