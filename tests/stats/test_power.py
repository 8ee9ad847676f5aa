"""Power formulas against statsmodels' TTestIndPower (the t test the readout runs) and, for
many units, NormalIndPower."""

import numpy as np
import pytest
from statsmodels.stats.power import NormalIndPower, TTestIndPower

from onlineeval.errors import InvalidParameterError
from onlineeval.stats.power import mde, units_needed


@pytest.mark.parametrize("alpha,power", [(0.05, 0.8), (0.01, 0.9), (0.1, 0.95)])
@pytest.mark.parametrize("n", [12_000, 60, 8])
def test_mde_and_units_against_statsmodels(alpha, power, n):
    sd = 2.5
    # statsmodels' power of the t test at our MDE is the requested power (its own
    # solve_power stops at a looser tolerance, ~1e-5 in power)
    d = float(mde(sd, n, alpha, power)) / sd
    assert TTestIndPower().power(d, n, alpha, ratio=1.0) == pytest.approx(power, abs=1e-9)
    effect = float(d * sd * 1.1)
    need = int(units_needed(sd, effect, alpha, power))
    achieved = TTestIndPower().power(effect / sd, need, alpha, ratio=1.0)
    short = TTestIndPower().power(effect / sd, need - 1, alpha, ratio=1.0)
    assert achieved >= power > short
    if n >= 10_000:
        # many units: the normal approximation, to a part in 10^4
        z = NormalIndPower().solve_power(nobs1=n, alpha=alpha, power=power, ratio=1.0)
        assert mde(sd, n, alpha, power) == pytest.approx(z * sd, rel=1e-4)


def test_small_arms_need_more_units_than_the_normal_approximation_says():
    # the t test loses power with few units: 8 per arm detect a smaller effect by the normal
    # formula than by the t test actually run
    sd, n = 1.0, 8
    z = NormalIndPower().solve_power(nobs1=n, alpha=0.05, power=0.8, ratio=1.0)
    assert float(mde(sd, n)) > 1.05 * z * sd


def test_vectorised_and_errors():
    out = units_needed(np.array([1.0, 2.0]), 0.1)
    assert out[1] == pytest.approx(4 * out[0], rel=1e-3)
    with pytest.raises(InvalidParameterError, match="nonzero"):
        units_needed(1.0, 0.0)
    with pytest.raises(InvalidParameterError, match="power"):
        mde(1.0, 100, 0.05, 1.2)
    with pytest.raises(InvalidParameterError, match="at least 2"):
        mde(1.0, 1)


def test_units_needed_is_never_below_two():
    # Audit: a huge effect (or a metric with zero variance) gave 1 or 0 units per arm, sizes
    # at which no variance can be estimated and no test run; mde() itself refuses n < 2.
    assert float(units_needed(1.0, 10.0)) == 2.0
    assert float(units_needed(0.0, 0.1)) == 2.0
    out = units_needed(np.array([0.0, 1.0, np.nan]), 0.1)
    assert out[0] == 2.0 and out[1] > 700 and np.isnan(out[2])
