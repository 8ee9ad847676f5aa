"""``onlineeval.power``: how small an effect an experiment can detect, and how many units
it needs, from the per-unit variance of each metric in baseline logs."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from onlineeval import queries
from onlineeval.abtest.metrics import ORDER, UNIT_SUMS, is_outcome, missing, resolve
from onlineeval.abtest.readout import MIN_UNITS, check_min_units
from onlineeval.abtest.units import unit_sums_query
from onlineeval.errors import InvalidParameterError
from onlineeval.logs import variants
from onlineeval.logs.coerce import as_logs
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
    experiment: str | None = None, min_units: int = MIN_UNITS,
) -> pd.DataFrame:
    """Minimum detectable effect and units needed, per metric, from baseline logs.

    The baseline is every search of ``logs``, with or without a variant (or only those of
    ``variant``, e.g. the control of a past experiment); a unit's searches are pooled. For
    each metric the per-unit standard deviation ``unit_sd`` is that of its delta-method
    linearisation (``Var(metric) = unit_sd^2 / n``), so a ratio metric's within-unit
    correlation is accounted for. Formulas: :mod:`onlineeval.stats.power` (two equal arms,
    the two-sided t test the readout runs).

    Parameters
    ----------
    units
        Units in EACH arm for the MDE; default half the baseline's units (the same traffic
        split evenly between two arms). At least ``min_units``.
    effect
        Effect to size the experiment for: relative to the baseline value (0.01 = +1%) when
        ``relative``, else absolute. Without it ``effect_*`` and ``units_per_arm_needed`` are
        null. It must keep the metric within the values it can take (a rate stays in
        [0, 1], a count at or above 0).
    min_units
        The A/B readout gives no verdict below this many units with data per arm
        (:data:`onlineeval.abtest.readout.MIN_UNITS`), so ``units_per_arm_needed`` is at
        least this, and with fewer units per arm the MDE is null (warned).

    Returns
    -------
    pandas.DataFrame
        One row per metric with the columns :data:`POWER_COLUMNS`.

    Raises
    ------
    InvalidParameterError
        For a metric with zero variance over the baseline units (no sample size follows
        from it), or an effect that would take a metric out of its range.
    """
    z_sum(alpha, power)  # validates alpha and power
    min_units = check_min_units(min_units)
    if units is not None and (isinstance(units, bool) or not isinstance(units, int)
                              or units < min_units):
        raise InvalidParameterError(
            f"units per arm must be an integer >= {min_units} (the A/B readout gives no "
            f"verdict below {min_units} units per arm; see min_units); got {units!r}"
        )
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
    sql, params, known = unit_sums_query(logs, unit=unit, experiment=experiment,
                                         outcomes=any(map(is_outcome, chosen)))
    given_variant = variant
    if variant is not None:
        variant = variants.checked(logs, variant, "variant", known)
    columns = [*UNIT_SUMS, "units"]
    n, null_searches, moments = _baseline_moments(
        logs.con, sql, params, variant,
        sorted({(columns.index(m.num), columns.index(m.den)) for m in chosen}), columns,
    )
    excluded = {"null_unit_searches": null_searches}
    if n < 4:
        raise InvalidParameterError(
            f"the baseline has {n} units; at least 4 are needed to estimate a variance"
        )
    per_arm = units if units is not None else n // 2
    if per_arm < min_units:
        warnings.warn(
            f"half the baseline is {per_arm} units per arm, fewer than the {min_units} the A/B "
            "readout needs for a verdict: the MDE is null (give units=... for a planned size)",
            stacklevel=2,
        )
    estimates = {}
    for m in chosen:
        est = ratio(moments[columns.index(m.num), columns.index(m.den)], 0, 1)
        estimates[m.name] = (float(est.value), float(np.sqrt(est.var * n)))
    _check_variance(estimates, n)
    if effect is not None:
        _check_effect(chosen, estimates, float(effect), relative)
    out = []
    for m in chosen:
        value, sd = estimates[m.name]
        mde_abs = float(mde(sd, per_arm, alpha, power)) if per_arm >= min_units else math.nan
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
            if eff:
                need = float(units_needed(sd, eff, alpha, power))
                row["units_per_arm_needed"] = max(need, float(min_units))
        out.append(row)
    df = pd.DataFrame(out, columns=list(POWER_COLUMNS))
    df.attrs.update({"excluded": excluded, "unit": unit, "variant": given_variant})
    return df


def _check_variance(estimates: dict[str, tuple[float, float]], n: int) -> None:
    """Refuse metrics whose per-unit values do not vary over the baseline."""
    flat = {name: value for name, (value, sd) in estimates.items() if sd == 0}
    if flat:
        which = ", ".join(f"{name} (every unit's value is {v:.6g})" for name, v in flat.items())
        usable = [name for name, (_, sd) in estimates.items() if sd > 0]
        raise InvalidParameterError(
            f"zero variance over the {n:,} baseline units: {which}; no sample size follows "
            "from a metric that does not vary. Leave it out of the metrics"
            + (f" (e.g. metrics {','.join(usable)})" if usable else "")
            + " or use a baseline where it varies"
        )


def _check_effect(chosen: list[Any], estimates: dict[str, tuple[float, float]],
                  effect: float, relative: bool) -> None:
    """Refuse an effect that would take a metric's baseline out of the values it can take."""
    bad = []
    for m in chosen:
        value = estimates[m.name][0]
        low, high = m.bounds
        if not np.isfinite(value):
            continue
        target = value * (1.0 + effect) if relative else value + effect
        if (low is None or target >= low) and (high is None or target <= high):
            continue
        if relative and value != 0:
            ends = [(b / value - 1.0) if b is not None else None for b in (low, high)]
            if value < 0:
                ends.reverse()
        else:
            ends = [(b - value) if b is not None else None for b in (low, high)]
        span = " and ".join(f"{word} {e:+.6g}" for word, e in zip(("at least", "at most"), ends,
                                                                  strict=True) if e is not None)
        lo_s = "-inf" if low is None else f"{low:g}"
        hi_s = "inf" if high is None else f"{high:g}"
        bad.append(f"{m.name} (baseline {value:.6g} would become {target:.6g}, outside "
                   f"[{lo_s}, {hi_s}]; the effect can be {span or 'nothing'})")
    if bad:
        kind = "relative (a share of the baseline)" if relative else "absolute"
        raise InvalidParameterError(
            f"effect {effect:g}, {kind}, is not a change these metrics can show: "
            + "; ".join(bad)
            + (". For an absolute difference use relative=False (CLI: --absolute)"
               if relative else "")
        )


def _baseline_moments(
    con: Any, unit_sql: str, params: dict[str, Any], variant: str | None,
    pairs: list[tuple[int, int]], columns: list[str],
) -> tuple[int, int, dict[tuple[int, int], Moments]]:
    """Units, searches with a NULL unit, and the moments of each (num, den) pair of per-unit
    sums over the baseline, aggregated in DuckDB (``sql/ab/power_moments.sql``).

    Only one row leaves DuckDB, however many units the log has: the per-unit sums (a unit's
    searches pooled over its variants, or only those of ``variant``) are reduced to ``n``,
    means, and sample (co)variances (``var_samp``/``covar_samp``, ddof=1, computed by DuckDB
    without the cancellation of raw sums of squares). Units with no search in ``variant``
    are not part of that baseline.
    """
    used = sorted({c for pair in pairs for c in pair})
    cov_pairs = sorted({(a, b) for p in pairs for a in p for b in p if a <= b})
    rows = queries.create(con, "ab_power_unit_rows", unit_sql, params=params)
    q = queries.load("ab/power_moments")
    sql = q.render(unit_rows=[rows],
                   sums=[columns[i] for i in used if columns[i] != "units"],
                   means=[columns[i] for i in used],
                   pairs=[(columns[a], columns[b]) for a, b in cov_pairs])
    row = con.execute(sql, q.bind(variant=variant)).fetchall()[0]
    names = [f"m{i}" for i in used] + [f"s{a}_{b}" for a, b in cov_pairs] + [
        "n", "null_searches"]
    value = {k: (float("nan") if v is None else v) for k, v in zip(names, row, strict=True)}
    n = int(value["n"])

    def cov(a: int, b: int) -> float:
        return float(value[f"s{min(a, b)}_{max(a, b)}"])

    out = {}
    for num, den in pairs:
        out[num, den] = Moments(
            np.asarray(float(n)),
            np.array([float(value[f"m{num}"]), float(value[f"m{den}"])]),
            np.array([[cov(num, num), cov(num, den)], [cov(num, den), cov(den, den)]]),
        )
    return n, int(value["null_searches"]), out
