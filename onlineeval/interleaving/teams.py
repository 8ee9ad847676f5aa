"""Which team of an interleaved pair is the treatment: the side every readout reports.

Δ_AB is reported from the treatment's side (positive: the treatment won) by the readout,
``onlineeval interleave`` and the study report alike. The treatment team of a pair is, in
order:

1. the team named as the treatment (``treatment=``, ``--treatment``), or the other team of
   the pair when the control is named (``control=``, ``--control``);
2. the team called ``treatment`` when the pair is ``control`` / ``treatment``;
3. ``T`` when the experiment is named ``C_vs_T`` and the pair is ``C`` / ``T`` (the naming of
   the study files and the simulator: control first);
4. otherwise unknown (None): the caller falls back to the alphabetical order of the pair
   (``interleave``) or asks for the treatment to be named (the readout).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from onlineeval.errors import InvalidParameterError, UnknownNameError

#: how the teams are named, in every error about them
_NAME_TEAMS = ("--treatment-team and --control-team; in the API, treatment_team= and "
               "control_team= of readout, treatment= and control= of sequential_readout")


class UnknownTeamError(UnknownNameError, InvalidParameterError):
    """``team_a`` names no team of the interleaved pages (a caller can add how to name the
    teams, e.g. the study file's keys)."""


def treatment_team(team_a: str, team_b: str, experiment: str | None = None,
                   treatment: str | None = None, control: str | None = None) -> str | None:
    """The treatment of the pair ``team_a``/``team_b`` by the rules of the module docstring,
    or None when they do not tell."""
    pair = {str(team_a), str(team_b)}
    if treatment is not None and treatment in pair:
        return treatment
    if control is not None and control in pair:
        return (pair - {control}).pop() if len(pair) == 2 else None
    if pair == {"control", "treatment"}:
        return "treatment"
    if experiment is not None and "_vs_" in str(experiment):
        first, _, second = str(experiment).partition("_vs_")
        if pair == {first, second} and first != second:
            return second
    return None


def one_pair(rows: pd.DataFrame, experiment: str | None, treatment: str | None,
             control: str | None) -> pd.Series:
    """The comparison an interleaving readout reads out: the first row of ``rows`` (columns
    experiment, team_a, team_b, oriented treatment first) of its one (experiment, team_a,
    team_b). An error says what to name when there is no decided page, the log holds several
    experiments (and ``experiment`` is None) or pairs (multileaving), a named team is not in
    the pair, or the pair does not tell which team is the treatment (:func:`treatment_team`;
    it must be ``team_a``)."""
    pairs = rows[["experiment", "team_a", "team_b"]].drop_duplicates()
    if pairs.empty:
        where = "" if experiment is None else f" of experiment {experiment!r}"
        raise InvalidParameterError(f"no interleaved page{where} has a decided comparison")
    found = sorted({str(e) for e in pairs["experiment"] if not _missing(e)})
    if experiment is None and len(found) > 1:
        raise InvalidParameterError(
            f"the interleaving log holds several experiments ({', '.join(found)}); name one "
            "(--experiment; experiment=)"
        )
    if len(pairs) > 1:
        pairs = pairs[pairs[["team_a", "team_b"]].isin([treatment, control]).any(axis=1)]
        if len(pairs) != 1:
            raise InvalidParameterError(
                "the interleaved pages compare more than two teams (multileaving); name the "
                f"treatment and control teams ({_NAME_TEAMS})"
            )
    exp, a, b = pairs.iloc[0]
    for role, name in (("treatment", treatment), ("control", control)):
        if name is not None and name not in (a, b):
            raise UnknownTeamError(
                f"the {role} team {name!r} is not a team of the interleaved pages of "
                f"experiment {exp!r}; teams: {a}, {b}"
            )
    if treatment_team(a, b, exp, treatment, control) != a:
        raise InvalidParameterError(
            f"which interleaved team is the treatment, {a!r} or {b!r}? Name it "
            f"({_NAME_TEAMS}; or name the experiment CONTROL_vs_TREATMENT)"
        )
    return rows.loc[pairs.index[0]]


def of_experiment(experiments: pd.Series, experiment: Any) -> pd.Series:
    """Which rows of ``experiments`` belong to ``experiment`` (a missing experiment matches
    the missing ones: a log without experiment names is one experiment)."""
    if _missing(experiment):
        return experiments.map(_missing)
    return experiments.map(lambda v: not _missing(v) and v == experiment)


def _missing(value: Any) -> bool:
    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))
