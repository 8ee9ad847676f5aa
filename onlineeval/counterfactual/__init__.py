"""Counterfactual evaluation: the click metric of a ranking that was never shown.

``evaluate(logs, run, metric="clicks@10", propensities="pbm")`` estimates, from the logs of
the ranker that *was* shown, how many clicks per page a candidate ranking (a TREC run) would
get in its top k, with the position-based inverse-propensity estimator (IPS; Joachims,
Swaminathan & Schnabel 2017; Wang et al. 2016): under the examination hypothesis a click on
document d shown at rank l is evidence of relevance at rate p_l, so it counts for the
candidate, which puts d at rank c <= k, with weight p_c / p_l::

    clicks@k (candidate) = sum over pages, over clicked (d, l) with c(d) <= k, of
                           min(p_c / p_l, clip)  /  pages

This is unbiased when the propensities p are the true examination probabilities (up to a
common factor: only ratios enter), clicks follow the position-based model, and every
document of the candidate's top k was shown on the logged page at some rank (support).
A top-k document the logged page did not show contributes nothing, so the estimate is then
biased low; ``unsupported_share`` reports the share of such candidate slots. Clipping the
weights at ``clip`` trades that unbiasedness for variance; how many clicks were clipped is
reported.

Uncertainty respects the randomization unit: the estimate is a ratio of per-unit sums
(weighted clicks, pages), and its standard error is the delta-method variance of that ratio
over units (:func:`onlineeval.stats.moments.ratio`), so correlated pages of one user are not
counted as independent. The interval is normal (estimate +- z * se). The effective sample
size is Kish's (sum w)^2 / sum w^2 over the weighted clicks: how many unweighted clicks
would give the same precision.
"""

from onlineeval.counterfactual.ips import (
    CounterfactualResult,
    evaluate,
    ips_from_terms,
    read_propensities,
)

__all__ = ["CounterfactualResult", "evaluate", "ips_from_terms", "read_propensities"]
