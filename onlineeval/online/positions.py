"""``position_ctr``: click-through rate per rank (``sql/online/position_ctr.sql``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from onlineeval.errors import SchemaError
from onlineeval.logs.coerce import as_logs
from onlineeval.online.grouping import per_group, resolve, warn_pooled_experiments
from onlineeval.window import bounds

if TYPE_CHECKING:
    from onlineeval.logs import Logs


def position_ctr(logs: Logs, by: str | Sequence[str] | None = (), start: Any = None,
                 end: Any = None) -> pd.DataFrame:
    """CTR per rank: searches with a click at that rank / searches that showed that rank.

    Parameters
    ----------
    logs
        A log with a results table: a :class:`~onlineeval.logs.Logs`, a log directory or a
        dict of tables (:func:`onlineeval.logs.as_logs`).
    by
        Group columns, as for :func:`onlineeval.online_metrics` (default: none).
    start, end
        The window ``start <= ts < end`` of the searches counted (None: unbounded; with a
        bound, searches without ts are left out), as the readout's window
        (:mod:`onlineeval.window`).

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``rank``, ``shown`` (searches that showed the rank), ``clicked``
        (of those, searches with >= 1 click at the rank), ``clicks`` (click rows at the rank)
        and ``ctr = clicked / shown``; sorted by group and rank. Warns, naming them, when
        the log holds several experiments and ``by`` does not include ``experiment``.
    """
    logs = as_logs(logs)
    if not logs.has_results:
        raise SchemaError(
            f"position CTR needs the results table (which ranks each page showed); the log "
            f"{logs.source} has none. Add results.* (search_id, rank, doc_id) to the log."
        )
    lo, hi = bounds(start, end)
    grouping = resolve(logs, by)
    warn_pooled_experiments(logs, grouping)
    return per_group(logs, "online/position_ctr", grouping, win_start=lo, win_end=hi)
