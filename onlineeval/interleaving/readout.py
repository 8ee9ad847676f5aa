"""The interleaving readout: per experiment and ranker pair, counts, Δ_AB, CI, p-value, winner.

Which team is "A": within each experiment the teams (distinct ``results.team`` values) are
paired in byte order, team_a < team_b, unless ``team_a`` names the team to put first. With
more than two teams on an experiment's pages (multileaving), every pair gets a row, each
computed from the pages of that experiment with the credit of those two teams;
:func:`preference_matrix` arranges the rows as a matrix.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from onlineeval.errors import InputError, InvalidParameterError
from onlineeval.interleaving import outcomes
from onlineeval.interleaving._random import derived_generator
from onlineeval.interleaving.significance import bootstrap_ci, delta_ab, sign_test
from onlineeval.window import bounds

# the fields of the readout the CLI prints, in order (the JSON record)
FIELDS: tuple[str, ...] = (
    "experiment", "team_a", "team_b", "impressions", "impressions_with_clicks", "wins_a",
    "wins_b", "ties", "delta_ab", "share_a", "p_value", "ci_low", "ci_high", "winner",
)
_COUNTS = ("impressions", "impressions_with_clicks", "wins_a", "wins_b", "ties",
           "clicks_without_team", "clicks_unmatched", "repeat_clicks", "one_sided_pages")


def _orient(stats: pd.DataFrame, team_a: str | None) -> pd.DataFrame:
    """Swap the sides of the pairs whose team_b is the requested ``team_a``."""
    if team_a is None:
        return stats
    present = set(stats["team_a"]) | set(stats["team_b"])
    if team_a not in present:
        raise InvalidParameterError(
            f"team_a {team_a!r} is not a team of the interleaved pages; teams: "
            f"{', '.join(sorted(map(str, present)))}"
        )
    flip = (stats["team_b"] == team_a).to_numpy()
    out = stats.copy()
    for x, y in (("team_a", "team_b"), ("wins_a", "wins_b")):
        out.loc[flip, [x, y]] = stats.loc[flip, [y, x]].to_numpy()
    return out


def _compare(rows: pd.DataFrame, per_query: bool, alpha: float, n_resamples: int,
             rng: np.random.Generator) -> dict[str, Any]:
    """Significance and effect of one comparison from its per-user (and query) rows."""
    wa, wb, t = (rows[c].to_numpy(dtype=float) for c in ("wins_a", "wins_b", "ties"))
    users = pd.factorize(rows["user_id"], use_na_sentinel=False)[0]
    out: dict[str, Any] = {c: int(rows[c].sum()) for c in _COUNTS}
    out["users"] = int(users.max()) + 1 if len(users) else 0
    if per_query:
        groups = pd.factorize(rows["query"], use_na_sentinel=False)[0]
        q = pd.DataFrame({"g": groups, "a": wa, "b": wb, "t": t}).groupby("g").sum()
        d_q = delta_ab(q["a"].to_numpy()[:, None], q["b"].to_numpy()[:, None],
                       q["t"].to_numpy()[:, None])
        delta = float(np.nanmean(d_q)) if np.isfinite(d_q).any() else math.nan
        with np.errstate(invalid="ignore"):
            shares = q["a"] / (q["a"] + q["b"])
        share = float(shares.mean()) if shares.notna().any() else math.nan
        pos, neg = int((d_q > 0).sum()), int((d_q < 0).sum())
        out["queries_decided"] = int(np.isfinite(d_q).sum())
    else:
        groups = None
        sa, sb = wa.sum(), wb.sum()
        delta = float(delta_ab(np.array([sa]), np.array([sb]), np.array([t.sum()])))
        share = sa / (sa + sb) if sa + sb > 0 else math.nan
        pos, neg = int(sa), int(sb)
        out["queries_decided"] = None
    p = sign_test(pos, neg)
    lo, hi = bootstrap_ci(wa, wb, t, users, groups, n_resamples=n_resamples,
                          confidence=1 - alpha, rng=rng)
    winner = None
    if not math.isnan(p) and p < alpha and pos != neg:
        winner = "a" if pos > neg else "b"
    out.update(delta_ab=delta, share_a=share, p_value=p, ci_low=lo, ci_high=hi,
               winner=winner, method="per_query" if per_query else "pages")
    return out


def interleaving_readout(
    logs: Any, experiment: str | None = None, *, by: Sequence[str] | str = (),
    per_query: bool = False, team_a: str | None = None, alpha: float = 0.05,
    n_resamples: int = 1000, seed: int = 0, start: Any = None, end: Any = None,
) -> pd.DataFrame:
    """Read out interleaving experiments from a click log.

    Parameters
    ----------
    logs
        A :class:`onlineeval.Logs` from :func:`onlineeval.load_logs`, or a log directory.
        Interleaved pages are searches whose ``results.team`` names the ranker that placed
        each result (see ``sql/interleaving/page_outcomes.sql`` for the exact credit rule).
    experiment
        Only this experiment (default: every experiment with interleaved pages, each read
        out on its own rows: experiments are never pooled).
    by
        Extra breakdown: ``"variant"`` and/or ``"day"`` (day needs ``searches.ts``).
    per_query
        Use the per-query variant: Δ_AB, share_a and the sign test are computed per query
        first (Δ_q, share_q) and then over queries: Δ_AB = mean of Δ_q over queries with a
        decided page, share_a = mean of share_q over queries with a win, and the sign test
        counts queries with Δ_q > 0 against queries with Δ_q < 0. Counts stay page counts.
    team_a
        The team to report as A in every pair it is part of (default: the pair's
        alphabetically first team).
    alpha
        Significance level: the winner is named when the sign test's p < alpha, and the CI
        has coverage 1 − alpha.
    n_resamples, seed
        Bootstrap resamples of users for the CI, and the seed (each comparison draws from a
        generator derived from the seed and the comparison's key, so results are
        reproducible and independent of which other experiments are read out).
    start, end
        The window: only pages with ``start <= ts < end`` are read out (None: unbounded;
        strings like ``"2024-03-01"`` or datetimes, a value with a zone converted to UTC).

    Returns
    -------
    pandas.DataFrame
        One row per experiment (and breakdown) and ranker pair with :data:`FIELDS`
        (experiment, team_a, team_b, impressions, impressions_with_clicks, wins_a, wins_b,
        ties, delta_ab, share_a, p_value, ci_low, ci_high, winner) followed by the breakdown
        columns and: users, queries_decided (per-query mode), clicks_without_team (clicked
        results without a team: reported, never credited), clicks_unmatched (click rows
        matching no result), repeat_clicks (repeated clicks on one result, counted once),
        one_sided_pages (pages where only one of the two teams placed a result, so a click
        could credit that team only), method. ``winner`` is the winning team's name, or None
        when p ≥ alpha. A warning names the counts when clicks could not be credited, and,
        for an experiment of two teams, when some of its pages are one-sided (a ranking ran
        out and the other filled the page: ``team_draft(fill=False)`` avoids them).
        ``df.attrs["window"]`` holds ``start`` and ``end`` (as given, or None),
        ``first_page`` and ``last_page`` (the earliest and latest page read out) and
        ``pages_before_window``, ``pages_after_window`` (interleaved pages left out).

    Notes
    -----
    The page outcomes stay defined in ``logs.con`` as the temp view
    :data:`~onlineeval.interleaving.outcomes.PAGE_TABLE` (replaced by the next readout on the
    same logs), so a caller can run further SQL on them (the study report's per-query Δ_q
    does). It is a view, so each such query streams the log again: nothing per page is held
    in memory, whatever the log's size.
    """
    if not isinstance(alpha, float | int) or not 0.0 < alpha < 1.0:
        raise InvalidParameterError(f"alpha must lie in (0, 1); got {alpha!r}")
    for name, value, low in (("n_resamples", n_resamples, 1), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
            raise InvalidParameterError(f"{name} must be an integer >= {low}; got {value!r}")
    logs = outcomes.as_logs(logs)
    by = outcomes.check_by(logs, by)
    if per_query and not outcomes._has(logs, "searches", "query"):
        raise InputError(
            "the per-query readout needs searches.query, which this log does not have; "
            "drop per_query (--per-query)"
        )
    pages = outcomes.page_outcomes(logs, experiment, start=start, end=end)
    stats = outcomes.user_stats(logs, [*by, "query"] if per_query else by)
    stats = _orient(stats, team_a)
    keys = ["experiment", *by, "team_a", "team_b"]
    rows = []
    for key, part in stats.groupby(keys, dropna=False, sort=True):
        # the comparison's own stream: its CI does not depend on which other comparisons are
        # read out, nor on which team is A (the key holds the two teams in sorted order)
        names = [None if pd.isna(k) else str(k) for k in key]
        rng = derived_generator(int(seed), (*names[:-2], *sorted(names[-2:])))
        res = _compare(part, per_query, float(alpha), n_resamples, rng)
        rec = dict(zip(keys, key, strict=True))
        rec["winner"] = {"a": rec["team_a"], "b": rec["team_b"]}.get(res.pop("winner"))
        rows.append({**rec, **res})
    out = pd.DataFrame(rows)
    for k in [*keys, "winner"]:
        # None, not NaN, for a missing experiment/day/winner (pandas 3 strings would give NaN)
        out[k] = out[k].astype(object).where(out[k].notna(), None)
    extra = [c for c in out.columns if c not in FIELDS]
    out = out[[*FIELDS, *extra]]
    _warn_uncredited(out)
    _warn_one_sided(out, by)
    _warn_unnamed(out)
    lo, hi = bounds(start, end)
    out.attrs["window"] = {
        "start": lo, "end": hi, "first_page": pages.first_page, "last_page": pages.last_page,
        "pages_before_window": pages.before_window, "pages_after_window": pages.after_window,
    }
    return out


def _warn_unnamed(out: pd.DataFrame) -> None:
    # pages without an experiment are read out together: say so when named experiments
    # are read out beside them, as those pages may come from several experiments
    named = sorted({str(e) for e in out["experiment"] if e is not None})
    if named and out["experiment"].isna().any():
        warnings.warn(
            "some interleaved pages have no experiment: they are read out together as "
            f"experiment None, beside the named experiments ({', '.join(named)}); give them "
            "an experiment (or pass experiment=NAME) to read them out separately",
            stacklevel=3,
        )


def _warn_one_sided(out: pd.DataFrame, by: Sequence[str]) -> None:
    # with three or more teams (multileaving), pages that show only some teams are expected
    n_pairs = out.groupby(["experiment", *by], dropna=False)["team_a"].transform("size")
    two = out[n_pairs == 1]
    if two.empty:
        return
    per_experiment = two.groupby("experiment", dropna=False, sort=True).agg(
        one_sided=("one_sided_pages", "sum"), pages=("impressions", "sum"),
        team_a=("team_a", "first"), team_b=("team_b", "first"))
    for name, r in per_experiment.iterrows():
        if r["one_sided"]:
            experiment = None if pd.isna(name) else name
            warnings.warn(
                f"experiment {experiment!r}: {int(r['one_sided']):,} of {int(r['pages']):,} "
                f"interleaved pages show results of only one of {r['team_a']!r} and "
                f"{r['team_b']!r}, so a click on them can only credit that team (a ranking ran "
                "out and the other filled the page, or a page of one result; column "
                "one_sided_pages)", stacklevel=3,
            )


def _warn_uncredited(out: pd.DataFrame) -> None:
    # a click on a multileaved page is counted once per pair: report each page's clicks once
    first = out.drop_duplicates(subset=[c for c in out.columns if c in ("experiment",
                                                                       "variant", "day")])
    without, unmatched = int(first["clicks_without_team"].sum()), int(
        first["clicks_unmatched"].sum())
    if without:
        warnings.warn(
            f"{without:,} clicked results on interleaved pages have no team and were not "
            "credited to any ranker (column clicks_without_team)", stacklevel=3,
        )
    if unmatched:
        warnings.warn(
            f"{unmatched:,} clicks on interleaved pages match no result of their page and "
            "were not credited (column clicks_unmatched)", stacklevel=3,
        )


def preference_matrix(readout: pd.DataFrame, value: str = "delta_ab") -> pd.DataFrame:
    """The pairwise preference matrix of one experiment's readout (multileaving).

    Entry [row, col] is ``value`` for row's team as A against col's team as B: Δ_AB (default),
    or ``"share_a"`` or ``"p_value"``. The matrix is filled from both orientations
    (Δ_BA = −Δ_AB, share_BA = 1 − share_AB, p symmetric); the diagonal is NaN.
    """
    flips = {"delta_ab": lambda v: -v, "share_a": lambda v: 1 - v, "p_value": lambda v: v}
    if value not in flips:
        raise InvalidParameterError(
            f"value must be one of {', '.join(flips)}; got {value!r}"
        )
    if readout["experiment"].nunique(dropna=False) > 1:
        raise InvalidParameterError(
            "preference_matrix needs the readout of one experiment; filter the readout first "
            "(readout[readout.experiment == NAME])"
        )
    pairs = [frozenset(p) for p in zip(readout["team_a"], readout["team_b"], strict=True)]
    if len(set(pairs)) < len(pairs):
        raise InvalidParameterError(
            "preference_matrix needs one row per pair of teams; this readout has several "
            "(a breakdown by variant or day?): filter it to one cell of the breakdown first"
        )
    teams = sorted(set(readout["team_a"]) | set(readout["team_b"]), key=str)
    m = pd.DataFrame(np.nan, index=pd.Index(teams, name="team"), columns=teams)
    for a, b, v in readout[["team_a", "team_b", value]].itertuples(index=False):
        m.loc[a, b] = v
        m.loc[b, a] = flips[value](v)
    return m
