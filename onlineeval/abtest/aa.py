"""A/A peeking harness: how often does each test flag a difference that is not there?

The analysed units of an experiment are split again at random into two pseudo-arms, many
times over (``splits``), ignoring the variant they were served: no split has an effect. Each
split is read at every look with the readout's fixed-horizon test (delta-method t for a ratio
metric, Welch for a per-unit mean, clustered by unit) and with the always-valid confidence
sequence of :mod:`onlineeval.stats.sequential`. The share of splits that a procedure flags is
its false-positive rate, reported with a Clopper–Pearson interval over the splits:

- ``fixed-horizon, last look``: the planned single look; about ``alpha``.
- ``fixed-horizon, any look``: the same test acted on at the first look below ``alpha``
  (peeking); inflated, more so the more looks.
- ``sequential, any look``: the confidence sequence acted on at the first look below
  ``alpha``; at most ``alpha`` up to its asymptotic approximation.

The per-unit cumulative sums by day (or hour) are those of the effect over time
(``sql/ab/over_time_units.sql``, fetched through ``sql/ab/aa_unit_days.sql`` in one query: one
row per unit and day, or hour). With CUPED each row also carries the unit's pre-period
covariates, and both tests are CUPED's (:mod:`onlineeval.stats.cuped`) with theta estimated
from the split's units at each look, as the sequential readout does. The re-randomisation is done in Python, so no engine-specific hash function enters
the SQL: a unit's 64-bit BLAKE2b hash of its text, XOR a per-split salt drawn from ``seed``,
through the SplitMix64 finaliser; the top bit picks the pseudo-arm. Everything about a split
is then sums over units (matrix products), a few per look.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from onlineeval import queries
from onlineeval.abtest.metrics import ABMetric
from onlineeval.abtest.over_time import over_time_units
from onlineeval.abtest.readout import plain_test, plain_test_name
from onlineeval.abtest.units import shared_unit_rows
from onlineeval.errors import InvalidParameterError, SchemaError
from onlineeval.levels import check_level
from onlineeval.stats.cuped import cuped_compare
from onlineeval.stats.moments import Moments
from onlineeval.stats.results import TwoArmStats
from onlineeval.stats.sequential import confidence_sequence, look_indices, optimal_rho2

#: confidence level of the false-positive rates' Clopper–Pearson intervals
RATE_LEVEL = 0.95

#: the procedures compared, in output order
PROCEDURES = ("fixed-horizon, last look", "fixed-horizon, any look", "sequential, any look")

COLUMNS = ("metric", "procedure", "looks", "splits", "false_positives", "fpr", "ci_low",
           "ci_high", "alpha")

_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def unit_hashes(units: Any) -> np.ndarray:
    """64-bit BLAKE2b hash of each unit's text (UTF-8), as unsigned integers."""
    return np.array([int.from_bytes(hashlib.blake2b(str(u).encode(), digest_size=8).digest(),
                                    "little") for u in units], dtype=np.uint64)


def salted_arms(hashes: np.ndarray, salts: np.ndarray) -> np.ndarray:
    """Pseudo-arm (0 or 1) of every unit in every split: shape ``(splits, units)``, the top
    bit of SplitMix64's finaliser applied to ``hash XOR salt``."""
    with np.errstate(over="ignore"):
        z = hashes[None, :] ^ salts[:, None]
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(63)).astype(np.int8)


def clopper_pearson(k: int, n: int, level: float = RATE_LEVEL) -> tuple[float, float]:
    """Exact binomial interval for ``k`` successes in ``n`` trials (scipy's binomtest)."""
    ci = sps.binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


def _arm_moments(w: np.ndarray, present: np.ndarray, columns: list[np.ndarray],
                 den: np.ndarray) -> tuple[Moments, np.ndarray]:
    """Moments of the per-unit ``columns`` (each units x looks, centred per look) over the
    units weighted 1 by ``w`` (splits x units), per look, and the units with a nonzero
    denominator ``den`` (not centred: centring would count units whose value is the mean)."""
    n = w @ present
    k = len(columns)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.stack([(w @ v) / n for v in columns], axis=-1)
        cov = np.empty((*n.shape, k, k))
        for i in range(k):
            for j in range(i, k):
                cross = w @ (columns[i] * columns[j])
                cov[..., i, j] = cov[..., j, i] = (
                    (cross - n * mean[..., i] * mean[..., j]) / (n - 1))
    cov = np.where((n < 2)[..., None, None], np.nan, cov)
    return Moments(n, mean, cov), w @ (present * (den != 0))


@dataclass(frozen=True)
class UnitDays:
    """Each unit's cumulative ``x``, ``y`` at the looks (units x looks; 0 where the unit was
    not yet exposed, ``present`` 1 where it was) and, with CUPED, its pre-period covariates
    ``pre`` (units x 3: ``px, py, h`` of ``sql/ab/over_time_units.sql``)."""

    units: np.ndarray
    variants: np.ndarray
    looks: list[Any]
    present: np.ndarray
    x: np.ndarray
    y: np.ndarray
    pre: np.ndarray | None = None

    @classmethod
    def of(cls, per_unit: pd.DataFrame, looks: Any) -> UnitDays:
        """From the rows of ``sql/ab/aa_unit_days.sql``, read at ``looks``."""
        unit_codes, unit_names = pd.factorize(per_unit["unit"])
        day_codes, days = pd.factorize(per_unit["key"], sort=True)
        shape = (len(unit_names), len(days))
        present, x, y = np.zeros(shape), np.zeros(shape), np.zeros(shape)
        present[unit_codes, day_codes] = 1.0
        x[unit_codes, day_codes] = per_unit["x"].to_numpy(dtype=float)
        y[unit_codes, day_codes] = per_unit["y"].to_numpy(dtype=float)
        variants = np.empty(len(unit_names), dtype=object)
        variants[unit_codes] = per_unit["variant"].to_numpy()
        pre = None
        if "px" in per_unit.columns:
            # the pre-period is the same on every row of a unit
            pre = np.zeros((len(unit_names), 3))
            pre[unit_codes] = per_unit[["px", "py", "h"]].to_numpy(dtype=float)
        idx = look_indices(len(days), looks)
        return cls(np.asarray(unit_names), variants, [days[i] for i in idx],
                   present[:, idx], x[:, idx], y[:, idx], pre)


def split_tests(metric: ABMetric, cube: UnitDays, treat: np.ndarray,
                alpha: float) -> TwoArmStats:
    """The readout's test at every look of every split (``treat``: splits x units, 1 for the
    pseudo-treatment): arrays of shape ``(splits, looks)``. With the cube's pre-period
    covariates, CUPED's comparison with theta estimated at each look
    (:func:`onlineeval.abtest.over_time.cuped_arm_stats` on the split)."""
    present = cube.present
    columns = [cube.x, cube.y]
    if cube.pre is not None:
        columns += [cube.pre[:, [j]] * present for j in range(3)]
    # centred per look so the sums of squares do not cancel; the means are added back
    with np.errstate(invalid="ignore", divide="ignore"):
        centres = [v.sum(axis=0) / present.sum(axis=0) for v in columns]
    centred = [(v - c) * present for v, c in zip(columns, centres, strict=True)]
    arms = []
    for w in (1.0 - treat, treat):
        m, n_den = _arm_moments(w, present, centred, cube.y)
        mean = m.mean + np.stack([np.broadcast_to(c, m.n.shape) for c in centres], axis=-1)
        arms.append((Moments(m.n, mean, m.cov), n_den))
    (mc, dc), (mt, dt) = arms
    if cube.pre is None:
        return plain_test(metric, mc, mt, alpha, dc, dt)
    return cuped_compare(mc, mt, num=0, den=1, pre_num=2, pre_den=3, has_pre=4, alpha=alpha,
                         units_c=dc, units_t=dt, test=plain_test_name(metric)).comparison


def aa_test(
    logs: Any, metrics: Any = "ctr", splits: int = 500, looks: Any = "day",
    alpha: float = 0.05, seed: int = 0, *, experiment: str | None = None,
    unit: str = "user_id", start: Any = None, end: Any = None, pre_period: Any = None,
    cuped: bool | None = None,
) -> pd.DataFrame:
    """False-positive rates of the fixed-horizon and sequential tests on salted A/A splits.

    ``looks`` as :func:`onlineeval.sequential_readout`: ``"day"``, ``"hour"`` (every hour
    from the first exposure's to the last's) or a number of looks spread over the days.
    ``pre_period`` and ``cuped`` as there: both tests are then CUPED's at every look, theta
    estimated from each split's units at that look. The sequence is tuned for the units of
    the last look (:func:`~onlineeval.stats.sequential.optimal_rho2`). Returns one row per
    metric and procedure (:data:`PROCEDURES`): ``looks``, ``splits``, ``false_positives``
    (splits with a p-value below ``alpha`` at a look the procedure reads), ``fpr`` and its
    Clopper–Pearson ``ci_low``/``ci_high`` (95%), ``alpha``. ``attrs``: units, rho2 per
    metric, seed, experiment, unit, looks, cuped.
    """
    alpha = check_level(alpha)
    if isinstance(splits, bool) or not isinstance(splits, int | np.integer) or splits < 1:
        raise InvalidParameterError(f"splits must be a positive whole number; got {splits!r}")
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise InvalidParameterError("metrics must name at least one metric")
    salts = np.random.default_rng(seed).integers(
        0, np.iinfo(np.uint64).max, size=splits, dtype=np.uint64, endpoint=True)
    rows, tuned, n_units, experiment_name, with_cuped = [], {}, {}, experiment, False
    # one per-unit rows query for every metric: run once (abtest.units.shared_unit_rows)
    with shared_unit_rows():
        for name in names:
            prep = over_time_units(logs, name, experiment=experiment, unit=unit, start=start,
                                   end=end, cumulative=True, hourly=looks == "hour",
                                   pre_period=pre_period, cuped=cuped)
            experiment_name, with_cuped = prep.params["experiment"], prep.window.cuped
            q = queries.load("ab/aa_unit_days")
            per_unit = prep.con.execute(q.render(rows=[prep.view], cuped=with_cuped)).df()
            if per_unit.empty:
                raise SchemaError(prep.empty_message)
            cube = UnitDays.of(per_unit, looks)
            treat = salted_arms(unit_hashes(cube.units), salts).astype(float)
            test = split_tests(prep.metric, cube, treat, alpha)
            p = np.asarray(test.p_value)
            n_look = cube.present.sum(axis=0)
            r2 = optimal_rho2(float(n_look[-1]), alpha)
            est, se = np.asarray(test.abs_diff), np.asarray(test.abs_se)
            seq_stop = np.array([confidence_sequence(est[s], se[s], n_look, alpha=alpha,
                                                     rho2=r2).stop[-1] for s in range(splits)])
            flagged = {
                PROCEDURES[0]: np.nan_to_num(p[:, -1], nan=1.0) < alpha,
                PROCEDURES[1]: (np.nan_to_num(p, nan=1.0) < alpha).any(axis=1),
                PROCEDURES[2]: seq_stop,
            }
            for proc in PROCEDURES:
                k = int(flagged[proc].sum())
                lo, hi = clopper_pearson(k, splits)
                rows.append({"metric": prep.metric.name, "procedure": proc, "looks": len(cube.looks),
                             "splits": splits, "false_positives": k, "fpr": k / splits,
                             "ci_low": lo, "ci_high": hi, "alpha": alpha})
            tuned[prep.metric.name] = r2
            n_units[prep.metric.name] = int(n_look[-1])
    frame = pd.DataFrame(rows)[list(COLUMNS)]
    frame.attrs.update({"units": n_units, "rho2": tuned, "seed": seed,
                        "experiment": experiment_name, "unit": unit, "looks": looks,
                        "rate_level": RATE_LEVEL, "cuped": with_cuped})
    return frame
