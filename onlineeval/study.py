"""The study file: which experiments (ranker pairs) to read out together, and how.

A study is a TOML file (read with the standard library's :mod:`tomllib`). Paths in it are
relative to the file's own directory. Top-level keys give defaults; each ``[[experiment]]``
table is one ranker pair and may override any default::

    title = "Ranker study"            # optional, shown in the report
    qrels = "qrels.txt"               # TREC qrels (default for every experiment)
    measures = ["ndcg_cut_10", "map"] # offline measures; the first is the primary one
    online_metrics = ["ctr", "click_mrr"]   # A/B metrics; the first is the primary one
    ab_logs = "ab"                    # click-log directory of the A/B tests (optional)
    interleaving_logs = "interleaving"      # click-log directory of interleaving (optional)
    alpha = 0.05                      # significance level everywhere
    test = "t"                        # paired offline test: t, wilcoxon, sign, randomization,
                                      # bootstrap
    correction = "holm"               # holm | bh | none (onlineeval.stats.multiple), within
                                      # each experiment's tables
    large_margin = 0.05               # optional: |offline Δ| at or above which a pair counts
                                      # as a large offline margin (default: offline significant)
    seed = 0                          # seed of resampling tests and bootstraps
    n_resamples = 2000                # resamples of those tests
    primary = ["ctr"]                 # the readouts' primary metrics: the one correction
                                      # family (default: the first online metric)
    guardrails = ["abandonment_rate"] # guardrail metrics; each needs a margin:
    non_inferiority = { abandonment_rate = "2%" }   # absolute (0.01) or relative ("2%");
                                      # a metric with a margin is a guardrail
    columns = "mapping.toml"          # the logs' own column names: a --columns-file, or the
                                      # same mapping inline as [columns] / [columns.searches]
    counterfactual_logs = "logging"   # optional: the log of the ranker(s) shown before the
                                      # experiments: adds each experiment's counterfactual Δ
                                      # (treatment run − control run clicks@10, estimated on
                                      # it) beside the offline and online Δ
    counterfactual_options = { estimator = "dr", clip = 10 }   # optional: that estimate's
                                      # options (onlineeval.counterfactual.evaluate keywords;
                                      # default snips, qid as the query column when present)

    [[experiment]]
    name = "s260_vs_s040"             # required, unique
    control_run = "runs/s260.run"     # optional: TREC run of the control ranker
    treatment_run = "runs/s040.run"   # optional: TREC run of the treatment ranker
    # optional: qrels, ab_logs, interleaving_logs (override the defaults);
    # ab_experiment / interleaving_experiment: the value of the logs' `experiment` column
    # (default: name); control_variant / treatment_variant (default control / treatment);
    # control_team / treatment_team: the `results.team` names of the interleaved rankers
    # (default: the run files' stems, e.g. s260 / s040; without runs, the teams' names tell:
    # onlineeval.interleaving.teams); primary, guardrails, non_inferiority, columns,
    # counterfactual_logs and counterfactual_options (each replaces the top-level value for
    # this experiment; the counterfactual Δ needs the runs)

The per-experiment readouts (``onlineeval report`` and ``demo``) read each experiment with its
primary metrics, guardrails and margins (as ``onlineeval readout --primary --guardrails
--non-inferiority``); the other online metrics are secondary. ``columns`` maps the logs'
column names as ``--columns-file`` does (:mod:`onlineeval.logs.mapping_text`).

The runs (both, or neither) and qrels add the offline comparison and the offline-online
agreement; an experiment without runs is read out from its logs alone (it needs A/B or
interleaving logs), and the agreement across experiments uses the experiments with runs.

Every problem is reported as an :class:`~onlineeval.errors.InputError` naming the file and the
key (e.g. ``study.toml: experiment[3].control_run: file 'runs/x.run' does not exist``).
"""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from onlineeval.errors import InputError, InvalidParameterError, OnlineEvalError
from onlineeval.levels import check_level

_TOP_KEYS: dict[str, type | tuple[type, ...]] = {
    "title": str, "qrels": str, "measures": list, "online_metrics": list, "ab_logs": str,
    "interleaving_logs": str, "alpha": (int, float), "test": str, "correction": str,
    "large_margin": (int, float), "seed": int, "n_resamples": int, "experiment": list,
    "primary": list, "guardrails": list, "non_inferiority": dict, "columns": (str, dict),
    "counterfactual_logs": str, "counterfactual_options": dict,
}
_EXP_KEYS: dict[str, type | tuple[type, ...]] = {
    "name": str, "control_run": str, "treatment_run": str, "qrels": str, "ab_logs": str,
    "interleaving_logs": str, "ab_experiment": str, "interleaving_experiment": str,
    "control_variant": str, "treatment_variant": str, "control_team": str,
    "treatment_team": str, "primary": list, "guardrails": list, "non_inferiority": dict,
    "columns": (str, dict), "counterfactual_logs": str, "counterfactual_options": dict,
}

DEFAULT_MEASURES = ("ndcg_cut_10", "map", "P_10", "recip_rank")
DEFAULT_ONLINE_METRICS = ("ctr", "click_mrr", "abandonment_rate")


@dataclass(frozen=True)
class Experiment:
    """One ranker pair of a study (paths resolved, defaults applied). ``control_run``,
    ``treatment_run`` and ``qrels`` are None for an experiment read out from logs alone."""

    @property
    def has_runs(self) -> bool:
        return self.control_run is not None

    name: str
    qrels: Path | None
    control_run: Path | None
    treatment_run: Path | None
    ab_logs: Path | None = None
    interleaving_logs: Path | None = None
    ab_experiment: str = ""
    interleaving_experiment: str = ""
    control_variant: str = "control"
    treatment_variant: str = "treatment"
    control_team: str = ""
    treatment_team: str = ""
    #: the readout's primary metrics (default: the study's first online metric)
    primary: tuple[str, ...] = ()
    #: guardrail -> its non-inferiority margin as written (a number, or "2%")
    non_inferiority: dict[str, Any] = field(default_factory=dict)
    #: the logs' column mapping (None: canonical names) and the file it was read from
    columns: Any = None
    columns_file: Path | None = None
    #: the logging ranker's log on which the counterfactual Δ of the runs is estimated, and
    #: the estimate's options (:func:`onlineeval.counterfactual.evaluate` keywords)
    counterfactual_logs: Path | None = None
    counterfactual_options: dict[str, Any] = field(default_factory=dict)

    @property
    def guardrails(self) -> tuple[str, ...]:
        return tuple(self.non_inferiority)


@dataclass(frozen=True)
class Study:
    """A parsed, validated study file."""

    path: Path
    title: str
    measures: tuple[str, ...]
    online_metrics: tuple[str, ...]
    alpha: float
    test: str
    correction: str
    large_margin: float | None
    seed: int
    n_resamples: int
    experiments: tuple[Experiment, ...] = field(default_factory=tuple)


def _check_keys(table: dict[str, Any], allowed: dict[str, Any], where: str) -> None:
    for key, value in table.items():
        if key not in allowed:
            close = difflib.get_close_matches(key, list(allowed), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else "."
            raise InputError(
                f"{where}{key}: unknown key{hint} Allowed keys: {', '.join(sorted(allowed))}"
            )
        want = allowed[key]
        # bool is an int in Python; a study never means True as a number
        if not isinstance(value, want) or (isinstance(value, bool) and want is not str):
            names = (want,) if isinstance(want, type) else want
            raise InputError(
                f"{where}{key}: expected {' or '.join(t.__name__ for t in names)}, got "
                f"{type(value).__name__} {value!r}"
            )


def _strings(value: list, where: str) -> tuple[str, ...]:
    if not value or not all(isinstance(v, str) and v for v in value):
        raise InputError(f"{where}: expected a non-empty list of names, got {value!r}")
    return tuple(value)


def _path(base: Path, value: str, where: str, kind: str) -> Path:
    p = (base / value).resolve()
    ok = p.is_dir() if kind == "dir" else p.is_file()
    if not ok:
        what = "directory" if kind == "dir" else "file"
        state = "is not a " + what if p.exists() else "does not exist"
        raise InputError(
            f"{where}: {what} {value!r} {state} (resolved to {p}; paths are relative "
            "to the study file)"
        )
    return p


def _check_names(measures: tuple[str, ...], metrics: tuple[str, ...], src: str) -> None:
    """Unknown or unusable measure and metric names, reported with the study key that holds
    them (before any file is read)."""
    from onlineeval.abtest.metrics import METRICS
    from onlineeval.offline.compare import check_measures

    for m in measures:
        try:
            check_measures([m])
        except OnlineEvalError as exc:
            raise InputError(f"{src}: measures: {exc}") from None
    for m in metrics:
        try:
            METRICS.get(m)
        except OnlineEvalError as exc:
            raise InputError(f"{src}: online_metrics: {exc}") from None


def _readout_metrics(table: dict[str, Any], default: dict[str, Any], metrics: tuple[str, ...],
                     where: str) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The primary metrics and the guardrails' margins of a table of the study (the
    experiment's own keys, else the top-level ``default``), checked as the readout checks
    them; ``where`` prefixes the key in errors."""
    from onlineeval.abtest.metrics import METRICS
    from onlineeval.readout.ab import parse_margin

    def get(key: str) -> Any:
        return table[key] if key in table else default.get(key)

    primary = _strings(get("primary"), f"{where}primary") if get("primary") is not None \
        else metrics[:1]
    guards = _strings(get("guardrails"), f"{where}guardrails") if get("guardrails") else ()
    margins = get("non_inferiority") or {}
    for key, names in (("primary", primary), ("guardrails", guards),
                       ("non_inferiority", tuple(margins))):
        for m in names:
            try:
                metric = METRICS.get(m)
            except OnlineEvalError as exc:
                raise InputError(f"{where}{key}: {exc}") from None
            if metric.better is None:
                raise InputError(f"{where}{key}: {m!r} has no direction of improvement, so it "
                                 "cannot be a primary metric or a guardrail; list it under "
                                 "online_metrics (a secondary metric)")
    for m, value in margins.items():
        try:
            parse_margin(m, value)
        except OnlineEvalError as exc:
            raise InputError(f"{where}non_inferiority.{m}: {exc}") from None
    missing = [g for g in guards if g not in margins]
    if missing:
        raise InputError(
            f"{where}guardrails: {missing[0]!r} needs a non-inferiority margin: add "
            f'non_inferiority = {{ {missing[0]} = "2%" }} (absolute or relative)'
        )
    both = sorted(set(primary) & set(margins))
    if both:
        raise InputError(f"{where}guardrails: {both[0]!r} is a primary metric; a metric is "
                         "primary or a guardrail, not both")
    return primary, {m: margins[m] for m in [*guards, *margins]}


def _columns(value: Any, base: Path, where: str) -> tuple[Any, Path | None]:
    """The ``columns`` key: a mapping file's path (relative to the study file) or the
    mapping inline, in the format of ``--columns-file``; and the file it was read from."""
    from onlineeval.logs.mapping_text import from_table, parse

    if value is None:
        return None, None
    try:
        if isinstance(value, str):
            file = _path(base, value, where, "file")
            return parse(files=[file]), file
        return from_table(value, where), None
    except InputError:
        raise
    except OnlineEvalError as exc:
        raise InputError(f"{where}: {exc}" if not str(exc).startswith(where) else str(exc)
                         ) from None


def _counterfactual_options(value: dict[str, Any], base: Path, where: str) -> dict[str, Any]:
    """The ``counterfactual_options`` table: keywords of
    :func:`onlineeval.counterfactual.evaluate` (a propensities or model file relative to the
    study file)."""
    if not value:
        return {}
    import inspect

    from onlineeval.counterfactual import evaluate

    allowed = [k for k in inspect.signature(evaluate).parameters if k not in ("logs", "run")]
    out = {}
    for key, v in value.items():
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(f"{where}.{key}: unknown option{hint} Allowed: "
                             f"{', '.join(allowed)}")
        if key in ("propensities", "model") and isinstance(v, str) and (base / v).is_file():
            v = str((base / v).resolve())
        out[key] = v
    return out


def read_study(path: str | Path) -> Study:
    """Read and validate a study file; see the module docstring for its keys."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"study file {str(path)!r} does not exist or is not a file")
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text: {exc}") from None
    src = path.name
    _check_keys(data, _TOP_KEYS, f"{src}: ")
    base = path.resolve().parent
    try:
        alpha = check_level(data.get("alpha", 0.05))
    except InvalidParameterError as exc:
        raise InputError(f"{src}: {exc}") from None
    large = data.get("large_margin")
    if large is not None and not large >= 0:
        raise InputError(f"{src}: large_margin: must be >= 0, got {large!r}")
    n_res = int(data.get("n_resamples", 2000))
    if n_res < 100:
        raise InputError(f"{src}: n_resamples: must be at least 100, got {n_res}")
    seed = int(data.get("seed", 0))
    if seed < 0:
        raise InputError(f"{src}: seed: must be a non-negative integer, got {seed}")
    test = data.get("test", "t")
    from onlineeval.offline.compare import PAIRED_TESTS

    if test not in PAIRED_TESTS:
        raise InputError(
            f"{src}: test: unknown paired test {test!r}; use one of {', '.join(PAIRED_TESTS)}"
        )
    test = PAIRED_TESTS.canonical(test)
    from onlineeval.stats.multiple import CORRECTIONS

    correction = data.get("correction", "holm")
    if correction not in CORRECTIONS:
        raise InputError(f"{src}: correction: unknown correction {correction!r}; use one of "
                         f"{', '.join(CORRECTIONS)}")
    correction = CORRECTIONS.canonical(correction)
    measures = _strings(data["measures"], f"{src}: measures") if "measures" in data \
        else DEFAULT_MEASURES
    metrics = _strings(data["online_metrics"], f"{src}: online_metrics") \
        if "online_metrics" in data else DEFAULT_ONLINE_METRICS
    _check_names(measures, metrics, src)
    top_metrics = _readout_metrics({}, data, metrics, f"{src}: ")
    top_columns = _columns(data.get("columns"), base, f"{src}: columns")
    raw = data.get("experiment")
    if not raw:
        raise InputError(
            f"{src}: experiment: a study needs at least one [[experiment]] table with a name "
            "(and control_run and treatment_run, or ab_logs / interleaving_logs)"
        )
    experiments = []
    seen: set[str] = set()
    for i, exp in enumerate(raw, start=1):
        where = f"{src}: experiment[{i}]"
        if not isinstance(exp, dict):
            raise InputError(f"{where}: expected a table ([[experiment]]), got {exp!r}")
        _check_keys(exp, _EXP_KEYS, f"{where}.")
        if "name" not in exp:
            raise InputError(f"{where}.name: required key is missing")
        runs = [k for k in ("control_run", "treatment_run") if k in exp]
        if len(runs) == 1:
            other = "treatment_run" if runs[0] == "control_run" else "control_run"
            raise InputError(f"{where}.{other}: required key is missing (give both runs, "
                             "or neither to read the experiment out from its logs alone)")
        name = exp["name"]
        if not name.strip():
            raise InputError(f"{where}.name: must not be empty; name the experiment (its "
                             "value of the logs' experiment column by default)")
        if name in seen:
            raise InputError(f"{where}.name: experiment name {name!r} is used twice")
        seen.add(name)
        where = f"{src}: experiment[{i}] ({name})"

        def get(key: str, exp: dict = exp) -> Any:
            return exp.get(key, data.get(key))

        ab = get("ab_logs")
        il = get("interleaving_logs")
        if runs:
            if get("qrels") is None:
                raise InputError(f"{where}.qrels: no qrels given (set it at the top or here)")
            qrels = _path(base, get("qrels"), f"{where}.qrels", "file")
            control_run = _path(base, exp["control_run"], f"{where}.control_run", "file")
            treatment_run = _path(base, exp["treatment_run"], f"{where}.treatment_run",
                                  "file")
        elif ab is None and il is None:
            raise InputError(
                f"{where}: nothing to read out: give control_run and treatment_run, or "
                "ab_logs / interleaving_logs"
            )
        else:
            qrels = control_run = treatment_run = None
        if any(k in exp for k in ("primary", "guardrails", "non_inferiority")):
            primary, margins = _readout_metrics(exp, data, metrics, f"{where}.")
        else:
            primary, margins = top_metrics
        columns, columns_file = _columns(exp["columns"], base, f"{where}.columns") \
            if "columns" in exp else top_columns
        cf_logs = get("counterfactual_logs")
        if "counterfactual_logs" in exp and not runs:
            raise InputError(f"{where}.counterfactual_logs: the counterfactual Δ is that of the "
                             "runs: give control_run and treatment_run too")
        cf_where = f"{where}.counterfactual_options" if "counterfactual_options" in exp \
            else f"{src}: counterfactual_options"
        cf_options = _counterfactual_options(get("counterfactual_options") or {}, base,
                                             cf_where)
        experiments.append(Experiment(
            name=name, qrels=qrels, control_run=control_run, treatment_run=treatment_run,
            ab_logs=None if ab is None else _path(base, ab, f"{where}.ab_logs", "dir"),
            interleaving_logs=None if il is None else _path(
                base, il, f"{where}.interleaving_logs", "dir"),
            ab_experiment=exp.get("ab_experiment", name),
            interleaving_experiment=exp.get("interleaving_experiment", name),
            control_variant=exp.get("control_variant", "control"),
            treatment_variant=exp.get("treatment_variant", "treatment"),
            control_team=exp.get("control_team", control_run.stem if runs else ""),
            treatment_team=exp.get("treatment_team", treatment_run.stem if runs else ""),
            primary=primary, non_inferiority=margins, columns=columns,
            columns_file=columns_file,
            counterfactual_logs=_path(base, cf_logs, f"{where}.counterfactual_logs", "dir")
            if cf_logs is not None and runs else None,
            counterfactual_options=cf_options,
        ))
    return Study(
        path=path, title=data.get("title", path.stem), measures=measures,
        online_metrics=metrics, alpha=alpha, test=test, correction=correction,
        large_margin=None if large is None else float(large), seed=seed, n_resamples=n_res,
        experiments=tuple(experiments),
    )
