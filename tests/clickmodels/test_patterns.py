"""The SQL pass that groups pages into click patterns (sql/clickmodels/patterns.sql)."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

import onlineeval
from onlineeval.clickmodels import read_patterns
from onlineeval.errors import InvalidParameterError, SchemaError


def _as_python(p) -> Counter:
    """Pattern -> pages, read back from the arrays."""
    out: Counter = Counter()
    for i in range(p.n_patterns):
        row = []
        for k in range(p.mask.shape[1]):
            if p.mask[i, k]:
                q, d = p.pairs.iloc[p.pair[i, k]]
                row.append((int(p.rank[i, k]), d, bool(p.click[i, k])))
        out[(q, tuple(row))] += int(p.weight[i])
    return out


def test_patterns_group_identical_pages_and_match_an_independent_grouping(sim):
    pages = sim.simulate_pages("dbn", {
        "alpha": {(q, d): 0.5 for q in ("q1", "q2") for d in "abc"},
        "sigma": {(q, d): 0.5 for q in ("q1", "q2") for d in "abc"}, "gamma": 0.8,
    }, {"q1": list("abc"), "q2": list("abc")}, n_pages=500, k=3, seed=1)
    p = read_patterns(sim.load(pages))
    want = Counter((q, tuple((r + 1, d, bool(c[r])) for r, d in enumerate(docs)))
                   for q, docs, c in pages)
    assert _as_python(p) == want
    assert p.pages == 500 and p.n_patterns == len(want) < 500


def test_ids_holding_the_key_separators_never_merge_pages():
    # without the length prefix both pages would read "1:0:a|2:0:b"
    searches = pd.DataFrame({"search_id": ["s1", "s2"], "user_id": ["u", "u"],
                             "query": ["q", "q"]})
    results = pd.DataFrame({"search_id": ["s1", "s2", "s2"], "rank": [1, 1, 2],
                            "doc_id": ["a|2:0:b", "a", "b"]})
    clicks = pd.DataFrame({"search_id": ["s2"], "rank": [2]})
    p = read_patterns(onlineeval.load_logs(searches=searches, results=results, clicks=clicks))
    assert _as_python(p) == Counter({("q", ((1, "a|2:0:b", False),)): 1,
                                     ("q", ((1, "a", False), (2, "b", True))): 1})


def test_repeated_clicks_gaps_and_integer_ids():
    searches = pd.DataFrame({"search_id": [1, 2], "user_id": [1, 2], "query": ["q", "q"]})
    results = pd.DataFrame({"search_id": [1, 1, 1, 2, 2, 2], "rank": [1, 2, 4, 1, 2, 4],
                            "doc_id": [10, 20, 40, 10, 20, 40]})
    # page 1: rank 4 clicked three times, then rank 1; page 2: rank 4 once, then rank 1
    clicks = pd.DataFrame({"search_id": [1, 1, 1, 1, 2, 2], "rank": [4, 4, 4, 1, 4, 1]})
    p = read_patterns(onlineeval.load_logs(searches=searches, results=results, clicks=clicks))
    assert _as_python(p) == Counter({("q", ((1, 10, True), (2, 20, False), (4, 40, True))): 2})
    assert p.rank.tolist() == [[1, 2, 4]]
    assert p.prev_click_rank().tolist() == [[0, 1, 1]]


def test_pages_left_out_are_counted_and_warned_about():
    searches = pd.DataFrame({"search_id": ["s1", "s2", "s3", "s4"], "user_id": "u",
                             "query": ["q", None, "q", "q"]})
    results = pd.DataFrame({"search_id": ["s1", "s1", "s2", "s4"], "rank": [1, 12, 1, 11],
                            "doc_id": ["a", "b", "a", "c"]})
    clicks = pd.DataFrame({"search_id": ["s1", "s4"], "rank": [12, 11]})
    logs = onlineeval.load_logs(searches=searches, results=results, clicks=clicks)
    with pytest.warns(UserWarning) as record:
        p = read_patterns(logs)
    text = " ".join(str(w.message) for w in record)
    assert "3 of 4 pages left out (1 without a query; 2 without results at ranks 1..10)" in text
    assert "2 results rows and 2 clicks at ranks beyond max_rank=10" in text
    assert p.counts == {"pages": 4, "no_query": 1, "no_results": 2, "used": 1,
                        "results_beyond_max_rank": 2, "clicks_beyond_max_rank": 2}
    assert p.pages == 1
    with pytest.warns(UserWarning, match="2 of 4 pages left out"):
        p12 = read_patterns(logs, max_rank=12)
    assert p12.pages == 2 and p12.counts["results_beyond_max_rank"] == 0


def test_a_log_without_query_or_results_is_an_error():
    searches = pd.DataFrame({"search_id": ["s1"], "user_id": ["u"]})
    clicks = pd.DataFrame({"search_id": ["s1"], "rank": [1]})
    with pytest.raises(SchemaError, match="results table"):
        read_patterns(onlineeval.load_logs(searches=searches, clicks=clicks))
    results = pd.DataFrame({"search_id": ["s1"], "rank": [1], "doc_id": ["a"]})
    with pytest.raises(SchemaError, match="no searches.query"):
        read_patterns(onlineeval.load_logs(searches=searches, results=results, clicks=clicks))
    with pytest.raises(InvalidParameterError, match="max_rank"):
        read_patterns(onlineeval.load_logs(searches=searches.assign(query="q"),
                                           results=results, clicks=clicks), max_rank=0)
