"""Cascade click models: the user reads the page top down. CM, DCM, SDBN and DBN.

All four are one chain (Chuklin et al. 2015, ch. 3): the user examines the first result; at
an examined result she clicks with probability alpha_qd (attractiveness); after a click she
is done with probability u (satisfaction), otherwise — and after a result she did not click —
she reads on with probability g. The models differ in u and g:

====== =================================== ============ ===========================
model  u (stop after a click)              g (read on)  estimation
====== =================================== ============ ===========================
cm     1 (Craswell et al. 2008)            1            closed form (§4.1)
dcm    1 - lambda_r, per rank              1            EM (exact maximum likelihood)
sdbn   sigma_qd, per (query, doc)          1            closed form (Chapelle & Zhang)
dbn    sigma_qd, per (query, doc)          gamma        EM (Chapelle & Zhang 2009)
====== =================================== ============ ===========================

The closed forms count every result down to the first (cm) or last (sdbn) click as examined
and nothing below it as examined: for cm that is its likelihood's maximum over the ranks it
can explain (a click below the first one has probability 0 under cm, so such a page has
log-likelihood -inf); for sdbn it is the estimator of the literature, not the maximum of the
g = 1 chain's likelihood, which also weighs an unsatisfied user reading past the last click.
DCM is fitted by EM on that full likelihood (the closed form of Guo et al. 2009 is its
starting point); DBN by EM with gamma estimated too.

The EM E-step is exact: the evidence below the last click (no further click) is summed over
with a backward pass over each pattern's remaining results.
"""

from __future__ import annotations

import numpy as np

from onlineeval.clickmodels._base import (
    FitTrace,
    Params,
    Prior,
    bernoulli_ll,
    beta_update,
    default_value,
    log_prior,
    pair_sums,
    rank_sums,
    run_em,
    take_pair,
    take_rank,
)
from onlineeval.clickmodels.patterns import Patterns


class Posterior:
    """Exact posteriors of one E-step (and the log-likelihood) for the cascade chain."""

    def __init__(self, alpha: np.ndarray, u: np.ndarray, g: float, pat: Patterns) -> None:
        n_pat, width = alpha.shape
        mask, click = pat.mask, pat.click & pat.mask
        n = mask.sum(axis=1)
        last = pat.last_click()
        pos = np.arange(width)[None, :]
        rows = np.arange(n_pat)
        # per-position vectors are rows of these transposed copies, so the loops over the
        # (few) positions read contiguous memory
        a_t = np.ascontiguousarray(alpha.T)
        m_t = np.ascontiguousarray(mask.T)
        # z_t[k]: P(no click at positions k.. | position k examined); 1 past the page end
        z_t = np.ones((width + 1, n_pat))
        with np.errstate(invalid="ignore", divide="ignore"):
            for k in range(width - 1, -1, -1):
                z_t[k] = np.where(m_t[k], (1 - a_t[k]) * ((1 - g) + g * z_t[k + 1]), 1.0)
            at_l = np.clip(last, 0, None)
            u_l = u[rows, at_l]
            z_next = z_t[at_l + 1, rows]
            clicked_any = last >= 0
            has_next = clicked_any & (last + 1 < n)
            go_on = (1 - u_l) * ((1 - g) + g * z_next)  # unsatisfied, then no click below
            tail = np.where(has_next, u_l + go_on, 1.0)
            #: P(satisfied at the last click | data), NaN where nothing follows it
            self.p_sat_last = np.where(has_next, u_l / tail, np.nan)
            e_after = np.where(clicked_any, np.where(has_next, (1 - u_l) * g * z_next / tail,
                                                     0.0), 1.0)
            # posterior examination: 1 down to the last click, then carried on by the chain
            e_t = np.zeros((width, n_pat))
            step = g * z_t[:width] / ((1 - g) + g * z_t[:width])
            prev = np.zeros(n_pat)
            for k in range(width):
                e_k = np.where(k <= last, 1.0,
                               np.where(k == last + 1, e_after, prev * step[k]))
                e_t[k] = np.where(m_t[k], e_k, 0.0)
                prev = e_t[k]
            exam = e_t.T
            before = (pos < last[:, None]) & mask
            upto = (pos <= last[:, None]) & mask
            head = np.where(upto, bernoulli_ll(alpha, click), 0.0).sum(axis=1)
            head += np.where(before & click, np.log(1 - u), 0.0).sum(axis=1)
            head += np.log(g) * before.sum(axis=1) if g != 1 else 0.0
            self.loglik = head + np.log(np.where(clicked_any, tail, z_t[0]))
        self.exam = exam
        self.p_attr = np.where(upto, click, alpha * (1 - exam))
        self.last = last
        self.has_next = has_next
        self.before = before
        # reading on from each position to the next one: expected times eligible / taken
        after = (pos > last[:, None]) & (pos + 1 < n[:, None]) & mask
        nxt = np.zeros_like(exam)
        nxt[:, :-1] = exam[:, 1:]
        w = pat.weight
        elig_l = np.where(has_next, go_on / tail, 0.0)
        e_l_next = np.where(has_next, e_after, 0.0)
        self.cont_den = float((w * (before.sum(axis=1) + elig_l
                                    + np.where(after, exam, 0.0).sum(axis=1))).sum())
        self.cont_num = float((w * (before.sum(axis=1) + e_l_next
                                    + np.where(after, nxt, 0.0).sum(axis=1))).sum())

    def satisfaction_terms(self, pat: Patterns) -> tuple[np.ndarray, np.ndarray]:
        """(where, P(satisfied)) over the clicks whose satisfaction the data speaks about:
        every click above the last one (not satisfied: the user went on) and the last one
        when results follow it."""
        width = pat.mask.shape[1]
        pos = np.arange(width)[None, :]
        at_last = (pos == self.last[:, None]) & self.has_next[:, None]
        where = (self.before & pat.click) | at_last
        p = np.where(at_last, self.p_sat_last[:, None], 0.0)
        return where, p


def _chain_marginals(alpha: np.ndarray, u: np.ndarray, g: float, mask: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """P(E_k = 1) and P(C_k = 1) of the chain, without looking at any click."""
    exam = np.zeros(alpha.shape)
    e = np.ones(alpha.shape[0])
    for k in range(alpha.shape[1]):
        exam[:, k] = np.where(mask[:, k], e, 0.0)
        e = np.where(mask[:, k], e * g * (1 - alpha[:, k] * u[:, k]), e)
    return exam, exam * alpha


class _Cascade:
    name = ""
    summary = ""
    pair_columns: tuple[str, ...] = ("attractiveness",)

    def bind(self, params: Params, pat: Patterns, index: np.ndarray, prior: Prior
             ) -> dict[str, np.ndarray]:
        d = default_value(prior)
        return {"alpha": take_pair(params.pair["attractiveness"], index, d),
                "u": self._u(params, pat, index, d), "g": np.array(self._g(params))}

    def _u(self, params: Params, pat: Patterns, index: np.ndarray, d: float) -> np.ndarray:
        raise NotImplementedError

    def _g(self, params: Params) -> float:
        return 1.0

    def examination(self, b: dict[str, np.ndarray], pat: Patterns) -> np.ndarray:
        return _chain_marginals(b["alpha"], b["u"], float(b["g"]), pat.mask)[0]

    def click_probs(self, b: dict[str, np.ndarray], pat: Patterns) -> np.ndarray:
        return _chain_marginals(b["alpha"], b["u"], float(b["g"]), pat.mask)[1]

    def log_likelihood(self, b: dict[str, np.ndarray], pat: Patterns) -> np.ndarray:
        return Posterior(b["alpha"], b["u"], float(b["g"]), pat).loglik

    def _em_step(self, params: Params, pat: Patterns, prior: Prior, den_a: np.ndarray
                 ) -> tuple[float, Posterior, np.ndarray, np.ndarray]:
        """E-step at ``params``; updates attractiveness; returns the objective there, the
        posteriors and the satisfaction terms for the model's own M-step."""
        b = self.bind(params, pat, pat.pair, prior)
        post = Posterior(b["alpha"], b["u"], float(b["g"]), pat)
        obj = float((pat.weight * post.loglik).sum()) + self.log_prior(params, prior)
        params.pair["attractiveness"] = beta_update(
            pair_sums(pat, pat.mask, post.p_attr), den_a, prior)
        where, p_sat = post.satisfaction_terms(pat)
        return obj, post, where, p_sat

    def objective(self, params: Params, pat: Patterns, prior: Prior) -> float:
        ll = self.log_likelihood(self.bind(params, pat, pat.pair, prior), pat)
        return float((pat.weight * ll).sum()) + self.log_prior(params, prior)

    def relevance(self, params: Params) -> np.ndarray | None:
        return params.pair["attractiveness"]


class CM(_Cascade):
    name = "cascade"
    summary = "cascade model: read down to the first click, then stop"

    def _u(self, params: Params, pat: Patterns, index: np.ndarray, d: float) -> np.ndarray:
        return np.ones(index.shape)

    def fit(self, pat: Patterns, prior: Prior, max_iter: int, tol: float
            ) -> tuple[Params, FitTrace]:
        first = pat.first_click()
        pos = np.arange(pat.mask.shape[1])[None, :]
        seen = pat.mask & ((first[:, None] < 0) | (pos <= first[:, None]))
        alpha = beta_update(pair_sums(pat, seen & pat.click, 1.0), pair_sums(pat, seen, 1.0),
                            prior)
        params = Params(pair={"attractiveness": alpha})
        # what the closed form maximises: the ranks down to the first click
        ll = np.where(seen, bernoulli_ll(alpha[np.clip(pat.pair, 0, None)], pat.click), 0.0)
        obj = float((pat.weight[:, None] * ll).sum()) + self.log_prior(params, prior)
        return params, FitTrace([obj], 1, True)

    def log_prior(self, params: Params, prior: Prior) -> float:
        return log_prior(params.pair["attractiveness"], prior)


class _Satisfied(_Cascade):
    """sdbn and dbn: satisfaction per (query, doc) ends the reading after a click."""

    pair_columns = ("attractiveness", "satisfaction")

    def _u(self, params: Params, pat: Patterns, index: np.ndarray, d: float) -> np.ndarray:
        return take_pair(params.pair["satisfaction"], index, d)

    def log_prior(self, params: Params, prior: Prior) -> float:
        return (log_prior(params.pair["attractiveness"], prior)
                + log_prior(params.pair["satisfaction"], prior))

    def relevance(self, params: Params) -> np.ndarray | None:
        return params.pair["attractiveness"] * params.pair["satisfaction"]


class SDBN(_Satisfied):
    name = "sdbn"
    summary = ("simplified DBN: attractiveness and satisfaction per (query, doc), read on "
               "with probability 1, closed form")

    def fit(self, pat: Patterns, prior: Prior, max_iter: int, tol: float
            ) -> tuple[Params, FitTrace]:
        last = pat.last_click()
        pos = np.arange(pat.mask.shape[1])[None, :]
        upto = pat.mask & (pos <= last[:, None])
        clicks = pair_sums(pat, upto & pat.click, 1.0)
        alpha = beta_update(clicks, pair_sums(pat, upto, 1.0), prior)
        sigma = beta_update(pair_sums(pat, pos == last[:, None], 1.0), clicks, prior)
        params = Params(pair={"attractiveness": alpha, "satisfaction": sigma})
        return params, FitTrace([self.simplified_objective(params, pat, prior)], 1, True)

    def simplified_objective(self, params: Params, pat: Patterns, prior: Prior) -> float:
        """What the closed form maximises: examined down to the last click and no further,
        satisfied exactly at the last click."""
        last = pat.last_click()
        pos = np.arange(pat.mask.shape[1])[None, :]
        upto = pat.mask & (pos <= last[:, None])
        idx = np.clip(pat.pair, 0, None)
        a = params.pair["attractiveness"][idx]
        s = params.pair["satisfaction"][idx]
        ll = np.where(upto, bernoulli_ll(a, pat.click), 0.0)
        ll += np.where(upto & pat.click, bernoulli_ll(s, pos == last[:, None]), 0.0)
        return float((pat.weight[:, None] * ll).sum()) + self.log_prior(params, prior)



class DCM(_Cascade):
    name = "dcm"
    summary = ("dependent click model: attractiveness per (query, doc), read on after a "
               "click with probability lambda per rank")

    def _u(self, params: Params, pat: Patterns, index: np.ndarray, d: float) -> np.ndarray:
        return 1 - take_rank(params.rank["continuation"], pat.rank, d)

    def fit(self, pat: Patterns, prior: Prior, max_iter: int, tol: float
            ) -> tuple[Params, FitTrace]:
        size = pat.max_rank + 1
        last = pat.last_click()
        pos = np.arange(pat.mask.shape[1])[None, :]
        upto = pat.mask & (pos <= last[:, None])
        # start: the closed form of Guo et al. (examined down to the last click only)
        alpha = beta_update(pair_sums(pat, upto & pat.click, 1.0), pair_sums(pat, upto, 1.0),
                            prior)
        clicks_r = rank_sums(pat, upto & pat.click, 1.0, size)
        lam = beta_update(clicks_r - rank_sums(pat, pos == last[:, None], 1.0, size), clicks_r,
                          prior)
        params = Params(pair={"attractiveness": alpha}, rank={"continuation": lam})
        den_a = pair_sums(pat, pat.mask, 1.0)

        def step() -> float:
            obj, _, where, p_sat = self._em_step(params, pat, prior, den_a)
            params.rank["continuation"] = beta_update(
                rank_sums(pat, where, 1 - p_sat, size), rank_sums(pat, where, 1.0, size), prior)
            params.rank["continuation"][0] = np.nan
            return obj

        trace = run_em(step, max_iter, tol)
        trace.history.append(self.objective(params, pat, prior))
        return params, trace

    def log_prior(self, params: Params, prior: Prior) -> float:
        return (log_prior(params.pair["attractiveness"], prior)
                + log_prior(params.rank["continuation"][1:], prior))


class DBN(_Satisfied):
    name = "dbn"
    summary = ("dynamic Bayesian network: attractiveness and satisfaction per (query, doc), "
               "read on with probability gamma")

    def _g(self, params: Params) -> float:
        return float(params.scalar["gamma"])

    def fit(self, pat: Patterns, prior: Prior, max_iter: int, tol: float
            ) -> tuple[Params, FitTrace]:
        n_pairs = len(pat.pairs)
        params = Params(pair={"attractiveness": np.full(n_pairs, 0.5),
                              "satisfaction": np.full(n_pairs, 0.5)},
                        scalar={"gamma": 0.9})
        den_a = pair_sums(pat, pat.mask, 1.0)

        def step() -> float:
            obj, post, where, p_sat = self._em_step(params, pat, prior, den_a)
            params.pair["satisfaction"] = beta_update(
                pair_sums(pat, where, p_sat), pair_sums(pat, where, 1.0), prior)
            if post.cont_den > 0:
                params.scalar["gamma"] = post.cont_num / post.cont_den
            return obj

        trace = run_em(step, max_iter, tol)
        trace.history.append(self.objective(params, pat, prior))
        return params, trace

