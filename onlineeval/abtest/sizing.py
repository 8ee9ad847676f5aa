"""``onlineeval.power``: how small an effect an experiment can detect, and how many units
it needs, from the per-unit variance of each metric in baseline logs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from onlineeval.abtest.metrics import ORDER, UNIT_SUMS, missing, resolve
from onlineeval.abtest.units import as_logs, unit_rows
from onlineeval.errors import InvalidParameterError, UnknownNameError
from onlineeval.stats.moments import Moments, ratio
from onlineeval.stats.power import mde, units_needed, z_sum

#: the columns of the result, in order
POWER_COLUMNS: tuple[str, ...] = (
    "metric", "baseline_value", "unit_sd", "baseline_units", "units_per_arm", "alpha", "power",
    "mde_abs", "mde_rel", "effect_abs", "effect_rel", "units_per_arm_needed",
)


def power(
    logs: Any, metrics: list[str] | str | None = None, unit: str = "user_id",
    alpha: float = 0.05, power: float = 0.8, *, units: int | None = None,
    effect: float | None = None, relative: bool = True, variant: str | None = None,
    experiment: str | None = None,
) -> pd.DataFrame:
    """Minimum detectable effect and units needed, per metric, from baseline logs.

    The baseline is every search of ``logs``, with or without a variant (or only those of
    ``variant``, e.g. the control of a past experiment); a unit's searches are pooled. For each metric the per-unit standard deviation ``unit_sd`` is that
    of its delta-method linearisation (``Var(metric) = unit_sd^2 / n``), so a ratio metric's
    within-unit correlation is accounted for. Formulas: :mod:`onlineeval.stats.power`
    (two equal arms, two-sided test, normal approximation).

    Parameters
    ----------
    units
        Units in EACH arm for the MDE; default half the baseline's units (the same traffic
        split evenly between two arms).
    effect
        Effect to size the experiment for: relative to the baseline value (0.01 = +1%) when
        ``relative``, else absolute. Without it ``effect_*`` and ``units_per_arm_needed`` are
        null.

    Returns
    -------
    pandas.DataFrame
        One row per metric with the columns :data:`POWER_COLUMNS`.
    """
    z_sum(alpha, power)  # validates alpha and power
    if units is not None and (isinstance(units, bool) or not isinstance(units, int)
                              or units < 2):
        raise InvalidParameterError(f"units per arm must be an integer >= 2; got {units!r}")
    if effect is not None and (isinstance(effect, bool) or not isinstance(effect, int | float)
                               or not np.isfinite(effect) or effect == 0):
        raise InvalidParameterError(f"effect must be a nonzero number; got {effect!r}")
    logs = as_logs(logs)
    chosen = resolve(metrics, logs)
    if not chosen:
        raise InvalidParameterError(
            f"no metrics to size; give metric names from: {', '.join(ORDER)}"
        )
    unusable = [m.name for m in chosen if missing(logs, m)]
    if unusable:
        raise InvalidParameterError(
            f"the log {logs.source} lacks the columns these metrics need: {unusable}; "
            "choose other metrics (see onlineeval.online.METRICS for the requirements)"
        )
    rows, known = unit_rows(logs, unit=unit, experiment=experiment)
    null_unit = rows["unit"].isna()
    excluded = {"null_unit_searches": int(rows.loc[null_unit, "searches"].sum())}
    rows = rows[~null_unit]
    if variant is not None:
        if variant not in known:
            raise UnknownNameError(
                f"unknown variant {variant!r}; the log's variants are: "
                f"{', '.join(known) or '(none)'}"
            )
        rows = rows[rows["variant"] == variant]
    # a unit's searches in any variant (or none) all count for the baseline
    # sorted by unit: float sums then do not depend on DuckDB's group order
    sums = rows.groupby("unit", sort=True)[list(UNIT_SUMS)].sum()
    sums["units"] = 1
    columns = [*UNIT_SUMS, "units"]
    base = sums[columns].to_numpy(dtype=float)
    n = len(base)
    if n < 4:
        raise InvalidParameterError(
            f"the baseline has {n} units; at least 4 are needed to estimate a variance"
        )
    per_arm = units if units is not None else n // 2
    out = []
    for m in chosen:
        cols = [columns.index(m.num), columns.index(m.den)]
        est = ratio(Moments.from_units(base[:, cols]), 0, 1)
        value = float(est.value)
        sd = float(np.sqrt(est.var * n))
        mde_abs = float(mde(sd, per_arm, alpha, power))
        row = {
            "metric": m.name, "baseline_value": value, "unit_sd": sd, "baseline_units": n,
            "units_per_arm": per_arm, "alpha": float(alpha), "power": float(power),
            "mde_abs": mde_abs, "mde_rel": mde_abs / value if value else float("nan"),
            "effect_abs": float("nan"), "effect_rel": float("nan"),
            "units_per_arm_needed": float("nan"),
        }
        if effect is not None:
            eff = effect * value if relative else float(effect)
            row["effect_abs"] = eff
            row["effect_rel"] = eff / value if value else float("nan")
            row["units_per_arm_needed"] = (
                float(units_needed(sd, eff, alpha, power)) if eff else float("nan")
            )
        out.append(row)
    df = pd.DataFrame(out, columns=list(POWER_COLUMNS))
    df.attrs.update({"excluded": excluded, "unit": unit, "variant": variant})
    return df
