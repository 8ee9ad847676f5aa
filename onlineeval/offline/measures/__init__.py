"""trec_eval's measures, one module per family, all registered in :data:`MEASURES`.

=====================  ===========================================================
module                 measures
=====================  ===========================================================
counts                 runid, num_q, num_ret, num_rel, num_rel_ret,
                       num_nonrel_judged_ret
average_precision      map, gm_map, map_cut, recip_rank, bpref, gm_bpref, infAP
precision              P, relative_P, success, recall, Rprec, Rprec_mult, unj,
                       set_P, set_relative_P, set_recall, set_map, set_F, utility
interpolated           iprec_at_recall, 11pt_avg
dcg                    ndcg, ndcg_cut, ndcg_rel, Rndcg, binG, G
rbp                    rbp, rbp_resid, relstring
=====================  ===========================================================

Each measure is a :class:`~onlineeval.offline.measures.base.TrecMeasure`: ``compute(ranked,
params)`` returns one float64 array per value name with one entry per query of the
:class:`~onlineeval.offline.ranking.Ranked` (relstring: strings). Parse parameters with
``MEASURES.get(name).parse(text_after_dot_or_None)``; that gives the value names
(``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``...) and the parsed values.

Nicknames (trec_eval 10.0 ``measures.c``): ``official`` (the default set), ``all_trec``, ``set``.
"""

from __future__ import annotations

from onlineeval.offline.measures import (  # noqa: F401  (registration side effects)
    average_precision,
    counts,
    dcg,
    interpolated,
    precision,
    rbp,
)
from onlineeval.offline.measures.base import (
    MEASURES,
    NICKNAMES,
    Params,
    TrecMeasure,
    expand_names,
    ordered,
    parse_params,
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

__all__ = [
    "MEASURES", "NICKNAMES", "Params", "TrecMeasure", "expand_names", "ordered", "parse_params",
]

# The measures beyond trec_eval and the familiar aliases (AP, nDCG@k, MRR@k, ...) register
# into the same registry whatever module is imported first; last, so MEASURES is complete.
from onlineeval.offline import extra_measures  # noqa: E402, F401
