"""Sample ratio mismatch: the chi-square statistic by hand, and the 1%-drop detection."""

import numpy as np
import pytest
from scipy import stats as sps

from onlineeval.errors import InvalidParameterError
from onlineeval.stats.srm import srm_test


def test_statistic_by_hand():
    units = {"control": 5120, "t1": 4990, "t2": 5010}
    res = srm_test(units)
    obs = np.array(list(units.values()), dtype=float)
    exp = obs.sum() / 3
    chi2 = ((obs - exp) ** 2 / exp).sum()
    assert res.statistic == pytest.approx(chi2, rel=1e-12)
    assert res.p_value == pytest.approx(sps.chi2.sf(chi2, 2), rel=1e-10)
    assert res.expected_shares == pytest.approx({"control": 1 / 3, "t1": 1 / 3, "t2": 1 / 3})
    assert not res.mismatch


def test_unequal_expected_split():
    res = srm_test({"control": 900, "treatment": 100}, {"control": 0.9, "treatment": 0.1})
    assert res.expected_shares == pytest.approx({"control": 0.9, "treatment": 0.1})
    assert res.statistic == pytest.approx(0.0)
    assert not res.mismatch
    assert srm_test({"control": 900, "treatment": 100}).mismatch
    # thirds typed to three decimals sum to 0.999: accepted, rescaled to sum to 1
    third = srm_test({"a": 100, "b": 100, "c": 100}, {"a": 0.333, "b": 0.333, "c": 0.333})
    assert third.expected_shares == pytest.approx({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3})


@pytest.mark.parametrize("split", [{"control": 0.6, "treatment": 0.5},
                                   {"control": 9, "treatment": 1},
                                   {"control": 0.33, "treatment": 0.33}])
def test_split_that_does_not_sum_to_one_is_refused(split):
    # Issue 12: shares were silently rescaled, so a typo (0.6 / 0.5) changed the expected
    # split the SRM check tests against without a word
    with pytest.raises(InvalidParameterError, match="sum to 1; got control=.*sum "):
        srm_test({"control": 500, "treatment": 500}, split)


def test_bad_split():
    with pytest.raises(InvalidParameterError, match="missing"):
        srm_test({"a": 1, "b": 2}, {"a": 1})
    with pytest.raises(InvalidParameterError, match="positive"):
        srm_test({"a": 1, "b": 2}, {"a": 1, "b": 0})
    with pytest.raises(InvalidParameterError, match="two variants"):
        srm_test({"a": 1})
