"""Sequential readout of an interleaving experiment: always-valid intervals at every look.

The tested quantity is the fixed-horizon interleaving test's: the mean over users of the
per-user preference Δ_u (:func:`onlineeval.interleaving.significance.user_test`, users as the
independent units, as pages of one user are not independent). At each look every user's
wins and ties are summed over the pages up to the end of that look, each user with a decided
page gives one Δ_u, and the look's estimate and standard error are ``user_test``'s
(``sd(Δ_u) / sqrt(users)``). The always-valid interval and p-value are the normal-mixture
asymptotic confidence sequence of :mod:`onlineeval.stats.sequential` applied to them with
``t`` = the users with a decided page (formula and references in that module), exactly as
the A/B sequential readout does with its delta-method estimate.

The log is read once, whatever the number of looks: the page outcomes
(``sql/interleaving/page_outcomes.sql``) summed per user and calendar day
(``sql/interleaving/user_stats.sql`` grouped by day, or by hour for hourly looks) come back
as one row per user and day (hour) with pages; the cumulative per-user sums at each look are
running sums over those rows.

A user's Δ_u changes as their pages accrue, so the terms of the mean are not a fixed
i.i.d. sequence; the guarantee is the asymptotic one of Waudby-Smith et al. (the same
caveat as a per-unit ratio metric in the A/B readout). The calibration under no preference
is checked by simulation in ``tests/interleaving/test_sequential.py`` and ``bench/``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from onlineeval.errors import InvalidParameterError, SchemaError
from onlineeval.interleaving import outcomes
from onlineeval.interleaving.readout import _orient
from onlineeval.interleaving.significance import UserTest, user_test
from onlineeval.interleaving.teams import of_experiment, one_pair
from onlineeval.levels import check_level
from onlineeval.logs.coerce import as_logs
from onlineeval.stats.sequential import (
    LOOK_COLUMNS,
    SequenceResult,
    confidence_sequence,
    look_indices,
    optimal_rho2,
)

#: the ``metric`` of the interleaving rows: the mean per-user preference of the treatment team
METRIC = "preference"


def sequential_interleaving(
    logs: Any, control: str | None = None, treatment: str | None = None, *,
    looks: Any = "day", alpha: float = 0.05, rho2: float | None = None,
    experiment: str | None = None, start: Any = None, end: Any = None,
) -> pd.DataFrame:
    """The treatment team's mean per-user preference at every look, always valid.

    ``control`` and ``treatment`` are the interleaved teams (``results.team``); by default
    they are told by their names (:mod:`onlineeval.interleaving.teams`). ``looks``, ``rho2``
    and the returned columns are those of :func:`onlineeval.sequential_readout` (one row
    per look, ``metric`` :data:`METRIC`; ``looks="hour"``: every hour from the first page's
    to the last's, ``look_end`` the hour's end): ``estimate`` is the mean Δ_u with the treatment as
    A (positive: users prefer the treatment), ``units_control`` and ``units_treatment`` both
    the users with pages up to the look (each saw both teams), the fixed-horizon columns the
    per-user t test of that look alone (the interleaving readout's ``user_delta``,
    ``user_ci_low``/``user_ci_high`` and ``p_value`` had the window ended there), and the SRM
    columns null (every user sees both teams: there is no assignment ratio to check). The
    default ``rho2`` is tuned for the users with a decided page at the last look.
    """
    alpha = check_level(alpha)
    hourly = looks == "hour"
    logs = as_logs(logs)
    if not outcomes._has(logs, "searches", "ts"):
        raise SchemaError(
            "a sequential interleaving readout reads the experiment day by day and needs "
            "searches.ts, which this log does not have; map a timestamp column to ts"
        )
    outcomes.page_outcomes(logs, experiment, start=start, end=end, hourly=hourly)
    rows = _orient(outcomes.user_stats(logs, ["day"]), treatment, control,
                   treatment_first=True)
    exp, team_t, team_c = one_pair(rows, experiment, treatment, control)[
        ["experiment", "team_a", "team_b"]]
    rows = rows[(rows["team_a"] == team_t) & (rows["team_b"] == team_c)
                & of_experiment(rows["experiment"], exp)]
    no_day = rows["day"].isna().to_numpy()
    excluded = {"pages_without_ts": int(rows.loc[no_day, "impressions"].sum())}
    if excluded["pages_without_ts"]:
        warnings.warn(
            f"{excluded['pages_without_ts']:,} interleaved pages have no ts and belong to no "
            "look; they were left out of the sequential readout", stacklevel=2,
        )
    rows = rows[~no_day]
    period = pd.to_datetime(rows["day"]).to_numpy()
    if hourly and len(period):
        # every hour from the first page's to the last's, as the A/B readout's hourly looks
        days = pd.date_range(period.min(), period.max(), freq="h").to_numpy(period.dtype)
    else:
        days = np.sort(pd.unique(period))
    looks_at = days[look_indices(len(days), looks)]
    look_of_row = np.searchsorted(looks_at, period)
    users = pd.factorize(rows["user_id"], use_na_sentinel=False)[0]
    tests, units, seq = preference_sequence(
        users, look_of_row, rows[["wins_a", "wins_b", "ties"]].to_numpy(dtype=float),
        len(looks_at), alpha=alpha, rho2=rho2)
    decided = seq.n
    r2 = seq.rho2
    nan = np.full(len(tests), np.nan)
    frame = pd.DataFrame({
        "metric": METRIC, "look": np.arange(1, len(tests) + 1),
        "look_end": [pd.Timestamp(d) + pd.Timedelta(hours=1) if hourly
                     else pd.Timestamp(d).date() for d in looks_at],
        "units_control": units, "units_treatment": units,
        "estimate": seq.estimate, "ci_low": seq.ci_low, "ci_high": seq.ci_high,
        "p_value": seq.p_value, "stop": seq.stop.astype(bool),
        "fixed_ci_low": [r.ci_low for r in tests], "fixed_ci_high": [r.ci_high for r in tests],
        "fixed_p_value": [r.p_value for r in tests],
        "srm_p_value": nan, "srm_sequential_p_value": nan,
    })[list(LOOK_COLUMNS)]
    frame.attrs.update({
        "alpha": alpha, "rho2": {METRIC: r2}, "srm_alpha": None, "control": team_c,
        "treatment": team_t, "experiment": exp, "unit": "user_id", "looks": looks,
        "test": seq.test, "excluded": excluded, "design": "interleaving",
        "users_decided": decided.astype(int).tolist(),
    })
    return frame


def preference_sequence(
    users: np.ndarray, look_of_row: np.ndarray, counts: np.ndarray, n_looks: int, *,
    alpha: float = 0.05, rho2: float | None = None,
) -> tuple[list[UserTest], list[int], SequenceResult]:
    """The per-look tests and the confidence sequence from per-user increments.

    ``users`` (codes 0..U−1), ``look_of_row`` (0..n_looks−1: the first look whose end the
    row's pages precede) and ``counts`` (columns wins of the treatment, wins of the
    control, ties) are one row per user and period. Returns each look's fixed-horizon
    :func:`~onlineeval.interleaving.significance.user_test` on the users' cumulative counts,
    the users with pages by each look, and the sequence over looks (``t`` = users with a
    decided page; ``rho2`` default tuned for the last look's).
    """
    alpha = check_level(alpha)
    if isinstance(n_looks, bool) or not isinstance(n_looks, int | np.integer) or n_looks < 1:
        raise InvalidParameterError(f"n_looks must be a whole number >= 1; got {n_looks!r}")
    users = np.asarray(users, dtype=np.int64)
    look_of_row = np.asarray(look_of_row, dtype=np.int64)
    counts = np.asarray(counts, dtype=float)
    order = np.argsort(look_of_row, kind="stable")
    bounds = np.searchsorted(look_of_row[order], np.arange(n_looks + 1))
    n_users = int(users.max()) + 1 if users.size else 0
    cumulative = np.zeros((3, n_users))
    seen = np.zeros(n_users, dtype=bool)
    tests, units = [], []
    for k in range(n_looks):
        part = order[bounds[k]:bounds[k + 1]]
        for j in range(3):
            cumulative[j] += np.bincount(users[part], weights=counts[part, j],
                                         minlength=n_users)
        seen[users[part]] = True
        tests.append(user_test(*(c[seen] for c in cumulative), alpha=alpha))
        units.append(int(seen.sum()))
    decided = np.array([r.n for r in tests], dtype=float)
    r2 = rho2 if rho2 is not None else optimal_rho2(max(float(decided[-1]), 1.0), alpha)
    seq = confidence_sequence(np.array([r.estimate for r in tests]),
                              np.array([r.se for r in tests]), decided, alpha=alpha, rho2=r2)
    return tests, units, seq
