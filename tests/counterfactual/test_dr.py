"""When dr is unbiased (the model right, or the propensities right with the model's
examination proportional to them), when it is biased, and what it buys: the model's
prediction where the log has no data, and clipping without the bias clipping gives ips."""

from __future__ import annotations

import numpy as np
import pytest

import onlineeval
from onlineeval.clickmodels import fit

REPS = 200
FLAT = np.r_[np.nan, np.ones(5)]


def _values(cf, world, estimator, reps=REPS, **kw):
    return np.array([cf.estimate(world.rows(world.simulate(seed), estimator, **kw),
                                 estimator)["value"] for seed in range(reps)])


def _sem(v):
    return v.std(ddof=1) / np.sqrt(len(v))


def _expected(cf, world, p, model, clip=np.inf):
    """E[dr] for one logging ranker showing every document, written from the definition:
    per query, the model's clicks of the candidate's top k plus, per candidate document,
    w = min(p_c / p_l, clip) times (its true click probability at the logged rank l - the
    model's); queries are equally likely and the user boost has mean 1."""
    per_query = []
    for q in range(len(world.alpha)):
        logged = {d: r + 1 for r, d in enumerate(world.rankers[0, q])}
        total = 0.0
        for c, d in enumerate(world.cand[q, :world.k], start=1):
            lr = logged[d]
            total += model.exam[c] * model.alpha[q, d] + min(p[c] / p[lr], clip) * (
                cf.EXAM[lr] * world.alpha[q, d] - model.exam[lr] * model.alpha[q, d])
        per_query.append(total)
    return float(np.mean(per_query))


def test_right_model_wrong_propensities_is_unbiased_and_fills_unshown_slots(cf):
    # pages show 3 of 5 documents, and the propensities say there is no position bias
    world = cf.make_world(1, rankers=3, shown=3)
    dr = _values(cf, world, "dr", p=FLAT, model=world.model())
    assert abs(dr.mean() - world.true_value) < 3 * _sem(dr)
    ips = _values(cf, world, "ips", reps=40, p=FLAT)
    assert abs(ips.mean() - world.true_value) > 10 * _sem(ips)


def test_right_propensities_make_the_model_cancel_where_the_page_showed_the_document(cf):
    world = cf.make_world(0)   # one logged ranking per query, every document shown
    wrong = world.model(alpha=np.random.default_rng(5).uniform(0.05, 0.7, world.alpha.shape))
    for seed in range(5):
        sim = world.simulate(seed)
        ips = cf.estimate(world.rows(sim, "ips"), "ips")
        dr = cf.estimate(world.rows(sim, "dr", model=wrong), "dr")
        # the same estimate and the same variance: the model changes nothing here
        assert dr["value"] == pytest.approx(ips["value"], abs=1e-12)
        assert dr["se"] == pytest.approx(ips["se"], rel=1e-9)
    # and so it is unbiased, as ips is with the right propensities: by the definition and
    # across simulated logs
    assert _expected(cf, world, cf.EXAM, wrong) == pytest.approx(world.true_value)
    dr = _values(cf, world, "dr", model=wrong)
    assert abs(dr.mean() - world.true_value) < 3 * _sem(dr)


def _given_layouts(cf, world, sim, model):
    """E[dr | the pages' layouts] with the right propensities, from the definition: per
    page and candidate top-k slot, p_c x alpha where the page showed the document (the
    weighted residual corrects the model there) and the model's e_c x alpha^ where it did
    not."""
    k = world.k
    top = world.cand[sim.query, :k]                              # (pages, k)
    on_page = (sim.layout[:, None, :] == top[:, :, None]).any(2)
    q = sim.query[:, None]
    truth = cf.EXAM[1:k + 1] * world.alpha[q, top]
    predicted = model.exam[1:k + 1] * model.alpha[q, top]
    return float(np.where(on_page, truth, predicted).sum(1).mean())


@pytest.mark.slow
def test_right_propensities_wrong_model_is_the_model_where_pages_did_not_show(cf):
    """Pages show 3 of 5 documents: with the right propensities, a wrong model is corrected
    on every slot the page showed and stands alone on the others, so dr is unbiased for
    the truth there and the model's value elsewhere; the log's own model (the pooled rates)
    is unbiased everywhere."""
    world = cf.make_world(1, rankers=3, shown=3)
    wrong = world.model(alpha=world.alpha / 2)
    gap, own = [], []
    for seed in range(REPS):
        sim = world.simulate(seed)
        value = cf.estimate(world.rows(sim, "dr", model=wrong), "dr")["value"]
        gap.append(value - _given_layouts(cf, world, sim, wrong))
        own.append(cf.estimate(world.rows(sim, "dr"), "dr")["value"])
    gap, own = np.array(gap), np.array(own)
    assert abs(gap.mean()) < 3 * _sem(gap)
    expected = np.mean([_given_layouts(cf, world, world.simulate(s), wrong)
                        for s in range(REPS)])
    assert expected < world.true_value - 0.05
    assert abs(own.mean() - world.true_value) < 3 * _sem(own)


def test_both_wrong_is_biased_by_the_amount_the_definition_gives(cf):
    world = cf.make_world(0)
    wrong = world.model(alpha=np.random.default_rng(5).uniform(0.05, 0.7, world.alpha.shape))
    dr = _values(cf, world, "dr", p=FLAT, model=wrong)
    expected = _expected(cf, world, FLAT, wrong)
    assert abs(dr.mean() - expected) < 3 * _sem(dr)
    assert abs(dr.mean() - world.true_value) > 10 * _sem(dr)


def test_right_propensities_with_the_model_examination_wrong_is_biased(cf):
    """Condition (ii) needs the model's examination proportional to the propensities: a
    model with the true attractiveness but no position bias is not corrected by right
    propensities."""
    world = cf.make_world(0)
    flat_exam = world.model(exam=FLAT)
    dr = _values(cf, world, "dr", model=flat_exam)
    expected = _expected(cf, world, cf.EXAM, flat_exam)
    assert abs(expected - world.true_value) > 0.05
    assert abs(dr.mean() - expected) < 3 * _sem(dr)


def _fitted_model(cf, world):
    """A pbm fitted on an independent log with randomised rankings (a realistic good
    model: not the truth, but close to it)."""
    rng = np.random.default_rng(99)
    n_q, n_d = world.alpha.shape
    randomised = cf.World(alpha=world.alpha, shown=n_d, cand=world.cand, k=world.k,
                          rankers=np.array([[rng.permutation(n_d) for _ in range(n_q)]
                                            for _ in range(24)]))
    logs = onlineeval.load_logs(**randomised.simulate(99, users=3000).tables())
    fitted = fit(logs, "pbm", max_rank=n_d, prior=(0.0, 0.0))
    exam = fitted.params.rank["examination"]
    alpha = np.zeros((n_q, n_d))
    att = fitted.attractiveness
    alpha[att["query"].astype(int), att["doc_id"].astype(int)] = att["attractiveness"]
    return cf.Model(alpha=alpha, exam=exam)


@pytest.mark.slow
def test_clipped_dr_with_a_good_model_has_lower_variance_than_ips_and_little_bias(cf):
    """The candidate promotes the logged bottom documents (weights up to 1 / 0.18). Capping
    the weights at 2 biases ips by the capped excess times the click rate; dr caps only the
    residual's weight, so its bias is the capped excess times the model's error: with a
    good model a small fraction of ips's, at a fraction of unclipped ips's variance."""
    world = cf.make_world(3, promote_bottom=True)
    good = _fitted_model(cf, world)
    rel = np.abs(good.alpha * good.exam[1] - world.alpha * cf.EXAM[1]) / world.alpha
    assert 0.005 < np.median(rel) < 0.1   # close, not exact
    ips = _values(cf, world, "ips", reps=400)
    ips_clipped = _values(cf, world, "ips", reps=100, clip=2.0)
    dr_clipped = _values(cf, world, "dr", reps=400, clip=2.0, model=good)
    truth = world.true_value
    assert abs(ips.mean() - truth) < 3 * _sem(ips)
    expected = _expected(cf, world, cf.EXAM, good, clip=2.0)
    assert abs(dr_clipped.mean() - expected) < 3 * _sem(dr_clipped)
    ips_bias = ips_clipped.mean() - truth
    assert abs(ips_bias) > 20 * _sem(ips_clipped)
    assert abs(expected - truth) < abs(ips_bias) / 8
    ratio = dr_clipped.var(ddof=1) / ips.var(ddof=1)
    assert ratio < 0.5, ratio
    mse_dr = np.mean((dr_clipped - truth) ** 2)
    assert mse_dr < 0.75 * np.mean((ips - truth) ** 2)
