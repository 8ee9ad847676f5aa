"""Offline–online agreement: do offline gains predict online wins?

- :func:`agreement` — across experiments (ranker pairs): sign agreement with a Wilson
  interval, Kendall's τ-b and Spearman's ρ with p-values, and the decision table;
- :func:`tau_matrix` — which offline measure agrees best with which online metric;
- :func:`per_query_agreement` — within one experiment, per-query offline deltas against
  per-query online credit.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from onlineeval.agreement.across import DECISIONS, AgreementResult, agreement
from onlineeval.agreement.core import association
from onlineeval.agreement.matrix import tau_matrix
from onlineeval.agreement.within import per_query_agreement

__all__ = [
    "DECISIONS", "AgreementResult", "agreement", "association", "per_query_agreement",
    "tau_matrix",
]


class _CallableModule(types.ModuleType):
    """Importing this package sets ``onlineeval.agreement`` to the package itself (Python
    binds a submodule to its parent's attribute), which would shadow the lazily exported
    function of the same name; calling the package calls :func:`agreement`, so
    ``onlineeval.agreement(table, ...)`` works whichever import happened first."""

    def __call__(self, *args: Any, **kwargs: Any) -> AgreementResult:
        return agreement(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
