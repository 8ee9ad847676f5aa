"""ranked_lists against an independent strcmp ranking and against the offline engine's order."""

from __future__ import annotations

import functools

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onlineeval.errors import LogFormatError, SchemaError
from onlineeval.offline.ranked_lists import ranked_lists
from onlineeval.offline.ranking import prepare


def _strcmp(a: str, b: str) -> int:
    """C strcmp on the UTF-8 bytes, written out byte by byte."""
    x, y = a.encode("utf-8"), b.encode("utf-8")
    for i in range(min(len(x), len(y))):
        if x[i] != y[i]:
            return -1 if x[i] < y[i] else 1
    return (len(x) > len(y)) - (len(x) < len(y))


def _reference(rows: list[tuple[str, str, float]]) -> dict[str, list[str]]:
    """trec_eval's form_res_rels order, by comparison: score desc, then strcmp(b, a)."""

    def before(r: tuple[str, str, float], s: tuple[str, str, float]) -> int:
        if r[2] != s[2]:
            return -1 if r[2] > s[2] else 1
        return _strcmp(s[1], r[1])

    out: dict[str, list[str]] = {}
    for q in sorted({r[0] for r in rows}, key=functools.cmp_to_key(_strcmp)):
        mine = sorted((r for r in rows if r[0] == q), key=functools.cmp_to_key(before))
        out[q] = [r[1] for r in mine]
    return out


def test_ties_by_docno_descending_in_byte_order_by_hand():
    # all tied at 1.0: byte order d1 < d10 < d9 < é (0xc3 0xa9) < \ue000 (0xee ...), so
    # descending is \ue000, é, d9, d10, d1; 'z' has the higher score and comes first
    run = {"q": {"d1": 1.0, "d10": 1.0, "d9": 1.0, "é": 1.0, "\ue000": 1.0, "z": 2.0}}
    assert ranked_lists(run) == {"q": ["z", "\ue000", "é", "d9", "d10", "d1"]}
    # -0.0 and 0.0 are equal scores (tie broken by docno), the rank column is ignored
    frame = pd.DataFrame({"qid": ["10", "10", "9"], "docno": ["a", "b", "c"],
                          "score": [0.0, -0.0, 3.0], "rank": [1, 2, 1]})
    out = ranked_lists(frame)
    assert out == {"10": ["b", "a"], "9": ["c"]}
    assert list(out) == ["10", "9"]  # qids in byte order, as trec_eval evaluates them


_DOCS = st.sampled_from(["a", "b", "B", "d1", "d10", "d9", "é", "ß", "\ue000", "0"])
_QIDS = st.sampled_from(["1", "2", "10", "q", "Q"])
_SCORES = st.sampled_from([0.0, -0.0, 1.0, 1.5, -2.0, 1e300, float("inf")])


@st.composite
def _runs(draw):
    rows = []
    for q in draw(st.sets(_QIDS, min_size=1, max_size=4)):
        for d in draw(st.sets(_DOCS, min_size=1, max_size=8)):
            rows.append((q, d, draw(_SCORES)))
    return draw(st.permutations(rows))


@settings(max_examples=150, deadline=None)
@given(_runs())
def test_matches_an_independent_ranking_for_every_input_form(rows):
    expected = _reference(rows)
    frame = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    nested: dict[str, dict[str, float]] = {}
    for q, d, s in rows:
        nested.setdefault(q, {})[d] = s
    assert ranked_lists(frame) == expected
    assert list(ranked_lists(frame)) == list(expected)
    assert ranked_lists(nested) == expected


def test_file_input_matches_the_reference_and_the_engine(tmp_path):
    rows = [("q1", "d9", 0.5), ("q1", "d10", 0.5), ("q1", "x", 2.0), ("q1", "d1", 0.5),
            ("q2", "b", 1.0), ("q2", "a", 1.0), ("10", "z", -1.0), ("10", "y", 3.0)]
    path = tmp_path / "run.txt"
    # rank column deliberately contradicts the scores: it must be ignored
    path.write_text("".join(f"{q} Q0 {d} {i + 1} {s} t\n" for i, (q, d, s) in enumerate(rows)))
    out = ranked_lists(path)
    assert out == _reference(rows)
    # the offline engine's own ranking (trec_eval's), read back with keep_docnos
    qrels = {q: {"x": 1} for q in ("q1", "q2", "10")}
    ranked = prepare(qrels, path, keep_docnos=True)
    engine = {str(q): [str(d) for d in ranked.docno[ranked.offsets[i]:ranked.offsets[i + 1]]]
              for i, q in enumerate(ranked.qids)}
    assert out == engine


def test_errors_name_the_input():
    with pytest.raises(SchemaError, match=r"^my run column 'score' row 1: 'high'"):
        ranked_lists(pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"],
                                   "score": [1.0, "high"]}), what="my run")
    with pytest.raises(SchemaError, match=r"^my run dict must map qid"):
        ranked_lists({"q": 3}, what="my run")
    with pytest.raises(LogFormatError, match="nope.run"):
        ranked_lists("nope.run", what="my run")
    assert ranked_lists(pd.DataFrame({"qid": [], "docno": [], "score": []})) == {}
