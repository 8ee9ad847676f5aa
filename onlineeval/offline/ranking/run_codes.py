"""The run as the engine uses it: rows of judged queries, with their query index and scores."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from onlineeval.offline.ranking import string_codes as sc
from onlineeval.offline.ranking.docno_keys import DocnoKeys, PythonKeys
from onlineeval.offline.ranking.judgments import Judgments
from onlineeval.offline.reading import Columns
from onlineeval.offline.reading.columns import TextList


@dataclass
class RunCodes:
    """A run's rows of judged queries (file order; see :func:`encode_run`)."""

    name: str                   # the run source, for messages
    runid: str
    query_code: Any             # int[N]: code of each row's qid among the run's qids
    query_of_code: np.ndarray   # int32[·]: query index (judgments) of each run qid code
    docno: Any                  # the docno column (pyarrow) of these rows
    score: np.ndarray           # float64[N]
    ignored: int                # run queries without judgments (their rows are dropped)
    examples: list[str]         # a few run qids, kept when no run query is judged
    _codes: tuple[np.ndarray, Any, np.ndarray] | None = field(default=None, repr=False)

    @cached_property
    def keys(self) -> DocnoKeys | PythonKeys | None:
        """Hashed docno keys (None for docnos too long to hash; see DocnoKeys)."""
        return DocnoKeys.of(self.docno)

    def docno_codes(self) -> tuple[np.ndarray, Any, np.ndarray]:
        """(code of each row's docno, the distinct docnos, the byte-order rank of each):
        exact, for the general path (hashes every string and sorts the distinct ones)."""
        if self._codes is None:
            dcode, duniq = sc.encode(self.docno)
            self._codes = (dcode, duniq, sc.byte_rank(duniq))
        return self._codes

    def query_index(self) -> np.ndarray:
        """The query index of each row."""
        return self.query_of_code[self.query_code]


def encode_run(r: Columns, judgments: Judgments) -> RunCodes:
    """Encode the run's qids against the judged ones and drop rows of unjudged queries."""
    run_qid, run_docno, score = r.qid, r.docno, r.value
    rqcode, rquniq = sc.encode(run_qid)
    # -1: a run query without judgments
    qval = sc.lookup_map(rquniq, judgments.qid_values, judgments.qid_index)
    ignored = int(np.count_nonzero(qval < 0))
    # a few run qids for the message when no run query is judged (see query_overlap)
    examples = list(sc.to_object(rquniq[:3])) if ignored == len(qval) else []
    if ignored:
        keep = np.flatnonzero((qval >= 0)[rqcode])
        run_docno = sc.take(run_docno, keep)
        score = score[keep]
        rqcode = rqcode[keep]
        del keep
    del run_qid, rquniq
    if not isinstance(run_docno, TextList):
        run_docno = sc.as_arrow(run_docno)
    return RunCodes(r.name, r.runid, rqcode, qval, run_docno, score, ignored, examples)
