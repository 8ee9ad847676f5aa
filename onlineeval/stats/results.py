"""The result of a comparison, in one shape for every design, and the records behind it.

:class:`ComparisonResult` is what every comparison reports — the A/B readout
(:func:`onlineeval.abtest`), the interleaving readout (:func:`onlineeval.interleaving_readout`
and its per-user test), the paired offline tests (:func:`onlineeval.offline.compare`) and the
offline–online agreement (:meth:`onlineeval.agreement.AgreementResult.results`); a confidence
sequence read at several looks (:meth:`onlineeval.stats.sequential.SequenceResult.results`)
gives one per look. Each producer's DataFrame carries :data:`RESULT_COLUMNS` as one block,
in that order, after the columns that say what was compared (metric and variant, teams, run
and measure) and before the design's own extras, so frames of different commands line up.

What the fields mean, whatever the design:

- ``estimate`` — the effect: treatment − control (A/B, offline: run − baseline), the
  preference Δ_AB of team A (interleaving), or the statistic itself (agreement: a rate or a
  correlation);
- ``ci_low``, ``ci_high`` — its interval at level ``ci_level`` (null where the procedure gives
  none); never adjusted for multiple testing;
- ``p_value`` — two-sided, of the null of no effect, unadjusted;
- ``p_adjusted``, ``correction``, ``family_size`` — the p-value adjusted by ``correction``
  (:data:`onlineeval.stats.multiple.CORRECTIONS`) within a family of ``family_size`` defined
  p-values; all three null where the design applies no correction (then read ``p_value``);
- ``test`` — the procedure behind the p-value (the producer's docstring says which interval
  goes with it where the two differ);
- ``n`` — the independent units the test rests on (both arms together for two independent
  arms; the pairs of a paired design); ``units_control``, ``units_treatment`` — units per arm
  (in a paired design, where every unit is measured under both, each equals the units
  compared; null where the producer does not know them); ``unit`` — what is counted
  (``user_id``, ``query``, ``user``, ``experiment``).

Renamed columns (before this shape, each command named these its own way): A/B ``abs_diff``,
``abs_ci_low``, ``abs_ci_high`` are ``estimate``, ``ci_low``, ``ci_high``; interleaving
``delta_ab`` is ``estimate`` and ``decided_users`` is ``n``; offline ``delta`` is ``estimate``
and ``n_queries`` is ``n`` (:data:`RENAMED`).

:class:`TwoArmStats` is the vectorised arithmetic of :mod:`onlineeval.stats.tests` (arrays
over many metrics or simulated experiments at once); :meth:`TwoArmStats.result` turns one of
its entries into a :class:`ComparisonResult`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
import pandas as pd

from onlineeval.levels import check_level

_NAN = math.nan


@dataclass(frozen=True, kw_only=True)
class ComparisonResult:
    """One comparison: an estimate with its interval and p-value, the test, the sample sizes
    (field meanings: the module docstring). Fields are in :data:`RESULT_COLUMNS` order."""

    estimate: float
    ci_low: float
    ci_high: float
    ci_level: float
    p_value: float
    p_adjusted: float = _NAN
    correction: str | None = None
    family_size: int | None = None
    test: str
    n: int
    units_control: int | None = None
    units_treatment: int | None = None
    unit: str

    def __post_init__(self) -> None:
        check_level(self.ci_level, "ci_level")

    def to_dict(self) -> dict[str, Any]:
        """The :data:`RESULT_COLUMNS` fields as plain Python values (NaN kept as float nan;
        :func:`onlineeval.formatting.records` makes it null for JSON)."""
        return {name: _scalar(getattr(self, name)) for name in RESULT_COLUMNS}

    def to_frame(self) -> pd.DataFrame:
        """A one-row DataFrame with :data:`RESULT_COLUMNS` (dtypes as :func:`results_frame`)."""
        return results_frame([self])

    def adjusted(self, p_adjusted: float, correction: str, family_size: int,
                 ) -> ComparisonResult:
        """This result with its p-value adjusted within a family (a copy; the record is
        frozen)."""
        return replace(self, p_adjusted=float(p_adjusted), correction=correction,
                       family_size=int(family_size))


#: the columns of :class:`ComparisonResult`, in the order every producer's frame has them
RESULT_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(ComparisonResult))

#: column dtypes of the result block: counts are nullable integers, so that a producer that
#: does not know a count says null instead of inventing one
RESULT_DTYPES: dict[str, str] = {
    "estimate": "float64", "ci_low": "float64", "ci_high": "float64", "ci_level": "float64",
    "p_value": "float64", "p_adjusted": "float64", "correction": "object",
    "family_size": "Int64", "test": "object", "n": "Int64", "units_control": "Int64",
    "units_treatment": "Int64", "unit": "object",
}

#: old column name -> result column, per producer (for users' code written before the shape)
RENAMED: dict[str, dict[str, str]] = {
    "abtest": {"abs_diff": "estimate", "abs_ci_low": "ci_low", "abs_ci_high": "ci_high"},
    "interleaving_readout": {"delta_ab": "estimate", "decided_users": "n"},
    "offline.compare": {"delta": "estimate", "n_queries": "n"},
}


def _scalar(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


def results_frame(results: Sequence[ComparisonResult]) -> pd.DataFrame:
    """The results as rows of :data:`RESULT_COLUMNS` with :data:`RESULT_DTYPES`."""
    rows = [r.to_dict() for r in results]
    out = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    for col, dtype in RESULT_DTYPES.items():
        if dtype == "object":
            # None, not NaN, for a missing text (pandas 3 would infer a NaN string column)
            out[col] = pd.Series([row[col] for row in rows], index=out.index, dtype=object)
        else:
            out[col] = out[col].astype(dtype)
    return out


def comparison_frame(lead: Sequence[Mapping[str, Any]], results: Sequence[ComparisonResult],
                     extra: Sequence[Mapping[str, Any]] | None = None) -> pd.DataFrame:
    """The frame every comparison producer returns: per row, ``lead`` (what was compared,
    e.g. metric and variant, and the arms' values), the :data:`RESULT_COLUMNS` block, then
    ``extra`` (the design's own columns). The three sequences are aligned by row."""
    n = len(results)
    if len(lead) != n or (extra is not None and len(extra) != n):
        raise ValueError("comparison_frame: lead, results and extra must have one entry per row")
    head = pd.DataFrame(list(lead), index=range(n))
    parts = [head, results_frame(results)]
    if extra is not None:
        parts.append(pd.DataFrame(list(extra), index=range(n)))
    clash = [c for c in head.columns if c in RESULT_COLUMNS]
    if clash:
        raise ValueError(f"comparison_frame: lead columns {clash} are result columns")
    return pd.concat(parts, axis=1)


def adjust_family(results: Sequence[ComparisonResult], correction: str,
                  ) -> list[ComparisonResult]:
    """The results with their p-values adjusted together by ``correction``
    (:func:`onlineeval.stats.multiple.adjust`); ``family_size`` counts the defined p-values
    (a null p-value stays null and is not in the family)."""
    from onlineeval.stats.multiple import CORRECTIONS, adjust

    name = CORRECTIONS.canonical(correction)
    p = np.array([r.p_value for r in results], dtype=float)
    adjusted = adjust(p, name)
    size = int(np.count_nonzero(~np.isnan(p)))
    return [r.adjusted(a, name, size) for r, a in zip(results, adjusted, strict=True)]


def result_columns_of(frame: pd.DataFrame) -> list[str]:
    """The frame's columns from the first result column on, as many as there are result
    columns: equal to ``list(RESULT_COLUMNS)`` exactly when the frame has the block in
    order and in one piece."""
    cols = list(frame.columns)
    if RESULT_COLUMNS[0] not in cols:
        return []
    start = cols.index(RESULT_COLUMNS[0])
    return cols[start:start + len(RESULT_COLUMNS)]


@dataclass(frozen=True)
class TwoArmStats:
    """Treatment against control for one metric (fields are arrays when vectorised).

    ``abs_diff = treatment - control`` and ``rel_diff = treatment / control - 1`` (``nan``
    when the control value is 0), each with a two-sided ``1 - alpha`` confidence interval;
    ``p_value`` tests ``abs_diff == 0``.
    ``test`` names the procedure that produced the p-value and the intervals, and ``df``
    holds the degrees of freedom of its Student t reference distribution (``nan`` for the
    normal, rank and bootstrap procedures, and where the test is undefined).
    """

    control_value: np.ndarray
    treatment_value: np.ndarray
    abs_diff: np.ndarray
    abs_se: np.ndarray
    abs_ci_low: np.ndarray
    abs_ci_high: np.ndarray
    rel_diff: np.ndarray
    rel_ci_low: np.ndarray
    rel_ci_high: np.ndarray
    p_value: np.ndarray
    test: str
    df: np.ndarray = field(default_factory=lambda: np.float64(np.nan))

    def result(self, *, ci_level: float, units_control: int, units_treatment: int,
               unit: str, test: str | None = None) -> ComparisonResult:
        """The absolute difference of this (scalar) comparison as a :class:`ComparisonResult`
        (two independent arms: ``n`` is both arms' units); ``test`` overrides the name."""
        return ComparisonResult(
            estimate=float(self.abs_diff), ci_low=float(self.abs_ci_low),
            ci_high=float(self.abs_ci_high), ci_level=ci_level,
            p_value=float(self.p_value), test=self.test if test is None else test,
            n=int(units_control) + int(units_treatment), units_control=int(units_control),
            units_treatment=int(units_treatment), unit=unit,
        )


@dataclass(frozen=True)
class SRMResult:
    """Sample ratio mismatch check: chi-square goodness of fit of units per variant.

    ``mismatch`` is ``p_value < alpha``; when true the experiment's results are not to be
    trusted (assignment or logging is broken) until the cause is found.
    """

    statistic: float
    p_value: float
    units: dict[str, int] = field(default_factory=dict)
    expected_shares: dict[str, float] = field(default_factory=dict)
    mismatch: bool = False
    alpha: float = 0.001

    def to_dict(self) -> dict[str, object]:
        """The fields the CLI's JSON output carries."""
        return {
            "statistic": float(self.statistic),
            "p_value": float(self.p_value),
            "units": {k: int(v) for k, v in self.units.items()},
            "expected_shares": {k: float(v) for k, v in self.expected_shares.items()},
            "mismatch": bool(self.mismatch),
        }

    def message(self) -> str:
        """One human line describing the check."""
        counts = ", ".join(f"{k}={v}" for k, v in self.units.items())
        shares = ", ".join(f"{k}={v:.4g}" for k, v in self.expected_shares.items())
        if self.mismatch:
            return (
                f"SAMPLE RATIO MISMATCH: units per variant ({counts}) do not fit the expected "
                f"split ({shares}); chi-square = {self.statistic:.3f}, p = {self.p_value:.3g} "
                f"< {self.alpha:g}. Assignment or logging is broken: the results below are "
                "not trustworthy until the cause is found."
            )
        return (
            f"sample ratio check passed: units {counts}, expected shares {shares}, "
            f"chi-square = {self.statistic:.3f}, p = {self.p_value:.3g}"
        )
