"""Multiple-testing adjustment of p-values across metrics and treatments.

- ``holm``: Holm's step-down family-wise error control. With the p-values sorted ascending,
  ``p_adj(i) = max_{j <= i} min(1, (m - j + 1) p(j))`` (1-based ranks), mapped back to the
  input order. Matches ``statsmodels.stats.multitest.multipletests(method="holm")``.
- ``bh``: Benjamini–Hochberg false discovery rate, from
  ``scipy.stats.false_discovery_control(method="bh")``.
- ``none``: the raw p-values.

``nan`` p-values (a metric that could not be tested) are left ``nan`` and are not counted in
the family size ``m``.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from onlineeval.registry import Registry

CORRECTIONS: Registry[str] = Registry("correction")
CORRECTIONS.register("holm", "Holm step-down (family-wise error rate)", aliases=("bonferroni-holm",))
CORRECTIONS.register("bh", "Benjamini-Hochberg (false discovery rate)",
                     aliases=("fdr", "benjamini-hochberg", "fdr_bh"))
CORRECTIONS.register("none", "no adjustment", aliases=("raw",))


def _holm(p: np.ndarray) -> np.ndarray:
    m = len(p)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adj = np.empty(m)
    adj[order] = np.maximum.accumulate(scaled)
    return adj


def adjust(p_values: np.ndarray, method: str = "holm") -> np.ndarray:
    """Adjusted p-values in the input order (see the module docstring for the methods)."""
    name = CORRECTIONS.canonical(method)
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if not ok.any():
        return out
    if name == "holm":
        out[ok] = _holm(p[ok])
    elif name == "bh":
        out[ok] = stats.false_discovery_control(p[ok], method="bh")
    else:
        out[ok] = p[ok]
    return out
