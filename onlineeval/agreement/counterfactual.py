"""The counterfactual delta of each experiment, as a third source beside offline and online.

:func:`with_counterfactual` reads the experiments table (the one :func:`onlineeval.agreement`
reads, with two more columns naming each experiment's control and treatment runs) and adds
the counterfactual Δ = treatment − control clicks@k of the two runs, estimated on the
logging ranker's log (:func:`onlineeval.counterfactual.compare_pairs`), with its interval
and p-value; ``onlineeval.agreement(table, counterfactual="counterfactual_delta")`` then
compares it with the offline and the online deltas.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from onlineeval.agreement.across import _load
from onlineeval.errors import InputError, SchemaError

#: the columns :func:`with_counterfactual` adds
COLUMNS = ("counterfactual_delta", "counterfactual_ci_low", "counterfactual_ci_high",
           "counterfactual_p")


def with_counterfactual(table: pd.DataFrame | str | Path, logs: Any, *,
                        control: str = "control_run", treatment: str = "treatment_run",
                        experiment: str = "experiment", **options: Any) -> pd.DataFrame:
    """The experiments table with :data:`COLUMNS` added.

    ``table``: a DataFrame or the CSV file :func:`onlineeval.agreement` reads, with columns
    ``control`` and ``treatment`` naming each experiment's runs (TREC run files; a relative
    path is relative to the CSV file's folder). ``logs``: the logging ranker's log, read
    by :func:`onlineeval.counterfactual.compare_pairs` with ``options`` (metric,
    estimator, propensities, query, unit, ...; the propensities are found once for all
    experiments). A row without both runs gets null counterfactual values."""
    from onlineeval.counterfactual import compare_pairs

    df, source, is_file = _load(table)
    missing = [c for c in (control, treatment) if c not in df.columns]
    if missing:
        raise SchemaError(f"{source}: the counterfactual delta needs columns {control!r} and "
                          f"{treatment!r} naming each experiment's runs; missing {missing}; "
                          f"found {list(df.columns)}")
    clash = [c for c in COLUMNS if c in df.columns]
    if clash:
        raise SchemaError(f"{source}: already has column(s) {clash}; rename them, or pass the "
                          "counterfactual column to agreement() directly")
    base = Path(source).parent if is_file else Path()
    names = (df[experiment].astype(str) if experiment in df.columns
             else pd.Series([f"row {i}" for i in df.index], index=df.index))
    if names.duplicated().any():
        raise SchemaError(f"{source}: experiment {names[names.duplicated()].iloc[0]!r} "
                          "appears more than once; each row must be one experiment")
    pairs, rows = {}, {}
    for idx, c, t in zip(df.index, df[control], df[treatment], strict=True):
        if c is None or t is None or pd.isna(c) or pd.isna(t):
            continue
        paths = [base / str(v) if not Path(str(v)).is_absolute() else Path(str(v))
                 for v in (c, t)]
        for p in paths:
            if not p.is_file():
                where = f"{source} line {idx}" if is_file else f"{source} row {idx!r}"
                raise InputError(f"{where}: run file {str(p)!r} does not exist (a relative "
                                 "path is read from the table's folder)")
        pairs[names[idx]] = (str(paths[0]), str(paths[1]))
        rows[names[idx]] = idx
    out = df.copy()
    for col in COLUMNS:
        out[col] = float("nan")
    if pairs:
        found = compare_pairs(logs, pairs, **options).set_index("experiment")
        for name, idx in rows.items():
            r = found.loc[name]
            out.loc[idx, list(COLUMNS)] = [r["estimate"], r["ci_low"], r["ci_high"],
                                           r["p_value"]]
    return out
