"""Public home of :func:`rbo` (``import onlineeval.offline.rbo``); defined in
:mod:`onlineeval.offline.measures.rbo`, beside the other measures."""

from onlineeval.namespace import make_callable
from onlineeval.offline.measures.rbo import rbo, rbo_lists

__all__ = ["rbo", "rbo_lists"]

# the module is callable as rbo(), so this name is the module in every import order
# (onlineeval.namespace)
make_callable(__name__)
