"""Click models whose clicks are independent given the page: rank CTR, PBM and UBM.

- ``ctr`` (rank CTR, Chuklin et al. 2015 §3.2.1): P(C_r = 1) = p_r, one probability per rank.
- ``pbm`` (position-based model, §3.3): P(C = 1) = gamma_r * alpha_qd; examination gamma_r
  depends on the rank only, attractiveness alpha_qd on the query and document.
- ``ubm`` (user browsing model, Dupret & Piwowarski 2008, §3.5): P(C = 1) = gamma_{r,d} *
  alpha_qd, with d the distance from the rank of the nearest click above (d = r when there
  is none), so examination depends on where the user last clicked.

PBM and UBM are fitted by EM on counts per (pair, rank) or (pair, rank, distance), aggregated
from the patterns; their likelihood only fixes the products gamma * alpha, so the scale of
gamma is set by the prior and the fit's starting point — compare examination between ranks
as ratios (:attr:`ClickModelFit.position_bias` column ``relative``).
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
    rank_sums,
    run_em,
    take_pair,
    take_rank,
)
from onlineeval.clickmodels.patterns import Patterns


class RankCTR:
    name = "ctr"
    summary = "rank CTR baseline: one click probability per rank"
    pair_columns: tuple[str, ...] = ()

    def fit(self, pat: Patterns, prior: Prior, max_iter: int, tol: float
            ) -> tuple[Params, FitTrace]:
        size = pat.max_rank + 1
        shown = rank_sums(pat, pat.mask, 1.0, size)
        clicked = rank_sums(pat, pat.mask & pat.click, 1.0, size)
        params = Params(rank={"ctr": beta_update(clicked, shown, prior)})
        params.rank["ctr"][0] = np.nan
        obj = float((pat.weight * self.log_likelihood(self.bind(params, pat, pat.pair, prior),
                                                      pat)).sum()) + self.log_prior(params, prior)
        return params, FitTrace([obj], 1, True)

    def bind(self, params: Params, pat: Patterns, index: np.ndarray, prior: Prior
             ) -> dict[str, np.ndarray]:
        return {"p": take_rank(params.rank["ctr"], pat.rank, default_value(prior))}

    def click_probs(self, b: dict[str, np.ndarray], pat: Patterns) -> np.ndarray:
        return np.where(pat.mask, b["p"], 0.0)

    def examination(self, b: dict[str, np.ndarray], pat: Patterns) -> np.ndarray:
        # the baseline has no examination variable: its position curve is the CTR itself
        return self.click_probs(b, pat)

    def log_likelihood(self, b: dict[str, np.ndarray], pat: Patterns) -> np.ndarray:
        return np.where(pat.mask, bernoulli_ll(b["p"], pat.click), 0.0).sum(axis=1)

    def log_prior(self, params: Params, prior: Prior) -> float:
        return log_prior(params.rank["ctr"][1:], prior)

    def relevance(self, params: Params) -> np.ndarray | None:
        return None


class _Examination:
    """PBM and UBM: P(C = 1) = gamma[cell] * alpha[pair] with independent clicks."""

    name = ""
    summary = ""
    pair_columns: tuple[str, ...] = ("attractiveness",)

    def _cells(self, pat: Patterns) -> np.ndarray:
        raise NotImplementedError

    def _n_cells(self, max_rank: int) -> int:
        raise NotImplementedError

    def _gamma_param(self, gamma: np.ndarray, max_rank: int) -> np.ndarray:
        raise NotImplementedError

    def _gamma_flat(self, params: Params) -> np.ndarray:
        raise NotImplementedError

    def fit(self, pat: Patterns, prior: Prior, max_iter: int, tol: float
            ) -> tuple[Params, FitTrace]:
        cells = self._cells(pat)
        n_cells = self._n_cells(pat.max_rank)
        m = pat.mask
        key = pat.pair[m].astype(np.int64) * n_cells + cells[m]
        w = np.broadcast_to(pat.weight[:, None], m.shape)[m]
        keys, inv = np.unique(key, return_inverse=True)
        shown = np.bincount(inv, weights=w)
        clicks = np.bincount(inv, weights=w * pat.click[m])
        pk, ck = keys // n_cells, keys % n_cells
        n_pairs = len(pat.pairs)
        alpha = np.full(n_pairs, 0.5)
        gamma = np.full(n_cells, 0.5)
        den_a = np.bincount(pk, weights=shown, minlength=n_pairs)
        den_g = np.bincount(ck, weights=shown, minlength=n_cells)
        seen_g = den_g > 0

        def step() -> float:
            nonlocal alpha, gamma
            a, g = alpha[pk], gamma[ck]
            p = a * g
            with np.errstate(divide="ignore", invalid="ignore"):
                obj = float((clicks * np.log(np.where(clicks > 0, p, 1.0))).sum()
                            + ((shown - clicks) * np.log1p(-np.where(shown > clicks, p, 0.0)))
                            .sum())
                miss = shown - clicks
                post_a = np.where(miss > 0, a * (1 - g) / (1 - p), 0.0)
                post_g = np.where(miss > 0, g * (1 - a) / (1 - p), 0.0)
            obj += log_prior(alpha, prior) + log_prior(gamma[seen_g], prior)
            alpha = beta_update(np.bincount(pk, weights=clicks + miss * post_a,
                                            minlength=n_pairs), den_a, prior)
            gamma = beta_update(np.bincount(ck, weights=clicks + miss * post_g,
                                            minlength=n_cells), den_g, prior)
            return obj

        trace = run_em(step, max_iter, tol)
        gamma = np.where(seen_g, gamma, np.nan)
        params = Params(pair={"attractiveness": alpha},
                        rank={"examination": self._gamma_param(gamma, pat.max_rank)})
        trace.history.append(self.objective(params, pat, prior))
        return params, trace

    def objective(self, params: Params, pat: Patterns, prior: Prior) -> float:
        b = self.bind(params, pat, pat.pair, prior)
        ll = float((pat.weight * self.log_likelihood(b, pat)).sum())
        return ll + self.log_prior(params, prior)

    def log_prior(self, params: Params, prior: Prior) -> float:
        return (log_prior(params.pair["attractiveness"], prior)
                + log_prior(self._gamma_flat(params), prior))

    def bind(self, params: Params, pat: Patterns, index: np.ndarray, prior: Prior
             ) -> dict[str, np.ndarray]:
        d = default_value(prior)
        return {"alpha": take_pair(params.pair["attractiveness"], index, d),
                "gamma_table": params.rank["examination"], "default": np.array(d)}

    def log_likelihood(self, b: dict[str, np.ndarray], pat: Patterns) -> np.ndarray:
        g = self._gamma_at(b, pat, pat.prev_click_rank())
        return np.where(pat.mask, bernoulli_ll(b["alpha"] * g, pat.click), 0.0).sum(axis=1)

    def relevance(self, params: Params) -> np.ndarray | None:
        # alpha alone has no scale (see the module docstring); alpha x the largest
        # examination is the click probability at the most examined rank, which has one
        table = params.rank["examination"]
        top = float(np.nanmax(table)) if np.isfinite(table).any() else float("nan")
        return params.pair["attractiveness"] * top

    def _gamma_at(self, b: dict[str, np.ndarray], pat: Patterns,
                  prev: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class PBM(_Examination):
    name = "pbm"
    summary = "position-based model: examination per rank x attractiveness per (query, doc)"

    def _cells(self, pat: Patterns) -> np.ndarray:
        return pat.rank

    def _n_cells(self, max_rank: int) -> int:
        return max_rank + 1

    def _gamma_param(self, gamma: np.ndarray, max_rank: int) -> np.ndarray:
        return gamma

    def _gamma_flat(self, params: Params) -> np.ndarray:
        return params.rank["examination"][1:]

    def _gamma_at(self, b: dict[str, np.ndarray], pat: Patterns,
                  prev: np.ndarray) -> np.ndarray:
        return take_rank(b["gamma_table"], pat.rank, float(b["default"]))

    def click_probs(self, b: dict[str, np.ndarray], pat: Patterns) -> np.ndarray:
        return np.where(pat.mask, b["alpha"] * self.examination(b, pat), 0.0)

    def examination(self, b: dict[str, np.ndarray], pat: Patterns) -> np.ndarray:
        return np.where(pat.mask, self._gamma_at(b, pat, pat.rank), 0.0)


class UBM(_Examination):
    name = "ubm"
    summary = ("user browsing model: examination per (rank, distance to the click above) x "
               "attractiveness per (query, doc)")

    def _cells(self, pat: Patterns) -> np.ndarray:
        width = pat.max_rank + 1
        return pat.rank * width + (pat.rank - pat.prev_click_rank())

    def _n_cells(self, max_rank: int) -> int:
        return (max_rank + 1) ** 2

    def _gamma_param(self, gamma: np.ndarray, max_rank: int) -> np.ndarray:
        return gamma.reshape(max_rank + 1, max_rank + 1)

    def _gamma_flat(self, params: Params) -> np.ndarray:
        return params.rank["examination"].ravel()

    def _gamma_at(self, b: dict[str, np.ndarray], pat: Patterns,
                  prev: np.ndarray) -> np.ndarray:
        table = b["gamma_table"]
        dist = pat.rank - prev
        out = np.full(pat.rank.shape, float(b["default"]))
        ok = pat.mask & (pat.rank < table.shape[0]) & (dist >= 1)
        vals = table[pat.rank[ok], dist[ok]]
        out[ok] = np.where(np.isnan(vals), float(b["default"]), vals)
        return out

    def _marginals(self, b: dict[str, np.ndarray], pat: Patterns
                   ) -> tuple[np.ndarray, np.ndarray]:
        """P(E_k = 1) and P(C_k = 1), summing over the rank of the last click above."""
        n_pat, width = pat.rank.shape
        # state[:, j]: P(the last click above the current position is at position j - 1);
        # j = 0 means no click so far
        state = np.zeros((n_pat, width + 1))
        state[:, 0] = 1.0
        exam = np.zeros((n_pat, width))
        click = np.zeros((n_pat, width))
        prev_ranks = np.concatenate([np.zeros((n_pat, 1), dtype=np.int64), pat.rank], axis=1)
        for k in range(width):
            here = np.broadcast_to(pat.rank[:, k:k + 1], (n_pat, k + 1))
            g = self._gamma_at(b, _Slice(here, pat.mask[:, k:k + 1]), prev_ranks[:, :k + 1])
            e = (state[:, :k + 1] * g).sum(axis=1)
            pc = state[:, :k + 1] * g * b["alpha"][:, k:k + 1]
            exam[:, k] = np.where(pat.mask[:, k], e, 0.0)
            click[:, k] = np.where(pat.mask[:, k], pc.sum(axis=1), 0.0)
            state[:, :k + 1] -= np.where(pat.mask[:, k:k + 1], pc, 0.0)
            state[:, k + 1] = click[:, k]
        return exam, click

    def click_probs(self, b: dict[str, np.ndarray], pat: Patterns) -> np.ndarray:
        return self._marginals(b, pat)[1]

    def examination(self, b: dict[str, np.ndarray], pat: Patterns) -> np.ndarray:
        return self._marginals(b, pat)[0]


class _Slice:
    """The two fields of :class:`Patterns` that ``UBM._gamma_at`` reads, for a sub-array."""

    def __init__(self, rank: np.ndarray, mask: np.ndarray) -> None:
        self.rank = rank
        self.mask = np.broadcast_to(mask, rank.shape)
