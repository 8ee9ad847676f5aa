"""``onlineeval.readout(logs, ...)``: compute an experiment's :class:`Readout`."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from onlineeval.errors import InvalidParameterError, OnlineEvalError
from onlineeval.levels import check_level
from onlineeval.logs.coerce import as_logs
from onlineeval.readout.ab import ab_part, names, parse_margins
from onlineeval.readout.decide import decide
from onlineeval.readout.interleaved import interleaving_part, sensitivity
from onlineeval.readout.result import PRIMARY, Readout

DESIGNS = ("auto", "ab", "interleaving")
AB = "ab"
INTERLEAVING = "interleaving"


class SampleRatioMismatchError(OnlineEvalError):
    """``fail_on_srm``: the units per variant do not fit the expected split."""


def _logs_list(logs: Any) -> list[Any]:
    items = list(logs) if isinstance(logs, list | tuple) else [logs]
    if not items or len(items) > 2:
        raise InvalidParameterError(
            "logs must be one log (a directory or onlineeval.load_logs) or two: an A/B log "
            f"and an interleaving log of the same experiment; got {len(items)}"
        )
    return [as_logs(x) for x in items]


def detect_design(logs: Any) -> str:
    """``interleaving`` when the log's results carry ``team`` (who placed each result),
    else ``ab``."""
    has = getattr(logs, "has", None)
    return INTERLEAVING if callable(has) and has("results", "team") else AB


def _designs(logs: list[Any], design: str) -> list[tuple[str, Any]]:
    if design not in DESIGNS:
        raise InvalidParameterError(f"design must be one of {', '.join(DESIGNS)}; got {design!r}")
    if design != "auto":
        if len(logs) != 1:
            raise InvalidParameterError(
                f"design={design!r} names the design of one log; with two logs leave it auto"
            )
        return [(design, logs[0])]
    found = [(detect_design(x), x) for x in logs]
    if len(found) == 2 and found[0][0] == found[1][0]:
        raise InvalidParameterError(
            f"both logs look like {found[0][0]} logs (results.team present: interleaving); "
            "give one A/B log and one interleaving log"
        )
    return sorted(found, key=lambda d: d[0])  # ab first


def _offline(runs: Any, qrels: Any, alpha: float) -> Any:
    from onlineeval.offline.compare import compare

    if isinstance(runs, Mapping):
        try:
            control, treatment = runs["control"], runs["treatment"]
        except KeyError:
            raise InvalidParameterError(
                "runs must be (control_run, treatment_run) or {'control': ..., 'treatment': "
                f"...}}; got keys {list(runs)}"
            ) from None
    elif isinstance(runs, Sequence) and not isinstance(runs, str) and len(runs) == 2:
        control, treatment = runs
    else:
        raise InvalidParameterError(
            f"runs must be (control_run, treatment_run); got {runs!r}"
        )
    if qrels is None:
        raise InvalidParameterError("the offline prediction needs qrels as well as runs")
    return compare(qrels, control, {"treatment": treatment}, ["ndcg_cut_10", "map"],
                   alpha=alpha)


def readout(
    logs: Any, experiment: str | None = None, control: str | None = None,
    treatment: Sequence[str] | str | None = None, primary: Sequence[str] | str | None = None,
    guardrails: Sequence[str] | str = (), non_inferiority: Mapping[str, Any] | str | None = None,
    segments: str | None = None, start: Any = None, end: Any = None, alpha: float = 0.05,
    design: str = "auto", runs: Any = None, qrels: Any = None, fail_on_srm: bool = False, *,
    secondary: Sequence[str] | str | None = None, unit: str = "user_id", power: float = 0.8,
    srm_alpha: float = 0.001, expected_split: Mapping[str, float] | None = None,
    control_team: str | None = None, treatment_team: str | None = None,
    interleaving_experiment: str | None = None, n_resamples: int = 1000, seed: int = 0,
    attribution_window: Any = None, event_type: str | None = None,
    counterfactual: Any = None, counterfactual_options: Mapping[str, Any] | None = None,
) -> Readout:
    """Should this experiment ship? Read out an A/B(/n) and/or interleaving experiment.

    Parameters
    ----------
    logs
        A log directory or :class:`onlineeval.Logs`, or two of them (an A/B log and an
        interleaving log of the same experiment). The design is detected per log: an
        interleaving log's ``results`` carry ``team``; ``design`` forces it for one log.
    experiment
        The ``searches.experiment`` to read out (needed when a log holds several).
    control, treatment
        The control variant (default ``control``) and the treatment variant(s) (default:
        every other variant; A/B/n: each is compared with the control on its own).
    primary
        The primary metrics (default ``["ctr"]``): the one correction family — Holm within
        the primary metric x treatment comparisons, nothing else. Each must have a direction
        of improvement.
    guardrails, non_inferiority
        Guardrail metrics and their non-inferiority margins ``{metric: margin}`` (or
        ``"M:MARGIN,..."``): a number is absolute (in the metric's unit), ``"2%"`` relative to
        the control's value. A metric with a margin is a guardrail; every guardrail needs one.
        Tested one-sided at ``alpha``, not corrected (:mod:`onlineeval.readout.decide`).
    secondary
        Other metrics to show, with unadjusted p-values and intervals (labelled so); default
        every metric the log supports; ``()`` for none. They never change a primary p-value.
    segments
        A searches column to break the effect down by (the per-segment readout).
    start, end
        The analysis window ``start <= ts < end``.
    alpha
        The level of every test; intervals are two-sided at 1 − alpha except the primary
        family's (at Holm's levels: an interval excludes 0 exactly when the row is
        significant after correction).
    runs, qrels
        ``(control_run, treatment_run)`` and qrels: adds the offline comparison
        (NDCG@10, MAP; paired t, Holm).
    counterfactual, counterfactual_options
        With ``runs``: the log of the ranker(s) shown before or beside the experiment (a
        directory or :class:`onlineeval.Logs`), on which the section "counterfactual
        prediction of this A/B from the logged data" estimates treatment run − control run
        clicks@10 (:func:`onlineeval.readout.counterfactual.counterfactual_part`; options
        for :func:`onlineeval.counterfactual.compare`, default snips).
    fail_on_srm
        Raise :class:`SampleRatioMismatchError` when the sample ratio check fails.
    power
        The power the MDE and the units needed are computed for.
    control_team, treatment_team
        The interleaved teams (default: told by their names, :mod:`onlineeval.interleaving.teams`).
    interleaving_experiment
        The interleaving log's experiment when it is named differently from the A/B one.
    n_resamples, seed
        The interleaving interval's bootstrap resamples of users, and its seed.

    Verdict (per treatment; :data:`onlineeval.readout.result.VERDICT_RULE`): **ship** when
    every primary metric improves significantly after Holm's correction within the primary
    family and no guardrail fails its non-inferiority test; **don't ship** when a primary
    metric is significantly worse after correction or a guardrail fails its non-inferiority
    test (is not shown within its margin: too little data fails too); otherwise
    **inconclusive**, with the MDE at the observed sample and the units the observed effect
    would need. A sample ratio mismatch does not change the verdict but makes it
    untrustworthy: ``srm.status`` is ``mismatch``, a warning says so, and ``fail_on_srm``
    raises. An interleaving-only readout has no metric verdict; its section says which team
    users preferred.

    attribution_window, event_type
        With an events table: how long after a click or search an event is still
        attributed to it (hours, or a duration such as ``"30min"``; default 24 h) and the
        one event type the outcome metrics count (default every type); see
        docs/conversions.md.

    Returns
    -------
    Readout
        See :mod:`onlineeval.readout.result`.
    """
    alpha = check_level(alpha)
    check_level(power, "power")
    srm_alpha = check_level(srm_alpha, "srm_alpha")
    if counterfactual is not None and runs is None:
        # before any log is read: the A/B part alone takes seconds on a large log
        raise InvalidParameterError("the counterfactual prediction needs runs: "
                                    "(control_run, treatment_run)")
    loaded = [as_logs(lg, attribution_window=attribution_window, event_type=event_type)
              for lg in _logs_list(logs)]
    parts = _designs(loaded, design)
    primary_names = names(primary) if primary is not None else ["ctr"]
    if not primary_names:
        raise InvalidParameterError("give at least one primary metric (default ctr)")
    margins = parse_margins(non_inferiority)
    guard_names = names(guardrails)
    missing_margin = [g for g in guard_names if g not in margins]
    if missing_margin:
        raise InvalidParameterError(
            f"guardrails need a non-inferiority margin: {missing_margin}; give one per "
            "guardrail, e.g. non_inferiority={'" + missing_margin[0] + "': '2%'} (CLI: "
            f"--non-inferiority {missing_margin[0]}:2%)"
        )
    guards = {g: margins[g] for g in [*guard_names, *margins]}
    # a single variant of a log writing whole numbers is an int (one of several: a list)
    treatments = None if treatment is None else \
        [treatment] if isinstance(treatment, int) else names(treatment)
    notes: list[str] = []
    fields: dict[str, Any] = {}
    ab = None
    for kind, lg in parts:
        if kind == AB:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                ab = ab_part(lg, experiment=experiment, control="control" if control is None else control,
                             treatments=treatments, primary=primary_names, guardrails=guards,
                             secondary=names(secondary) if secondary is not None else None,
                             alpha=alpha, power=power, unit=unit, start=start, end=end,
                             srm_alpha=srm_alpha, expected_split=expected_split)
            notes += [f"A/B: {w.message}" for w in caught]
            for w in caught:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    il_exp = interleaving_experiment or (
        ab.experiment if ab is not None and experiment is None else experiment)
    for kind, lg in parts:
        if kind == INTERLEAVING:
            section = interleaving_part(
                lg, il_exp, treatment=treatment_team, control=control_team, alpha=alpha,
                n_resamples=n_resamples, seed=seed, start=start, end=end)
            fields["interleaving"] = section
    if ab is not None:
        rows = ab.rows
        fields.update(
            control="control" if control is None else control, treatments=ab.treatments,
            units=ab.units,
            srm=ab.srm, window=ab.window, metrics=tuple(rows),
            decisions=tuple(decide(rows, t) for t in ab.treatments),
            excluded=ab.excluded, family_size=ab.family_size,
        )
        exp_name = ab.experiment
    else:
        il = fields["interleaving"]
        fields.update(control=il.control_team, treatments=(il.treatment_team,),
                      family_size=0)
        exp_name = il.experiment
    if runs is not None:
        fields["offline"] = _offline(runs, qrels, alpha)
    if counterfactual is not None:
        from onlineeval.readout.counterfactual import counterfactual_part

        pair = (runs["control"], runs["treatment"]) if isinstance(runs, Mapping) else runs
        fields["counterfactual"] = counterfactual_part(
            counterfactual, *pair, dict(counterfactual_options or {}))
    result = Readout(
        experiment=exp_name, designs=tuple(k for k, _ in parts), alpha=alpha,
        family=tuple(primary_names) if ab is not None else (), power=power, unit=unit,
        notes=tuple(notes), **fields,
    )
    result = with_interleaving(result, result.interleaving)
    result = _extras(result, parts, segments, start, end)
    if fail_on_srm and result.srm is not None and result.srm.status == "mismatch":
        raise SampleRatioMismatchError(
            f"sample ratio mismatch (p = {result.srm.p_value:.3g} < {result.srm.alpha:g}): "
            f"units {result.srm.observed}, expected {result.srm.expected}"
        )
    return result


def with_interleaving(ab: Readout, section: Any) -> Readout:
    """``ab`` with the interleaving ``section`` and, when ``ab`` has a primary metric, the
    sensitivity figure against its first primary row (:class:`Sensitivity`)."""
    if section is None:
        return ab
    first = next((r for r in ab.metrics if r.role == PRIMARY), None)
    if first is not None:
        section = replace(section, sensitivity=sensitivity(section, first))
    designs = tuple(dict.fromkeys([*ab.designs, INTERLEAVING]))
    return replace(ab, interleaving=section, designs=designs)


def arms_position_ctr(logs: Any, ro: Readout, start: Any, end: Any) -> Any:
    """CTR per rank of each arm of ``ro`` (its experiment's control and treatments) in
    the window, from the A/B log ``logs`` (:func:`onlineeval.position_ctr`)."""
    from onlineeval.online.positions import position_ctr

    by = ("experiment", "variant") if ro.experiment is not None else ("variant",)
    with warnings.catch_warnings():
        # the readout has already said what it had to about the log
        warnings.simplefilter("ignore")
        curves = position_ctr(logs, by=by, start=start, end=end)
    if ro.experiment is not None:
        curves = curves[curves["experiment"].astype(str) == str(ro.experiment)]
    arms = [str(a) for a in (ro.control, *ro.treatments)]
    return curves[curves["variant"].astype(str).isin(arms)].reset_index(drop=True)


def _extras(result: Readout, parts: list[tuple[str, Any]], segments: str | None,
            start: Any, end: Any) -> Readout:
    """Effect over time and per segment of each primary metric, per treatment, and the
    quantile metrics, from the readstats functions: :func:`onlineeval.abtest.effect_over_time`
    (cumulative per calendar day, and per day since exposure),
    :func:`onlineeval.abtest.segments.segment_effects` (Δ per segment, Holm over the
    segments, Cochran's Q), :func:`onlineeval.abtest.quantiles.quantile_effects` (median
    and p90 of every per-search value the log has, unit-clustered intervals) and the
    position CTR of each arm (:func:`arms_position_ctr`)."""
    import pandas as pd

    ab_logs = next((lg for kind, lg in parts if kind == AB), None)
    if ab_logs is None:
        if segments is not None:
            raise InvalidParameterError("segments need an A/B log (the per-segment A/B effect)")
        return result
    from onlineeval.abtest.over_time import BY, effect_over_time
    from onlineeval.abtest.segments import segment_effects
    from onlineeval.abtest.units import shared_unit_rows

    common = dict(experiment=result.experiment, unit=result.unit, alpha=result.alpha,
                  start=start, end=end)
    pairs = [(t, m) for t in result.treatments for m in result.family]
    changes: dict[str, Any] = {}
    if ab_logs.has("searches", "ts"):
        # both readings of every pair render one per-unit rows query: run it once
        with shared_unit_rows():
            changes["over_time"] = {
                by: pd.concat([effect_over_time(ab_logs, result.control, t, m, by=by,
                                                **common) for t, m in pairs],
                              ignore_index=True)
                for by in BY}
    from onlineeval.abtest.quantiles import quantile_effects, quantile_metrics

    quantile_frames = [quantile_effects(ab_logs, result.control, t, m, (0.5, 0.9), **common)
                       for t in result.treatments for m in quantile_metrics(ab_logs)]
    if quantile_frames:
        changes["quantiles"] = pd.concat(quantile_frames, ignore_index=True)
    if ab_logs.has_results:
        changes["position_ctr"] = arms_position_ctr(ab_logs, result, start, end)
    if segments is not None:
        frames, het = [], []
        for t, m in pairs:
            df = segment_effects(ab_logs, segments, result.control, t, m, **common)
            frames.append(df)
            het.append({"metric": m, "variant": t, **df.attrs["heterogeneity"]})
        changes["segments"] = {"column": segments,
                               "effects": pd.concat(frames, ignore_index=True),
                               "heterogeneity": pd.DataFrame(het)}
    return replace(result, **changes)
