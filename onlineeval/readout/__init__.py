"""``onlineeval.readout``: should this experiment ship? The readout of an A/B(/n) and/or
interleaving experiment from its logs: :class:`Readout` (:mod:`onlineeval.readout.result`)."""

from onlineeval.namespace import lazy_submodules, make_callable
from onlineeval.readout.compute import SampleRatioMismatchError, readout
from onlineeval.readout.result import (
    DONT_SHIP,
    INCONCLUSIVE,
    SHIP,
    SRM,
    VERDICT_RULE,
    Decision,
    InterleavingSection,
    MetricRow,
    Readout,
    Sensitivity,
    Window,
)

__all__ = ["DONT_SHIP", "INCONCLUSIVE", "SHIP", "SRM", "VERDICT_RULE", "Decision",
           "InterleavingSection", "MetricRow", "Readout", "SampleRatioMismatchError", "Sensitivity",
           "Window", "readout"]

# onlineeval.readout(logs, ...) runs readout() (onlineeval.namespace)
make_callable(__name__)

__getattr__ = lazy_submodules(__name__)
