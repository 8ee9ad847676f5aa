"""The interleaving readout: per experiment and ranker pair, counts, Δ_AB, CI, p-value, winner.

The p-value and the winner come from a test with users as the independent units (the pages
of one user are not independent); see :mod:`onlineeval.interleaving.significance`.

Which team is "A": within each experiment the teams (distinct ``results.team`` values) are
paired in byte order, team_a < team_b, unless ``team_a`` (or ``control``, the other side)
names the team to put first, or ``treatment_first`` puts each pair's treatment first
(:mod:`onlineeval.interleaving.teams`; what ``onlineeval interleave`` does by default). With
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
from onlineeval.interleaving.significance import bootstrap_ci, delta_ab, sign_test, user_test
from onlineeval.interleaving.teams import UnknownTeamError, treatment_team
from onlineeval.levels import check_level
from onlineeval.logs.coerce import as_logs
from onlineeval.stats.results import RESULT_COLUMNS, ComparisonResult, comparison_frame
from onlineeval.window import bounds

# the fields of the readout the CLI prints, in order: the pair and its counts, the result
# block every comparison shares (estimate = Δ_AB), then share_a, the winner, the tested
# per-user preference and the secondary sign test
FIELDS: tuple[str, ...] = (
    "experiment", "team_a", "team_b", "impressions", "impressions_with_clicks", "wins_a",
    "wins_b", "ties", *RESULT_COLUMNS, "share_a", "winner", "user_delta", "sign_test_p",
)

#: a user holding more than this share of a comparison's decided pages is warned about (or,
#: with fewer than 2 / HEAVY_USER_SHARE users, more than twice an equal share)
HEAVY_USER_SHARE = 0.05
_COUNTS = ("impressions", "impressions_with_clicks", "wins_a", "wins_b", "ties",
           "clicks_without_team", "clicks_unmatched", "repeat_clicks", "one_sided_pages")


def _orient(stats: pd.DataFrame, team_a: str | None, control: str | None = None,
            treatment_first: bool = False) -> pd.DataFrame:
    """Swap the sides of the pairs whose team_b should be A (:func:`_flips`)."""
    return _swapped(stats, _flips(stats, team_a, control, treatment_first))


def _swapped(stats: pd.DataFrame, flip: np.ndarray | None) -> pd.DataFrame:
    """``stats`` with the sides of the rows ``flip`` swapped (team and wins)."""
    if flip is None:
        return stats
    out = stats.copy()
    for x, y in (("team_a", "team_b"), ("wins_a", "wins_b")):
        out.loc[flip, [x, y]] = stats.loc[flip, [y, x]].to_numpy()
    return out


def _flips(stats: pd.DataFrame, team_a: str | None, control: str | None = None,
           treatment_first: bool = False) -> np.ndarray | None:
    """Which rows' pairs to swap so that team_b becomes A: those whose team_b is the
    requested ``team_a``, the team opposite the requested ``control``, or
    (``treatment_first``) the pair's treatment by
    :func:`onlineeval.interleaving.teams.treatment_team` (None: no request)."""
    if team_a is None and control is None and not treatment_first:
        return None
    present = set(stats["team_a"]) | set(stats["team_b"])
    for option, name in (("team_a", team_a), ("control", control)):
        if name is not None and name not in present:
            raise UnknownTeamError(
                f"{option} {name!r} is not a team of the interleaved pages; teams: "
                f"{', '.join(sorted(map(str, present)))}"
            )
    def first_team(a: str, b: str, experiment: Any) -> str | None:
        if treatment_first:
            return treatment_team(a, b, experiment, team_a, control)
        if team_a in (a, b):
            return team_a
        return {a: b, b: a}.get(control) if control is not None else None

    first = [first_team(a, b, e) for a, b, e in zip(stats["team_a"], stats["team_b"],
                                                    stats["experiment"], strict=True)]
    return np.array([f is not None and f == b for f, b in zip(first, stats["team_b"],
                                                               strict=True)], dtype=bool)


def _compare_frame(rows: pd.DataFrame, alpha: float, n_resamples: int,
             rng: np.random.Generator) -> tuple[ComparisonResult, dict[str, Any]]:
    """The result of one comparison from its per-user rows (:func:`_compare`)."""
    wa, wb, t = (rows[c].to_numpy(dtype=float) for c in ("wins_a", "wins_b", "ties"))
    users, user_ids = pd.factorize(rows["user_id"], use_na_sentinel=False)
    counts = {c: int(rows[c].sum()) for c in _COUNTS}
    return _compare(counts, wa, wb, t, users, None, user_ids.__getitem__, alpha, n_resamples,
                    rng)


def _compare(counts: dict[str, int], wa: np.ndarray, wb: np.ndarray, t: np.ndarray,
             users: np.ndarray, groups: np.ndarray | None, user_id: Any, alpha: float,
             n_resamples: int, rng: np.random.Generator,
             ) -> tuple[ComparisonResult, dict[str, Any]]:
    """The result of one comparison from its rows' wins and ties, their users' codes (0..,
    by first appearance) and, per query, their queries' codes (``groups``): Δ_AB with the
    user-resampling interval and the per-user test's p-value, and the readout's other
    fields. ``user_id(code)`` names a user. ``counts`` are the comparison's sums of
    :data:`_COUNTS`."""
    per_query = groups is not None
    out: dict[str, Any] = dict(counts)
    out["users"] = int(users.max()) + 1 if len(users) else 0
    if per_query:
        n_queries = int(groups.max()) + 1 if len(groups) else 0
        qa, qb, qt = (np.bincount(groups, weights=x, minlength=n_queries) for x in (wa, wb, t))
        d_q = delta_ab(qa[:, None], qb[:, None], qt[:, None])
        delta = float(np.nanmean(d_q)) if np.isfinite(d_q).any() else math.nan
        with np.errstate(invalid="ignore"):
            shares = pd.Series(qa) / (pd.Series(qa) + pd.Series(qb))
        share = float(shares.mean()) if shares.notna().any() else math.nan
        pos, neg = int((d_q > 0).sum()), int((d_q < 0).sum())
        out["queries_decided"] = int(np.isfinite(d_q).sum())
    else:
        sa, sb = wa.sum(), wb.sum()
        delta = float(delta_ab(np.array([sa]), np.array([sb]), np.array([t.sum()])))
        share = sa / (sa + sb) if sa + sb > 0 else math.nan
        pos, neg = int(sa), int(sb)
        out["queries_decided"] = None
    # the headline: users are the independent units (a user's rows summed over queries)
    n_users = out["users"]
    per_user = [np.bincount(users, weights=x, minlength=n_users) for x in (wa, wb, t)]
    res = user_test(*per_user, alpha=alpha)
    lo, hi = bootstrap_ci(wa, wb, t, users, groups, n_resamples=n_resamples,
                          confidence=1 - alpha, rng=rng)
    winner = None
    if not math.isnan(res.p_value) and res.p_value < alpha and res.estimate != 0:
        winner = "a" if res.estimate > 0 else "b"
    top = user_id(res.top_user) if res.top_user >= 0 else None
    result = ComparisonResult(
        estimate=delta, ci_low=lo, ci_high=hi, ci_level=1.0 - alpha, p_value=res.p_value,
        test=res.test, n=res.n, units_control=n_users, units_treatment=n_users, unit="user",
    )
    out.update(share_a=share, winner=winner, user_delta=res.estimate,
               sign_test_p=sign_test(pos, neg), user_ci_low=res.ci_low,
               user_ci_high=res.ci_high, df=res.df,
               top_user=None if top is None or pd.isna(top) else str(top),
               top_user_share=res.top_user_share, effective_users=res.effective_users,
               method="per_query" if per_query else "pages")
    return result, out


def interleaving_readout(
    logs: Any, experiment: str | None = None, *, by: Sequence[str] | str = (),
    per_query: bool = False, team_a: str | None = None, alpha: float = 0.05,
    n_resamples: int = 1000, seed: int = 0, start: Any = None, end: Any = None,
    control: str | None = None, treatment_first: bool = False, credit: str = "clicks",
    attribution_window: Any = None, sat_dwell_s: float = 30, session_gap_min: float = 30,
) -> pd.DataFrame:
    """Read out interleaving experiments from a click log.

    Parameters
    ----------
    logs
        A :class:`onlineeval.Logs` from :func:`onlineeval.load_logs`, a log directory or a
        dict of tables (:func:`onlineeval.logs.as_logs`).
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
        The team to report as A in every pair it is part of: the treatment (default: the
        pair's alphabetically first team, or its treatment with ``treatment_first``).
    control
        The team to report as B in every pair it is part of (its opponent is A).
    treatment_first
        Report each pair from its treatment's side where the team names tell which team is
        the treatment (``control``/``treatment``, or an experiment named ``C_vs_T``:
        :mod:`onlineeval.interleaving.teams`); pairs they do not tell about stay in
        alphabetical order. ``team_a`` and ``control`` take precedence.
    alpha
        Significance level: the winner is named when the per-user test's p < alpha, and the
        intervals have coverage 1 − alpha.
    n_resamples, seed
        Bootstrap resamples of users for the CI of Δ_AB, and the seed (each comparison draws
        from a generator derived from the seed and the comparison's key, so results are
        reproducible and independent of which other experiments are read out).
    start, end
        The window: only pages with ``start <= ts < end`` are read out (None: unbounded;
        strings like ``"2024-03-01"`` or datetimes, a value with a zone converted to UTC).
    credit
        What a team is credited for: ``"clicks"`` (its clicked results), ``"satisfied"`` (its
        results with a satisfied click: dwell >= ``sat_dwell_s``, or a click of unknown
        dwell that is the last event of its session, the rule of the online metrics,
        :func:`onlineeval.online.search_facts`), or an event type of the log's events table,
        e.g. ``"purchase"``: its results that led to an event of that type (the event's
        doc_id on the page it is attributed to, docs/conversions.md). With ``"satisfied"``
        the columns named after clicks count satisfied clicks, with an event type events.
    attribution_window
        With event credit: the attribution window (hours, or e.g. ``"30min"``; default 24 h).
    sat_dwell_s, session_gap_min
        With ``credit="satisfied"``: the dwell (seconds) from which a click is satisfied,
        and the inactivity (minutes) that ends a derived session (a log without
        ``session_id``), as in :func:`onlineeval.online_metrics`.

    Returns
    -------
    pandas.DataFrame
        One row per experiment (and breakdown) and ranker pair with :data:`FIELDS`
        (experiment, team_a, team_b, impressions, impressions_with_clicks, wins_a, wins_b,
        ties, the result block every comparison shares — estimate, ci_low, ci_high,
        ci_level, p_value, p_adjusted, correction, family_size, test, n, units_control,
        units_treatment, unit (:class:`onlineeval.stats.results.ComparisonResult`) — then
        share_a, winner, user_delta, sign_test_p) followed by the breakdown columns and:
        users, queries_decided (per-query mode), clicks_without_team (clicked results
        without a team: reported, never credited), clicks_unmatched (click rows matching no
        result), repeat_clicks (repeated clicks on one result, counted once),
        one_sided_pages (pages where only one of the two teams placed a result, so a click
        could credit that team only), user_ci_low, user_ci_high, df, top_user,
        top_user_share, effective_users, method, heavy_user.

        ``estimate`` is Δ_AB of team A (pages pooled, or per query; formerly the column
        ``delta_ab``) with the user-resampling bootstrap interval ``ci_low``..``ci_high`` at
        ``ci_level`` = 1 − alpha. Users are the independent units
        (:mod:`onlineeval.interleaving.significance`): ``p_value`` is the per-user test
        (``test`` names it: a t test of the users' preferences Δ_u with ``df`` = n − 1, or
        the exact sign test over users when every user's Δ_u is the same), ``n`` the users
        with a decided page it counts (formerly ``decided_users``), ``units_control`` and
        ``units_treatment`` the users with pages of the pair (each saw both teams), ``unit``
        "user"; no correction is applied across pairs or experiments (``p_adjusted``,
        ``correction`` and ``family_size`` are null). ``user_delta`` is the mean Δ_u the
        test tests, with the interval ``user_ci_low``..``user_ci_high``; ``winner`` is the
        team users prefer when p < alpha, else None. ``sign_test_p`` is the exact binomial
        test of wins (per-query mode: of queries) that treats pages as independent: a
        secondary statistic, never the verdict. Intervals a zero spread would make zero-width
        are null. Warnings: clicks that could not be credited; one-sided pages in an
        experiment of two teams (a ranking ran out and the other filled the page:
        ``team_draft(fill=False)`` avoids them); a user with more than
        :data:`HEAVY_USER_SHARE` of a comparison's decided pages (more than twice an equal
        share when there are fewer than 40 users: ``top_user_share``, flagged in
        ``heavy_user``); a winner against the sign of Δ_AB.
        ``df.attrs["window"]`` holds ``start`` and ``end`` (as given, or None),
        ``first_page`` and ``last_page`` (the earliest and latest page read out) and
        ``pages_before_window``, ``pages_after_window`` (interleaved pages left out).

    Notes
    -----
    The page outcomes are defined in ``logs.con`` as the temp view
    :data:`~onlineeval.interleaving.outcomes.PAGE_TABLE`, replaced by the next readout on the
    same logs: nothing should rely on it after this function returns (the per-query Δ_q of
    :func:`onlineeval.agreement.per_query.per_query_interleaving` defines its own). It is a
    view, so each query of it streams the log again: nothing per page is held in memory,
    whatever the log's size.
    """
    alpha = check_level(alpha)
    for name, value, low in (("n_resamples", n_resamples, 1), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
            raise InvalidParameterError(f"{name} must be an integer >= {low}; got {value!r}")
    logs = as_logs(logs, attribution_window=attribution_window)
    by = outcomes.check_by(logs, by)
    if per_query and not outcomes._has(logs, "searches", "query"):
        raise InputError(
            "the per-query readout needs searches.query, which this log does not have; "
            "drop per_query (--per-query)"
        )
    pages = outcomes.page_outcomes(logs, experiment, start=start, end=end, credit=credit,
                                   sat_dwell_s=sat_dwell_s, session_gap_min=session_gap_min)
    out = _rows(logs, by, per_query, team_a, control, treatment_first, alpha, n_resamples,
                seed)
    _warn_uncredited(out, credit)
    _warn_one_sided(out, by)
    _warn_unnamed(out)
    _warn_heavy_users(out, by)
    lo, hi = bounds(start, end)
    out.attrs["window"] = {
        "start": lo, "end": hi, "first_page": pages.first_page, "last_page": pages.last_page,
        "pages_before_window": pages.before_window, "pages_after_window": pages.after_window,
    }
    out.attrs["credit"] = credit
    return out


def _rows(logs: Any, by: Sequence[str], per_query: bool, team_a: str | None,
          control: str | None, treatment_first: bool, alpha: float, n_resamples: int,
          seed: int) -> pd.DataFrame:
    """The readout's rows from the page outcomes defined on ``logs`` (no warnings)."""
    keys = ["experiment", *by, "team_a", "team_b"]
    lead, results, extra = [], [], []

    def add(key: tuple, result: ComparisonResult, res: dict[str, Any]) -> None:
        rec = dict(zip(keys, key, strict=True))
        res["winner"] = {"a": rec["team_a"], "b": rec["team_b"]}.get(res["winner"])
        lead.append({**rec, **{c: res.pop(c) for c in _COUNTS[:5]}})
        results.append(result)
        extra.append(res)

    def generator(key: tuple) -> np.random.Generator:
        # the comparison's own stream: its CI does not depend on which other comparisons
        # are read out, nor on which team is A (the key holds the two teams in sorted order)
        names = [None if pd.isna(k) else str(k) for k in key]
        return derived_generator(int(seed), (*names[:-2], *sorted(names[-2:])))

    if per_query:
        # one row per (query, user): millions on a large log, so they stay in DuckDB and
        # come over as codes and counts, one comparison at a time
        with outcomes.query_user_stats(logs, by) as stats:
            flip = _flips(stats.comparisons, team_a, control, treatment_first)
            comparisons = _swapped(stats.comparisons, flip).assign(
                flipped=False if flip is None else flip)
            for key, part in comparisons.groupby(keys, dropna=False, sort=True):
                row = part.iloc[0]
                number = int(row["comparison"])
                rows = stats.rows(number)
                wa, wb = rows["wins_a"], rows["wins_b"]
                if row["flipped"]:
                    wa, wb = wb, wa
                counts = {c: int(row[c]) for c in _COUNTS}
                result, res = _compare(
                    counts, wa, wb, rows["ties"], rows["user_code"], rows["query_code"],
                    lambda code, n=number: stats.user_id(n, code), alpha, n_resamples,
                    generator(key))
                del rows, wa, wb
                add(key, result, res)
    else:
        frame = _orient(outcomes.user_stats(logs, by), team_a, control, treatment_first)
        grouped = frame.groupby(keys, dropna=False, sort=True)
        # one comparison (the usual case) is the whole frame: no copy of it
        parts = [(next(iter(grouped.groups)), frame)] if grouped.ngroups == 1 else grouped
        for key, part in parts:
            add(key, *_compare_frame(part, alpha, n_resamples, generator(key)))
    out = comparison_frame(lead, results, extra)
    for k in [*keys, "winner"]:
        # None, not NaN, for a missing experiment/day/winner (pandas 3 strings would give NaN)
        out[k] = out[k].astype(object).where(out[k].notna(), None)
    users = out["n"].to_numpy(dtype=float)
    with np.errstate(divide="ignore"):
        limit = np.maximum(HEAVY_USER_SHARE, 2.0 / users)
    out["heavy_user"] = (users > 0) & (out["top_user_share"].to_numpy(dtype=float) > limit)
    extra_cols = [c for c in out.columns if c not in FIELDS]
    return out[[*FIELDS, *extra_cols]]


def per_query_rows(logs: Any, *, team_a: str | None = None, control: str | None = None,
                   treatment_first: bool = False, alpha: float = 0.05,
                   n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """The rows :func:`interleaving_readout` gives with ``per_query=True``, from the page
    outcomes the last readout on ``logs`` defined (same experiment and window; the log is
    not read again and nothing is warned twice)."""
    return _rows(as_logs(logs), [], True, team_a, control, treatment_first,
                 check_level(alpha), n_resamples, seed)


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


def _warn_heavy_users(out: pd.DataFrame, by: Sequence[str]) -> None:
    """Warn about comparisons where one user holds a large share of the decided pages, and
    where the per-user winner goes against the page-level Δ_AB."""
    for r in out.to_dict("records"):
        where = ", ".join(f"{k} {r[k]!r}" for k in ("experiment", *by)) + \
            f", {r['team_a']!r} vs {r['team_b']!r}"
        users = r["n"]
        if r["heavy_user"]:
            warnings.warn(
                f"{where}: one user ({r['top_user']!r}) has {r['top_user_share']:.0%} of the "
                f"decided pages (effective number of users {r['effective_users']:.1f} of "
                f"{users:,}); Δ_AB (estimate), its interval and sign_test_p mostly describe "
                "that user, while p_value and winner weigh every user equally (user_delta)",
                stacklevel=3,
            )
        if r["winner"] is not None and np.sign(r["estimate"]) != np.sign(r["user_delta"]):
            warnings.warn(
                f"{where}: users prefer {r['winner']!r} (user_delta {r['user_delta']:+.4g}, "
                f"p {r['p_value']:.3g}) but the pages, dominated by a few users, lean the "
                f"other way (Δ_AB {r['estimate']:+.4g})", stacklevel=3,
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


def _warn_uncredited(out: pd.DataFrame, credit: str = "clicks") -> None:
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
    if unmatched and credit not in outcomes.CREDITS:
        warnings.warn(
            f"{unmatched:,} {credit} events attributed to interleaved pages credit no result "
            "(no doc_id, not on the page, or attributed as the user's last search, with no "
            "click on it; column clicks_unmatched)", stacklevel=3,
        )
    elif unmatched:
        warnings.warn(
            f"{unmatched:,} clicks on interleaved pages match no result of their page and "
            "were not credited (column clicks_unmatched)", stacklevel=3,
        )


def preference_matrix(readout: pd.DataFrame, value: str = "estimate") -> pd.DataFrame:
    """The pairwise preference matrix of one experiment's readout (multileaving).

    Entry [row, col] is ``value`` for row's team as A against col's team as B: Δ_AB (the
    readout's ``estimate``, default; ``"delta_ab"``, its former name, is accepted), or
    ``"share_a"`` or ``"p_value"``. The matrix is filled from both orientations
    (Δ_BA = −Δ_AB, share_BA = 1 − share_AB, p symmetric); the diagonal is NaN.
    """
    flips = {"estimate": lambda v: -v, "share_a": lambda v: 1 - v, "p_value": lambda v: v}
    if value == "delta_ab":
        value = "estimate"
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
