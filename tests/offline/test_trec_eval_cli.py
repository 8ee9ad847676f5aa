"""`onlineeval trec-eval` command line: flags and error reporting."""

from __future__ import annotations

from pathlib import Path

from onlineeval.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"


def test_malformed_run_line_is_one_line_error_with_file_and_line(tmp_path, capsys):
    run = tmp_path / "bad.run"
    run.write_text("301 Q0 FBIS3-10 1 2.5 r\n301 Q0 FBIS3-11 2 high r\n")
    status = main(["trec-eval", str(DATA / "qrels.test"), str(run)])
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{run}:2: score (5th field) must be a number, found 'high'" in err


def test_duplicate_document_error(tmp_path, capsys):
    run = tmp_path / "dup.run"
    run.write_text("301 Q0 FBIS3-10 1 2.5 r\n301 Q0 FBIS3-10 2 1.5 r\n")
    assert main(["trec-eval", str(DATA / "qrels.test"), str(run)]) == 2
    assert "document 'FBIS3-10' is listed 2 times for query '301'" in capsys.readouterr().err


def test_no_summary_flag_and_single_measure(capsys):
    assert main(["trec-eval", "-q", "-n", "-m", "num_ret", str(DATA / "qrels.test"),
                 str(DATA / "results.test")]) == 0
    out = capsys.readouterr().out
    assert out == "".join(f"num_ret               \t{q}\t500\n" for q in ("301", "302", "303"))


def test_run_not_utf8_is_one_line_error_with_file_and_line(tmp_path, capsys):
    run = tmp_path / "latin1.run"
    run.write_bytes(b"301 Q0 FBIS3-10 1 2.5 r\n301 Q0 FBIS3-\xe911 2 1.5 r\n")
    assert main(["trec-eval", str(DATA / "qrels.test"), str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{run}:2: docno (3rd field) is not valid UTF-8: b'FBIS3-\\xe911'" in err


def test_negative_relevance_level_is_a_one_line_error(capsys):
    # trec_eval 10.0 prints numbers at -l -1 that disagree with each other (map and P count
    # a retrieved unjudged document as a relevant hit, num_rel_ret and set_P do not); the
    # command used to print a mixture of both. It now refuses, as the Python API does.
    status = main(["trec-eval", "-l", "-1", "-m", "map", str(DATA / "qrels.rel_level"),
                   str(DATA / "results.test")])
    assert status == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert "relevance_level must be >= 0 (trec_eval -l); got -1" in captured.err
