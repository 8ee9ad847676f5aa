"""A UTF-8 byte-order mark at the start of a qrels or run file is dropped on every reader path.

Each case writes one collection twice — without and with a leading BOM (EF BB BF) — in the
same layout (LF or CRLF line ends; one space, one tab, two spaces or a space and a tab between
fields; a comment as the first line or not) and reads both through the public readers, the
engine's loaders and ``evaluate``, with the reader chosen as usual (pyarrow's CSV reader for
clean files) or forced to the line scanner. The file with the BOM must
read exactly as the one without; the scores are also checked against values worked out by
hand. Before the fix the scanner kept the mark in the first qid: a BOM qrels invented a query,
a BOM run lost its first line to a query nobody judged.
"""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from onlineeval.cli import main
from onlineeval.errors import LogFormatError
from onlineeval.offline import evaluate, read_qrels, read_run, reading
from onlineeval.offline.reading import arrow_reader

BOM = b"\xef\xbb\xbf"

QRELS = [("q1", "0", "d1", "1"), ("q1", "0", "d2", "0"), ("q1", "0", "d3", "1"),
         ("q2", "0", "d1", "2")]
RUN = [("q1", "Q0", "d1", "1", "3.0", "tagA"), ("q1", "Q0", "d2", "2", "2.0", "tagA"),
       ("q1", "Q0", "d3", "3", "1.0", "tagA"), ("q2", "Q0", "d1", "1", "1.5", "tagB")]
# by hand: q1 ranks d1, d2, d3 with d1 and d3 relevant, AP = (1/1 + 2/3) / 2 = 5/6;
# q2 ranks its one relevant document first, AP = 1
AP = {"q1": 5 / 6, "q2": 1.0}

SEPARATORS = {"space": " ", "tab": "\t", "two-spaces": "  ", "space-tab": " \t"}
NEWLINES = {"LF": "\n", "CRLF": "\r\n"}


def trec_text(rows: list[tuple[str, ...]], sep: str, newline: str, comment: bool) -> bytes:
    lines = (["# written by a spreadsheet"] if comment else []) + [sep.join(r) for r in rows]
    return (newline.join(lines) + newline).encode()


@pytest.fixture
def fast_reads(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> dict | None:
    """Which files the pyarrow reader parsed (name -> bool); with the parameter "scanner"
    it is switched off, so every file goes to the line scanner, and the fixture gives None."""
    used: dict[str, bool] = {}
    real = arrow_reader.read_regular
    scanner_only = request.param == "scanner"

    def spy(path, kind, full=False):
        got = None if scanner_only else real(path, kind, full)
        used[Path(path).name] = used.get(Path(path).name, False) or got is not None
        return got

    monkeypatch.setattr(arrow_reader, "read_regular", spy)
    return None if scanner_only else used


def _engine_rows(cols: reading.Columns) -> list[tuple[str, str, float]]:
    def text(col):
        return [str(v) for v in (col.to_pylist() if hasattr(col, "to_pylist") else col)]
    return list(zip(text(cols.qid), text(cols.docno), np.asarray(cols.value).tolist(),
                    strict=True))


@pytest.mark.parametrize("fast_reads", ["auto", "scanner"], indirect=True)
@pytest.mark.parametrize("comment", [False, True], ids=["data-first", "comment-first"])
@pytest.mark.parametrize("sep", list(SEPARATORS), ids=list(SEPARATORS))
@pytest.mark.parametrize("newline", list(NEWLINES), ids=list(NEWLINES))
@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_bom_file_reads_as_the_file_without_it(tmp_path, fast_reads, kind, newline, sep,
                                               comment):
    rows = QRELS if kind == "qrels" else RUN
    body = trec_text(rows, SEPARATORS[sep], NEWLINES[newline], comment)
    plain = tmp_path / f"plain.{kind}"
    marked = tmp_path / f"bom.{kind}"
    plain.write_bytes(body)
    marked.write_bytes(BOM + body)
    read = read_qrels if kind == "qrels" else read_run
    load = reading.load_qrels if kind == "qrels" else reading.load_run

    pd.testing.assert_frame_equal(read(marked), read(plain))
    assert read(marked)["qid"].tolist() == [r[0] for r in rows]    # no "\ufeffq1"
    assert _engine_rows(load(marked)) == _engine_rows(load(plain))
    if kind == "run":
        assert load(marked).runid == load(plain).runid == "tagB"

    other = tmp_path / ("plain.run" if kind == "qrels" else "plain.qrels")
    other.write_bytes(trec_text(RUN if kind == "qrels" else QRELS, " ", "\n", False))
    qrels, run = (marked, other) if kind == "qrels" else (other, marked)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no phantom query, no skipped query
        got = evaluate(qrels, run, ["map"], per_query=True)
    assert got["qid"].tolist() == ["q1", "q2"]
    assert got["map"].tolist() == pytest.approx([AP["q1"], AP["q2"]], abs=1e-15)

    clean = newline == "LF" and sep in ("space", "tab") and not comment
    if fast_reads is not None and clean:
        # the case the pyarrow reader takes: it must have read the file with the BOM
        assert fast_reads[marked.name] and fast_reads[plain.name]


def test_bom_crlf_run_through_the_command_line(tmp_path, capsys):
    qrels = tmp_path / "qrels"
    qrels.write_bytes(trec_text(QRELS, " ", "\n", False))
    run = tmp_path / "run"
    run.write_bytes(BOM + trec_text(RUN, " ", "\r\n", False))
    assert main(["trec-eval", "-q", "-m", "map", "-m", "num_q", str(qrels), str(run)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out == (f"map                   \tq1\t{AP['q1']:.4f}\n"
                            f"map                   \tq2\t1.0000\n"
                            f"num_q                 \tall\t2\n"
                            f"map                   \tall\t{(AP['q1'] + 1) / 2:.4f}\n")


@pytest.mark.parametrize("fast_reads", ["auto", "scanner"], indirect=True)
@pytest.mark.parametrize("kind", ["qrels", "run"])
@pytest.mark.parametrize("prefix", ["", "  "], ids=["line-start", "after-blanks"])
def test_bom_at_the_start_of_a_later_line_is_an_error_naming_it(tmp_path, fast_reads, kind,
                                                                prefix):
    # concatenated files keep their marks; trec_eval would read "\ufeffq2" as a new query
    rows = QRELS if kind == "qrels" else RUN
    first = trec_text(rows[:2], " ", "\n", False)
    rest = trec_text(rows[2:], " ", "\n", False)
    path = tmp_path / f"cat.{kind}"
    path.write_bytes(BOM + first + prefix.encode() + BOM + rest)
    read = read_qrels if kind == "qrels" else read_run
    load = reading.load_qrels if kind == "qrels" else reading.load_run
    for reader in (read, load):
        with pytest.raises(LogFormatError, match="byte-order mark") as err:
            reader(path)
        assert err.value.line == 3 and err.value.path == path


@pytest.mark.parametrize("encode, needle", [
    (lambda b: gzip.compress(b), "gzip-compressed"),
    (lambda b: b.decode().encode("utf-16"), "UTF-16 (little-endian"),
    (lambda b: b.decode().encode("utf-16-be"), None),        # no mark: NUL bytes
    (lambda b: b"\xfe\xff" + b.decode().encode("utf-16-be"), "UTF-16 (big-endian"),
    (lambda b: b.decode().encode("utf-32"), "UTF-32 (little-endian"),
    (lambda b: b"\x00\x00\xfe\xff" + b.decode().encode("utf-32-be"), "UTF-32 (big-endian"),
], ids=["gzip", "utf16le-bom", "utf16be-no-bom", "utf16be-bom", "utf32le-bom", "utf32be-bom"])
@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_compressed_or_utf16_file_is_one_clear_error(tmp_path, kind, encode, needle):
    body = trec_text(QRELS if kind == "qrels" else RUN, " ", "\n", False)
    path = tmp_path / f"odd.{kind}"
    path.write_bytes(encode(body))
    read = read_qrels if kind == "qrels" else read_run
    load = reading.load_qrels if kind == "qrels" else reading.load_run
    for reader in (read, load):
        with pytest.raises(LogFormatError) as err:
            reader(path)
        if needle is None:
            assert "NUL" in str(err.value)
        else:
            assert needle in str(err.value) and str(path) in str(err.value)
            assert ("gunzip" if needle.startswith("gzip") else "iconv") in str(err.value)
