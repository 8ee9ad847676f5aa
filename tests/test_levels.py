"""One check of a probability level, everywhere: every public function of the package taking
``alpha``, ``confidence``, ``power`` (or ``*_alpha``, ``*_confidence``) refuses 0, 1, 1.5,
"x", NaN (and True) with the same message, before it does any work.

The functions are found by introspection (every module of the package, every public
function and method), and each must have an entry in :data:`CALLS` (how to call it with
everything valid but the level) or in :data:`EXEMPT` (why the parameter is no level to
check): a new function taking alpha cannot escape the check.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.errors import InvalidParameterError
from onlineeval.levels import check_level, level_message

LEVEL_NAMES = ("alpha", "confidence", "power")
# (None is no level either, but compare() takes confidence=None to mean 1 - alpha)
BAD = [0, 1, 1.5, -0.1, "x", "0.05", math.nan, math.inf, True]


def _is_level(name: str) -> bool:
    return name in LEVEL_NAMES or name.endswith(("_alpha", "_confidence"))


def _public_callables() -> Iterator[tuple[str, Callable[..., Any]]]:
    """(qualified name, function) of every public function and method defined in the
    package (methods: public ones and ``__init__``)."""
    for info in pkgutil.walk_packages(onlineeval.__path__, "onlineeval."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(obj):
                yield f"{module.__name__}.{name}", obj
            elif inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if inspect.isfunction(member) and (not attr.startswith("_")
                                                       or attr == "__init__"):
                        yield f"{module.__name__}.{name}.{attr}", member


def found() -> dict[str, tuple[str, ...]]:
    """Qualified name -> its level parameters, for every callable that has one."""
    out = {}
    for qualname, fn in _public_callables():
        params = tuple(p for p in inspect.signature(fn).parameters if _is_level(p))
        if params:
            out[qualname] = params
    return out


# A sentinel for an input the function must not touch before its levels are checked (a log,
# a table): the check comes first, so a bad level is refused however costly the rest is.
UNUSED = object()

EXEMPT: dict[str, str] = {
    "onlineeval.clickmodels.cascade_models.Posterior.__init__":
        "alpha is the click model's attractiveness array, not a significance level",
    "onlineeval.stats.results.SRMResult.__init__":
        "a result record: holds the level srm_test checked",
    "onlineeval.stats.sequential.SequenceResult.__init__":
        "a result record: holds the level confidence_sequence checked",
    "onlineeval.stats.sequential.SequentialSRM.__init__":
        "a result record: holds the level sequential_srm checked",
    "onlineeval.counterfactual.evaluation.CounterfactualResult.__init__":
        "a result record: holds the level evaluate checked",
    "onlineeval.counterfactual.evaluation.Prepared.__init__":
        "a record of checked arguments: holds the level prepare checked",
    "onlineeval.stats.quantile.QuantileArm.__init__":
        "a result record: holds the level quantile_arm / quantile_effects checked",
    "onlineeval.readout.result.Readout.__init__":
        "a result record: holds the level readout checked",
    "onlineeval.readout.result.SRM.__init__":
        "a result record: holds the level readout checked",
    "onlineeval.abtest.aa.split_tests": "aa_test's arithmetic: receives the level aa_test "
                                        "checked",
    "onlineeval.abtest.over_time.arm_stats": "the shared step of effect_over_time and "
                                             "sequential_readout: receives the level they "
                                             "checked",
    "onlineeval.abtest.over_time.cuped_arm_stats": "sequential_readout's CUPED step: "
                                                   "receives the level it checked (and "
                                                   "cuped_compare checks it again)",
    "onlineeval.readout.ab.ab_part": "readout's A/B step: receives the level readout checked",
    "onlineeval.readout.interleaved.interleaving_part":
        "readout's interleaving step: receives the level readout checked",
    "onlineeval.readout.decide.holm_levels":
        "readout's arithmetic on the level it checked (tests/readout test it by hand)",
    "onlineeval.readout.decide.metric_verdict":
        "readout's arithmetic on the level it checked (tests/readout test it by hand)",
    "onlineeval.readout.decide.se_from_interval":
        "readout's arithmetic on the level it checked (tests/readout test it by hand)",
    "onlineeval.readout.decide.t_quantile":
        "readout's arithmetic on the level it checked (tests/readout test it by hand)",
    "onlineeval.interleaving.readout.per_query_rows":
        "reads the page outcomes a readout just defined, with the level that readout checked",
    "onlineeval.study.Study.__init__":
        "the parsed study file: read_study checks its alpha (tests/report/test_study.py), "
        "and every readout it is passed to checks it again",
}


def _moments() -> Any:
    from onlineeval.stats.moments import Moments

    return Moments.from_units(np.array([[1.0, 1.0], [2.0, 1.0], [0.0, 1.0]]))


def _estimate() -> Any:
    from onlineeval.stats.moments import Estimate

    return Estimate(np.float64(1.0), np.float64(0.1))


def _ctr() -> Any:
    from onlineeval.abtest.metrics import METRICS

    return METRICS.get("ctr")


def _quantile() -> Any:
    from onlineeval.stats.quantile import quantile_arm

    return quantile_arm(np.array([1.0, 2.0, 3.0]), np.array(["u", "v", "w"]), 0.5)


def _association() -> dict[str, Any]:
    from onlineeval.agreement import association

    return association(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0]))


# qualified name -> (positional args, keyword args) valid in everything but the level
CALLS: dict[str, Callable[[], tuple[tuple, dict]]] = {
    "onlineeval.abtest.readout.abtest": lambda: ((UNUSED,), {}),
    "onlineeval.abtest.sizing.power": lambda: ((UNUSED,), {}),
    "onlineeval.abtest.over_time.effect_over_time": lambda: ((UNUSED, "c", "t"), {}),
    "onlineeval.abtest.segments.segment_effects": lambda: ((UNUSED, "d", "c", "t"), {}),
    "onlineeval.abtest.quantiles.quantile_effects": lambda: ((UNUSED, "c", "t"), {}),
    "onlineeval.abtest.readout.plain_test":
        lambda: ((_ctr(), _moments(), _moments()), {"units_c": 3, "units_t": 3}),
    "onlineeval.agreement.across.decide": lambda: ((0.1, 0.2, 0.01, 0.02), {}),
    "onlineeval.agreement.across.agreement": lambda: ((UNUSED,), {}),
    "onlineeval.agreement.core.association": lambda: (([1.0, 2.0], [2.0, 1.0]), {}),
    "onlineeval.agreement.core.association_results":
        lambda: ((_association(),), {"confidence": 0.95, "unit": "experiment"}),
    "onlineeval.agreement.matrix.tau_matrix": lambda: ((UNUSED, [], []), {}),
    "onlineeval.agreement.per_query.within_experiment": lambda: ((UNUSED, UNUSED), {}),
    "onlineeval.agreement.within.per_query_agreement": lambda: ((UNUSED, UNUSED), {}),
    "onlineeval.clickmodels.harvest.harvest_from_counts": lambda: ((UNUSED,), {}),
    "onlineeval.clickmodels.harvest.harvest_position_bias": lambda: ((UNUSED,), {}),
    "onlineeval.counterfactual.estimators.interval": lambda: ((UNUSED, UNUSED), {}),
    "onlineeval.counterfactual.estimators.estimate": lambda: ((UNUSED, "ips"), {}),
    "onlineeval.counterfactual.evaluation.estimate_on":
        lambda: ((UNUSED, "ips", UNUSED, UNUSED, None), {"k": 1, "max_rank": 1}),
    "onlineeval.counterfactual.evaluation.evaluate": lambda: ((UNUSED, UNUSED), {}),
    "onlineeval.counterfactual.evaluation.prepare": lambda: ((UNUSED,), {}),
    "onlineeval.counterfactual.evaluation.estimate_rows":
        lambda: ((UNUSED, "ips", UNUSED, UNUSED, None), {"k": 1, "max_rank": 1}),
    "onlineeval.counterfactual.difference.difference": lambda: ((UNUSED,), {}),
    "onlineeval.interleaving.readout.interleaving_readout": lambda: ((UNUSED,), {}),
    "onlineeval.readout.compute.readout": lambda: ((UNUSED,), {}),
    "onlineeval.abtest.sequential.sequential_readout": lambda: ((UNUSED, "c", "t"), {}),
    "onlineeval.abtest.aa.aa_test": lambda: ((UNUSED,), {}),
    "onlineeval.interleaving.sequential.sequential_interleaving": lambda: ((UNUSED,), {}),
    "onlineeval.interleaving.sequential.preference_sequence":
        lambda: (([0, 1], [0, 0], [[1, 0, 0], [0, 1, 0]], 1), {}),
    "onlineeval.interleaving.significance.bootstrap_ci":
        lambda: (([1], [0], [0], [0]), {}),
    "onlineeval.interleaving.significance.user_test": lambda: (([1, 2], [0, 1], [0, 0]), {}),
    "onlineeval.offline.compare.paired_test": lambda: (([0.1, 0.2], [0.3, 0.1]), {}),
    "onlineeval.offline.compare.compare": lambda: ((UNUSED, UNUSED, UNUSED, ["map"]), {}),
    "onlineeval.offline.compare.compare_scores": lambda: ((UNUSED, UNUSED), {}),
    "onlineeval.stats.cuped.cuped_compare": lambda: ((UNUSED, UNUSED), {
        "num": 0, "den": 1, "pre_num": 2, "pre_den": 3, "has_pre": 4}),
    "onlineeval.stats.quantile.quantile_arm": lambda: (([1.0, 2.0], ["u", "v"], 0.5), {}),
    "onlineeval.stats.quantile.compare_quantiles": lambda: ((_quantile(), _quantile()), {}),
    "onlineeval.stats.power.z_sum": lambda: ((), {"alpha": 0.05, "power": 0.8}),
    "onlineeval.stats.power.power_t": lambda: ((0.5, 20), {"alpha": 0.05}),
    "onlineeval.stats.power.mde": lambda: (([1.0], [100]), {}),
    "onlineeval.stats.power.units_needed": lambda: (([1.0], [0.5]), {}),
    "onlineeval.stats.sequential.optimal_rho2": lambda: ((100,), {}),
    "onlineeval.stats.sequential.mixture_margin": lambda: ((10, 0.01), {}),
    "onlineeval.stats.sequential.confidence_sequence":
        lambda: (([0.1, 0.2], [0.1, 0.05], [10, 20]), {}),
    "onlineeval.stats.sequential.sequential_srm": lambda: (([[5, 5], [10, 11]], [0.5, 0.5]), {}),
    "onlineeval.stats.srm.srm_test": lambda: (({"a": 10, "b": 12},), {}),
    "onlineeval.stats.tests.compare": lambda: ((_estimate(), _estimate()), {}),
    "onlineeval.stats.tests.welch": lambda: ((_moments(), _moments(), 0), {}),
    "onlineeval.stats.tests.delta_t": lambda: ((_moments(), _moments(), 0, 1), {}),
    "onlineeval.stats.tests.mann_whitney": lambda: (([1.0, 2.0], [2.0, 3.0]), {}),
    "onlineeval.stats.tests.bootstrap":
        lambda: ((([1.0, 2.0], [1.0, 1.0]), ([2.0, 3.0], [1.0, 1.0])), {"reps": 100}),
}


def _resolve(qualname: str) -> Callable[..., Any]:
    module, _, name = qualname.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError:
        cls_module, _, cls = module.rpartition(".")
        return getattr(getattr(importlib.import_module(cls_module), cls), name)


def test_every_function_taking_a_level_is_checked_or_exempt_with_a_reason():
    names = found()
    # the introspection works: it finds the readouts (else this test would check nothing)
    assert {"onlineeval.abtest.readout.abtest", "onlineeval.offline.compare.compare",
            "onlineeval.interleaving.readout.interleaving_readout",
            "onlineeval.agreement.across.agreement"} <= set(names)
    missing = sorted(set(names) - set(CALLS) - set(EXEMPT))
    assert not missing, (f"functions taking a level without an entry in CALLS (how to call "
                         f"them) or EXEMPT (why not): {missing}")
    stale = sorted((set(CALLS) | set(EXEMPT)) - set(names))
    assert not stale, f"entries for functions that no longer take a level: {stale}"


CASES = [(q, p) for q, params in sorted(found().items()) if q in CALLS for p in params]


@pytest.mark.parametrize("qualname, param", CASES, ids=[f"{q}:{p}" for q, p in CASES])
@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_a_bad_level_gets_the_one_message(qualname, param, bad):
    args, kwargs = CALLS[qualname]()
    with pytest.raises(InvalidParameterError) as err:
        _resolve(qualname)(*args, **{**kwargs, param: bad})
    assert str(err.value) == level_message(param, bad)
    assert str(err.value) == f"{param} must be a number in (0, 1); got {bad!r}"


@pytest.mark.parametrize("qualname, param", CASES, ids=[f"{q}:{p}" for q, p in CASES])
def test_a_good_level_passes_the_check(qualname, param):
    # what the function does next may fail on the placeholder inputs, but never on the level
    args, kwargs = CALLS[qualname]()
    try:
        _resolve(qualname)(*args, **{**kwargs, param: np.float64(0.9)})
    except Exception as exc:
        assert " must be a number in (0, 1)" not in str(exc), exc


@pytest.mark.parametrize("good", [0.05, 0.5, 1e-12, 1 - 1e-12, np.float32(0.1), 1 / 3,
                                  np.float64(0.95)])
def test_check_level_accepts_every_number_strictly_inside(good):
    assert check_level(good) == float(good)
    assert isinstance(check_level(good), float)


def test_check_level_names_the_parameter():
    with pytest.raises(InvalidParameterError, match=r"^confidence must be a number in \(0, 1\); "
                                                    r"got 2$"):
        check_level(2, "confidence")
    # numpy's bool is no number here either
    with pytest.raises(InvalidParameterError):
        check_level(np.bool_(True))
    with pytest.raises(InvalidParameterError):
        check_level(pd.NA)
