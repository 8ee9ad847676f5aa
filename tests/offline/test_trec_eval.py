"""trec_eval.parse_measures: familiar aliases get a clear message; extras always registered."""

from __future__ import annotations

import subprocess
import sys

import pytest

from onlineeval.errors import InvalidParameterError, UnknownNameError
from onlineeval.offline.trec_eval import parse_measures


def test_extras_and_aliases_are_registered_by_the_measures_package():
    # a fresh interpreter that imports only the measures package (onlineeval.offline
    # itself imports api, so this shows the order is safe rather than isolating it)
    code = (
        "from onlineeval.offline.measures import MEASURES\n"
        "print(MEASURES.canonical('AP'), MEASURES.canonical('nDCG@'), "
        "MEASURES.canonical('ERR'), MEASURES.canonical('MRR@'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["map", "ndcg_cut", "ERR", "RR_cut"]


@pytest.mark.parametrize(("alias", "advice"), [
    ("AP", "for -m write map"),
    ("nDCG@10", "for -m write ndcg_cut.10"),
    ("P@5", "for -m write P.5"),
    ("MRR@10", "for -m write RR_cut.10"),
    ("R-prec", "for -m write Rprec"),
    ("AP.5", "for -m write map, with trec_eval's parameters"),
])
def test_alias_names_the_trec_eval_measure(alias, advice):
    with pytest.raises(InvalidParameterError, match="measure name of the Python API") as err:
        parse_measures([alias])
    assert advice in str(err.value)


def test_real_names_case_variants_and_unknown_names():
    assert [r[1].names for r in parse_measures(["P.5", "ERR.10"])] == [("P_5",), ("ERR@10",)]
    with pytest.raises(InvalidParameterError, match="case-sensitive: write 'map', not 'Map'"):
        parse_measures(["Map"])
    with pytest.raises(UnknownNameError):
        parse_measures(["bogus"])
