"""The run as the engine uses it: rows of judged queries as integer codes, with their scores."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from onlineeval.offline.ranking import string_codes as sc
from onlineeval.offline.ranking.judgments import Judgments
from onlineeval.offline.reading import Columns


@dataclass
class RunCodes:
    """A run's rows of judged queries (file order), as codes (see :func:`encode_run`)."""

    name: str                   # the run source, for messages
    runid: str
    query_code: Any             # int[N]: code of each row's qid among the run's qids
    query_of_code: np.ndarray   # int32[·]: query index (judgments) of each run qid code
    docno_code: Any             # int[N]: code of each row's docno in ``docnos``
    docnos: Any                 # the distinct docnos of these rows
    docno_rank: np.ndarray      # int64: byte-order rank of each of ``docnos``
    score: np.ndarray           # float64[N]
    ignored: int                # run queries without judgments (their rows are dropped)
    examples: list[str]         # a few run qids, kept when no run query is judged

    @property
    def n_docnos(self) -> int:
        return max(len(self.docno_rank), 1)

    def rank_of_code(self) -> np.ndarray:
        """Byte-order rank of each docno code, int32 when it fits (half the bytes)."""
        return self.docno_rank.astype(np.int32 if self.n_docnos < 2**31 else np.int64)

    def free_rows(self) -> None:
        """Drop the per-row codes once the rows are ranked (they are the largest arrays)."""
        self.query_code = self.docno_code = None


def encode_run(r: Columns, judgments: Judgments) -> RunCodes:
    """Encode the run's qids against the judged ones, drop rows of unjudged queries, encode
    the docnos and rank them in byte order."""
    run_qid, run_docno, score = r.qid, r.docno, r.value
    rqcode, rquniq = sc.encode(run_qid)
    # -1: a run query without judgments
    qval = sc.lookup_map(rquniq, judgments.qid_values, judgments.qid_index)
    ignored = int(np.count_nonzero(qval < 0))
    # a few run qids for the message when no run query is judged (see query_overlap)
    examples = list(sc.to_object(rquniq[:3])) if ignored == len(qval) else []
    if ignored:
        in_q = (qval >= 0)[rqcode]
        run_docno = sc.take(run_docno, in_q)
        score = score[in_q]
        rqcode = rqcode[in_q]
        del in_q
    del run_qid, rquniq
    dcode, duniq = sc.encode(run_docno)
    del run_docno
    return RunCodes(r.name, r.runid, rqcode, qval, dcode, duniq, sc.byte_rank(duniq), score,
                    ignored, examples)
