"""Offline–online agreement: do offline gains predict online wins?

- :func:`agreement` — across experiments (ranker pairs): sign agreement with a Wilson
  interval, Kendall's τ-b and Spearman's ρ with p-values, and the decision table;
- :func:`with_counterfactual` — adds each experiment's counterfactual delta, estimated on the
  logging ranker's log, as a third source (``agreement(..., counterfactual=...)``);
- :func:`tau_matrix` — which offline measure agrees best with which online metric;
- :func:`per_query_agreement` — within one experiment, per-query offline deltas against
  per-query online credit; :mod:`~onlineeval.agreement.per_query` reads the per-query online
  deltas of an experiment from its logs (:func:`per_query_interleaving`,
  :func:`per_query_ab_ctr`) and pairs them with offline ones (:func:`within_experiment`).

Every statistic is also given in the result shape every comparison shares
(:meth:`AgreementResult.results`, :func:`association_results`).
"""

from __future__ import annotations

from onlineeval.agreement.across import DECISIONS, AgreementResult, agreement
from onlineeval.agreement.core import association, association_results
from onlineeval.agreement.counterfactual import with_counterfactual
from onlineeval.agreement.matrix import tau_matrix
from onlineeval.agreement.per_query import (
    PerQueryOnline,
    per_query_ab_ctr,
    per_query_interleaving,
    within_experiment,
)
from onlineeval.agreement.within import per_query_agreement
from onlineeval.namespace import lazy_submodules, make_callable

__all__ = [
    "DECISIONS", "AgreementResult", "PerQueryOnline", "agreement", "association",
    "association_results", "per_query_ab_ctr", "per_query_agreement", "per_query_interleaving",
    "tau_matrix", "with_counterfactual", "within_experiment",
]


# onlineeval.agreement(table, ...) runs agreement() (onlineeval.namespace)
make_callable(__name__)
__getattr__ = lazy_submodules(__name__)
