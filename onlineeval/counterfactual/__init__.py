"""Counterfactual evaluation: the click metric of a ranking that was never shown.

``evaluate(logs, run, metric="clicks@10", propensities="pbm", estimator=...)`` estimates, from
the logs of the ranker(s) that *were* shown, how many clicks per page a candidate ranking (a
TREC run) would get in its top k. Every estimator rests on the examination hypothesis of the
position-based model: a document d of query q shown at rank r is clicked with probability
p_r * a(q, d), with p the examination propensity per rank (only ratios of p matter) and
a(q, d) its attractiveness. The candidate, putting d at rank c <= k, gets
V = mean over pages of sum over its top k of p_c * a(q, d).

``ips`` (Wang et al. 2016; Joachims, Swaminathan & Schnabel 2017). A click on d shown at
rank l counts p_c / p_l (optionally capped at ``clip``); the estimate is the sum over pages
divided by the pages. Given the logged pages, it is unbiased for V when p is right and every
candidate top-k document was on the logged page at a rank with a propensity; a slot the page
did not show counts 0 (``unsupported_share``).

``snips``: self-normalised per (query, document). For each (q, d) the clicks C over the
examination mass M = sum of p_l over the pages of q that showed d (at whatever rank l) give
the rate C / M, and V^ = sum over queries of pages(q) * sum over its top k of p_c * C / M,
over the pages. This is the policy-aware estimator (Oosterhuis & de Rijke 2020), which
divides by the expected examination rho(q, d) = E[p_l] of d under the logging policy,
self-normalised in the manner of Swaminathan & Joachims (2015): the per-page control variate
p_l / rho(q, d) has expectation 1 under the logging policy, and dividing by its realised sum
instead of by the number of pages makes rho cancel, so the logging policy need not be known
(rho estimated by frequency, as in Oosterhuis 2023). The ratio is the position-normalised
"clicks over expected clicks" of sponsored search. Its bias is exactly characterised: given
which pages showed d where, M is fixed and E[C] = a(q, d) * M, so the estimate is
conditionally unbiased whenever p is right and every candidate top-k (q, d) was shown on
some page of q at a rank with a propensity; a pair never shown counts 0. It does not need
the page-level support ips needs (pages of q that did not show d are simply not in M), and
where the logging varies the rank of d (A/B tests, interleaving, randomisation) its
variance is lower than ips's (it weighs pages by p_l instead of 1/p_l); where every page of
q shows d at the same rank it equals ips exactly. Classic self-normalisation over the whole
sample (sum w r / sum w) has no such control variate here: p_c / p_l is a transport of the
click between ranks, not a likelihood ratio with expectation 1, and normalising by it
biases the estimate by an unknown factor; that variant is not offered.

``dr`` (doubly robust; Dudik, Langford & Li 2011; for position bias Oosterhuis 2023).
A position-based click model m(q, d, r) = e_r * a^(q, d) predicts the candidate's clicks,
and the logged clicks correct it with the ips weights: per page, the sum over the
candidate's top k of m(q, d, c), plus the sum over supported slots of
w * (click - m(q, d, l)), w = p^_c / p^_l from the propensities given. With p the true
examination, a supported slot's term has expectation m(q, d, c) + w * (p_l a - m(q, d, l)),
which is p_c a, unbiased, when (i) the model's click probabilities are right
(m(q, d, r) = p_r a: the residual has mean 0, whatever the propensities), or (ii) the
propensities are right and the model's examination is proportional to them (e ~ p; its
attractiveness may be wrong). With both wrong it is biased. In case (ii) the model cancels
on every supported slot and dr equals ips there: the weight of a shown slot is fixed by the
page, so there is no random treatment whose variance a model could absorb, and the model
changes neither bias nor variance where the page has data. (The variance gains reported for
DR under position bias, Oosterhuis 2023, come from dividing by the expected examination
under a known randomised logging policy; with that expectation estimated from the log by
frequency, that DR reduces to snips above.) What dr adds is (a) the model's prediction on
slots the page did not show (ips counts 0 there) and (b) robustness to clipping: with
``clip`` the capped weight multiplies only the residual, so the bias is the capped excess
times the model's error, not times the clicks.

The model. By default (``model=None`` or ``"pbm"``) it is the log's own PBM: examination =
the propensities, attractiveness of (q, d) = its clicks over its examination mass, the
snips rate. dr is then ips on the slots a page showed and p_c times that rate on the slots
it did not (a pair never shown counts 0), unbiased given the layouts when the propensities
are right and each pair was shown on some page of its query; the rates come from the same
log, so their sampling noise is linearised into the interval, as for snips. A model given
(a pbm :class:`~onlineeval.clickmodels.ClickModelFit`, a file from ``clickmodel fit --model
pbm -o``, a :class:`DirectModel`) is treated as exact, so fit it on other data (a
randomised bucket, an earlier period): one fitted by EM on the same log predicts the
unshown slots with noise the interval does not hold (simulated with 27% of slots unshown,
its 95% interval covered 89% of 150 runs). Cascade models and UBM cannot serve as the model
(see :mod:`.direct`). Kiyohara et al. (2022) give DR for cascade behaviour, but their
weights are ratios of ranking probabilities under a stochastic logging policy, which a log
of deterministic rankers does not have.

Uncertainty respects the randomization unit: each estimate is a ratio of per-unit sums
(the estimator's numerator, pages) computed in one SQL pass, and its standard error is the
delta-method variance of that ratio over units (:func:`onlineeval.stats.moments.ratio`);
for snips and dr with the log's own model the per-unit numerator is the linearisation of
the per-(q, d) rates, so their own noise is in it. The interval is normal (estimate +- z *
se). Propensities, also when measured on the same log, are treated as exact. Where a
(q, d) had only a few pages, whether it was shown at all is itself random, and the
interval does not hold that randomness: ``unsupported_share`` says how much of the
candidate is at stake. The effective sample size is Kish's
(sum w)^2 / sum w^2 over the weighted clicks.
"""

from onlineeval.counterfactual.difference import CounterfactualComparison, compare, compare_pairs
from onlineeval.counterfactual.direct import DirectModel
from onlineeval.counterfactual.estimators import ESTIMATORS
from onlineeval.counterfactual.evaluation import CounterfactualResult, evaluate
from onlineeval.counterfactual.propensities import read_propensities

__all__ = ["ESTIMATORS", "CounterfactualComparison", "CounterfactualResult", "DirectModel",
           "compare", "compare_pairs", "evaluate", "read_propensities"]
