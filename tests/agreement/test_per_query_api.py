"""The per-query online deltas are asked of onlineeval.agreement.per_query, and what they read
does not depend on what ran before on the same logs.

The interleaving Δ_q reads the page outcomes of its experiment; a readout of another
experiment, or of another window, may have left other page outcomes defined on the log's
connection. The report used to run its per-query SQL on whatever was defined there.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import onlineeval
from onlineeval.agreement import per_query_ab_ctr, per_query_interleaving, within_experiment
from onlineeval.interleaving import outcomes

TS = pd.Timestamp("2026-03-01 10:00")


def _logs():
    # experiment e: q1 T wins (day 1), q1 C wins (day 2), q2 T wins (day 2)
    # experiment f: q1 C wins, q2 C wins (the other way round)
    pages = [("s1", "e", "q1", "T", 0), ("s2", "e", "q1", "C", 1), ("s3", "e", "q2", "T", 1),
             ("s4", "f", "q1", "C", 0), ("s5", "f", "q2", "C", 0)]
    searches = pd.DataFrame({
        "search_id": [p[0] for p in pages], "user_id": [f"u{i}" for i in range(len(pages))],
        "ts": [TS + pd.Timedelta(days=p[4], minutes=i) for i, p in enumerate(pages)],
        "query": [p[2] for p in pages], "experiment": [p[1] for p in pages],
    })
    results = pd.DataFrame({
        "search_id": [p[0] for p in pages for _ in range(2)], "rank": [1, 2] * len(pages),
        "doc_id": [f"d{i}" for i in range(2 * len(pages))], "team": ["T", "C"] * len(pages),
    })
    rank = {"T": 1, "C": 2}
    clicks = pd.DataFrame({"search_id": [p[0] for p in pages],
                           "rank": [rank[p[3]] for p in pages],
                           "ts": [TS + pd.Timedelta(days=p[4], minutes=i, seconds=5)
                                  for i, p in enumerate(pages)]})
    return onlineeval.load_logs(searches=searches, results=results, clicks=clicks)


def _deltas(online) -> dict[str, float]:
    return online.table.set_index("qid")[online.value].to_dict()


def test_delta_q_by_hand():
    got = per_query_interleaving(_logs(), "e", "T", "C")
    assert _deltas(got) == {"q1": pytest.approx(0.0), "q2": pytest.approx(0.5)}
    assert got.table.set_index("qid")["pages"].to_dict() == {"q1": 2, "q2": 1}
    assert (got.unit, got.counts) == ("pages", ("pages",))


@pytest.mark.parametrize("before", [
    {"experiment": "f"},                                      # another experiment's readout
    {"experiment": "e", "start": "2026-03-02"},               # the same one, another window
    {"experiment": None},                                     # every experiment at once
])
def test_what_ran_before_does_not_change_the_deltas(before):
    logs = _logs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcomes.page_outcomes(logs, before.pop("experiment"), **before)
    got = per_query_interleaving(logs, "e", "T", "C")
    assert _deltas(got) == {"q1": pytest.approx(0.0), "q2": pytest.approx(0.5)}


def test_the_readouts_page_outcomes_are_reused_when_they_are_the_same(monkeypatch):
    logs = _logs()
    onlineeval.interleaving_readout(logs, "e", n_resamples=10)
    calls = []
    real = outcomes.page_outcomes
    monkeypatch.setattr(outcomes, "page_outcomes",
                        lambda *a, **k: calls.append((a[1:], k)) or real(*a, **k))
    per_query_interleaving(logs, "e", "T", "C")
    assert calls == []  # the log is not counted again for the same experiment and window
    per_query_interleaving(logs, "e", "T", "C", start="2026-03-02")
    assert len(calls) == 1  # another window: defined again
    got = per_query_interleaving(logs, "e", "T", "C", start="2026-03-02")
    assert _deltas(got) == {"q1": pytest.approx(-0.5), "q2": pytest.approx(0.5)}
    assert len(calls) == 1


def test_ab_ctr_and_within_experiment():
    searches = pd.DataFrame({
        "search_id": list("abcd"), "user_id": list("wxyz"),
        "ts": [TS + pd.Timedelta(minutes=i) for i in range(4)],
        "query": ["q1", "q1", "q2", "q1"], "experiment": "e",
        "variant": ["control", "treatment", "treatment", "control"],
    })
    clicks = pd.DataFrame({"search_id": ["b", "d"], "rank": [1, 1], "ts": TS})
    logs = onlineeval.load_logs(searches=searches, clicks=clicks)
    online = per_query_ab_ctr(logs, "e", "control", "treatment")
    # q1: control 1 of 2 clicked, treatment 1 of 1 -> +0.5; q2: treatment only -> undefined
    deltas = _deltas(online)
    assert deltas["q1"] == pytest.approx(0.5) and pd.isna(deltas["q2"])
    w = within_experiment(pd.Series({"q1": 0.2, "q2": -0.1}), online)
    assert (w["n"], w["n_agree"], w["n_online_undefined"], w["n_undefined_judged"]) == \
        (1, 1, 1, 1)
    assert (w["online_undefined_reason"], w["without_query_unit"]) == ("in one arm only",
                                                                       "searches")
