"""Agreement within one experiment: per-query offline deltas against per-query online credit.

The offline side is a per-query delta of a measure (treatment − control, e.g. from
:func:`onlineeval.offline.compare`'s per-query scores); the online side a per-query outcome
oriented the same way, e.g. the interleaving credit of the treatment minus that of the control
averaged over the query's pages, or a per-query CTR difference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from onlineeval.agreement.core import association
from onlineeval.errors import InputError
from onlineeval.levels import check_level


def _series(values: object, what: str) -> pd.Series:
    if isinstance(values, pd.Series):
        s = values.copy()
    elif isinstance(values, Mapping):
        s = pd.Series(dict(values), dtype=object)
    elif isinstance(values, pd.DataFrame) and values.shape[1] == 2:
        s = values.set_index(values.columns[0])[values.columns[1]]
    else:
        raise InputError(
            f"{what} per-query values must be a Series indexed by query, a dict "
            f"{{query: value}} or a two-column DataFrame (query, value); got "
            f"{type(values).__name__}"
        )
    s.index = s.index.astype(str)
    if s.index.duplicated().any():
        dup = s.index[s.index.duplicated()][0]
        raise InputError(f"{what} per-query values list query {dup!r} more than once")
    values = pd.to_numeric(s, errors="coerce")
    bad = values.isna() & s.notna()
    if bad.any():
        q = bad[bad].index[0]
        raise InputError(f"{what} per-query value of query {q!r} is not a number: {s[q]!r} "
                         f"({int(bad.sum())} such queries)")
    return values.astype(float)


def per_query_agreement(offline: object, online: object,
                        confidence: float = 0.95) -> dict[str, Any]:
    """Sign agreement, Kendall's τ-b and Spearman's ρ between per-query deltas.

    Only queries present (and non-null) on both sides are paired; ``n_offline_only`` and
    ``n_online_only`` count the others (e.g. judged queries nobody searched for).
    See :mod:`onlineeval.agreement.core` for the statistics.
    """
    confidence = check_level(confidence, "confidence")
    off = _series(offline, "offline").dropna()
    on = _series(online, "online").dropna()
    common = off.index.intersection(on.index).sort_values()
    result = association(off.loc[common].to_numpy(), on.loc[common].to_numpy(), confidence)
    result["n_offline_only"] = int(len(off.index.difference(on.index)))
    result["n_online_only"] = int(len(on.index.difference(off.index)))
    return result
