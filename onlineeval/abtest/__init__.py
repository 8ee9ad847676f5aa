"""A/B experiment analysis: per-unit sums in SQL, statistics in :mod:`onlineeval.stats`.

``abtest(logs, control="control", treatment=None, metrics=None, unit="user_id",
alpha=0.05, correction="holm", pre_period=None, *, experiment=None, start=None, end=None,
cuped=None, ...)`` reads out an experiment (each unit's exposures from its first one on,
inside the window; :mod:`onlineeval.abtest.units` says which searches count);
``power(logs, ...)`` sizes one. For the readout beside the per-metric comparison:
``effect_over_time`` (cumulative per calendar day, per day since exposure),
``segment_effects`` (per segment, with a heterogeneity test), ``quantile_effects``
(median, p90, ... of a per-search value, clustered intervals). Read at every look:
``sequential_readout`` (always-valid intervals), and ``aa_test`` (false-positive rates of
peeking on salted A/A splits). The metrics are those of
:data:`onlineeval.abtest.metrics.METRICS`.
"""

from onlineeval.abtest.aa import aa_test
from onlineeval.abtest.metrics import METRICS
from onlineeval.abtest.over_time import effect_over_time
from onlineeval.abtest.quantiles import quantile_effects
from onlineeval.abtest.readout import COLUMNS, abtest
from onlineeval.abtest.segments import segment_effects
from onlineeval.abtest.sequential import sequential_readout
from onlineeval.abtest.sizing import POWER_COLUMNS, power
from onlineeval.namespace import lazy_submodules, make_callable

__all__ = ["COLUMNS", "METRICS", "POWER_COLUMNS", "aa_test", "abtest", "effect_over_time",
           "power", "quantile_effects", "segment_effects", "sequential_readout"]


# onlineeval.abtest(logs, ...) runs abtest() (onlineeval.namespace)
make_callable(__name__)
__getattr__ = lazy_submodules(__name__)
