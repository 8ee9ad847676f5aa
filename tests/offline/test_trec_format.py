"""Readers of TREC qrels and run files: parsing rules and bad-input errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from onlineeval.errors import LogFormatError, SchemaError
from onlineeval.offline import read_qrels, read_run
from onlineeval.offline import trec_format as tf


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_read_golden_collection(tmp_path):
    from pathlib import Path
    data = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
    q = read_qrels(data / "qrels.test")
    r = read_run(data / "results.trunc")
    assert list(q.columns) == ["qid", "docno", "rel"]
    assert list(r.columns) == ["qid", "docno", "rank", "score", "tag"]
    assert len(q) == sum(1 for _ in open(data / "qrels.test"))
    assert len(r) == sum(1 for _ in open(data / "results.trunc"))
    assert q["rel"].dtype == np.int64 and r["score"].dtype == np.float64
    assert set(q["rel"]) == {0, 1}
    assert set(read_qrels(data / "qrels.rel_level")["rel"]) == {-1, 0, 1, 2, 3, 4}
    # junk after the sixth field is ignored, as trec_eval ignores it
    assert set(r["tag"]) == {"STANDARD"}
    assert r["score"].iloc[0] == pytest.approx(2.138276)


def test_irregular_whitespace_comments_and_blank_lines(tmp_path):
    path = write(tmp_path, "run.txt",
                 "# a comment\n\nq1  Q0\td1 1   2.5 tagA\n  # indented comment\n"
                 "q1 Q0 d2 2 -1e-3 tagB extra words\n")
    r = read_run(path)
    assert r["docno"].tolist() == ["d1", "d2"]
    assert r["score"].tolist() == [2.5, -0.001]
    assert r["rank"].tolist() == ["1", "2"]
    cols = tf.load_run(path)
    assert cols.runid == "tagB"  # the tag of the last line, as trec_eval


@pytest.mark.parametrize("text, line, needle", [
    ("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 t\n", 2, "expected 6"),
    ("q1 Q0 d1 1 abc t\n", 1, "score (5th field) must be a number, found 'abc'"),
    ("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 nan t\n", 2, "must be a number"),
    ("# c\n\nq1 Q0 d1 1 1_0 t\n", 3, "must be a number"),
])
def test_run_errors_name_file_and_line(tmp_path, text, line, needle):
    path = write(tmp_path, "bad.run", text)
    with pytest.raises(LogFormatError) as err:
        read_run(path)
    assert err.value.line == line
    assert str(err.value).startswith(f"{path}:{line}: ")
    assert needle in str(err.value)
    # the engine's loader gives the same error (fast path falls back to the scanner)
    with pytest.raises(LogFormatError, match=f":{line}: "):
        tf.load_run(path)


@pytest.mark.parametrize("text, line, needle", [
    ("q1 0 d1 1\nq1 0 d2\n", 2, "expected 4"),
    ("q1 0 d1 1 extra\n", 1, "expected 4"),
    ("q1 0 d1 1\nq1 0 d2 1.5\n", 2, "must be an integer"),
    ("q1 0 d1 high\n", 1, "must be an integer"),
])
def test_qrels_errors_name_file_and_line(tmp_path, text, line, needle):
    path = write(tmp_path, "bad.qrels", text)
    with pytest.raises(LogFormatError) as err:
        read_qrels(path)
    assert err.value.line == line and needle in str(err.value)
    with pytest.raises(LogFormatError, match=f":{line}: "):
        tf.load_qrels(path)


def test_error_deep_in_a_clean_file_is_located(tmp_path):
    # a file that looks clean on its first line goes to the fast reader; the bad line 1500
    # must still be reported with its number
    lines = [f"q1 Q0 d{i} {i} {1.0 / (i + 1)} run\n" for i in range(2000)]
    lines[1499] = "q1 Q0 d1499 1499 oops run\n"
    path = write(tmp_path, "big.run", "".join(lines))
    with pytest.raises(LogFormatError, match=r":1500: score .* 'oops'"):
        tf.load_run(path)


def test_fast_and_scanner_paths_agree(tmp_path):
    rng = np.random.default_rng(3)
    lines = [f"q{q} Q0 doc{d} {d} {rng.normal():.3f} tag\n" for q in range(5) for d in range(40)]
    clean = write(tmp_path, "clean.run", "".join(lines))
    messy = write(tmp_path, "messy.run", "".join(ln.replace(" ", "  \t") for ln in lines))
    fast = tf.load_run(clean)
    slow = tf.load_run(messy)
    assert not isinstance(fast.qid, np.ndarray)  # pyarrow fast path used for the clean file
    assert isinstance(slow.qid, np.ndarray)  # line scanner for the messy one
    assert list(map(str, fast.qid.to_pylist())) == slow.qid.tolist()
    assert list(fast.docno.to_pylist()) == slow.docno.tolist()
    assert np.array_equal(fast.value, slow.value)
    assert fast.runid == slow.runid == "tag"


@pytest.mark.parametrize("text, needle", [
    ("", "file is empty"),
    ("# only a comment\n\n", "no run lines"),
])
def test_empty_inputs(tmp_path, text, needle):
    with pytest.raises(LogFormatError, match=needle):
        read_run(write(tmp_path, "x.run", text))


def test_missing_file(tmp_path):
    with pytest.raises(LogFormatError, match="file not found"):
        read_qrels(tmp_path / "nope.qrels")


def test_dataframe_and_dict_inputs():
    df = pd.DataFrame({"qid": [1, 1], "docno": ["a", "b"], "score": ["2.5", 1]})
    r = read_run(df)
    assert r["qid"].tolist() == ["1", "1"] and r["score"].tolist() == [2.5, 1.0]
    q = read_qrels({"q1": {"a": 2, "b": 0}})
    assert q.to_dict("list") == {"qid": ["q1", "q1"], "docno": ["a", "b"], "rel": [2, 0]}


@pytest.mark.parametrize("source, needle", [
    (pd.DataFrame({"qid": ["1"], "doc": ["a"], "score": [1.0]}), "missing docno"),
    (pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, "x"]}),
     "row 1: 'x' is not a number"),
    (pd.DataFrame({"qid": ["1"], "docno": ["a b"], "score": [1.0]}), "whitespace"),
    ({"q1": [1, 2]}, "must map qid"),
    (42, "must be a file path, a DataFrame"),
])
def test_run_frame_errors(source, needle):
    with pytest.raises(SchemaError, match=needle):
        read_run(source)


def test_qrels_frame_non_integer_grade():
    with pytest.raises(SchemaError, match="row 1: grade 0.5 is not an integer"):
        read_qrels(pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [1, 0.5]}))


def test_public_readers_same_frame_on_fast_and_scanner_paths(tmp_path):
    lines = [f"q{q} Q0 doc{d} {d} {d / 7:.4f} tag{q}\n" for q in range(3) for d in range(5)]
    clean = write(tmp_path, "clean.run", "".join(lines))
    messy = write(tmp_path, "messy.run", "".join(ln.replace(" ", "\t ") for ln in lines))
    pd.testing.assert_frame_equal(read_run(clean), read_run(messy))
    qlines = [f"q{q} 0 doc{d} {d % 3 - 1}\n" for q in range(3) for d in range(5)]
    qclean = write(tmp_path, "clean.qrels", "".join(qlines))
    qmessy = write(tmp_path, "messy.qrels", "".join("  " + ln for ln in qlines))
    pd.testing.assert_frame_equal(read_qrels(qclean), read_qrels(qmessy))
