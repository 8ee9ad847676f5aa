"""Every estimator on a tiny log, against numbers worked out by hand.

The log: query q with documents a, b, c of attractiveness 0.8, 0.4, 0.6; true examination
1, 0.5, 0.25 at ranks 1..3. User u1 saw pages s1 = [a, b] and s2 = [b, c], user u2 saw
s3 = [c, a] and s4, a search for x, which the candidate does not rank. The candidate puts
c first and b second (clicks@2), so its true value is 1 x 0.6 + 0.5 x 0.4 = 0.8.

The expectations are exact: the four clicks that matter (b on s1 and s2, c on s2 and s3)
are enumerated with their probabilities, each outcome runs through the package's SQL.
"""

from __future__ import annotations

import itertools

import duckdb
import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.counterfactual import DirectModel, evaluate
from onlineeval.counterfactual.evaluation import candidate_table, estimate_on
from onlineeval.errors import InputError, InvalidParameterError

P = np.array([np.nan, 1.0, 0.5, 0.25])
FLAT = np.array([np.nan, 1.0, 1.0, 1.0])
ALPHA = {"a": 0.8, "b": 0.4, "c": 0.6}
TRUE = 0.8
SEARCHES = pd.DataFrame({"search_id": ["s1", "s2", "s3", "s4"],
                         "user_id": ["u1", "u1", "u2", "u2"], "query": ["q", "q", "q", "x"]})
RESULTS = pd.DataFrame({"search_id": ["s1", "s1", "s2", "s2", "s3", "s3", "s4"],
                        "rank": [1, 2, 1, 2, 1, 2, 1],
                        "doc_id": ["a", "b", "b", "c", "c", "a", "z"]})
# (page, rank) of the clicks that matter, with their probabilities P(rank) x alpha
BITS = [("s1", 2, 0.5 * 0.4), ("s2", 1, 1.0 * 0.4), ("s2", 2, 0.5 * 0.6), ("s3", 1, 1.0 * 0.6)]
RUN = pd.DataFrame({"qid": ["q", "q", "q"], "docno": ["c", "b", "a"],
                    "score": [3.0, 2.0, 1.0]})


def model(alpha: dict[str, float], exam: np.ndarray = P) -> DirectModel:
    return DirectModel(examination=exam, default=0.5, attractiveness=pd.DataFrame(
        {"query": "q", "doc_id": list(alpha), "attractiveness": list(alpha.values())}))


WRONG = model({"a": 0.5, "b": 0.5, "c": 0.5})   # right examination, wrong attractiveness
RIGHT = model(ALPHA)


def clicks(outcome: tuple[int, ...]) -> pd.DataFrame:
    # a click on a, which the candidate does not rank in its top 2, is always there
    rows = [("s1", 1)] + [(s, r) for (s, r, _), hit in zip(BITS, outcome, strict=True) if hit]
    return pd.DataFrame(rows, columns=["search_id", "rank"])


def expectation(estimator: str, p: np.ndarray = P, dm: DirectModel | None = None,
                clip: float | None = None) -> float:
    con = duckdb.connect()
    con.register("searches", SEARCHES)
    con.register("results", RESULTS)
    cand = candidate_table(RUN, 2)
    total = 0.0
    for outcome in itertools.product((0, 1), repeat=len(BITS)):
        prob = np.prod([b[2] if hit else 1 - b[2] for b, hit in zip(BITS, outcome,
                                                                      strict=True)])
        con.register("clicks", clicks(outcome))
        res, _ = estimate_on(con, estimator, cand, p, dm, k=2, max_rank=3, clip=clip)
        total += prob * res["value"]
    return total


def test_ips_expectation():
    # supported slots: s1 b@2 (w 1, P(click) 0.2); s2 b@1 (w 0.5, 0.4) and c@2 (w 2, 0.3);
    # s3 c@1 (w 1, 0.6). c is not on s1, b not on s3: those slots count 0.
    assert expectation("ips") == pytest.approx((0.2 + 0.5 * 0.4 + 2 * 0.3 + 0.6) / 3,
                                               abs=1e-12)
    # capped at 1.5: c@2 on s2 counts 1.5 x 0.3 instead of 2 x 0.3
    assert expectation("ips", clip=1.5) == pytest.approx((1.6 - 0.5 * 0.3) / 3, abs=1e-12)


def test_snips_expectation_is_the_true_value():
    # c: examination mass 0.5 (s2) + 1 (s3), expected clicks 0.3 + 0.6: rate 0.6;
    # b: mass 0.5 (s1) + 1 (s2), expected clicks 0.2 + 0.4: rate 0.4. Both pairs were shown
    # somewhere, so the pages that did not show them cost nothing.
    assert expectation("snips") == pytest.approx(3 * (1.0 * 0.6 + 0.5 * 0.4) / 3, abs=1e-12)
    assert TRUE == pytest.approx(1.0 * 0.6 + 0.5 * 0.4)


def test_dr_expectations():
    # the right model: every residual has mean 0 and the unsupported slots are predicted
    # right, whatever the propensities
    assert expectation("dr", dm=RIGHT) == pytest.approx(TRUE, abs=1e-12)
    assert expectation("dr", FLAT, dm=RIGHT) == pytest.approx(TRUE, abs=1e-12)
    assert expectation("dr", dm=RIGHT, clip=1.5) == pytest.approx(TRUE, abs=1e-12)
    # right propensities, wrong attractiveness (0.5 everywhere): per page the model says
    # 1 x 0.5 + 0.5 x 0.5 = 0.75; residuals s1 b@2: 1 x (0.2 - 0.25); s2 b@1:
    # 0.5 x (0.4 - 0.5), c@2: 2 x (0.3 - 0.25); s3 c@1: 1 x (0.6 - 0.5)
    wrong = (3 * 0.75 - 0.05 - 0.05 + 0.1 + 0.1) / 3
    assert expectation("dr", dm=WRONG) == pytest.approx(wrong, abs=1e-12)
    # ... which is the truth on the supported slots and the model on the two unsupported
    # ones (c on s1: 0.5 instead of 0.6; b on s3: 0.25 instead of 0.2)
    assert wrong == pytest.approx(TRUE + (-0.1 + 0.05) / 3)
    # capped at 1.5: the c@2 residual counts 1.5 x 0.05 instead of 2 x 0.05
    assert expectation("dr", dm=WRONG, clip=1.5) == pytest.approx(wrong - 0.025 / 3,
                                                                   abs=1e-12)
    # both wrong (flat propensities): s1 b@2 1 x (0.2 - 0.25); s2 b@1 1 x (0.4 - 0.5),
    # c@2 1 x (0.3 - 0.25); s3 c@1 1 x (0.6 - 0.5): biased
    both = (3 * 0.75 - 0.05 - 0.1 + 0.05 + 0.1) / 3
    assert expectation("dr", FLAT, dm=WRONG) == pytest.approx(both, abs=1e-12)
    assert abs(both - TRUE) > 0.04
    # right propensities, model with the right attractiveness but flat examination:
    # m(d, r) = alpha(d); per page the model says 0.6 + 0.4 = 1; residuals s1 b@2
    # 1 x (0.2 - 0.4); s2 b@1 0.5 x (0.4 - 0.4), c@2 2 x (0.3 - 0.6); s3 c@1 1 x (0.6 - 0.6)
    flat_exam = model(ALPHA, FLAT)
    assert expectation("dr", dm=flat_exam) == pytest.approx((3 - 0.2 - 0.6) / 3, abs=1e-12)


def test_dr_with_the_logs_own_model_expectation():
    # ips on the supported slots plus, on c's slot of s1 and b's of s3, p_c times the pair's
    # clicks over its examination mass, whose expectation is its attractiveness
    assert expectation("dr") == pytest.approx((1.6 + 1.0 * 0.6 + 0.5 * 0.4) / 3, abs=1e-12)
    # capped at 1.5, c@2 on s2 counts 1.5 x click + rate(c) x (1 - 1.5 x 0.5): the same mean
    assert expectation("dr", clip=1.5) == pytest.approx(TRUE, abs=1e-12)


def test_dr_minus_ips_is_the_model_on_unsupported_slots_in_every_outcome():
    """With the model's examination equal to the propensities, the model cancels on every
    supported slot: dr - ips is the same number whatever the clicks."""
    con = duckdb.connect()
    con.register("searches", SEARCHES)
    con.register("results", RESULTS)
    cand = candidate_table(RUN, 2)
    for outcome in itertools.product((0, 1), repeat=len(BITS)):
        con.register("clicks", clicks(outcome))
        ips, _ = estimate_on(con, "ips", cand, P, None, k=2, max_rank=3)
        dr, _ = estimate_on(con, "dr", cand, P, WRONG, k=2, max_rank=3)
        # c on s1 at candidate rank 1: 1 x 0.5; b on s3 at candidate rank 2: 0.5 x 0.5
        assert dr["value"] - ips["value"] == pytest.approx((0.5 + 0.25) / 3, abs=1e-12)


def _logs(outcome=(1, 1, 1, 1)):
    return onlineeval.load_logs(searches=SEARCHES, results=RESULTS, clicks=clicks(outcome))


def test_standard_errors_effective_sample_sizes_and_shares_by_hand():
    logs = _logs()
    with pytest.warns(UserWarning) as got:
        ips = evaluate(logs, RUN, metric="clicks@2", propensities={1: 1, 2: 0.5, 3: 0.25},
                       estimator="ips", max_rank=3)
    said = " | ".join(str(w.message) for w in got)
    assert "1 pages have no query or one the candidate run does not rank" in said
    assert "33.3% of the candidate's top-2 slots hold a document the logged page did not " \
        "show at a rank with a propensity; no click can be counted" in said
    # all four clicks: u1 has s1 b@2 (w 1) and s2 b@1 (0.5), c@2 (2): 3.5 over 2 pages;
    # u2 has s3 c@1 (1): 1 over 1 page. R = 4.5 / 3 = 1.5; linearised (y - R n) / mean(n):
    # +1/3 and -1/3, variance (ddof 1) 2/9, se = sqrt(2/9 / 2) = 1/3
    assert ips.value == pytest.approx(1.5)
    assert ips.se == pytest.approx(1 / 3)
    assert ips.ci_low == pytest.approx(1.5 - 1.959963984540054 / 3)
    assert (ips.units, ips.pages, ips.weighted_clicks) == (2, 3, 4)
    assert ips.effective_sample_size == pytest.approx(4.5 ** 2 / (1 + 0.25 + 4 + 1))
    assert ips.unsupported_share == pytest.approx(2 / 6)
    assert ips.pages_without_candidate == 1
    with pytest.warns(UserWarning):
        capped = evaluate(logs, RUN, metric="clicks@2", propensities={1: 1, 2: 0.5, 3: 0.25},
                          estimator="ips", max_rank=3, clip=1.5)
    # only c@2 on s2 weighs more than 1.5 (2): u1 now has 3.0
    assert capped.clipped_clicks == 1 and capped.clip == 1.5
    assert capped.value == pytest.approx(4.0 / 3)
    # snips: c has 2 clicks over mass 1.5, b 2 over 1.5: rates 4/3; value(q) = 1 x 4/3 +
    # 0.5 x 4/3 = 2 = the estimate. Per unit: u1 2 pages x 2 + c's weight 1 x 3 / 1.5 = 2
    # times (1 - 4/3 x 0.5) + b's weight 0.5 x 3 / 1.5 = 1 times (2 - 4/3 x 1.5) = 14/3;
    # u2 1 x 2 + 2 x (1 - 4/3 x 1) = 4/3. Linearised: +4/9, -4/9; se = sqrt(32/81 / 2)
    with pytest.warns(UserWarning):
        sn = evaluate(logs, RUN, metric="clicks@2", propensities={1: 1, 2: 0.5, 3: 0.25},
                      estimator="snips", max_rank=3)
    assert sn.value == pytest.approx(2.0)
    assert sn.se == pytest.approx(4 / 9)
    assert sn.unsupported_share == 0
    # the weight of a click is propensity(c) x pages / mass: 2 for c's, 1 for b's
    assert sn.effective_sample_size == pytest.approx(6 ** 2 / (2 * 4 + 2 * 1))
    assert sn.weighted_clicks == 4 and sn.clipped_clicks == 0
    # dr with the wrong model: ips plus the model on the two unsupported slots; per unit
    # u1: 3.5 + 0.5 (c on s1), u2: 1 + 0.25 (b on s3)
    with pytest.warns(UserWarning) as got:
        dr = evaluate(logs, RUN, metric="clicks@2", propensities={1: 1, 2: 0.5, 3: 0.25},
                      estimator="dr", model=WRONG, max_rank=3)
    assert "they are the click model's prediction alone" in " ".join(str(w.message)
                                                                      for w in got)
    y, n = np.array([4.0, 1.25]), np.array([2.0, 1.0])
    r = y.sum() / n.sum()
    assert dr.value == pytest.approx(r)
    assert dr.se == pytest.approx(np.sqrt(((y - r * n) / n.mean()).var(ddof=1) / 2))
    assert dr.unsupported_share == pytest.approx(2 / 6)
    assert dr.model_unseen_share == 0 and dr.model == "given"
    assert dr.effective_sample_size == pytest.approx(ips.effective_sample_size)
    # dr with the log's own model: ips plus, for c on s1 and b on s3, p_c x 2 / 1.5; per
    # unit (u1: 3.5 + 4/3, u2: 1 + 0.5 x 4/3) plus the rates' influence: c's h = (0 + 1 x
    # 1) / 1.5 (one of its 3 slots unshown), b's h = 0.5 / 1.5; u1 has c: 1 click, mass
    # 0.5; b: 2 clicks, mass 1.5; u2 has c: 1 click, mass 1
    with pytest.warns(UserWarning):
        own = evaluate(logs, RUN, metric="clicks@2", propensities={1: 1, 2: 0.5, 3: 0.25},
                       estimator="dr", max_rank=3)
    rate = 4 / 3
    y = np.array([3.5 + rate + (1 / 1.5) * (1 - rate * 0.5) + (0.5 / 1.5) * (2 - rate * 1.5),
                  1 + 0.5 * rate + (1 / 1.5) * (1 - rate * 1)])
    r = y.sum() / n.sum()
    assert own.value == pytest.approx(6.5 / 3) and r == pytest.approx(6.5 / 3)
    assert own.se == pytest.approx(np.sqrt(((y - r * n) / n.mean()).var(ddof=1) / 2))
    assert own.unsupported_share == 0 and own.model.startswith("pbm on this log")


def test_unused_clicks_repeats_and_unseen_pairs_are_counted():
    searches = pd.DataFrame({"search_id": ["s1", "s2"], "user_id": ["u1", "u2"],
                             "query": ["q", "q"]})
    # s1 shows b twice (ranks 1 and 3) and c at 4, a rank without a propensity; s2 shows c
    # at 5, beyond max_rank 4. Every one of those is clicked.
    results = pd.DataFrame({"search_id": ["s1"] * 4 + ["s2"] * 5,
                            "rank": [1, 2, 3, 4, 1, 2, 3, 4, 5],
                            "doc_id": ["b", "a", "b", "c", "a", "x", "y", "z", "c"]})
    clicks_ = pd.DataFrame({"search_id": ["s1", "s1", "s1", "s2"], "rank": [1, 3, 4, 5]})
    logs = onlineeval.load_logs(searches=searches, results=results, clicks=clicks_)
    prop = {1: 1.0, 2: 0.5, 3: 0.25}
    # ips: only s1's b at 1 counts (candidate rank 2: w = 0.5 / 1); 1 of 4 slots supported.
    # snips: b's rate is 1 click over mass 1, value(q) = 0.5 x 1 on both pages; c was never
    # shown usably: 2 of 4 slots unsupported
    for est, value, unsupported in (("ips", 0.5 / 2, 3 / 4), ("snips", 0.5, 2 / 4)):
        with pytest.warns(UserWarning) as got:
            res = evaluate(logs, RUN, metric="clicks@2", propensities=prop, estimator=est,
                           max_rank=4)
        text = " ".join(str(w.message) for w in got)
        assert "1 result rows repeat a candidate document" in text
        assert "2 candidate top-2 documents shown at logged ranks without a positive " \
            "propensity (ranks 4 up to max_rank=4) or beyond max_rank, with 2 clicks, are " \
            "not used" in text
        assert res.clicks_without_propensity == 2 and res.repeated_results == 1
        assert res.shown_without_propensity == 2 and res.ranks_without_propensity == "4"
        assert res.weighted_clicks == 1
        assert res.value == pytest.approx(value)
        assert res.unsupported_share == pytest.approx(unsupported)
    with pytest.warns(UserWarning) as got:
        res = evaluate(logs, RUN, metric="clicks@2", propensities=prop, estimator="dr",
                       max_rank=4, model=model({"a": 0.3, "b": 0.5}))
    # c is not in the model: its prior 0.5 stands for it on both pages (half the slots)
    assert res.model_unseen_share == pytest.approx(0.5)
    assert "50.0% of the candidate's top-2 slots hold a (query, doc) the click model" in \
        " ".join(str(w.message) for w in got)
    # per page the model says 1 x 0.5 (c) + 0.5 x 0.5 (b); s1's b at 1, clicked, corrects
    # by w = 0.5 / 1 times the residual 1 - 1 x 0.5
    assert res.value == pytest.approx((2 * 0.75 + 0.5 * 0.5) / 2)


def test_a_zero_propensity_is_a_rank_without_support_counted_and_reported(tmp_path):
    """A propensity of 0 (a rank never examined) is read, and a slot shown there is
    unsupported: counted, reported, and the estimate is the one without that rank."""
    from onlineeval.counterfactual import read_propensities

    # s1 = [a, b, c]: c, the candidate's first, at rank 3, clicked; s2 = [c, b]
    searches = pd.DataFrame({"search_id": ["s1", "s2"], "user_id": ["u1", "u2"],
                             "query": ["q", "q"]})
    results = pd.DataFrame({"search_id": ["s1"] * 3 + ["s2"] * 2, "rank": [1, 2, 3, 1, 2],
                            "doc_id": ["a", "b", "c", "c", "b"]})
    clicks_ = pd.DataFrame({"search_id": ["s1", "s1", "s2"], "rank": [3, 2, 1]})
    logs = onlineeval.load_logs(searches=searches, results=results, clicks=clicks_)
    path = tmp_path / "p.csv"
    path.write_text("rank,propensity\n1,1\n2,0.5\n3,0\n")
    assert read_propensities(path)[3] == 0
    for est, value, unsupported in (
            # ips: b@2 on s1 (w 1), c@1 on s2 (w 1); c on s1 counts 0: (1 + 1) / 2 pages
            ("ips", 2 / 2, 1 / 4),
            # snips: c 1 click over mass 1 (s2 only), b 1 click over mass 0.5 + 0.5:
            # value(q) = 1 x 1 + 0.5 x 1 on both pages
            ("snips", 1.5, 0),
            # dr, the log's own model: ips plus c's slot on s1 at p_c x rate = 1 x 1
            ("dr", 3 / 2, 0)):
        with pytest.warns(UserWarning) as got:
            res = evaluate(logs, RUN, metric="clicks@2", propensities=str(path),
                           estimator=est, max_rank=3)
        assert "1 candidate top-2 documents shown at logged ranks without a positive " \
            "propensity (ranks 3 up to max_rank=3) or beyond max_rank, with 1 clicks" in \
            " ".join(str(w.message) for w in got)
        assert (res.shown_without_propensity, res.clicks_without_propensity) == (1, 1)
        assert res.ranks_without_propensity == "3"
        assert res.value == pytest.approx(value)
        assert res.unsupported_share == pytest.approx(unsupported)
        assert res.propensities["rank"].tolist() == [1, 2]
        # the same as leaving rank 3 out
        with pytest.warns(UserWarning):
            same = evaluate(logs, RUN, metric="clicks@2", propensities={1: 1.0, 2: 0.5},
                            estimator=est, max_rank=3)
        assert same.value == res.value and same.se == res.se
    # a candidate rank must be examined: 0 there is refused, in one line
    with pytest.raises(InvalidParameterError, match=r"propensity > 0 for every rank 1..2; "
                       r"got \[1.0, 0.0\] \(choose a smaller K"):
        evaluate(logs, RUN, metric="clicks@2", propensities={1: 1.0, 2: 0.0})
    path.write_text("rank,propensity\n1,1\n2,-0.5\n")
    with pytest.raises(InputError, match="row 3: rank must be a whole number >= 1 and "
                       "propensity a finite number >= 0"):
        read_propensities(path)


def test_pages_without_a_query_or_a_unit_are_left_out_and_counted():
    """A NULL query is a page the candidate does not rank; a NULL unit has no cluster: both
    are counted and warned about, and the estimate is the one of the log without them."""
    searches = SEARCHES.assign(session=["v1", "v1", "v2", "v2"])
    extra = pd.DataFrame({"search_id": ["s5", "s6"], "user_id": ["u3", "u3"],
                          "query": [None, "q"], "session": ["v3", None]})
    results = pd.concat([RESULTS, pd.DataFrame({"search_id": ["s5", "s6", "s6"],
                                                "rank": [1, 1, 2],
                                                "doc_id": ["c", "c", "b"]})])
    clicks_ = pd.concat([clicks((1, 1, 1, 1)),
                         pd.DataFrame({"search_id": ["s5", "s6"], "rank": [1, 1]})])
    logs = onlineeval.load_logs(searches=pd.concat([searches, extra]), results=results,
                                clicks=clicks_)
    base = onlineeval.load_logs(searches=searches, results=RESULTS, clicks=clicks((1, 1, 1, 1)))
    prop = {1: 1, 2: 0.5, 3: 0.25}
    for est in ("ips", "snips", "dr"):
        with pytest.warns(UserWarning) as got:
            res = evaluate(logs, RUN, metric="clicks@2", propensities=prop, estimator=est,
                           max_rank=3, unit="session")
        said = " | ".join(str(w.message) for w in got)
        assert "2 pages have no query or one the candidate run does not rank" in said
        assert "1 pages have no value of the unit column 'session'; they are left out" in said
        assert (res.pages_without_candidate, res.pages_without_unit) == (2, 1)
        with pytest.warns(UserWarning):
            want = evaluate(base, RUN, metric="clicks@2", propensities=prop, estimator=est,
                            max_rank=3, unit="session")
        assert (res.value, res.se, res.pages, res.units) == (want.value, want.se, 3, 2)
