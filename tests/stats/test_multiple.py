"""Holm and Benjamini-Hochberg against statsmodels' multipletests."""

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from onlineeval.errors import UnknownNameError
from onlineeval.stats.multiple import CORRECTIONS, adjust


@pytest.mark.parametrize("ours,theirs", [("holm", "holm"), ("bh", "fdr_bh")])
def test_matches_statsmodels(ours, theirs):
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = np.concatenate([rng.random(8), rng.random(4) * 0.01])
        rng.shuffle(p)
        expected = multipletests(p, method=theirs)[1]
        np.testing.assert_allclose(adjust(p, ours), expected, rtol=1e-12)


def test_ties_nan_and_none():
    p = np.array([0.01, np.nan, 0.01, 0.04, 0.5])
    holm = adjust(p, "holm")
    assert np.isnan(holm[1])
    # family of 4 tested p-values: 0.01*4, 0.01*3 -> running max 0.04, 0.04*2, 0.5
    np.testing.assert_allclose(holm[[0, 2, 3, 4]], [0.04, 0.04, 0.08, 0.5])
    np.testing.assert_allclose(adjust(p, "none"), p)
    assert np.isnan(adjust(np.array([np.nan]), "bh")).all()


def test_unknown_correction_lists_known():
    with pytest.raises(UnknownNameError, match="bh, holm, none"):
        adjust(np.array([0.1]), "bonferoni")
    assert list(CORRECTIONS) == ["bh", "holm", "none"]
