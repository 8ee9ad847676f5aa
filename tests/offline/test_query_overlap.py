"""When the qrels and the run disagree on their queries, the user hears about it.

* no judged query has results: an error without ``complete`` (as trec_eval), a
  NoSharedQueriesWarning with it (trec_eval -c prints numbers for stand-in rankings only);
* judged queries without results, no ``complete``: a SkippedQueriesWarning with the count
  (trec_eval 10.0 stops with an error; onlineeval skips them, as trec_eval 9 did);
* run queries nobody judged: ignored silently, as trec_eval does (a run over more queries than
  were judged is normal).

The numbers are worked out by hand below; tests/offline/test_trec_eval_golden.py checks the
same cases against trec_eval 10.0's output.
"""

from __future__ import annotations

import contextlib
import warnings

import pytest

from onlineeval.errors import InputError
from onlineeval.offline import (
    NoSharedQueriesWarning,
    QueryMismatchWarning,
    SkippedQueriesWarning,
    compare,
    evaluate,
)
from onlineeval.offline.ranking import prepare
from onlineeval.offline.trec_eval import trec_eval

QRELS = {"1": {"a": 1, "b": 0}, "2": {"a": 1, "c": 1}, "3": {"b": 1}}
# AP by hand: query 1 ranks a (relevant) first: 1; query 2 ranks c, x, a: (1/1 + 2/3) / 2
# = 5/6; query 3 ranks b second behind x: 1/2
RUN = {"1": {"a": 2.0, "b": 1.0}, "2": {"c": 3.0, "x": 2.0, "a": 1.0}, "3": {"x": 2.0, "b": 1.0}}
AP = {"1": 1.0, "2": 5 / 6, "3": 0.5}


@contextlib.contextmanager
def no_mismatch_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", QueryMismatchWarning)
        yield


def test_the_warnings_are_user_warnings():
    assert issubclass(QueryMismatchWarning, UserWarning)
    assert issubclass(NoSharedQueriesWarning, QueryMismatchWarning)
    assert issubclass(SkippedQueriesWarning, QueryMismatchWarning)


def test_no_shared_query_is_an_error_without_complete():
    run = {"q1": {"a": 1.0}, "q2": {"a": 1.0}}
    with pytest.raises(InputError, match="no query has both") as err:
        evaluate(QRELS, run, ["map"])
    # a few qids of both sides show what does not match
    assert "3 queries, e.g. '1', '2', '3'" in str(err.value)
    assert "2 queries, e.g. 'q1', 'q2'" in str(err.value)


def test_no_shared_query_under_complete_warns_and_names_both_sides():
    run = {f"q{i}": {"a": 1.0} for i in range(1, 6)}
    with pytest.warns(NoSharedQueriesWarning) as rec:
        got = evaluate(QRELS, run, ["map", "P@5"], complete=True)
    assert len(rec) == 1
    message = str(rec[0].message)
    assert "3 queries, e.g. '1', '2', '3'" in message
    assert "5 queries, e.g. 'q1', 'q2', 'q3', ..." in message
    assert rec[0].filename == __file__          # attributed to the caller, not onlineeval
    # the numbers are trec_eval -c's: every query on the stand-in ranking scores 0
    assert got["num_q"].iloc[0] == 3 and got["map"].iloc[0] == 0.0
    with pytest.warns(NoSharedQueriesWarning) as rec:
        trec_eval(QRELS, run, ["map"], complete=True)
    assert rec[0].filename == __file__


def test_compare_warns_when_a_run_shares_no_query():
    other = {f"q{q}": docs for q, docs in RUN.items()}
    with pytest.warns(NoSharedQueriesWarning, match="'q1'"):
        compare(QRELS, RUN, other, ["map"])


def test_judged_queries_missing_from_the_run_are_counted_in_a_warning():
    run = {q: RUN[q] for q in ("1", "3")}
    with pytest.warns(SkippedQueriesWarning) as rec:
        got = evaluate(QRELS, run, ["map"])
    assert len(rec) == 1
    message = str(rec[0].message)
    assert message.startswith("1 of 3 judged queries in qrels have no results in run")
    assert "e.g. '2'" in message and "covers the other 2" in message
    assert "complete=True" in message
    assert rec[0].filename == __file__
    # skipped: the mean over the two answered queries
    assert got["num_q"].iloc[0] == 2
    assert got["map"].iloc[0] == pytest.approx((AP["1"] + AP["3"]) / 2, abs=1e-15)
    # complete=True scores query 2 as 0 and says nothing: the user asked for it
    with no_mismatch_warning():
        full = evaluate(QRELS, run, ["map"], complete=True)
    assert full["num_q"].iloc[0] == 3
    assert full["map"].iloc[0] == pytest.approx((AP["1"] + AP["3"]) / 3, abs=1e-15)


def test_run_queries_nobody_judged_are_ignored_silently():
    run = dict(RUN, extra={"a": 1.0}, other={"z": 2.0})
    with no_mismatch_warning():
        got = evaluate(QRELS, run, ["map"], per_query=True)
        ranked = prepare(QRELS, run)
    assert got["qid"].tolist() == ["1", "2", "3"]
    assert got["map"].tolist() == pytest.approx([AP[q] for q in "123"], abs=1e-15)
    assert ranked.ignored_run_queries == 2
