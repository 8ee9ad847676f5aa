"""Every offline measure, one module per family, all registered in :data:`MEASURES`.

=====================  ===========================================================
module                 measures
=====================  ===========================================================
counts                 runid, num_q, num_ret, num_rel, num_rel_ret,
                       num_nonrel_judged_ret
average_precision      map, gm_map, map_cut, recip_rank, RR@k, bpref, gm_bpref, infAP
precision              P, relative_P, success, recall, Rprec, Rprec_mult, unj,
                       set_P, set_relative_P, set_recall, set_map, set_F, utility
interpolated           iprec_at_recall, 11pt_avg
dcg                    ndcg, ndcg_cut, ndcg_rel, Rndcg, binG, G
rbp                    rbp, rbp_resid, relstring
cumulative_gain        CG, DCG, DCG_exp, nDCG_exp
err                    ERR
top_k_counts           R_cap, F, fallout, judged, Best
rbo                    RBO between two runs (not a judged measure: documented only)
=====================  ===========================================================

Each measure is a :class:`~onlineeval.offline.measures.base.Measure` declaring its parameters,
formula, edge cases, citation and the tool it matches; ``compute(ranked, params.values)``
returns one float64 array per value name with one entry per query of the
:class:`~onlineeval.offline.ranking.Ranked` (relstring: strings). A name — trec_eval's or a
familiar one such as ``nDCG@10`` — resolves with :func:`~onlineeval.offline.measures.names.
parse_measure`. The reference page ``docs/reference/offline-measures.md`` is generated from
this registry (``python -m onlineeval.offline.measures.docs``).

Nicknames (trec_eval 10.0 ``measures.c``): ``official`` (the default set), ``all_trec``, ``set``.
"""

from __future__ import annotations

from onlineeval.namespace import lazy_submodules
from onlineeval.offline.measures import (  # noqa: F401  (registration side effects)
    average_precision,
    counts,
    cumulative_gain,
    dcg,
    err,
    interpolated,
    precision,
    rbp,
    top_k_counts,
)
from onlineeval.offline.measures.base import (
    MEASURES,
    NICKNAMES,
    Measure,
    Option,
    Params,
    ordered,
)

NICKNAMES["official"] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P",
)
NICKNAMES["all_trec"] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid",
    "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
    "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
    "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
)
NICKNAMES["set"] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
    "set_relative_P", "set_map", "set_F",
)

__all__ = ["MEASURES", "NICKNAMES", "Measure", "Option", "Params", "ordered"]

# the other submodules (docs: the reference generator; rbo, top_k) on first access
__getattr__ = lazy_submodules(__name__)
