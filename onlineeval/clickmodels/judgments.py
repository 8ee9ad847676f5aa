"""Graded relevance judgments (TREC qrels) from a fitted click model.

A (query, doc) pair gets grade g = the number of thresholds its relevance reaches: with the
default thresholds 0.1, 0.3, 0.5, 0.7, relevance < 0.1 is grade 0, [0.1, 0.3) grade 1, ...,
>= 0.7 grade 4. Relevance is what :attr:`ClickModelFit.relevance` documents (dbn/sdbn:
attractiveness x satisfaction). Pairs shown on fewer than ``min_impressions`` training pages
are left out, and counted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from onlineeval.clickmodels.fitting import ClickModelFit
from onlineeval.errors import InputError, InvalidParameterError

DEFAULT_GRADES = (0.1, 0.3, 0.5, 0.7)
DEFAULT_MIN_IMPRESSIONS = 10
_TREC_BAD = re.compile(r"[\s\x00]")


@dataclass
class Judgments:
    """qrels (qid, docno, rel) and what was left out: ``pairs`` fitted, ``judged``,
    ``too_few_impressions``; ``per_grade`` counts the judged pairs per grade."""

    qrels: pd.DataFrame
    pairs: int
    judged: int
    too_few_impressions: int
    per_grade: pd.DataFrame
    thresholds: tuple[float, ...]
    min_impressions: int

    def to_trec(self) -> str:
        """The qrels as TREC text: ``qid 0 docno rel`` per line."""
        q = self.qrels
        return "".join(f"{a} 0 {b} {c}\n" for a, b, c in zip(q["qid"], q["docno"], q["rel"],
                                                             strict=True))


def check_thresholds(grades: Sequence[float] | str) -> tuple[float, ...]:
    if isinstance(grades, str):
        try:
            values = tuple(float(x) for x in grades.split(","))
        except ValueError:
            raise InvalidParameterError(
                f"grades must be comma-separated numbers such as 0.1,0.3,0.5,0.7; got "
                f"{grades!r}") from None
    else:
        values = tuple(float(x) for x in grades)
    if not values or any(not 0 < v <= 1 for v in values) or any(
            b <= a for a, b in zip(values, values[1:], strict=False)):
        raise InvalidParameterError(
            f"grade thresholds must be increasing numbers in (0, 1]; got {list(values)}")
    return values


def qrels_from_clicks(fitted: ClickModelFit, grades: Sequence[float] | str = DEFAULT_GRADES,
                      min_impressions: int = DEFAULT_MIN_IMPRESSIONS) -> Judgments:
    """Grade every (query, doc) of ``fitted`` shown on at least ``min_impressions`` pages."""
    thresholds = check_thresholds(grades)
    if isinstance(min_impressions, bool) or not isinstance(min_impressions, (int, np.integer)) \
            or min_impressions < 1:
        raise InvalidParameterError(
            f"min_impressions must be a whole number >= 1; got {min_impressions!r}")
    rel = fitted.relevance
    if rel["relevance"].isna().all() and len(rel):
        raise InvalidParameterError(
            f"the {fitted.model} model has no relevance per (query, document); use dbn, "
            "sdbn, pbm, ubm, dcm or cascade")
    enough = rel["impressions"].to_numpy() >= min_impressions
    kept = rel[enough]
    qid = kept["query"].astype(str)
    docno = kept["doc_id"].astype(str)
    for values, what in ((qid, "query"), (docno, "document id")):
        bad = values[values.str.contains(_TREC_BAD) | (values == "")]
        if len(bad):
            hint = (" pass --query (query=) naming a column of topic ids"
                    if what == "query" else "")
            raise InputError(
                f"{len(bad)} judged pairs have a {what} that a TREC qrels file cannot hold "
                f"(empty, whitespace or NUL), e.g. {bad.iloc[0]!r};{hint}")
    grade = np.searchsorted(np.asarray(thresholds), kept["relevance"].to_numpy(), side="right")
    qrels = pd.DataFrame({"qid": qid.to_numpy(), "docno": docno.to_numpy(),
                          "rel": grade.astype(np.int64)})
    qrels = qrels.sort_values(["qid", "docno"], kind="stable").reset_index(drop=True)
    per_grade = pd.DataFrame({"grade": np.arange(len(thresholds) + 1)})
    per_grade["pairs"] = [int((qrels["rel"] == g).sum()) for g in per_grade["grade"]]
    lower = (0.0, *thresholds)
    upper = (*thresholds, float("inf"))
    per_grade["relevance_from"] = lower
    per_grade["relevance_below"] = upper
    return Judgments(qrels=qrels, pairs=len(rel), judged=len(qrels),
                     too_few_impressions=int((~enough).sum()), per_grade=per_grade,
                     thresholds=thresholds, min_impressions=int(min_impressions))
