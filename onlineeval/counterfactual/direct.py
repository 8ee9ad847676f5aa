"""The direct method of the DR estimate: a position-based click model's predicted clicks.

DR needs the model's click probability of a document at two ranks: where the candidate puts
it and where the logged page showed it. Under the position-based model that is
``examination[rank] * attractiveness(query, doc)``, one number per rank times one per pair,
so the SQL can sum it per unit. A cascade model (dbn, sdbn, dcm, cascade) or UBM predicts a
click at a rank from the documents and clicks above it, which differ between the logged page
and the candidate; that does not split into per-slot terms, so those models are refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from onlineeval.errors import InvalidParameterError

if TYPE_CHECKING:
    from onlineeval.clickmodels import ClickModelFit


@dataclass(frozen=True)
class DirectModel:
    """Click probability ``examination[r] * attractiveness(q, d)`` of document d of query q
    shown at rank r.

    Attributes
    ----------
    examination
        Array indexed by rank (index 0 unused; NaN where unknown).
    attractiveness
        DataFrame with columns query, doc_id, attractiveness (queries and ids as text).
    default
        Attractiveness of a (query, doc) the table does not hold (a fitted model's prior
        a / (a + b)).
    source
        Where the model came from, for the result.
    """

    examination: np.ndarray
    attractiveness: pd.DataFrame
    default: float
    source: str = "given"

    def lookup(self, query: pd.Series, doc_id: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """Attractiveness per (query, doc_id) row and whether the model holds the pair."""
        table = self.attractiveness
        known = pd.MultiIndex.from_arrays([table["query"].astype(str),
                                           table["doc_id"].astype(str)])
        wanted = pd.MultiIndex.from_arrays([query.astype(str), doc_id.astype(str)])
        at = known.get_indexer(wanted)
        values = table["attractiveness"].to_numpy(float)
        seen = at >= 0
        out = np.full(len(wanted), float(self.default))
        out[seen] = values[at[seen]]
        return out, seen


def from_fit(fitted: ClickModelFit, source: str, query: str) -> DirectModel:
    if fitted.query_column != query:
        raise InvalidParameterError(
            f"the click model ({source}) was fitted with query column "
            f"{fitted.query_column!r} but the estimate reads {query!r}; pass the same column "
            "(--query)")
    if fitted.model != "pbm":
        raise InvalidParameterError(
            f"the doubly robust estimate needs a position-based click model (pbm) as its "
            f"direct method; got {fitted.model!r}, whose click probability at a rank depends "
            "on the documents above it, which differ between the logged page and the "
            "candidate. Fit one with `onlineeval clickmodel fit LOGS --model pbm -o pbm.json`")
    a, b = fitted.prior
    att = fitted.attractiveness
    return DirectModel(
        examination=np.asarray(fitted.params.rank["examination"], float),
        attractiveness=pd.DataFrame({"query": att["query"].astype(str),
                                     "doc_id": att["doc_id"].astype(str),
                                     "attractiveness": att["attractiveness"].to_numpy(float)}),
        default=a / (a + b) if a + b > 0 else float("nan"),
        source=source)


def direct_model(source: Any, query: str) -> DirectModel:
    """``source``: a :class:`DirectModel`, a fitted pbm :class:`ClickModelFit` or the path of
    one written by ``clickmodel fit -o``; ``query`` the searches column the estimate reads,
    which a fit must have been made on."""
    from onlineeval.clickmodels import ClickModelFit

    if isinstance(source, DirectModel):
        return source
    if isinstance(source, ClickModelFit):
        return from_fit(source, f"{source.model} fit given", query)
    if isinstance(source, (str, os.PathLike)):
        return from_fit(ClickModelFit.from_json(source), f"file {source}", query)
    raise InvalidParameterError(
        f"model must be 'pbm' (the log's own), the path of a pbm click-model file, a "
        f"ClickModelFit or a DirectModel; got {type(source).__name__}")
