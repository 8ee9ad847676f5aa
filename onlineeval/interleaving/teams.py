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
