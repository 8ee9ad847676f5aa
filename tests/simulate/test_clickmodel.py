"""The click model against its formulas, the formulas against a brute-force enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from onlineeval.errors import InvalidParameterError
from onlineeval.simulate import ClickModel, simulate_clicks

MODEL = ClickModel()
GRADES = [4, 0, 2, 1, 3, 0, 0, 2, 1, 0]


def _alpha(grade: int, propensity: float, model: ClickModel = MODEL) -> float:
    a = model.attractiveness[grade]
    return 1.0 / (1.0 + math.exp(-(math.log(a) - math.log(1.0 - a) + propensity)))


def _enumerate(grades: list[int], propensity: float, model: ClickModel = MODEL):
    """Exact P(click at each rank) and P(satisfied) by walking every branch of the process."""
    clicks = [0.0] * len(grades)
    satisfied = 0.0

    def walk(r: int, p: float) -> None:
        nonlocal satisfied
        if r == len(grades) or p == 0.0:
            return
        a, s, g = _alpha(grades[r], propensity, model), model.satisfaction[grades[r]], \
            model.continuation
        clicks[r] += p * a
        satisfied += p * a * s
        # clicked and not satisfied, or not clicked: continue with probability g
        walk(r + 1, p * (a * (1 - s) + (1 - a)) * g)

    walk(0, 1.0)
    return np.array(clicks), satisfied


@pytest.mark.parametrize("propensity", [0.0, 1.0, -1.5])
def test_click_probabilities_match_enumeration(propensity: float) -> None:
    expected, _ = _enumerate(GRADES, propensity)
    np.testing.assert_allclose(MODEL.click_probabilities(GRADES, propensity), expected,
                               rtol=1e-12)


@pytest.mark.parametrize("propensity", [0.0, 1.2])
def test_empirical_click_rates_match_formula(propensity: float) -> None:
    expected, p_sat = _enumerate(GRADES, propensity)
    n = 30_000
    rng = np.random.default_rng(7)
    counts = np.zeros(len(GRADES))
    sat = 0
    for _ in range(n):
        outcome = MODEL.simulate(GRADES, rng, propensity)
        for c in outcome.clicks:
            counts[c.rank - 1] += 1
        sat += outcome.satisfied
        ranks = [c.rank for c in outcome.clicks]
        assert ranks == sorted(set(ranks))  # cascade: top-down, each result at most once
    se = np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(counts / n - expected) <= 4.5 * se + 1e-12), (counts / n, expected)
    assert abs(sat / n - p_sat) <= 4.5 * math.sqrt(p_sat * (1 - p_sat) / n)


def test_batch_matches_formula_and_handles_short_lists() -> None:
    n = 40_000
    grades = np.array([GRADES] * n)
    grades[n // 2:, 6:] = -1  # half the pages show only 6 results
    props = np.full(n, 0.5)
    clicked, satisfied, dwell = MODEL.simulate_batch(grades, np.random.default_rng(3), props)
    full, _ = _enumerate(GRADES, 0.5)
    short, _ = _enumerate(GRADES[:6], 0.5)
    for rows, exp in ((slice(0, n // 2), full), (slice(n // 2, n), short)):
        rate = clicked[rows].mean(axis=0)[: len(exp)]
        se = np.sqrt(exp * (1 - exp) / (n // 2))
        assert np.all(np.abs(rate - exp) <= 4.5 * se + 1e-12)
    assert not clicked[n // 2:, 6:].any()
    assert (satisfied <= clicked).all()
    assert np.isnan(dwell[~clicked]).all() and (dwell[clicked] > 0).all()
    # nobody goes on after a satisfying click
    first_sat = np.where(satisfied.any(axis=1), satisfied.argmax(axis=1), 99)
    later = np.arange(10)[None, :] > first_sat[:, None]
    assert not (clicked & later).any()


def test_dwell_distribution_by_satisfaction() -> None:
    rng = np.random.default_rng(11)
    sat_dwell, unsat_dwell = [], []
    for _ in range(20_000):
        outcome = MODEL.simulate([4, 3, 2], rng)
        for i, c in enumerate(outcome.clicks):
            last = i == len(outcome.clicks) - 1
            (sat_dwell if last and outcome.satisfied else unsat_dwell).append(c.dwell_ms)
    sat_dwell, unsat_dwell = np.array(sat_dwell), np.array(unsat_dwell)
    # P(dwell >= 30 s) for a log-normal with median m and sigma 0.5
    p_sat = stats.norm.sf((math.log(30) - math.log(90)) / 0.5)
    p_unsat = stats.norm.sf((math.log(30) - math.log(10)) / 0.5)
    # the figures ClickModel's docstring states ("about 99%" and "about 1.4%")
    assert round(p_sat, 2) == 0.99 and round(p_unsat, 3) == 0.014
    for d, p in ((sat_dwell, p_sat), (unsat_dwell, p_unsat)):
        se = math.sqrt(p * (1 - p) / len(d))
        assert abs((d >= 30_000).mean() - p) <= 4.5 * se
    assert np.median(sat_dwell) == pytest.approx(90_000, rel=0.03)
    assert sat_dwell.max() <= MODEL.max_dwell_s * 1000


def test_propensity_raises_clicks_and_empty_page_has_none() -> None:
    low = MODEL.click_probabilities(GRADES, -1.0).sum()
    high = MODEL.click_probabilities(GRADES, 1.0).sum()
    assert high > MODEL.click_probabilities(GRADES).sum() > low
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert simulate_clicks([], rng) == []
    assert rng.bit_generator.state == state  # an empty page draws nothing


def test_same_rng_same_clicks() -> None:
    a = [simulate_clicks(GRADES, np.random.default_rng(5), 0.3) for _ in range(3)]
    assert a[0] == a[1] == a[2]
    rng = np.random.default_rng(5)
    seq1 = [simulate_clicks(GRADES, rng) for _ in range(50)]
    rng = np.random.default_rng(5)
    assert seq1 == [simulate_clicks(GRADES, rng) for _ in range(50)]


@pytest.mark.parametrize("kwargs", [
    {"attractiveness": (0.1, 0.2, 0.3, 0.4)},
    {"attractiveness": (0.0, 0.2, 0.3, 0.4, 0.5)},
    {"satisfaction": (0.0, 0.2, 0.3, 0.4, 1.5)},
    {"continuation": 1.2},
    {"dwell_sigma": -1.0},
])
def test_invalid_parameters(kwargs: dict) -> None:
    with pytest.raises(InvalidParameterError):
        ClickModel(**kwargs)


def test_invalid_grades() -> None:
    with pytest.raises(InvalidParameterError, match="0..4"):
        MODEL.simulate([1, 5], np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="2-D"):
        MODEL.simulate_batch(np.array([1, 2]), np.random.default_rng(0))
