import pytest

from onlineeval.errors import InvalidParameterError, UnknownNameError
from onlineeval.registry import Registry


def test_lookup_is_case_insensitive_and_follows_aliases():
    r: Registry[int] = Registry("measure")
    r.register("nDCG", 1, aliases=("ndcg_exp_lin",))
    assert r.get("NDCG") == 1
    assert r.get("NDCG_EXP_LIN") == 1
    assert r.canonical("ndcg") == "nDCG"
    assert list(r) == ["nDCG"] and len(r) == 1 and "ndcg" in r


def test_unknown_name_suggests_the_closest_and_lists_all():
    r: Registry[int] = Registry("metric")
    r.register("ctr", 1)
    r.register("abandonment_rate", 2)
    with pytest.raises(UnknownNameError, match=r"unknown metric 'abandonment '; did you mean 'abandonment_rate'") as e:
        r.get("abandonment ")
    assert "abandonment_rate, ctr" in str(e.value)


def test_a_name_cannot_be_taken_twice():
    r: Registry[int] = Registry("metric")
    r.register("ctr", 1)
    with pytest.raises(InvalidParameterError, match="already registered"):
        r.register("other", 2, aliases=("CTR",))


def test_unknown_name_without_a_close_match_still_reads_as_a_sentence():
    r: Registry[int] = Registry("metric")
    r.register("ctr", 1)
    with pytest.raises(UnknownNameError, match=r"^unknown metric 'zzzz'\. Known metrics: ctr$"):
        r.get("zzzz")
