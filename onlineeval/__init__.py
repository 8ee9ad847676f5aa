"""onlineeval: evaluate search and ranking systems offline, online, and check they agree.

The public API is re-exported here and imported lazily, so ``import onlineeval`` stays cheap
and each area (logs, online metrics, offline measures, interleaving, A/B tests) loads only
when used. After ``import onlineeval`` every dotted path works (``onlineeval.offline.compare``,
``onlineeval.agreement.tau_matrix``), and a name is never a function in one import order and
a package in another: ``onlineeval.simulate``, ``onlineeval.abtest`` and
``onlineeval.agreement`` are always the packages, and calling one calls its main function
(see :mod:`onlineeval.namespace`).
"""

from __future__ import annotations

import importlib
from typing import Any

from onlineeval.namespace import lazy_submodules

__version__ = "0.1.0"

# public name -> module that defines it (a name that is also a subpackage resolves to the
# subpackage, which is callable)
_EXPORTS: dict[str, str] = {
    # click logs
    "load_logs": "onlineeval.logs",
    "Logs": "onlineeval.logs",
    "LoadReport": "onlineeval.logs",
    "convert": "onlineeval.logs.convert",
    # online metrics
    "online_metrics": "onlineeval.online",
    "position_ctr": "onlineeval.online",
    "top_queries": "onlineeval.online",
    "queries_over_time": "onlineeval.online",
    "attribute_events": "onlineeval.online",
    # simulation
    "simulate": "onlineeval.simulate",
    # offline judged metrics
    "evaluate": "onlineeval.offline",
    "read_qrels": "onlineeval.offline",
    "read_run": "onlineeval.offline",
    "rbo": "onlineeval.offline.rbo",
    # interleaving
    "interleaving_readout": "onlineeval.interleaving",
    # A/B tests
    "abtest": "onlineeval.abtest",
    "power": "onlineeval.abtest",
    "sequential_readout": "onlineeval.abtest.sequential",
    "aa_test": "onlineeval.abtest.aa",
    # offline-online agreement
    "agreement": "onlineeval.agreement",
}

__all__ = ["__version__", *_EXPORTS]

_submodule = lazy_submodules(__name__)


def __getattr__(name: str) -> Any:
    try:
        return _submodule(name)  # a subpackage wins over a function of its name
    except AttributeError:
        pass
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'onlineeval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    import pkgutil

    subpackages = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
    return sorted({*__all__, *subpackages})
