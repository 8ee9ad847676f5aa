"""Readers of TREC qrels and run files: parsing rules and bad-input errors."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from onlineeval.errors import LogFormatError, SchemaError
from onlineeval.offline import arrow_arrays, evaluate, read_qrels, read_run, reading
from onlineeval.offline.reading import arrow_reader, byte_check, dictionary


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
    cols = reading.load_run(path)
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
        reading.load_run(path)


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
        reading.load_qrels(path)


def test_error_deep_in_a_clean_file_is_located(tmp_path):
    # a file that looks clean on its first line goes to the fast reader; the bad line 1500
    # must still be reported with its number
    lines = [f"q1 Q0 d{i} {i} {1.0 / (i + 1)} run\n" for i in range(2000)]
    lines[1499] = "q1 Q0 d1499 1499 oops run\n"
    path = write(tmp_path, "big.run", "".join(lines))
    with pytest.raises(LogFormatError, match=r":1500: score .* 'oops'"):
        reading.load_run(path)


def test_fast_and_scanner_paths_agree(tmp_path):
    rng = np.random.default_rng(3)
    lines = [f"q{q} Q0 doc{d} {d} {rng.normal():.3f} tag\n" for q in range(5) for d in range(40)]
    clean = write(tmp_path, "clean.run", "".join(lines))
    messy = write(tmp_path, "messy.run", "".join(ln.replace(" ", "  \t") for ln in lines))
    fast = reading.load_run(clean)
    slow = reading.load_run(messy)
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


@pytest.mark.parametrize("grade", [float("inf"), float("-inf"), 2**63, 2**64 + 1, 1e30, 10**400,
                                   10**5000], ids=["inf", "-inf", "2^63", "2^64+1", "1e30",
                                                   "10^400", "10^5000"])
def test_grades_int64_cannot_hold_are_refused_not_wrapped(grade):
    # they used to become int64's minimum (a negative grade: "unjudged") without a word, or
    # raise OverflowError; a qrels file refuses a grade that does not fit in 64 bits too
    for source in ({"q": {"a": grade, "b": 1}},
                   pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"],
                                 "rel": pd.Series([grade, 1], dtype=object)})):
        with pytest.raises(SchemaError, match=r"qrels column 'rel' row 0: .*(not an integer "
                                              r"that fits in 64 bits|too large)"):
            read_qrels(source)
        with pytest.raises(SchemaError):
            evaluate(source, {"q": {"a": 1.0, "b": 2.0}}, ["num_rel"])


def test_grades_at_the_int64_limits_are_read_exactly():
    q = read_qrels({"q": {"a": 2**63 - 1, "b": -(2**63), "c": 2.0**62}})
    assert q["rel"].tolist() == [2**63 - 1, -(2**63), 2**62]


def test_score_too_large_for_a_float_is_a_schema_error_naming_the_row():
    # pandas raised OverflowError (a traceback) on an int beyond float64's range
    with pytest.raises(SchemaError, match=r"run column 'score' row 1: 1000.*\.\.\. is too "
                                          r"large for a 64-bit number"):
        read_run({"q": {"a": 1.0, "b": 10**400}})
    with pytest.raises(SchemaError, match="row 1"):
        evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 10**400}}, ["map"])


def test_public_readers_same_frame_on_fast_and_scanner_paths(tmp_path):
    lines = [f"q{q} Q0 doc{d} {d} {d / 7:.4f} tag{q}\n" for q in range(3) for d in range(5)]
    clean = write(tmp_path, "clean.run", "".join(lines))
    messy = write(tmp_path, "messy.run", "".join(ln.replace(" ", "\t ") for ln in lines))
    pd.testing.assert_frame_equal(read_run(clean), read_run(messy))
    qlines = [f"q{q} 0 doc{d} {d % 3 - 1}\n" for q in range(3) for d in range(5)]
    qclean = write(tmp_path, "clean.qrels", "".join(qlines))
    qmessy = write(tmp_path, "messy.qrels", "".join("  " + ln for ln in qlines))
    pd.testing.assert_frame_equal(read_qrels(qclean), read_qrels(qmessy))


# --------------------------------------------------------------------------- fast reader internals
# The pyarrow reader encodes query ids through their runs of equal neighbours (hashing only
# one value per run) and converts arrow arrays to numpy from their buffers. Both are checked
# against the plain pyarrow operations; a tiny CSV block size makes many chunks, so runs and
# dictionaries cross chunk boundaries.

def _decoded(enc):
    return [enc.dictionary[i].as_py() for i in arrow_arrays.arrow_to_numpy(enc.indices)]


@pytest.mark.parametrize("layout", ["blocks", "split_query", "short_runs", "one_value"])
def test_run_encoding_matches_plain_dictionary_encoding(layout):
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng(4)
    if layout == "blocks":
        values = np.repeat([f"q{i}" for i in rng.permutation(50)], 40)
    elif layout == "split_query":   # one query in two places: runs repeat a value
        values = np.repeat(["a", "b", "a", "c"], 300)
    elif layout == "short_runs":    # too many runs: every row is hashed instead
        values = np.array([f"q{i}" for i in rng.integers(0, 30, 2000)])
    else:
        values = np.repeat(["only"], 777)
    pieces = np.array_split(values.tolist(), 7)       # chunks cut runs in the middle
    col = pa.chunked_array([pa.array(list(p), pa.string()) for p in pieces])
    enc = dictionary.dictionary_encode(col)
    assert _decoded(enc) == values.tolist()
    assert sorted(enc.dictionary.to_pylist()) == sorted(set(values.tolist()))
    plain = pc.dictionary_encode(col).combine_chunks()
    assert _decoded(enc) == _decoded(plain)


def test_arrow_to_numpy_matches_pyarrow():
    import pyarrow as pa

    for arr in [pa.array([3, -1, 7], pa.int32()), pa.array([1.5, -0.0, 2.0]),
                pa.array(np.arange(10, dtype=np.int64)).slice(3, 4),
                pa.array(np.arange(10, dtype=np.uint8)).slice(2),
                pa.chunked_array([pa.array([1, 2]), pa.array([3])]),
                pa.chunked_array([pa.array([0.5])]), pa.array([], pa.int64()),
                pa.array(["x", "y"])]:
        want = (arr.to_numpy() if isinstance(arr, pa.ChunkedArray)
                else arr.to_numpy(zero_copy_only=False))
        got = arrow_arrays.arrow_to_numpy(arr)
        assert got.tolist() == want.tolist() and got.dtype == want.dtype
    with_nulls = pa.array([4, None, 2, None, 9], pa.int32())
    for arr in [with_nulls, with_nulls.slice(1, 3), pa.array([1, 2], pa.int32())]:
        want = [-1 if v is None else v for v in arr.to_pylist()]
        assert arrow_arrays.arrow_index_to_numpy(arr).tolist() == want


@pytest.mark.parametrize("block", [1 << 10, 1 << 20])
def test_fast_reader_in_many_chunks_agrees_with_the_scanner(tmp_path, monkeypatch, block):
    monkeypatch.setattr(arrow_reader, "BLOCK_SIZE", block)
    rng = np.random.default_rng(9)
    qids = [f"q{i}" for i in rng.permutation(40)] + ["q3"]    # q3 comes back at the end
    lines = [f"{q} Q0 doc{d} {d} {rng.normal():.4f} tag{len(q)}\n"
             for q in qids for d in rng.choice(500, size=30, replace=False)]
    clean = write(tmp_path, "clean.run", "".join(lines))
    messy = write(tmp_path, "messy.run", "".join(ln.replace(" ", " \t") for ln in lines))
    fast, slow = reading.load_run(clean), reading.load_run(messy)
    assert not isinstance(fast.qid, np.ndarray) and isinstance(slow.qid, np.ndarray)
    assert [str(x) for x in fast.qid.to_pylist()] == slow.qid.tolist()
    assert fast.docno.to_pylist() == slow.docno.tolist()
    assert np.array_equal(fast.value, slow.value) and fast.runid == slow.runid
    qlines = [f"{q} 0 doc{d} {int(rng.integers(-1, 4))}\n" for q in qids[:-1]
              for d in range(0, 500, 9)]
    qclean = write(tmp_path, "clean.qrels", "".join(qlines))
    qmessy = write(tmp_path, "messy.qrels", "".join("\t" + ln for ln in qlines))
    qf, qs = reading.load_qrels(qclean), reading.load_qrels(qmessy)
    assert [str(x) for x in qf.qid.to_pylist()] == qs.qid.tolist()
    assert qf.docno.to_pylist() == qs.docno.tolist() and np.array_equal(qf.value, qs.value)


@pytest.mark.parametrize("bad, needle", [
    ("q7 Q0 doc1 1 oops tag\n", "score (5th field) must be a number"),
    ("q7 Q0 doc1 1\n", "expected 6"),
    ("#q7 Q0 doc1 1 0.5 tag\n", None),            # a comment line: skipped, not an error
    ("q7 Q0  doc1 1 0.5 tag\n", None),            # irregular spacing: read by the scanner
])
def test_bad_line_deep_in_a_many_chunk_file(tmp_path, monkeypatch, bad, needle):
    # the fast reader gives up on the file and the scanner reports file:line (or reads it)
    monkeypatch.setattr(arrow_reader, "BLOCK_SIZE", 1 << 10)
    lines = [f"q{i // 50} Q0 doc{i} {i} {1.0 / (i + 1)} run\n" for i in range(3000)]
    lines[2345] = bad
    path = write(tmp_path, "big.run", "".join(lines))
    if needle is None:
        cols = reading.load_run(path)
        assert len(cols) == 3000 - bad.startswith("#")
        return
    with pytest.raises(LogFormatError, match=f":2346: {re.escape(needle)}"):
        reading.load_run(path)


def test_engine_path_does_not_import_pandas(tmp_path):
    # evaluate() loads pandas in a background thread while reading; the engine itself (readers,
    # prepare, the measures) must not need it, or the overlap is lost
    import subprocess
    import sys

    write(tmp_path, "q.txt", "".join(f"q{i} 0 d{j} {j % 3}\n" for i in range(5) for j in range(8)))
    write(tmp_path, "r.txt", "".join(f"q{i} Q0 d{j} {j} {j / 3:.3f} t\n"
                                     for i in range(5) for j in range(6)))
    code = (
        "import sys\n"
        "from onlineeval.offline.measures.names import parse_measure\n"
        "from onlineeval.offline.ranking import prepare\n"
        "r = prepare(sys.argv[1], sys.argv[2])\n"
        "for m in ['map', 'ndcg_cut_10', 'P_10', 'recall_100', 'recip_rank', 'ndcg']:\n"
        "    parse_measure(m).compute(r)\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "q.txt"),
                          str(tmp_path / "r.txt")], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------- raw-byte check
# The fast reader skips the iter, rank and tag columns; a check on every byte of the file
# sends any line that pyarrow would split differently from the scanner (and trec_eval) to
# the scanner, whichever column it is in.

def _clean_run_lines(n=600):
    return [f"q{i // 60} Q0 doc{i} {i} {1.0 / (i + 1):.6f} run\n" for i in range(n)]


@pytest.mark.parametrize("bad, line_error", [
    ("q3 Q0 doc200  0.5 run\n", "expected 6"),            # empty rank field (double space)
    ("q3 Q0 doc200 1 0.5 run\x00x\n", "NUL"),             # NUL in the tag
    ("q3  Q0 doc200 1 0.5 run\n", None),                  # pyarrow: 7 fields; trec_eval: 6
    ("q3 Q0 doc200 1\t0.5 run\n", None),                  # tab inside a space-separated line
    ("q3 Q0\x0bdoc200 1 0.5 run\n", None),                # \v is whitespace for trec_eval
    ("q3 Q0 doc200 1 0.5 r\x0bx\n", None),                # ... also in the tag: tag "r"
])
def test_irregular_bytes_in_unread_columns_go_to_the_scanner(tmp_path, bad, line_error):
    lines = _clean_run_lines()
    lines[200] = bad
    path = write(tmp_path, "r.run", "".join(lines))
    if line_error is not None:
        with pytest.raises(LogFormatError, match=f":201: .*{line_error}"):
            reading.load_run(path)
        with pytest.raises(LogFormatError, match=":201: "):
            read_run(path)
        return
    cols = reading.load_run(path)
    assert isinstance(cols.qid, np.ndarray)           # the scanner read it
    assert cols.docno[200] == "doc200" and cols.value[200] == 0.5 and len(cols) == 600
    frame = read_run(path)
    assert frame["docno"].iloc[200] == "doc200" and frame["tag"].iloc[200] in ("run", "r")


def test_tab_in_the_tag_is_a_field_separator(tmp_path):
    # "run\tx" is two fields for trec_eval (the tag "run", then an ignored seventh field)
    lines = _clean_run_lines()
    lines[-1] = lines[-1].replace(" run\n", " last\tx\n")
    path = write(tmp_path, "r.run", "".join(lines))
    cols = reading.load_run(path)
    assert isinstance(cols.qid, np.ndarray)           # read by the scanner
    assert cols.runid == "last" and len(cols) == 600
    assert read_run(path)["tag"].iloc[-1] == "last"


def test_tab_separated_file_with_a_space_goes_to_the_scanner(tmp_path):
    lines = [ln.replace(" ", "\t") for ln in _clean_run_lines()]
    path = write(tmp_path, "tabs.run", "".join(lines))
    assert not isinstance(reading.load_run(path).qid, np.ndarray)   # clean: fast reader
    lines[300] = lines[300].replace("\trun\n", "\tr un\n")     # a space inside the tag
    path = write(tmp_path, "tabs2.run", "".join(lines))
    cols = reading.load_run(path)
    assert isinstance(cols.qid, np.ndarray) and len(cols) == 600


def test_non_ascii_whitespace_belongs_to_the_field_on_both_paths(tmp_path):
    # trec_eval splits with C isspace(): U+00A0 (no-break space) and \x1c are not separators
    lines = [f"q1 Q0 d\u00a0{i}\x1cz {i} {i / 10} run\n" for i in range(50)]
    clean = write(tmp_path, "u.run", "".join(lines))
    messy = write(tmp_path, "u2.run", "".join(ln.replace(" ", "  ") for ln in lines))
    fast, slow = reading.load_run(clean), reading.load_run(messy)
    assert not isinstance(fast.qid, np.ndarray) and isinstance(slow.qid, np.ndarray)
    assert fast.docno.to_pylist() == slow.docno.tolist() == [
        f"d\u00a0{i}\x1cz" for i in range(50)]
    assert np.array_equal(fast.value, slow.value)


@pytest.mark.parametrize("step", [1, 7, 1 << 20])
def test_byte_check_sees_doubled_delimiters_across_steps(tmp_path, monkeypatch, step):
    monkeypatch.setattr(byte_check, "CHECK_STEP", step)
    good = write(tmp_path, "g.run", "a b\nc d\n")
    assert byte_check.regular_bytes(good, " ")
    for text in ["a  b\n", "a b\n  c d\n", "a b\r\n", "a\tb\n", "a b\x0c\n"]:
        assert not byte_check.regular_bytes(write(tmp_path, "b.run", text), " "), repr(text)
    assert byte_check.regular_bytes(write(tmp_path, "t.run", "a\tb\nc\td\n"), "\t")
    for text in ["a\t\tb\n", "a b\tc\n"]:
        assert not byte_check.regular_bytes(write(tmp_path, "bt.run", text), "\t"), repr(text)


# --------------------------------------------------------------------------- text encoding
# trec_eval reads qids and docnos as raw bytes; onlineeval returns them as text, so a field it
# keeps that is not UTF-8 is a file:line error (not a UnicodeEncodeError from pyarrow/pandas).
# The expected line number is counted from the bytes in each test, independently of the reader.

def _line_of_first_non_ascii(data: bytes) -> int:
    first = next(i for i, byte in enumerate(data) if byte >= 0x80)
    return data[:first].count(b"\n") + 1


def _write_bytes(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return path


_RUN = b"".join(b"q%d Q0 doc%d %d %.3f run\n" % (i // 10, i, i, 1 / (i + 1)) for i in range(40))
_QRELS = b"".join(b"q%d 0 doc%d %d\n" % (i // 10, i, i % 3) for i in range(40))


@pytest.mark.parametrize("old, new, field", [
    (b"\nq2 Q0 doc25 ", b"\nq\xff2 Q0 doc25 ", "qid (1st field)"),
    (b" doc25 ", b" d\xe9c25 ", "docno (3rd field)"),          # Latin-1 e-acute
    (b" doc25 ", b" doc25\xc3 ", "docno (3rd field)"),         # a truncated 2-byte sequence
    (b" doc25 ", b" doc\xed\xa0\x8025 ", "docno (3rd field)"), # an encoded surrogate
])
@pytest.mark.parametrize("messy", [False, True])   # fast reader first, or the scanner only
def test_run_field_not_utf8_is_a_located_error(tmp_path, old, new, field, messy):
    data = _RUN.replace(old, new)
    if messy:
        data = data.replace(b" Q0 ", b"\tQ0  ")
    path = _write_bytes(tmp_path, "r.run", data)
    line = _line_of_first_non_ascii(data)
    assert line == 26
    want = f"{path}:{line}: {field} is not valid UTF-8"
    for read in (read_run, reading.load_run,
                 lambda p: evaluate(_write_bytes(tmp_path, "q.qrels", _QRELS), p, "map")):
        with pytest.raises(LogFormatError, match=re.escape(want) + ".*iconv") as err:
            read(path)
        assert err.value.line == line


@pytest.mark.parametrize("old, new, field", [
    (b"\nq3 0 doc30 ", b"\nq3\x80 0 doc30 ", "qid (1st field)"),
    (b" doc30 ", b" doc\xff30 ", "docno (3rd field)"),
])
def test_qrels_field_not_utf8_is_a_located_error(tmp_path, old, new, field):
    data = _QRELS.replace(old, new)
    path = _write_bytes(tmp_path, "q.qrels", data)
    line = _line_of_first_non_ascii(data)
    assert line == 31
    run = _write_bytes(tmp_path, "r.run", _RUN)
    for read in (read_qrels, reading.load_qrels, lambda p: evaluate(p, run, "map")):
        with pytest.raises(LogFormatError, match=re.escape(f"{path}:{line}: {field} is not valid")):
            read(path)


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_bad_byte_deep_in_a_many_chunk_file_names_its_line(tmp_path, monkeypatch, kind):
    monkeypatch.setattr(arrow_reader, "BLOCK_SIZE", 1 << 10)
    if kind == "run":
        lines = [b"q%d Q0 doc%d %d %r run\n" % (i // 50, i, i, 1.0 / (i + 1)) for i in range(3000)]
        readers = (read_run, reading.load_run)
    else:
        lines = [b"q%d 0 doc%d %d\n" % (i // 50, i, i % 2) for i in range(3000)]
        readers = (read_qrels, reading.load_qrels)
    lines[2345] = lines[2345].replace(b"doc2345", b"doc\xfe2345")
    data = b"".join(lines)
    path = _write_bytes(tmp_path, f"big.{kind}", data)
    assert _line_of_first_non_ascii(data) == 2346 and len(data) > 20 * (1 << 10)   # many blocks
    for read in readers:
        with pytest.raises(LogFormatError, match=":2346: docno .3rd field. is not valid UTF-8"):
            read(path)


def test_bad_tag_is_an_error_only_where_the_tag_is_used(tmp_path):
    # read_run returns every tag; the engine uses only the last line's (the run id), as
    # trec_eval. Both the fast reader and the scanner draw the same line.
    for messy in (False, True):
        base = _RUN.replace(b" Q0 ", b"  Q0 ") if messy else _RUN
        middle = base.replace(b" run\n", b" r\xe4n\n", 3)       # lines 1-3
        path = _write_bytes(tmp_path, "mid.run", middle)
        with pytest.raises(LogFormatError, match=r":1: tag \(6th field\) is not valid UTF-8"):
            read_run(path)
        cols = reading.load_run(path)
        assert isinstance(cols.qid, np.ndarray) == messy and cols.runid == "run"
        last = base[:-4] + b"r\xe4n\n"
        path = _write_bytes(tmp_path, "last.run", last)
        with pytest.raises(LogFormatError, match=r":40: tag \(6th field\) of the last line"):
            reading.load_run(path)
        with pytest.raises(LogFormatError, match=r":40: tag \(6th field\) is not valid"):
            read_run(path)


def test_bytes_in_ignored_fields_and_comments_are_accepted(tmp_path):
    # trec_eval skips the iter field, fields after the sixth and comment lines: so do we
    data = (b"# r\xe9sum\xe9 of the run\n"
            + _RUN.replace(b" Q0 ", b" Q\xff ", 5).replace(b" run\n", b" run extra\xff\n", 2))
    path = _write_bytes(tmp_path, "r.run", data)
    clean = _write_bytes(tmp_path, "clean.run", _RUN)
    pd.testing.assert_frame_equal(read_run(path), read_run(clean))
    qrels = _write_bytes(tmp_path, "q.qrels", b"#\xff\n" + _QRELS.replace(b" 0 ", b" \xff ", 3))
    clean_qrels = _write_bytes(tmp_path, "clean.qrels", _QRELS)
    pd.testing.assert_frame_equal(read_qrels(qrels), read_qrels(clean_qrels))
    measures = ["map", "ndcg", "P_5"]
    pd.testing.assert_frame_equal(evaluate(qrels, path, measures, per_query=True),
                                  evaluate(clean_qrels, clean, measures, per_query=True))


def test_valid_non_ascii_utf8_stays_on_the_fast_path(tmp_path):
    text = "".join(f"q{i // 10} Q0 d\u00e9\u6587{i} {i} {1 / (i + 1):.3f} r\u00fcn\n"
                   for i in range(40))
    fast = reading.load_run(write(tmp_path, "u.run", text))
    slow = reading.load_run(write(tmp_path, "u2.run", text.replace(" ", "\t ")))
    assert not isinstance(fast.qid, np.ndarray) and isinstance(slow.qid, np.ndarray)
    assert fast.docno.to_pylist() == slow.docno.tolist() == [
        f"d\u00e9\u6587{i}" for i in range(40)]
    assert fast.runid == slow.runid == "r\u00fcn"
    assert read_run(tmp_path / "u.run")["tag"].tolist() == ["r\u00fcn"] * 40


def test_lone_carriage_return_is_whitespace_not_a_line_break(tmp_path):
    # trec_eval (get_trec_results.c / get_qrels.c) ends lines at \n only and splits fields
    # with isspace(), so "\r" separates fields: the run line below is ONE line whose fields
    # after the sixth are ignored, and "q1\rQ0" are two fields.
    run = write(tmp_path, "r.run", "q1 Q0 d1 1 0.5 run\rq1 Q0 d2 2 0.4 run\nq1\rQ0 d3 3 0.3 x\n")
    frame = read_run(run)
    assert frame[["qid", "docno"]].values.tolist() == [["q1", "d1"], ["q1", "d3"]]
    assert reading.load_run(run).runid == "x"
    # line numbers count \n only
    bad = write(tmp_path, "bad.run", "q1 Q0 d1 1 0.5 run\r\rq1 Q0 d2 2 0.4 run\nq1 Q0 d3\n")
    with pytest.raises(LogFormatError, match=r"bad\.run:2: expected 6"):
        read_run(bad)
    # a qrels line must have 4 fields: trec_eval calls this one malformed (it was two lines)
    qrels = write(tmp_path, "cr.qrels", "q1 0 d1 1\rq1 0 d2 0\n")
    with pytest.raises(LogFormatError, match=r"cr\.qrels:1: expected 4 .* found 8"):
        read_qrels(qrels)
    crlf = write(tmp_path, "crlf.qrels", "q1 0 d1 1\r\nq1 0 d2 0\r\n")
    assert read_qrels(crlf).values.tolist() == [["q1", "d1", 1], ["q1", "d2", 0]]


# --------------------------------------------------------------------------- DataFrame fields
# A DataFrame or dict field may hold anything a field of a TREC file holds: the file readers
# split on ASCII whitespace only (C isspace), so U+00A0, U+2003, \x1c... belong to a field.

@pytest.mark.parametrize("char", ["\u00a0", "\u2003", "\u3000", "\x1c", "\x85", "\u2028"])
def test_non_ascii_whitespace_in_a_frame_is_kept_as_in_a_file(tmp_path, char):
    docno = f"d{char}1"
    path = write(tmp_path, "r.run", f"q1 Q0 {docno} 1 2.5 t\nq1 Q0 d2 2 1.5 t\n")
    from_file = read_run(path)
    assert from_file["docno"].tolist() == [docno, "d2"]          # the scanner kept it
    frame = read_run(pd.DataFrame({"qid": ["q1", "q1"], "docno": [docno, "d2"],
                                   "score": [2.5, 1.5]}))
    assert frame["docno"].tolist() == [docno, "d2"]
    q = read_qrels({"q1": {docno: 1}})
    assert q["docno"].tolist() == [docno]


@pytest.mark.parametrize("char", [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x00"])
def test_ascii_whitespace_and_nul_in_a_frame_are_refused_as_a_file_cannot_hold_them(
        tmp_path, char):
    docno = f"d{char}1"
    # the file reader cannot read this docno back as one field: it splits the line there
    # (a 7-field line: docno "d") or, for \n, breaks it, or refuses NUL
    path = (tmp_path / "r.run")
    path.write_bytes(f"q1 Q0 {docno} 1 2.5 t\n".encode())
    try:
        got = read_run(path)["docno"].tolist()
    except LogFormatError:
        got = None
    assert got != [docno]
    with pytest.raises(SchemaError, match=r"run column 'docno' row 1: .* is empty or contains "
                                          r"whitespace or NUL"):
        read_run(pd.DataFrame({"qid": ["q1", "q1"], "docno": ["d0", docno], "score": [1, 2]}))
    with pytest.raises(SchemaError, match=r"qrels column 'qid' row 0"):
        read_qrels({f"q{char}": {"d": 1}})


def test_undecodable_text_in_a_frame_names_column_and_row():
    bad = pd.DataFrame({"qid": pd.Series(["q1", "q1"], dtype=object),
                        "docno": pd.Series(["a", "b\udcff"], dtype=object), "score": [1.0, 2.0]})
    with pytest.raises(SchemaError, match=r"run column 'docno' row 1: 'b\\udcff' is not valid "
                                          r"Unicode text"):
        read_run(bad)
    tagged = bad.assign(docno=["a", "b"], tag=pd.Series(["t", "t\udcff"], dtype=object))
    with pytest.raises(SchemaError, match=r"run column 'tag' row 1"):
        read_run(tagged)


# --------------------------------------------------------------------------- comment lines
# trec_eval 10.0's comment rules, read from its source (usnistgov/trec_eval):
# - runs, get_trec_results.c, te_get_trec_results: each line's leading isspace() characters
#   are skipped; an empty line is skipped; then a '#' skips the line. Any number of them.
# - qrels, get_qrels.c, te_get_qrels: the main loop tests '#' at the current position, i.e.
#   the FIRST byte of the line (no whitespace skipped), skips that one line and calls
#   parse_qrels_line on the next line unconditionally; parse_qrels_line skips leading
#   whitespace and needs exactly four fields ("Malformed line" otherwise, also for a blank
#   line). After a comment on the last line it parses past the end of the buffer.
# The two functions below walk a file as those loops do (bytes.split() splits on ASCII
# whitespace, the C isspace set); they are independent of the reader under test.

def _te_qrels(data: bytes) -> list[tuple[str, str, int]] | str:
    """Judgments trec_eval reads from a qrels file, or why not ("malformed", "past the
    end"; "not an integer" where trec_eval's atol would read a prefix and we refuse)."""
    buf = data if data.endswith(b"\n") else data + b"\n"   # trec_eval appends a newline
    pos, out = 0, []
    while pos < len(buf):
        if buf[pos:pos + 1] == b"#":
            pos = buf.index(b"\n", pos) + 1
            if pos == len(buf):
                return "past the end"
        end = buf.index(b"\n", pos)
        fields = buf[pos:end].split()
        if len(fields) != 4:
            return "malformed"
        if not re.fullmatch(rb"[+-]?[0-9]+", fields[3]):
            return "not an integer"    # atol reads a prefix; we refuse (see the reader doc)
        out.append((fields[0].decode(), fields[2].decode(), int(fields[3])))
        pos = end + 1
    return out


def _te_run(data: bytes) -> list[tuple[str, str, float]] | str:
    """(qid, docno, score) trec_eval reads from a run file, or "malformed"."""
    out = []
    for line in data.split(b"\n"):
        body = line.lstrip(b" \t\r\x0b\x0c")
        if not body or body.startswith(b"#"):
            continue
        fields = line.split()
        if len(fields) < 6:
            return "malformed"
        out.append((fields[0].decode(), fields[2].decode(), float(fields[4])))
    return out


def _triples(cols: reading.Columns) -> list[tuple]:
    """(qid, docno, value) rows of the engine's columns (pyarrow on the fast path)."""
    def text(arr):
        return arr.tolist() if isinstance(arr, np.ndarray) else arr.to_pylist()
    return list(zip(text(cols.qid), text(cols.docno), cols.value.tolist(), strict=True))


def _no_blank_lines(data: bytes) -> bytes:
    # onlineeval skips blank qrels lines, which trec_eval calls malformed: it reads a qrels
    # file as trec_eval reads it with the blank lines deleted
    return b"".join(ln for ln in data.splitlines(keepends=True) if ln.strip())


def _qrels_read_as_trec_eval_reads(tmp_path, data: bytes, expected: list) -> object:
    """Both the trec_eval walk and read_qrels give ``expected``; returns the file's path."""
    assert _te_qrels(data) == expected
    path = _write_bytes(tmp_path, "c.qrels", data)
    assert list(read_qrels(path).itertuples(index=False, name=None)) == expected
    return path


def test_qrels_comment_only_in_the_first_column(tmp_path):
    # get_qrels.c: '#' is tested before any whitespace is skipped, so " #x 0 d1 1" and
    # "\t#y ..." are judgments of queries '#x' and '#y'
    data = b"# header\nq1 0 d1 1\n #x 0 d1 1\n\t#y 0 d2 0\nq1 0 d2 0\n"
    expected = [("q1", "d1", 1), ("#x", "d1", 1), ("#y", "d2", 0), ("q1", "d2", 0)]
    path = _qrels_read_as_trec_eval_reads(tmp_path, data, expected)
    assert _triples(reading.load_qrels(path)) == expected


def test_qrels_line_after_a_comment_line_is_a_judgment(tmp_path):
    # get_qrels.c skips ONE comment line, then parses the next line whatever it holds
    data = b"#c1\n#c2 0 d1 1\nq1 0 d2 1\n#c3\n#c4 0 d3 2\n#c5\nq1 0 d4 0\n"
    expected = [("#c2", "d1", 1), ("q1", "d2", 1), ("#c4", "d3", 2), ("q1", "d4", 0)]
    _qrels_read_as_trec_eval_reads(tmp_path, data, expected)
    # a second comment line that is not a judgment: trec_eval "Malformed line"; we name it
    bad = write(tmp_path, "bad.qrels", "# made by x\n# on monday\nq1 0 d1 1\n")
    assert _te_qrels(bad.read_bytes()) == "malformed"
    with pytest.raises(LogFormatError, match=r"bad\.qrels:2: expected 4 .* found 3: "
                                             r"'# on monday' \(this line is a judgment"):
        read_qrels(bad)
    bad_grade = write(tmp_path, "g.qrels", "#a\n# b c d\nq1 0 d1 1\n")
    with pytest.raises(LogFormatError, match=r"g\.qrels:2: relevance grade .* found 'd' "
                                             r"\(this line is a judgment"):
        reading.load_qrels(bad_grade)


@pytest.mark.parametrize("text", ["q1 0 d1 1\n# end\n", "q1 0 d1 1\n# end", "q1 0 d1 1\n#\n\n",
                                  "# only a comment\n"])
def test_qrels_ending_with_a_comment_is_refused(tmp_path, text):
    # get_qrels.c parses the line after a comment line: after the last line that is past
    # the end of its buffer (undefined behaviour), so no result can be matched
    assert _te_qrels(_no_blank_lines(text.encode())) == "past the end"
    path = write(tmp_path, "end.qrels", text)
    line = len(text.rstrip("\n").split("\n"))
    for reader in (read_qrels, reading.load_qrels):
        with pytest.raises(LogFormatError, match=rf"end\.qrels:{line}: the qrels file ends with "
                                                 r"this '#' comment line"):
            reader(path)


def test_run_comment_after_leading_whitespace_any_number(tmp_path):
    # get_trec_results.c skips the line's leading whitespace, then a '#' makes it a comment;
    # a '#' elsewhere is an ordinary character (qid q#1, docno d#1, tag t#)
    data = (b"#c1\n#c2 Q0 d9 1 9 x\n  # c3\n\t\x0b#c4 Q0 d9 1 9 x\nq1 Q0 d1 1 0.5 a\n"
            b" #x Q0 d2 1 0.5 a\nq#1 Q0 d#1 1 0.25 t# more\n#last Q0 d9 1 9 x\n")
    expected = [("q1", "d1", 0.5), ("q#1", "d#1", 0.25)]
    assert _te_run(data) == expected
    path = _write_bytes(tmp_path, "c.run", data)
    frame = read_run(path)
    assert list(frame[["qid", "docno", "score"]].itertuples(index=False, name=None)) == expected
    assert frame["tag"].tolist() == ["a", "t#"]
    cols = reading.load_run(path)
    assert _triples(cols) == expected
    assert cols.runid == "t#"       # the last content line's tag; comments do not count


_TOKENS = [b"q1", b"q2", b"#q", b"#", b"d1", b"d2", b"d#", b"0", b"1", b"2", b"Q0", b"x"]
_GAPS = [b" ", b"\t", b"  ", b" \x0b", b"\r "]


def _random_line(rng: np.random.Generator, n_fields: int) -> bytes:
    kind = rng.integers(6)
    if kind == 0:
        return b"" if rng.integers(2) else b" \t"           # blank
    lead = _GAPS[rng.integers(len(_GAPS))] if rng.integers(3) == 0 else b""
    if kind == 1:                                          # comment-like, any field count
        n = int(rng.integers(0, n_fields + 2))
        words = [b"#" + _TOKENS[rng.integers(len(_TOKENS))]] + [
            _TOKENS[rng.integers(len(_TOKENS))] for _ in range(n)]
    else:                                                  # a data line (maybe a #qid)
        qid = _TOKENS[rng.integers(3)]
        docno = _TOKENS[4 + rng.integers(3)]
        value = _TOKENS[7 + rng.integers(3)]
        words = ([qid, b"0", docno, value] if n_fields == 4
                 else [qid, b"Q0", docno, b"1", value, b"t"])
    sep = _GAPS[rng.integers(len(_GAPS))]
    return lead + sep.join(words)


@pytest.mark.parametrize("seed", range(4))
def test_random_files_read_as_trec_eval_reads_them(tmp_path, seed):
    # many small files mixing comments (with and without leading whitespace, in a row, at
    # the end), blank lines, '#' qids and irregular whitespace; our readers against the
    # walk of trec_eval's loops above
    rng = np.random.default_rng(seed)
    for i in range(60):
        for kind, n_fields in (("qrels", 4), ("run", 6)):
            lines = [_random_line(rng, n_fields) for _ in range(int(rng.integers(1, 7)))]
            data = b"\n".join(lines) + (b"\n" if rng.integers(4) else b"")
            path = _write_bytes(tmp_path, f"{i}.{kind}", data)
            if kind == "qrels":
                want = _te_qrels(_no_blank_lines(data))
                read, load = read_qrels, reading.load_qrels
            else:
                want = _te_run(data)
                read, load = read_run, reading.load_run
            if not isinstance(want, list) or not want:
                with pytest.raises(LogFormatError):
                    read(path)
                with pytest.raises(LogFormatError):
                    load(path)
                continue
            frame = read(path)
            value = "rel" if kind == "qrels" else "score"
            got = list(frame[["qid", "docno", value]].itertuples(index=False, name=None))
            assert got == want, data
            cols = load(path)
            assert _triples(cols) == want


@pytest.mark.parametrize("old, new, want", [
    (b"q2 0 doc20 2\n", b"#c 0 doc20 2\n", "skipped"),                     # comment
    (b"q2 0 doc20 2\nq2 0 doc21 0\n", b"#c 0 doc20 2\n#d 0 doc21 0\n", "second"),
    (b"q2 0 doc20 2\n", b" #c 0 doc20 2\n", "kept"),                       # leading blank
])
def test_comments_in_a_clean_qrels_file_leave_the_fast_path(tmp_path, old, new, want):
    # a clean-looking file that holds a '#' line is read by the scanner, with its rules
    data = _QRELS.replace(old, new)
    assert data != _QRELS
    path = _write_bytes(tmp_path, "q.qrels", data)
    expected = _te_qrels(data)
    assert isinstance(expected, list)
    assert len(expected) == 40 - (want == "skipped") - (want == "second")
    assert ("#d" in [q for q, _, _ in expected]) == (want == "second")
    assert ("#c" in [q for q, _, _ in expected]) == (want == "kept")
    assert list(read_qrels(path).itertuples(index=False, name=None)) == expected
    cols = reading.load_qrels(path)
    assert _triples(cols) == expected


def test_qrels_hash_query_reaches_the_engine_as_trec_eval_reads_it(tmp_path):
    # with -c (complete) a judged query that the run lacks counts as a zero: the '#x'
    # judgments read from " #x ..." lines behave exactly as the same judgments of a query
    # 'zx' (a name that sorts the same way relative to the others is not needed for these
    # measures: means over queries and num_q)
    run = write(tmp_path, "r.run", "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n")
    hashed = write(tmp_path, "h.qrels", "q1 0 d1 1\n #x 0 d5 1\n #x 0 d6 1\n")
    plain = write(tmp_path, "p.qrels", "q1 0 d1 1\nzx 0 d5 1\nzx 0 d6 1\n")
    measures = ["map", "P_5", "num_rel", "num_q"]
    a = evaluate(hashed, run, measures, complete=True)
    b = evaluate(plain, run, measures, complete=True)
    pd.testing.assert_frame_equal(a, b)
    assert a["num_q"].iloc[0] == 2 and a["num_rel"].iloc[0] == 3
    assert a["map"].iloc[0] == pytest.approx((1.0 + 0.0) / 2)


# --------------------------------------------------------------------------- '#' in DataFrames

@pytest.mark.parametrize("source", [
    pd.DataFrame({"qid": ["q1", "q1", "#2"], "docno": ["a", "b", "c"], "score": [3, 2, 1]}),
    {"q1": {"a": 3, "b": 2}, "#2": {"c": 1}},
])
def test_run_frame_qid_starting_with_hash_is_refused(tmp_path, source):
    # the same rows written as a run file: trec_eval (get_trec_results.c) skips the '#2'
    # line as a comment, with or without leading blanks, so it can never score query '#2'
    for lead in ("", " ", "\t"):
        text = f"q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\n{lead}#2 Q0 c 3 1 t\n"
        assert [q for q, _, _ in _te_run(text.encode())] == ["q1", "q1"]
        assert read_run(write(tmp_path, "r.run", text))["qid"].tolist() == ["q1", "q1"]
    with pytest.raises(SchemaError, match=r"^run column 'qid' row 2: '#2' starts with '#'; in a "
                                          r"TREC run file .* is a comment .*rename the query"):
        read_run(source)
    with pytest.raises(SchemaError, match=r"^my run column 'qid' row 2: '#2'"):
        reading.load_run(reading.Labelled(source, "my run"))
    qrels = write(tmp_path, "q.qrels", "q1 0 a 1\n")
    with pytest.raises(SchemaError, match=r"^second run column 'qid' row 2"):
        evaluate(qrels, source, ["map"], run_label="second run")


@pytest.mark.parametrize("source", [
    pd.DataFrame({"qid": ["#1", "q1"], "docno": ["a", "b"], "rel": [1, 0]}),
    {"#1": {"a": 1}, "q1": {"b": 0}},
])
def test_qrels_frame_qid_starting_with_hash_is_refused(tmp_path, source):
    # written as qrels lines, get_qrels.c would skip '#1 0 a 1' as a comment: scoring the
    # frame would count a query (with -c) and a relevant document that trec_eval does not
    text = b"#1 0 a 1\nq1 0 b 0\n"
    assert _te_qrels(text) == [("q1", "b", 0)]
    assert read_qrels(_write_bytes(tmp_path, "q.qrels", text))["qid"].tolist() == ["q1"]
    with pytest.raises(SchemaError, match=r"^qrels column 'qid' row 0: '#1' starts with '#'; "
                                          r"trec_eval 10.0 \(get_qrels.c\) skips"):
        read_qrels(source)
    with pytest.raises(SchemaError, match=r"^qrels column 'qid' row 0"):
        evaluate(source, {"q1": {"b": 1.0}}, ["map"])


def test_hash_inside_frame_fields_is_kept_as_in_a_file(tmp_path):
    # only a qid's FIRST character matters; a docno or a later '#' is ordinary in a file
    path = write(tmp_path, "r.run", "q#1 Q0 #d 1 2 t\nq#1 Q0 d#2 2 1 t\n")
    frame = read_run(pd.DataFrame({"qid": ["q#1", "q#1"], "docno": ["#d", "d#2"],
                                   "score": [2.0, 1.0]}))
    cols = ["qid", "docno", "score"]
    pd.testing.assert_frame_equal(frame[cols], read_run(path)[cols])
    assert read_qrels({"q#1": {"#d": 1}}).values.tolist() == [["q#1", "#d", 1]]


# --------------------------------------------------------------------------- numbers in ASCII

@pytest.mark.parametrize("grade", ["1_0", "\u0663", "\uff11", "99999999999999999999", "0x1"])
def test_qrels_grade_must_be_an_ascii_integer(tmp_path, grade):
    # atol (get_qrels.c) reads "1_0" as 1 and Arabic-Indic / full-width digits as 0, while
    # Python's int() reads 10, 3 and 1: refuse rather than differ
    path = write(tmp_path, "g.qrels", f"q1 0 d1 1\nq1 0 d2 {grade}\n")
    for reader in (read_qrels, reading.load_qrels):
        with pytest.raises(LogFormatError, match=r"g\.qrels:2: relevance grade must be an "
                                                 r"integer"):
            reader(path)
    ok = write(tmp_path, "ok.qrels", "q1 0 d1 +2\nq1 0 d2 -1\nq1 0 d3 007\n")
    assert read_qrels(ok)["rel"].tolist() == [2, -1, 7]


@pytest.mark.parametrize("score", ["\u0661.5", "\uff12", "1\u0660"])
def test_run_score_must_be_ascii(tmp_path, score):
    # Python's float() reads other scripts' digits; C's atof stops at them (0 or a prefix)
    assert float(score) != 0
    path = write(tmp_path, "s.run", f"q1 Q0 d1 1 2 t\nq1 Q0 d2 2 {score} t\n")
    for reader in (read_run, reading.load_run):
        with pytest.raises(LogFormatError, match=r"s\.run:2: score \(5th field\) must be a "
                                                 r"number"):
            reader(path)


def test_hex_grade_never_read_by_the_fast_reader(tmp_path, monkeypatch):
    # pyarrow's int64 parser reads "0x1" as 1, atol (get_qrels.c) as 0: the raw-byte check
    # sends any "<delimiter>0x" to the scanner, which refuses the grade. The check works in
    # steps; with a 7-byte step the pattern falls across a step boundary at every offset.
    import pyarrow as pa

    assert pa.array(["0x1"]).cast(pa.int64()).to_pylist() == [1]      # why the check exists
    monkeypatch.setattr(byte_check, "CHECK_STEP", 7)
    for pad in range(8):
        path = write(tmp_path, f"h{pad}.qrels", f"q1 0 d{'1' * pad} 1\nq1 0 d2 0X1\n")
        with pytest.raises(LogFormatError, match=r":2: relevance grade .* found '0X1'"):
            reading.load_qrels(path)
    # a docno or iter field that starts with 0x is read (by the scanner) as it is
    path = write(tmp_path, "doc.qrels", "q1 0x 0xa1 1\nq1 0 d2 0\n")
    assert _triples(reading.load_qrels(path)) == [("q1", "0xa1", 1), ("q1", "d2", 0)]
    tabs = write(tmp_path, "tab.qrels", "q1\t0\td1\t0x2\n")
    with pytest.raises(LogFormatError, match=r":1: relevance grade .* found '0x2'"):
        reading.load_qrels(tabs)
