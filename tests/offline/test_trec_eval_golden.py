"""`onlineeval trec-eval` reproduces trec_eval 10.0's outputs byte for byte.

Golden files and the commands behind them: tests/data/trec_eval/PROVENANCE.md (NIST
trec_eval 10.0 `make quicktest`, and outputs of a trec_eval 10.0 binary for the cases its
test suite lacks). One test per golden file; on failure the assertion shows a unified diff of
the first differing lines.
"""

from __future__ import annotations

import difflib
import io
import math
import warnings
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from onlineeval.cli import main
from onlineeval.offline import evaluate

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"

GOLDEN = {
    "out.test": ["qrels.test", "results.test"],
    "out.test.a": ["-m", "all_trec", "qrels.test", "results.test"],
    "out.test.aq": ["-m", "all_trec", "-q", "qrels.test", "results.test"],
    "out.test.aqc": ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"],
    "out.test.aqcM": ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"],
    "out.test.aql": ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level",
                     "results.test"],
    "out.test.meas_params": [
        "-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
        "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
        "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20",
        "qrels.test", "results.test",
    ],
    # from a trec_eval 10.0 binary built for onlineeval's tests (PROVENANCE.md, second table)
    "out.test.aqcl2": ["-m", "all_trec", "-q", "-c", "-l2", "qrels.rel_level", "results.trunc"],
    "out.test.acl0": ["-m", "all_trec", "-c", "-l0", "qrels.rel_level", "results.trunc"],
    "out.zero_gain.l0": ["-q", "-l0", "-m", "Rndcg", "-m", "ndcg", "-m", "num_rel",
                         "qrels.zero_gain", "results.zero_gain"],
    "out.zero_gain.gain0": ["-q", "-m", "Rndcg.1=0", "-m", "num_rel", "qrels.zero_gain",
                            "results.zero_gain"],
    "out.test.aqM0": ["-m", "all_trec", "-q", "-M0", "qrels.test", "results.test"],
    "out.test.aqcM0": ["-m", "all_trec", "-q", "-c", "-M0", "qrels.test", "results.trunc"],
    "out.neg_only.aq": ["-m", "all_trec", "-q", "qrels.neg_only", "results.neg_only"],
}


def run_cli(args: list[str]) -> str:
    argv = ["trec-eval"] + [str(DATA / a) if (DATA / a).is_file() else a for a in args]
    buf = io.StringIO()
    with redirect_stdout(buf):
        status = main(argv)
    assert status == 0
    return buf.getvalue()


def assert_golden(golden: str, got: str) -> None:
    expected = (DATA / golden).read_bytes()
    if got.encode() != expected:
        diff = difflib.unified_diff(
            expected.decode().splitlines(), got.decode().splitlines(),
            fromfile=f"trec_eval/{golden}", tofile="onlineeval trec-eval", lineterm="", n=1,
        )
        pytest.fail("output differs from trec_eval 10.0:\n" + "\n".join(list(diff)[:60]))


@pytest.mark.parametrize("golden", sorted(GOLDEN))
def test_golden_file_byte_identical(golden):
    assert_golden(golden, run_cli(GOLDEN[golden]))


def test_judged_query_missing_from_the_run_is_skipped_with_a_warning(capsys):
    # trec_eval 10.0 stops here (exit 4, "result qid '302' not found in qrels"); onlineeval
    # skips the query as trec_eval 9 did: the output is trec_eval 10.0's on the qrels
    # without query 302 (golden), and one warning line says what was left out
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        out = run_cli(["-m", "all_trec", "-q", "qrels.test", "results.trunc"])
    assert_golden("out.test.aq.skip", out)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("warning: 1 of 3 judged queries")
    assert "'302'" in err and "-c" in err


def test_no_shared_query_under_c_prints_trec_eval_output_and_warns(tmp_path, capsys):
    # the run is results.test with "q" before every line (PROVENANCE.md): no qid matches
    renamed = tmp_path / "results.renamed"
    renamed.write_bytes(b"".join(b"q" + line for line in
                                 (DATA / "results.test").read_bytes().splitlines(True)))
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        out = run_cli(["-m", "all_trec", "-q", "-c", "qrels.test", str(renamed)])
    assert_golden("out.test.aqc.noshared", out)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("warning: no query id is shared")
    assert "'301'" in err and "'q301'" in err


def _summary(golden: str, name: str) -> str:
    lines = (DATA / golden).read_text().splitlines()
    return next(line.split("\t")[2] for line in lines if line.split("\t")[:2] == [
        f"{name:<22}", "all"])


def test_complete_num_rel_line_is_not_the_sum_of_the_per_query_lines():
    # trec_eval's m_num_rel.c recounts grade > 0 under -c: 559, while the -l2 per-query
    # values add up to 97. The Python API keeps the sum (its per-query and summary agree).
    per_query = [int(line.split("\t")[2]) for line in
                 (DATA / "out.test.aqcl2").read_text().splitlines()
                 if line.startswith("num_rel ") and "\tall\t" not in line]
    assert sum(per_query) == 97 and _summary("out.test.aqcl2", "num_rel") == "559"
    grades = [int(line.split()[3]) for line in (DATA / "qrels.rel_level").open()]
    assert sum(g > 0 for g in grades) == 559          # the rule, counted here
    got = evaluate(DATA / "qrels.rel_level", DATA / "results.trunc", ["num_rel"],
                   relevance_level=2, complete=True)
    assert got["num_rel"].iloc[0] == 97


def test_rndcg_without_a_positive_ideal_gain_is_nan_in_the_api():
    got = evaluate(DATA / "qrels.zero_gain", DATA / "results.zero_gain", ["Rndcg", "ndcg"],
                   relevance_level=0, per_query=True)
    assert got["qid"].tolist() == ["q1", "q2", "q3"]
    assert math.isnan(got["Rndcg"].iloc[0])            # q1: relevant at -l0, all gain 0
    assert got["ndcg"].iloc[0] == 0.0
    # q3: d5 (grade 0) then d2 (grade 1): Rndcg averages ndcg at the one change point,
    # rank 1, where DCG is 0; at -l0 the ideal gain changes 1 -> 0 after rank 1
    assert got["Rndcg"].iloc[2] == 0.0
    summary = evaluate(DATA / "qrels.zero_gain", DATA / "results.zero_gain", ["Rndcg"],
                       relevance_level=0)
    assert math.isnan(summary["Rndcg"].iloc[0])        # trec_eval's all line: -nan


def test_measure_order_does_not_depend_on_argument_order():
    # trec_eval prints in its own measure order whatever the -m order
    a = run_cli(["-m", "P.5", "-m", "map", "qrels.test", "results.test"])
    b = run_cli(["-m", "map", "-m", "P.5", "qrels.test", "results.test"])
    assert a == b
    assert [line.split()[0] for line in a.splitlines()] == ["map", "P_5"]


def test_first_parameterised_occurrence_wins():
    # trec_eval uses the first -m that carries parameters for a measure
    out = run_cli(["-m", "P", "-m", "P.7", "-m", "P.3", "qrels.test", "results.test"])
    assert [line.split()[0] for line in out.splitlines()] == ["P_7"]


def test_unknown_measure_is_a_clear_error(capsys):
    status = main(["trec-eval", "-m", "mapp", str(DATA / "qrels.test"),
                   str(DATA / "results.test")])
    assert status == 2
    err = capsys.readouterr().err
    assert "mapp" in err and "did you mean 'map'" in err


def test_first_query_judged_only_negative_is_scored_as_in_any_other_position(tmp_path):
    # trec_eval 10.0 stops ("Can't calculate measure 'num_ret'") when the first query it
    # evaluates has only negative grades: form_res_rels.c asks for max grade + 1 = 0 counts
    # and takes the NULL it gets for an error. In second place (query "c" of the golden) it
    # scores it; renamed "a", so that it comes first, onlineeval gives the same lines.
    renamed = {}
    for name in ("qrels.neg_only", "results.neg_only"):
        renamed[name] = tmp_path / name
        renamed[name].write_text("".join(
            "a" + line[1:] if line.startswith("c ") else line
            for line in (DATA / name).read_text().splitlines(True)))
    out = run_cli(["-m", "all_trec", "-q", str(renamed["qrels.neg_only"]),
                   str(renamed["results.neg_only"])])
    golden = (DATA / "out.neg_only.aq").read_text().replace("\tc\t", "\ta\t")
    assert sorted(out.splitlines()) == sorted(golden.splitlines())
    assert out.splitlines()[0] == "num_ret               \ta\t3"
