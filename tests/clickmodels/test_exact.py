"""The fits are exact: EM climbs, reaches the brute-force optimum, and the likelihood and
perplexity agree with an exact enumeration of every click vector (tests/clickmodels/conftest)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from scipy.optimize import minimize

from onlineeval.clickmodels import fit

QUERIES = {"q1": ["a", "b", "c"], "q2": ["x", "y", "z"]}
TRUE = {
    "alpha": {("q1", "a"): 0.7, ("q1", "b"): 0.4, ("q1", "c"): 0.2,
              ("q2", "x"): 0.6, ("q2", "y"): 0.3, ("q2", "z"): 0.5},
    "sigma": {("q1", "a"): 0.6, ("q1", "b"): 0.3, ("q1", "c"): 0.5,
              ("q2", "x"): 0.4, ("q2", "y"): 0.7, ("q2", "z"): 0.2},
    "gamma": 0.7,
    "lam": {1: 0.6, 2: 0.4, 3: 0.5},
    "exam": {1: 0.9, 2: 0.6, 3: 0.4},
    "ctr": {1: 0.5, 2: 0.3, 3: 0.2},
}
TRUE_UBM = dict(TRUE, exam={(r, d): 0.95 * 0.8 ** (r - 1) * (1.1 - 0.1 * d)
                            for r in (1, 2, 3) for d in range(1, r + 1)})
PAIRS = sorted(TRUE["alpha"])


def truth(model: str) -> dict:
    return TRUE_UBM if model == "ubm" else TRUE


def _logit(p: float) -> float:
    return float(np.log(p / (1 - p)))


def _sigm(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _ubm_cells(pages):
    cells = set()
    for _, docs, clicks in pages:
        prev = 0
        for i in range(len(docs)):
            cells.add((i + 1, i + 1 - prev))
            if clicks[i]:
                prev = i + 1
    return sorted(cells)


def _layout(model: str, pages) -> list[tuple[str, object, bool]]:
    """(group, key, has_prior) for every free parameter of the model on these pages."""
    out = []
    if model == "ctr":
        return [("ctr", r, True) for r in (1, 2, 3)]
    out += [("alpha", p, True) for p in PAIRS]
    if model in ("sdbn", "dbn"):
        out += [("sigma", p, True) for p in PAIRS]
    if model == "dbn":
        out.append(("gamma", None, False))
    if model == "dcm":
        out += [("lam", r, True) for r in (1, 2, 3)]
    if model == "pbm":
        out += [("exam", r, True) for r in (1, 2, 3)]
    if model == "ubm":
        out += [("exam", c, True) for c in _ubm_cells(pages)]
    return out


def _params(layout, values):
    p: dict = defaultdict(dict)
    for (group, key, _), v in zip(layout, values, strict=True):
        if key is None:
            p[group] = v
        else:
            p[group][key] = v
    return dict(p)


def brute_force(sim, model: str, pages, prior=(1.0, 1.0)):
    """Maximise log-likelihood + sum(a log p + b log(1-p)) over every parameter directly."""
    layout = _layout(model, pages)
    a, b = prior

    def neg(x):
        v = _sigm(x)
        params = _params(layout, v)
        obj = sim.log_likelihood(model, params, pages)
        for (_, _, has_prior), p in zip(layout, v, strict=True):
            if has_prior:
                obj += a * np.log(p) + b * np.log1p(-p)
        return -obj if np.isfinite(obj) else 1e12

    x0 = np.zeros(len(layout))
    res = minimize(neg, x0, method="L-BFGS-B", options={"maxiter": 5000, "ftol": 1e-15,
                                                         "gtol": 1e-9})
    res = minimize(neg, res.x, method="Nelder-Mead",
                   options={"maxiter": 20000, "xatol": 1e-9, "fatol": 1e-12})
    return -res.fun, _params(layout, _sigm(res.x))


def fitted_params(f) -> dict:
    """The fit as parameters of the conftest program (unseen pairs at the prior's value)."""
    a, b = f.prior
    default = a / (a + b)
    p: dict = {}
    if "attractiveness" in f.params.pair:
        p["alpha"] = defaultdict(lambda: default, {
            (q, d): v for q, d, v in zip(f.pairs["query"], f.pairs["doc_id"],
                                         f.params.pair["attractiveness"], strict=True)})
    if "satisfaction" in f.params.pair:
        p["sigma"] = defaultdict(lambda: default, {
            (q, d): v for q, d, v in zip(f.pairs["query"], f.pairs["doc_id"],
                                         f.params.pair["satisfaction"], strict=True)})
    if f.model == "ctr":
        p["ctr"] = {r: f.params.rank["ctr"][r] for r in range(1, f.params.rank["ctr"].size)}
    if f.model == "pbm":
        t = f.params.rank["examination"]
        p["exam"] = {r: t[r] for r in range(1, t.size)}
    if f.model == "ubm":
        t = f.params.rank["examination"]
        p["exam"] = defaultdict(lambda: default, {
            (r, d): t[r, d] for r in range(1, t.shape[0]) for d in range(1, t.shape[1])
            if np.isfinite(t[r, d])})
    if f.model == "dcm":
        t = f.params.rank["continuation"]
        p["lam"] = {r: t[r] for r in range(1, t.size)}
    if f.model == "dbn":
        p["gamma"] = f.params.scalar["gamma"]
    return p


def _objective_of_fit(sim, model, f, pages, prior=(1.0, 1.0)):
    params = fitted_params(f)
    layout = _layout(model, pages)
    obj = sim.log_likelihood(model, params, pages)
    a, b = prior
    for group, key, has_prior in layout:
        if has_prior:
            v = params[group][key]
            obj += a * np.log(v) + b * np.log1p(-v)
    return obj


@pytest.mark.parametrize("model", ["pbm", "ubm", "dcm", "dbn", "ctr"])
def test_em_reaches_the_brute_force_optimum(sim, model):
    pages = sim.simulate_pages(model, truth(model), QUERIES, n_pages=80, k=3, seed=3)
    f = fit(sim.load(pages), model, max_iter=50000, tol=0.0 if model != "ctr" else 1e-8)
    best, best_params = brute_force(sim, model, pages)
    ours = _objective_of_fit(sim, model, f, pages)
    # the EM's own objective is the same quantity, computed another way
    assert f.trace.history[-1] == pytest.approx(ours, rel=1e-9, abs=1e-9)
    assert ours >= best - 1e-6
    assert ours == pytest.approx(best, abs=1e-5)
    if model in ("dcm", "dbn", "ctr"):  # identified: the parameters agree too
        fp = fitted_params(f)
        for group, values in best_params.items():
            if isinstance(values, dict):
                for key, v in values.items():
                    assert fp[group][key] == pytest.approx(v, abs=2e-3), (group, key)
            else:
                assert fp[group] == pytest.approx(values, abs=2e-3)


def test_cascade_closed_form_is_the_maximum_on_single_click_pages(sim):
    pages = sim.simulate_pages("cascade", TRUE, QUERIES, n_pages=80, k=3, seed=5)
    assert max(sum(c) for _, _, c in pages) == 1
    f = fit(sim.load(pages), "cascade")
    best, best_params = brute_force(sim, "cascade", pages)
    assert _objective_of_fit(sim, "cascade", f, pages) == pytest.approx(best, abs=1e-6)
    fp = fitted_params(f)
    for key, v in best_params["alpha"].items():
        assert fp["alpha"][key] == pytest.approx(v, abs=2e-3)
    assert f.log_likelihood == pytest.approx(sim.log_likelihood("cascade", fp, pages),
                                             rel=1e-12)


def test_cascade_counts_and_impossible_pages(sim):
    # hand-made: q1 [a, b, c] clicked at b then c; q1 [b, a, c] no click; q1 [c, b, a] a
    pages = [("q1", ["a", "b", "c"], (0, 1, 1)), ("q1", ["b", "a", "c"], (0, 0, 0)),
             ("q1", ["c", "b", "a"], (0, 0, 1))]
    f = fit(sim.load(pages), "cascade", prior=(0.0, 0.0))
    alpha = dict(zip(f.pairs["doc_id"], f.params.pair["attractiveness"], strict=True))
    # down to the first click: a seen 3 times (ranks 1, 2, 3) clicked once; b seen 3 times
    # clicked once; c seen twice (rank 3 of page 2, rank 1 of page 3) never clicked
    assert alpha == pytest.approx({"a": 1 / 3, "b": 1 / 3, "c": 0.0})
    assert f.log_likelihood == -np.inf


def test_sdbn_closed_form_counts(sim):
    pages = [("q1", ["a", "b", "c"], (1, 0, 1)), ("q1", ["b", "a", "c"], (1, 1, 0)),
             ("q1", ["c", "b", "a"], (0, 0, 0)), ("q1", ["a", "c", "b"], (1, 0, 0))]
    f = fit(sim.load(pages), "sdbn", prior=(0.0, 0.0))
    alpha = dict(zip(f.pairs["doc_id"], f.params.pair["attractiveness"], strict=True))
    sigma = dict(zip(f.pairs["doc_id"], f.params.pair["satisfaction"], strict=True))
    # at or above the last click: page1 a,b,c; page2 b,a; page3 none; page4 a
    # a: seen 3, clicked 3, last click 2 of 3 | b: seen 2, clicked 1, last 0 of 1
    # c: seen 1, clicked 1, last 1 of 1
    assert alpha == pytest.approx({"a": 1.0, "b": 0.5, "c": 1.0})
    assert sigma == pytest.approx({"a": 2 / 3, "b": 0.0, "c": 1.0})


@pytest.mark.parametrize("model", ["pbm", "ubm", "dcm", "dbn"])
@pytest.mark.parametrize("prior", [(1.0, 1.0), (0.0, 0.0)])
def test_em_objective_never_decreases(sim, model, prior):
    pages = sim.simulate_pages(model, truth(model), QUERIES, n_pages=400, k=3, seed=11)
    f = fit(sim.load(pages), model, prior=prior, max_iter=300, tol=0.0)
    h = np.asarray(f.trace.history)
    assert len(h) > 20
    assert np.all(np.diff(h) >= -1e-9 * np.abs(h[1:]))


@pytest.mark.parametrize("model", ["ctr", "pbm", "ubm", "cascade", "dcm", "sdbn", "dbn"])
def test_likelihood_and_perplexity_match_exact_enumeration(sim, model):
    train = sim.simulate_pages(model if model != "sdbn" else "dbn", truth(model), QUERIES,
                               n_pages=200, k=3, seed=21)
    f = fit(sim.load(train), model)
    # test pages include a document the model never saw ("new")
    test = [("q1", ["a", "new", "b"], (1, 0, 1)), ("q2", ["z", "y", "x"], (0, 0, 0)),
            ("q2", ["x", "z", "y"], (0, 1, 0)), ("q1", ["c", "a", "b"], (1, 0, 0)),
            ("q1", ["c", "a", "b"], (1, 0, 0))]
    ev = f.perplexity(sim.load(test))
    params = fitted_params(f)
    if model == "sdbn":
        params["gamma"] = 1.0
    prog = "dbn" if model == "sdbn" else model
    if model == "cascade":
        assert ev.log_likelihood == -np.inf and ev.impossible_pages == 1
    else:
        assert ev.log_likelihood == pytest.approx(
            sim.log_likelihood(prog, params, test), rel=1e-10)
    log2 = np.zeros(3)
    for q, docs, clicks in test:
        m = sim.marginals(prog, params, q, docs)
        c = np.asarray(clicks)
        log2 += np.where(c == 1, np.log2(m), np.log2(1 - m))
    per_rank = 2 ** (-log2 / len(test))
    assert ev.perplexity_by_rank["perplexity"].to_numpy() == pytest.approx(per_rank, rel=1e-10)
    assert ev.perplexity == pytest.approx(per_rank.mean(), rel=1e-10)
    assert ev.pages == 5 and ev.impressions == 15 and ev.unseen == 1
