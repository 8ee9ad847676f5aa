"""Which offline measure agrees best with which online metric: the τ matrix."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from onlineeval.agreement.across import _numeric
from onlineeval.agreement.core import association
from onlineeval.errors import SchemaError
from onlineeval.levels import check_level


def tau_matrix(table: pd.DataFrame, offline: Sequence[str], online: Sequence[str],
               confidence: float = 0.95) -> pd.DataFrame:
    """Kendall's τ-b (and Spearman's ρ, sign agreement) for every offline × online column pair.

    Parameters
    ----------
    table : one row per experiment; offline-delta columns and online-delta columns.
    offline, online : the columns to pair. Each pair uses the experiments where both values
        are present (``n`` says how many); a value that is not a number raises
        :class:`~onlineeval.errors.SchemaError` naming its row and column.

    Returns
    -------
    Long DataFrame: offline, online, n, kendall_tau, kendall_p, spearman_rho, spearman_p,
    sign_agreement. ``pivot(index="offline", columns="online", values="kendall_tau")`` gives
    the matrix.
    """
    confidence = check_level(confidence, "confidence")
    offline, online = list(offline), list(online)
    missing = [c for c in offline + online if c not in table.columns]
    if missing:
        raise SchemaError(
            f"τ matrix: column(s) {missing} not in the table; found {list(table.columns)}"
        )
    rows = []
    for off in offline:
        for on in online:
            # a cell that is not a number is an error (as in agreement()), never a silent drop
            pair = pd.DataFrame({c: _numeric(table, c, "τ matrix table", False)
                                 for c in (off, on)}).dropna()
            a = association(pair[off].to_numpy(), pair[on].to_numpy(), confidence)
            rows.append({
                "offline": off, "online": on, "n": a["n"], "kendall_tau": a["kendall_tau"],
                "kendall_p": a["kendall_p"], "spearman_rho": a["spearman_rho"],
                "spearman_p": a["spearman_p"], "sign_agreement": a["sign_agreement"],
            })
    return pd.DataFrame(rows, columns=["offline", "online", "n", "kendall_tau", "kendall_p",
                                       "spearman_rho", "spearman_p", "sign_agreement"])
