"""Public home of :func:`rbo` (``import onlineeval.offline.rbo``); defined in
:mod:`onlineeval.offline.measures.rbo`, beside the other measures."""

from onlineeval.offline.measures.rbo import rbo, rbo_lists

__all__ = ["rbo", "rbo_lists"]
