"""Simulated worlds for the counterfactual tests, and the estimators' per-unit sums written
again in numpy, independently of the package's SQL.

A world has queries with documents of known attractiveness, one or several logging rankers
(a page shows the top ``shown`` documents of a ranker drawn at random), a candidate ranking
that was never shown, and position-based clicks: P(click at rank r) = EXAM[r] * alpha(q, d)
* boost(user), with a per-user boost of mean 1 so pages of one user are correlated. The
candidate's true clicks@k per page is computed from the parameters, not estimated.

``rows`` computes, from the simulated arrays, the per-unit table the package's SQL returns
(its columns and meaning are in the headers of ``sql/counterfactual/*.sql``). The tests
check the two agree exactly on a few seeds, then run the coverage checks on the numpy rows
through the package's statistics (:func:`onlineeval.counterfactual.estimators.estimate`),
which makes hundreds of replicates cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pytest

EXAM = np.array([np.nan, 1.0, 0.55, 0.35, 0.25, 0.18])


@dataclass
class Model:
    """A position-based click model m(q, d, r) = exam[r] * alpha[q, d]."""

    alpha: np.ndarray
    exam: np.ndarray

    def direct(self) -> Any:
        from onlineeval.counterfactual import DirectModel

        q, d = np.indices(self.alpha.shape)
        table = pd.DataFrame({"query": q.ravel().astype(str), "doc_id": d.ravel().astype(str),
                              "attractiveness": self.alpha.ravel()})
        return DirectModel(examination=self.exam, attractiveness=table, default=0.5,
                           source="test")


@dataclass
class Sim:
    """One simulated log as arrays: per page its user, query, documents shown and clicks."""

    users: int
    user: np.ndarray
    query: np.ndarray
    layout: np.ndarray
    click: np.ndarray

    def tables(self) -> dict[str, pd.DataFrame]:
        pages, shown = self.layout.shape
        sid = np.arange(pages)
        page, rank = np.nonzero(self.click)
        return {"searches": pd.DataFrame({"search_id": sid, "user_id": self.user,
                                          "query": self.query}),
                "results": pd.DataFrame({"search_id": np.repeat(sid, shown),
                                         "rank": np.tile(np.arange(1, shown + 1), pages),
                                         "doc_id": self.layout.ravel()}),
                "clicks": pd.DataFrame({"search_id": page, "rank": rank + 1})}


@dataclass
class World:
    alpha: np.ndarray      # (queries, docs)
    rankers: np.ndarray    # (rankers, queries, docs): document ids in logged order
    shown: int             # results per logged page
    cand: np.ndarray       # (queries, docs): the candidate's order
    k: int

    @property
    def true_value(self) -> float:
        q = np.arange(len(self.alpha))[:, None]
        return float((EXAM[1:self.k + 1] * self.alpha[q, self.cand[:, :self.k]]).sum(1).mean())

    def simulate(self, seed: int, users: int = 300, max_pages: int = 7,
                 boost: tuple[float, float] = (0.6, 1.4)) -> Sim:
        rng = np.random.default_rng(seed)
        n_pages = rng.integers(1, max_pages + 1, users)
        user = np.repeat(np.arange(users), n_pages)
        b = rng.uniform(*boost, users)[user]
        q = rng.integers(len(self.alpha), size=len(user))
        r = rng.integers(len(self.rankers), size=len(user))
        layout = self.rankers[r, q, :self.shown]
        prob = EXAM[1:self.shown + 1] * self.alpha[q[:, None], layout] * b[:, None]
        assert prob.max() <= 1
        return Sim(users, user, q, layout, rng.random(prob.shape) < prob)

    def candidate(self) -> pd.DataFrame:
        q, i = np.indices((len(self.cand), self.k))
        return pd.DataFrame({"query": q.ravel().astype(str),
                             "doc_id": self.cand[:, :self.k].ravel().astype(str),
                             "cand_rank": (i.ravel() + 1).astype(np.int32)})

    def run(self) -> pd.DataFrame:
        """The candidate as a TREC run (every document, scores decreasing)."""
        q, i = np.indices(self.cand.shape)
        return pd.DataFrame({"qid": q.ravel().astype(str), "docno": self.cand.ravel().astype(str),
                             "score": (self.cand.shape[1] - i.ravel()).astype(float)})

    def model(self, alpha: np.ndarray | None = None, exam: np.ndarray | None = None) -> Model:
        return Model(self.alpha if alpha is None else alpha, EXAM if exam is None else exam)

    def rows(self, sim: Sim, estimator: str, p: np.ndarray = EXAM, model: Model | None = None,
             clip: float | None = None) -> pd.DataFrame:
        """The per-unit rows of the estimator's SQL, computed here from the arrays (every
        rank shown has a propensity; no repeats, no pages outside the candidate)."""
        n_q, n_d = self.alpha.shape
        k, users = self.k, sim.users
        cand_rank = np.zeros((n_q, n_d), int)
        cand_rank[np.arange(n_q)[:, None], self.cand] = np.arange(1, n_d + 1)
        c = cand_rank[sim.query[:, None], sim.layout]            # (pages, shown)
        usable = c <= k
        theta_l = p[1:self.shown + 1]
        theta_c = p[np.minimum(c, k)]
        click = sim.click.astype(float)
        pages = np.bincount(sim.user, minlength=users).astype(float)

        def per_user(values: np.ndarray) -> np.ndarray:
            return np.bincount(sim.user, weights=values.sum(axis=1) if values.ndim == 2
                               else values, minlength=users)

        out = {"unit": np.arange(users), "pages": pages, "slots": pages * k,
               "clicks_without_propensity": 0, "clicks_beyond_max_rank": 0,
               "shown_without_propensity": 0, "pages_without_unit": 0,
               "pages_without_candidate": 0, "repeated_results": 0}
        raw = np.where(usable, theta_c / theta_l, 0.0)
        w = raw if clip is None else np.minimum(raw, clip)
        if estimator == "ips" or (estimator == "dr" and model is not None):
            out.update(supported=per_user(usable), ips=per_user(w * click),
                       clicks_used=per_user(usable * click), clicks_w2=per_user(w * w * click),
                       clipped_clicks=per_user((raw > w) * click))
            if model is not None:
                qs = sim.query[:, None]
                dm = (model.exam[1:k + 1] * model.alpha[qs, self.cand[sim.query, :k]]).sum(1)
                m_l = model.exam[1:self.shown + 1] * model.alpha[qs, sim.layout]
                out["dr"] = per_user(dm) + per_user(w * (click - m_l))
                out["model_unseen"] = 0
            return pd.DataFrame(out)
        # pooled per (user, query, doc) over usable slots: shows s, clicks c, examination
        # mass m, a = sum w click, a2 = sum w^2 click, b = sum (p_c - w p_l), clipped clicks
        cells = np.zeros((users, n_q, n_d, 7))
        uq = np.broadcast_to(sim.user[:, None], c.shape)[usable]
        qq = np.broadcast_to(sim.query[:, None], c.shape)[usable]
        tl = np.broadcast_to(theta_l, c.shape)
        for j, v in enumerate((np.ones(c.shape), click, tl, w * click, w * w * click,
                               theta_c - w * tl, (raw > w) * click)):
            np.add.at(cells, (uq, qq, sim.layout[usable], j), v[usable])
        s_u, c_u, m_u, a_u, a2_u, b_u, clipped_u = np.moveaxis(cells, -1, 0)
        S, C, M, B = s_u.sum(0), c_u.sum(0), m_u.sum(0), b_u.sum(0)
        n_uq = np.zeros((users, n_q))
        np.add.at(n_uq, (sim.user, sim.query), 1)
        n_q_pages = n_uq.sum(0)[:, None]
        theta_cand = np.where(cand_rank <= k, p[np.minimum(cand_rank, k)], 0.0)
        shown = (M > 0) & (cand_rank <= k)

        def ratio(x):
            return np.divide(x, M, out=np.zeros_like(M), where=shown)

        rate = ratio(C)
        g = ratio(theta_cand * n_q_pages)
        h = ratio(B + (n_q_pages - S) * theta_cand)
        mix = n_uq @ (theta_cand * rate).sum(1)
        infl = c_u - rate * m_u
        sel = shown.astype(float)
        out.update(supported=n_uq @ shown.sum(1),
                   snips=mix + (g * infl).sum((1, 2)),
                   dr=mix + (sel * (a_u + rate * (b_u - s_u * theta_cand)) + h * infl
                             ).sum((1, 2)),
                   clicks_used=(sel * c_u).sum((1, 2)),
                   clipped_clicks=(sel * clipped_u).sum((1, 2)),
                   weighted_sum=(g * C).sum(), weighted_sum2=(g * g * C).sum(),
                   dr_weighted_sum=(sel * (a_u.sum(0) + h * C)).sum(),
                   dr_weighted_sum2=(sel * (a2_u.sum(0) + 2 * h * a_u.sum(0) + h * h * C)
                                     ).sum())
        return pd.DataFrame(out)


def make_world(seed: int = 0, n_q: int = 20, n_d: int = 5, rankers: int = 1,
               shown: int = 5, k: int = 3, promote_bottom: bool = False) -> World:
    """Random attractiveness and orders. With several rankers, the candidate's top k is
    also the top k of one of them (in another order), so every candidate document is shown
    on some pages of its query; ``promote_bottom`` makes the candidate's order the first
    ranker's reversed (large weights)."""
    rng = np.random.default_rng(seed)
    alpha = rng.uniform(0.05, 0.7, (n_q, n_d))
    logged = np.array([[rng.permutation(n_d) for _ in range(n_q)] for _ in range(rankers)])
    if promote_bottom:
        cand = logged[0, :, ::-1].copy()
    else:
        cand = np.array([rng.permutation(n_d) for _ in range(n_q)])
    if rankers > 1:
        for q in range(n_q):
            top = cand[q, :k][rng.permutation(k)]
            logged[1, q] = np.r_[top, [d for d in logged[1, q] if d not in top]]
    return World(alpha=alpha, rankers=logged, shown=shown, cand=cand, k=k)


def sql_rows(sim: Sim, world: World, estimator: str, p: np.ndarray = EXAM,
             model: Model | None = None, clip: float | None = None) -> pd.DataFrame:
    """The package's SQL rows for the simulated log (the candidate table built as
    ``evaluate`` builds it)."""
    from onlineeval.counterfactual import sums
    from onlineeval.counterfactual.evaluation import estimate_inputs

    con = duckdb.connect()
    for name, df in sim.tables().items():
        con.register(name, df)
    cand, table = estimate_inputs(estimator, world.candidate(), p,
                                  None if model is None else model.direct(),
                                  k=world.k, max_rank=5)
    return sums.per_unit(con, sums.query_for(estimator, model is not None), candidate=cand,
                         propensity=table, max_rank=5, clip=clip)


def estimate(rows: pd.DataFrame, estimator: str) -> dict[str, Any]:
    from onlineeval.counterfactual.estimators import estimate as package_estimate

    return package_estimate(rows, estimator)


@pytest.fixture(scope="session")
def cf() -> SimpleNamespace:
    return SimpleNamespace(EXAM=EXAM, World=World, Model=Model, make_world=make_world,
                           sql_rows=sql_rows, estimate=estimate)
