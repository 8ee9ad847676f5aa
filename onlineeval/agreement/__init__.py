"""Offline–online agreement: do offline gains predict online wins?

- :func:`agreement` — across experiments (ranker pairs): sign agreement with a Wilson
  interval, Kendall's τ-b and Spearman's ρ with p-values, and the decision table;
- :func:`tau_matrix` — which offline measure agrees best with which online metric;
- :func:`per_query_agreement` — within one experiment, per-query offline deltas against
  per-query online credit.
"""

from __future__ import annotations

from onlineeval.agreement.across import DECISIONS, AgreementResult, agreement
from onlineeval.agreement.core import association
from onlineeval.agreement.matrix import tau_matrix
from onlineeval.agreement.within import per_query_agreement
from onlineeval.namespace import lazy_submodules, make_callable

__all__ = [
    "DECISIONS", "AgreementResult", "agreement", "association", "per_query_agreement",
    "tau_matrix",
]


# onlineeval.agreement(table, ...) runs agreement() (onlineeval.namespace)
make_callable(__name__)
__getattr__ = lazy_submodules(__name__)
