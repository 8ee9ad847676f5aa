"""How dotted names resolve in the ``onlineeval`` package tree.

Two rules, applied by every package:

1. **A dotted path to a module works after a plain ``import onlineeval``**:
   ``onlineeval.agreement.tau_matrix``, ``onlineeval.simulate.interleaving``,
   ``onlineeval.offline.trec_eval.trec_eval``. Each package's ``__getattr__`` comes from
   :func:`lazy_submodules` and imports a submodule the first time it is named, so importing
   the package stays cheap.
2. **A name that is a module is always that module, never a function.** Several modules
   share their name with their main function (``onlineeval.simulate`` and ``simulate()``,
   ``onlineeval.abtest``, ``onlineeval.agreement``, ``onlineeval.offline.compare``,
   ``onlineeval.offline.rbo``, ``onlineeval.interleaving.team_draft``,
   ``onlineeval.interleaving.balanced``). Such a module is a :class:`CallableModule`
   (:func:`make_callable`): calling it calls the function, so ``onlineeval.abtest(logs)`` and
   ``onlineeval.abtest.power`` both work, whatever was imported first, and
   ``import onlineeval.offline.compare as m`` gives the module with everything in it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import types
from collections.abc import Callable
from typing import Any


class CallableModule(types.ModuleType):
    """A module that can be called: the call goes to the function of the module's own name
    inside it (``onlineeval.abtest(...)`` runs ``onlineeval.abtest.abtest(...)``)."""

    def _function(self) -> Callable[..., Any]:
        return self.__dict__[self.__name__.rpartition(".")[2]]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._function()(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        # inspect.signature(onlineeval.abtest) shows the function's parameters
        return inspect.signature(self._function())


def make_callable(name: str) -> None:
    """Make the module ``name`` (already in ``sys.modules``) a :class:`CallableModule`; call
    it at the end of the module, after its function of the same name is defined."""
    module = sys.modules[name]
    if not callable(module.__dict__.get(name.rpartition(".")[2])):
        raise TypeError(f"module {name} defines no function named like itself")
    module.__class__ = CallableModule


def lazy_submodules(package: str) -> Callable[[str], types.ModuleType]:
    """A module-level ``__getattr__`` (PEP 562) for ``package`` that imports a submodule
    on first access; other missing names raise AttributeError as usual."""
    names: list[frozenset[str]] = []

    def __getattr__(name: str) -> types.ModuleType:
        if not name.startswith("_"):
            if not names:
                path = sys.modules[package].__path__
                names.append(frozenset(m.name for m in pkgutil.iter_modules(path)))
            if name in names[0]:
                return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
