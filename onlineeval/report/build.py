"""Compute every number of a study's report (no rendering here).

Per experiment (a ranker pair of the study file):

- offline: :func:`onlineeval.offline.compare` of the treatment run against the control run on
  every study measure (paired test and correction from the study);
- A/B: :func:`onlineeval.abtest` on the experiment's A/B logs (``experiment=`` filter), with
  its SRM check;
- interleaving: :func:`onlineeval.interleaving_readout` with the treatment's team as team A,
  so Δ_AB > 0 means the treatment won;
- position CTR per arm of the A/B logs (the readout's ``position_ctr``);
- within-experiment agreement: per-query offline delta of the primary measure against the
  per-query interleaving Δ_q and against the per-query A/B CTR difference, both asked of
  :mod:`onlineeval.agreement.per_query` (queries matched on the logs' ``qid`` column when
  present, else on the query text). Left out and counted
  (:func:`onlineeval.agreement.within_experiment`): queries whose online delta is undefined
  (searched in one A/B arm only; no decided interleaved page) and the searches or pages
  without a query value, which are not a query.

Across experiments: one row per experiment with every delta, oriented so that positive means
"the treatment is better" (A/B metrics where lower is better — abandonment, zero results,
reformulation, time to first click — have their difference negated, CI bounds swapped), then
:func:`onlineeval.agreement` of the primary offline measure against each online outcome, the
τ matrix of every offline measure against every online outcome, and the large-margin check:
whether offline and interleaving agree in sign for the pairs whose offline margin is large.

Every delta, interval and p-value is read from the result block every comparison shares
(:data:`onlineeval.stats.results.RESULT_COLUMNS`): ``estimate``, ``ci_low``, ``ci_high``, and
the adjusted p-value where a correction applies, else the p-value. So the decision tables use
compare()'s adjusted p-value (across the study's measures within the experiment), abtest()'s
adjusted p-value (across the study's metrics) and the interleaving readout's per-user test
(users as the independent units; no correction applies there).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from onlineeval.agreement import (
    AgreementResult,
    PerQueryOnline,
    agreement,
    per_query_ab_ctr,
    per_query_interleaving,
    tau_matrix,
    within_experiment,
)
from onlineeval.errors import InputError, OnlineEvalError, SampleRatioMismatchWarning
from onlineeval.interleaving.readout import UnknownTeamError
from onlineeval.progress import Progress
from onlineeval.study import Experiment, Study, read_study

INTERLEAVING = "interleaving"


def lower_is_better(metric: str) -> bool:
    """Whether a decrease of the A/B ``metric`` is an improvement (the metric registry says)."""
    from onlineeval.abtest.metrics import METRICS

    try:
        return METRICS.get(metric).better == "lower"
    except OnlineEvalError:
        return False


@dataclass
class ExperimentReadout:
    """Everything the report shows about one experiment."""

    experiment: Experiment
    offline: pd.DataFrame | None = None
    readout: Any = None
    ab: pd.DataFrame | None = None
    srm: dict[str, Any] | None = None
    srm_message: str | None = None
    interleaving: pd.DataFrame | None = None
    position_ctr: pd.DataFrame | None = None
    per_query: pd.DataFrame | None = None
    within: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class Report:
    """A computed report: per-experiment readouts and the across-experiment statistics."""

    study: Study
    measures: list[str]
    experiments: list[ExperimentReadout]
    table: pd.DataFrame
    outcomes: list[tuple[str, str]]
    agreements: dict[str, AgreementResult]
    tau: pd.DataFrame
    large_margin: dict[str, Any]
    load_notes: dict[str, str] = field(default_factory=dict)

    @property
    def primary(self) -> str | None:
        """The table column of the primary offline measure's delta (None: no experiment of
        the study has runs)."""
        return f"offline:{self.measures[0]}" if self.measures else None


class _LogCache:
    """Load each log directory once; report load exclusions once per directory."""

    def __init__(self) -> None:
        self._logs: dict[tuple[Path, str | None], Any] = {}
        self.scores: dict[tuple[Path, Path], pd.DataFrame] = {}

    def get(self, path: Path, columns: Any = None) -> Any:
        """The log at ``path`` read with the study's column mapping ``columns``."""
        key = (path, None if columns is None else repr(sorted(columns.items(), key=str)))
        if key not in self._logs:
            from onlineeval import load_logs
            from onlineeval.errors import ExcludedRowsWarning

            with warnings.catch_warnings():
                # load_notes reports the excluded rows
                warnings.simplefilter("ignore", ExcludedRowsWarning)
                self._logs[key] = load_logs(path, columns=columns)
        return self._logs[key]

    def load_notes(self) -> dict[str, str]:
        out = {}
        for (path, _), logs in self._logs.items():
            report = getattr(logs, "report", None)
            if report is not None and getattr(report, "excluded_total", 0):
                out[str(path)] = report.summary()
        return out


def _context(exp: Experiment, what: str, exc: OnlineEvalError, study: Study) -> InputError:
    return InputError(f"{study.path.name}: experiment {exp.name!r}: {what}: {exc}")


def _run_label(role: str, run: Any) -> str:
    """How errors name a run of the experiment: its key in the study file and its path.

    A file run is named by its path and line anyway; the label names a DataFrame or dict
    run (the errors are prefixed with the study file and the experiment by ``_context``).
    """
    return f"{role} {str(run)!r}" if isinstance(run, str | Path) else role


def _offline(study: Study, exp: Experiment,
             cache: _LogCache) -> tuple[pd.DataFrame, pd.DataFrame]:
    from onlineeval.offline.compare import compare_scores, per_query_scores

    def scores(run: Path, role: str) -> pd.DataFrame:
        # runs recur across the pairs of a study: score each (qrels, run) once. The qrels
        # go by path, not as a frame read once: then errors name the file and line, and a
        # judgment that trec_eval reads from the file (a qid starting with '#') is not
        # refused as a frame's would be (see onlineeval.offline.reading)
        key = (exp.qrels, run)
        if key not in cache.scores:
            cache.scores[key] = per_query_scores(exp.qrels, run, list(study.measures),
                                                 run_label=_run_label(role, run))
        return cache.scores[key]

    a = scores(exp.control_run, "control_run")
    b = scores(exp.treatment_run, "treatment_run")
    result = compare_scores(
        a, {exp.treatment_run.name: b}, test=study.test, alpha=study.alpha,
        correction=study.correction, baseline=exp.control_run.name,
        n_resamples=study.n_resamples, seed=study.seed,
    )
    primary = a.columns[0]
    qids = a.index.union(b.index)
    pa, pb = a[primary].reindex(qids).fillna(0.0), b[primary].reindex(qids).fillna(0.0)
    pq = pd.DataFrame({"qid": qids, "control": pa.to_numpy(), "treatment": pb.to_numpy()})
    pq["delta"] = pq["treatment"] - pq["control"]
    return result, pq


def _readout(study: Study, exp: Experiment, logs: Any, design: str) -> tuple[Any, list[str]]:
    """The :class:`onlineeval.readout.Readout` of the experiment's A/B or interleaving log
    (the experiment's primary metrics, by default the study's first online metric; its
    guardrails with their margins; the other online metrics secondary), and its warnings
    (the SRM is shown by the report itself)."""
    from onlineeval.logs.variants import from_text
    from onlineeval.readout import readout

    # the study file names variants as text: read them with the log's variant type, as the CLI
    # does
    primary = list(exp.primary or study.online_metrics[:1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ro = readout(
            logs, design=design,
            experiment=exp.ab_experiment if design == "ab" else exp.interleaving_experiment,
            control=from_text(logs, exp.control_variant),
            treatment=[from_text(logs, exp.treatment_variant)],
            primary=primary, guardrails=list(exp.guardrails),
            non_inferiority=dict(exp.non_inferiority),
            secondary=[m for m in study.online_metrics
                       if m not in primary and m not in exp.non_inferiority],
            alpha=study.alpha, control_team=exp.control_team or None,
            treatment_team=exp.treatment_team or None, n_resamples=study.n_resamples,
            seed=study.seed,
        )
    notes = [str(w.message) for w in caught
             if not issubclass(w.category, SampleRatioMismatchWarning)]
    return ro, notes


def _ab(study: Study, exp: Experiment, logs: Any) -> tuple[pd.DataFrame, dict, str]:
    """The A/B table of the experiment's readout (``attrs["readout"]``; its warnings in
    ``attrs["warnings"]``), its SRM check and the check's message."""
    ro, notes = _readout(study, exp, logs, "ab")
    df = _ab_frame(ro)
    df.attrs.update(readout=ro, warnings=[f"A/B: {n}" for n in notes])
    srm = ro.srm
    message = (f"units {srm.observed}, expected {srm.expected}; chi-square p = "
               f"{srm.p_value:.3g} (alarm below {srm.alpha:g})")
    return df, {"statistic": srm.statistic, "p_value": srm.p_value,
                "units": dict(srm.observed), "expected_shares": srm.expected_shares,
                "mismatch": srm.status == "mismatch"}, message


def _interleaving(study: Study, exp: Experiment, logs: Any) -> pd.DataFrame:
    """The interleaving row of the experiment's readout (team A = the treatment;
    ``attrs["readout"]``, its warnings in ``attrs["warnings"]``)."""
    ro, notes = _readout(study, exp, logs, "interleaving")
    df = _interleaving_frame(ro.interleaving)
    df.attrs.update(readout=ro, warnings=notes)
    return df


def _ab_frame(ro: Any) -> pd.DataFrame:
    """The readout's metric rows as the report's A/B table: the primary metric's p
    Holm-adjusted within the primary family, the others unadjusted (p_adjusted null)."""
    from onlineeval.readout.decide import BETTER, WORSE

    rows = []
    for r in ro.metrics:
        rows.append({
            "metric": r.metric, "variant": r.treatment, "role": r.role,
            "control_value": r.control_value, "treatment_value": r.treatment_value,
            **r.result.to_dict(), "rel_diff": r.rel_lift, "rel_ci_low": r.rel_ci_low,
            "rel_ci_high": r.rel_ci_high,
            "significant": r.verdict in (BETTER, WORSE, "higher", "lower"),
            "verdict": r.verdict, "df": r.df,
        })
    return pd.DataFrame(rows)


def _interleaving_frame(section: Any) -> pd.DataFrame:
    """The readout's interleaving section as the report's one-row table (team A = the
    treatment)."""
    return pd.DataFrame([{
        "experiment": section.experiment, "team_a": section.treatment_team,
        "team_b": section.control_team, "impressions": section.impressions,
        "impressions_with_clicks": section.impressions_with_clicks, "wins_a": section.wins,
        "wins_b": section.losses, "ties": section.ties, **section.result.to_dict(),
        "winner": section.winner,
    }])


def _per_query_interleaving(exp: Experiment, logs: Any) -> PerQueryOnline:
    """Per-query Δ_q of the treatment team against the control team."""
    return per_query_interleaving(logs, exp.interleaving_experiment, exp.treatment_team,
                                  exp.control_team)


def _per_query_ab(exp: Experiment, logs: Any) -> PerQueryOnline:
    """Per-query CTR difference treatment − control."""
    from onlineeval.logs.variants import from_text

    return per_query_ab_ctr(logs, exp.ab_experiment, from_text(logs, exp.control_variant),
                            from_text(logs, exp.treatment_variant))


def _experiment(study: Study, exp: Experiment, cache: _LogCache) -> ExperimentReadout:
    from onlineeval.readout.compute import with_interleaving

    out = ExperimentReadout(exp)
    offline_pq = None
    if exp.has_runs:
        try:
            out.offline, out.per_query = _offline(study, exp, cache)
        except OnlineEvalError as exc:
            raise _context(exp, "offline comparison", exc, study) from None
        offline_pq = out.per_query.set_index("qid")["delta"]
    else:
        out.notes.append("no runs in the study for this experiment: no offline comparison")
    if exp.ab_logs is not None:
        try:
            logs = cache.get(exp.ab_logs, exp.columns)
            out.ab, out.srm, out.srm_message = _ab(study, exp, logs)
            out.notes.extend(out.ab.attrs.get("warnings", []))
            if offline_pq is not None:
                out.within["A/B CTR Δ"] = within_experiment(offline_pq,
                                                            _per_query_ab(exp, logs))
            if not getattr(logs, "has_results", True):
                out.notes.append("no position CTR: the A/B logs have no results table")
        except OnlineEvalError as exc:
            raise _context(exp, f"A/B readout of {exp.ab_logs}", exc, study) from None
    else:
        out.notes.append("no A/B logs in the study for this experiment")
    if exp.interleaving_logs is not None:
        try:
            logs = cache.get(exp.interleaving_logs, exp.columns)
            out.interleaving = _interleaving(study, exp, logs)
            out.notes.extend(f"interleaving: {w}"
                             for w in out.interleaving.attrs.get("warnings", []))
            if offline_pq is not None:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    pqi = _per_query_interleaving(exp, logs)
                # the per-query pages are the readout's: say only what it did not say
                out.notes.extend(n for n in (f"interleaving: {w.message}" for w in caught)
                                 if n not in out.notes)
                out.within = {"interleaving Δ_q": within_experiment(offline_pq, pqi),
                              **out.within}
        except UnknownTeamError as exc:
            raise InputError(
                f"{_context(exp, f'interleaving readout of {exp.interleaving_logs}', exc, study)}"
                " — the teams are the logs' results.team names: set control_team / "
                "treatment_team of this experiment in the study file"
            ) from None
        except OnlineEvalError as exc:
            raise _context(exp, f"interleaving readout of {exp.interleaving_logs}", exc,
                           study) from None
    else:
        out.notes.append("no interleaving logs in the study for this experiment")
    # the experiment's one readout: the A/B readout with the interleaving section beside it
    ab_ro = out.ab.attrs.get("readout") if out.ab is not None else None
    il_ro = out.interleaving.attrs.get("readout") if out.interleaving is not None else None
    if ab_ro is not None:
        out.readout = with_interleaving(ab_ro, il_ro.interleaving if il_ro else None)
        # the arms' position CTR, as the readout computed it
        out.position_ctr = ab_ro.position_ctr
    else:
        out.readout = il_ro
    return out


def _put(row: dict[str, Any], key: str, result: Any, sign: float = 1.0) -> None:
    """The delta, interval and p-value of one result row (its result block) under ``key``:
    the adjusted p-value where a correction applies, else the p-value. ``sign`` -1 negates
    the delta and swaps the interval (a metric where lower is better)."""
    lo, hi = sign * result.ci_low, sign * result.ci_high
    row[key] = sign * result.estimate
    row[f"{key}_ci_low"] = min(lo, hi)
    row[f"{key}_ci_high"] = max(lo, hi)
    row[f"{key}_p"] = result.p_value if pd.isna(result.correction) else result.p_adjusted


def _row(r: ExperimentReadout) -> dict[str, Any]:
    exp = r.experiment
    row: dict[str, Any] = {
        "experiment": exp.name,
        "control": exp.control_run.stem if exp.has_runs else r.readout.control,
        "treatment": exp.treatment_run.stem if exp.has_runs else r.readout.treatments[0],
    }
    if r.offline is not None:
        for rec in r.offline.itertuples():
            _put(row, f"offline:{rec.measure}", rec)
    if r.interleaving is not None:
        _put(row, INTERLEAVING, next(r.interleaving.itertuples()))
    if r.ab is not None:
        row["srm_mismatch"] = bool(r.srm.get("mismatch", False)) if r.srm else None
        for rec in r.ab.itertuples():
            _put(row, f"ab:{rec.metric}", rec, -1.0 if lower_is_better(rec.metric) else 1.0)
    return row


def _large_margin(study: Study, table: pd.DataFrame, primary: str) -> dict[str, Any]:
    """Do offline and interleaving agree in sign on the pairs with a large offline margin?"""
    name = primary.removeprefix("offline:")
    if study.large_margin is not None:
        large = table[primary].abs() >= study.large_margin
        rule = f"|Δ {name}| ≥ {study.large_margin:g}"
    else:
        large = table[f"{primary}_p"] < study.alpha
        rule = f"offline Δ {name} significant at α = {study.alpha:g}"
    out: dict[str, Any] = {"rule": rule, "experiments": table.loc[large, "experiment"].tolist()}
    if INTERLEAVING not in table.columns:
        out.update({"n": int(large.sum()), "n_with_interleaving": 0, "n_agree": 0,
                    "disagree": [], "all_agree": None})
        return out
    part = table[large & table[INTERLEAVING].notna()]
    agree = np.sign(part[primary]) == np.sign(part[INTERLEAVING])
    out.update({
        "n": int(large.sum()), "n_with_interleaving": int(len(part)),
        "n_agree": int(agree.sum()), "disagree": part.loc[~agree, "experiment"].tolist(),
        "all_agree": bool(agree.all()) if len(part) else None,
    })
    return out


def build_report(study: Study | str | Path) -> Report:
    """Compute the report of a study (a :class:`Study` or the path of a study file)."""
    if not isinstance(study, Study):
        study = read_study(study)
    cache = _LogCache()
    readouts = []
    with Progress("experiments", len(study.experiments)) as bar:
        for exp in study.experiments:
            readouts.append(_experiment(study, exp, cache))
            bar.update()
    table = pd.DataFrame([_row(r) for r in readouts])
    # evaluate() names measures canonically (nDCG@10 -> ndcg_cut_10; P@5,10 -> P_5, P_10)
    judged = [r for r in readouts if r.offline is not None]
    measures = list(dict.fromkeys(judged[0].offline["measure"])) if judged else []
    outcomes: list[tuple[str, str]] = []
    if INTERLEAVING in table.columns:
        outcomes.append((INTERLEAVING, "interleaving Δ_AB"))
    for metric in study.online_metrics:
        if f"ab:{metric}" in table.columns:
            label = f"A/B {metric}" + (" (decrease = better)" if lower_is_better(metric) else "")
            outcomes.append((f"ab:{metric}", label))
    agreements = {}
    tau = pd.DataFrame()
    if not measures:
        large = {"rule": "no experiment has runs", "experiments": [], "n": 0,
                 "n_with_interleaving": 0, "n_agree": 0, "disagree": [], "all_agree": None}
        return Report(study, measures, readouts, table, outcomes, agreements, tau, large,
                      cache.load_notes())
    primary = f"offline:{measures[0]}"
    # the agreement across experiments: the experiments with runs
    with_runs = table[table[primary].notna()].reset_index(drop=True)
    for col, _ in outcomes:
        sub = pd.DataFrame({
            "experiment": with_runs["experiment"], "offline_delta": with_runs[primary],
            "online_delta": with_runs[col], "offline_p": with_runs[f"{primary}_p"],
            "online_p": with_runs[f"{col}_p"],
        })
        agreements[col] = agreement(sub, alpha=study.alpha)
    offline_cols = [f"offline:{m}" for m in measures]
    if outcomes:
        tau = tau_matrix(with_runs, offline_cols, [c for c, _ in outcomes])
    return Report(study, measures, readouts, table, outcomes, agreements, tau,
                  _large_margin(study, with_runs, primary), cache.load_notes())
