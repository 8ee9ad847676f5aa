"""Interleaving: build merged lists, read team credit out of click logs, test significance.

- :func:`team_draft` (Radlinski, Kurup & Joachims 2008), :func:`balanced` with
  :func:`balanced_credit` (Joachims 2003), :func:`team_draft_multileave` (Schuth et al. 2014);
- :func:`interleaving_readout`: per experiment and ranker pair, wins, ties, Δ_AB, a per-user
  test (users as the independent units: the p-value and the winner), a user-level bootstrap
  CI and, secondary, a binomial sign test over pages, from logs whose ``results.team`` names
  the ranker.
"""

from __future__ import annotations

# team_draft and balanced are the modules, callable as their functions (onlineeval.namespace)
from onlineeval.interleaving import balanced, team_draft
from onlineeval.interleaving.balanced import balanced_credit
from onlineeval.interleaving.multileave import team_draft_multileave
from onlineeval.interleaving.readout import FIELDS, interleaving_readout, preference_matrix
from onlineeval.interleaving.team_draft import (
    Interleaved,
    outcome,
    team_draft_credit,
    team_draft_distribution,
)
from onlineeval.namespace import lazy_submodules

__all__ = [
    "FIELDS",
    "Interleaved",
    "balanced",
    "balanced_credit",
    "interleaving_readout",
    "outcome",
    "preference_matrix",
    "team_draft",
    "team_draft_credit",
    "team_draft_distribution",
    "team_draft_multileave",
]

__getattr__ = lazy_submodules(__name__)
