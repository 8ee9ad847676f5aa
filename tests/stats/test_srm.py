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


def test_unequal_expected_split_is_normalised():
    res = srm_test({"control": 900, "treatment": 100}, {"control": 9, "treatment": 1})
    assert res.expected_shares == pytest.approx({"control": 0.9, "treatment": 0.1})
    assert res.statistic == pytest.approx(0.0)
    assert not res.mismatch
    assert srm_test({"control": 900, "treatment": 100}).mismatch


def test_bad_split():
    with pytest.raises(InvalidParameterError, match="missing"):
        srm_test({"a": 1, "b": 2}, {"a": 1})
    with pytest.raises(InvalidParameterError, match="positive"):
        srm_test({"a": 1, "b": 2}, {"a": 1, "b": 0})
    with pytest.raises(InvalidParameterError, match="two variants"):
        srm_test({"a": 1})
