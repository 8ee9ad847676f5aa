"""A/B experiment analysis: per-unit sums in SQL, statistics in :mod:`onlineeval.stats`.

``abtest(logs, control="control", treatment=None, metrics=None, unit="user_id",
alpha=0.05, correction="holm", pre_period=None, *, experiment=None, start=None, end=None,
cuped=None, ...)`` reads out an experiment (each unit's exposures from its first one on,
inside the window; :mod:`onlineeval.abtest.units` says which searches count);
``power(logs, ...)`` sizes one. The metrics are those of
:data:`onlineeval.abtest.metrics.METRICS`.
"""

from onlineeval.abtest.metrics import METRICS
from onlineeval.abtest.readout import COLUMNS, abtest
from onlineeval.abtest.sizing import POWER_COLUMNS, power
from onlineeval.namespace import lazy_submodules, make_callable

__all__ = ["COLUMNS", "METRICS", "POWER_COLUMNS", "abtest", "power"]


# onlineeval.abtest(logs, ...) runs abtest() (onlineeval.namespace)
make_callable(__name__)
__getattr__ = lazy_submodules(__name__)
