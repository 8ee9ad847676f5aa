"""A/B experiment analysis: per-unit sums in SQL, statistics in :mod:`onlineeval.stats`.

``abtest(logs, control="control", treatments=None, metrics=None, unit="user_id",
alpha=0.05, correction="holm", pre_period=None, *, experiment=None, start=None, end=None,
cuped=None, ...)`` reads out an experiment (each unit's exposures from its first one on,
inside the window; :mod:`onlineeval.abtest.units` says which searches count);
``power(logs, ...)`` sizes one. The metrics are those of
:data:`onlineeval.abtest.metrics.METRICS`.
"""

import sys
import types
from typing import Any

from onlineeval.abtest.metrics import METRICS
from onlineeval.abtest.readout import COLUMNS, abtest
from onlineeval.abtest.sizing import POWER_COLUMNS, power

__all__ = ["COLUMNS", "METRICS", "POWER_COLUMNS", "abtest", "power"]


class _CallableModule(types.ModuleType):
    """``onlineeval.abtest`` names both this package and its main function. Once the package
    is imported, Python binds ``onlineeval.abtest`` to the package, so calling the package
    must run :func:`abtest`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return abtest(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
