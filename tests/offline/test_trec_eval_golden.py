"""`onlineeval trec-eval` reproduces trec_eval 10.0's own test outputs byte for byte.

Golden files and the commands behind them: tests/data/trec_eval/PROVENANCE.md (NIST
trec_eval 10.0 `make quicktest`). One test per golden file; on failure the assertion shows a
unified diff of the first differing lines.
"""

from __future__ import annotations

import difflib
import io
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from onlineeval.cli import main

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
}


def run_cli(args: list[str]) -> str:
    argv = ["trec-eval"] + [str(DATA / a) if (DATA / a).is_file() else a for a in args]
    buf = io.StringIO()
    with redirect_stdout(buf):
        status = main(argv)
    assert status == 0
    return buf.getvalue()


@pytest.mark.parametrize("golden", sorted(GOLDEN))
def test_golden_file_byte_identical(golden):
    expected = (DATA / golden).read_bytes()
    got = run_cli(GOLDEN[golden]).encode()
    if got != expected:
        diff = difflib.unified_diff(
            expected.decode().splitlines(), got.decode().splitlines(),
            fromfile=f"trec_eval/{golden}", tofile="onlineeval trec-eval", lineterm="", n=1,
        )
        pytest.fail("output differs from trec_eval 10.0:\n" + "\n".join(list(diff)[:60]))


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
