"""Agreement across experiments: does the offline delta predict the online outcome?

One row per experiment (a ranker pair): the offline delta of a chosen measure (treatment −
control), an online outcome (an A/B delta of a chosen metric, or interleaving Δ_AB, oriented
so that positive favours the treatment) and optionally the p-value of each.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from onlineeval.agreement.core import STATISTICS, association, association_results
from onlineeval.errors import InputError, SchemaError
from onlineeval.formatting import plain, records
from onlineeval.levels import check_level
from onlineeval.stats.results import comparison_frame

#: decision-table categories, in display order
DECISIONS: tuple[str, ...] = (
    "both significant, same direction",
    "both significant, opposite directions",
    "only offline significant",
    "only online significant",
    "neither significant",
)

#: the pair every agreement compares; with a counterfactual column, the two pairs it adds
OFFLINE_ONLINE = "offline vs online"
COUNTERFACTUAL_PAIRS: tuple[tuple[str, str, str], ...] = (
    ("counterfactual vs online", "counterfactual_delta", "online_delta"),
    ("offline vs counterfactual", "offline_delta", "counterfactual_delta"),
)


@dataclass
class AgreementResult:
    """The agreement readout of :func:`agreement`.

    Attributes
    ----------
    stats : dict
        n, n_agree, n_disagree, n_zero, sign_agreement, sign_ci_low, sign_ci_high,
        kendall_tau, kendall_p, kendall_ci_low, kendall_ci_high, spearman_rho, spearman_p,
        spearman_ci_low, spearman_ci_high (:mod:`onlineeval.agreement.core`), plus n_excluded (rows without both
        deltas), offline, online (the column names), alpha and confidence.
    experiments : DataFrame
        One row per experiment used: experiment, offline_delta, online_delta, sign_agrees
        (null when either delta is 0), and with p-values offline_p, online_p, decision.
    decisions : DataFrame or None
        decision, count, share — one row per :data:`DECISIONS` entry; None without p-values.
    excluded : list of str
        Experiments left out because a delta was missing.
    pairs : dict
        With a counterfactual column (the third source), the statistics of
        ``"counterfactual vs online"`` and ``"offline vs counterfactual"``, each as
        ``stats`` has them for offline vs online (:func:`onlineeval.agreement.association`)
        over the experiments with both values, plus ``n_missing``, the experiments without
        one of them; empty otherwise.
    """

    stats: dict[str, Any]
    experiments: pd.DataFrame
    decisions: pd.DataFrame | None
    excluded: list[str] = field(default_factory=list)
    pairs: dict[str, dict[str, Any]] = field(default_factory=dict)

    def summary(self) -> pd.DataFrame:
        """The statistics as a one-row DataFrame."""
        return pd.DataFrame([self.stats])

    def results(self) -> pd.DataFrame:
        """The sign agreement, Kendall's τ-b and Spearman's ρ in the result shape every
        comparison shares: a ``statistic`` column, then
        :data:`onlineeval.stats.results.RESULT_COLUMNS` (``unit`` "experiment";
        :func:`onlineeval.agreement.core.association_results`). With :attr:`pairs`, a
        ``pair`` column comes first (``offline vs online``, then each of them)."""
        lead, found = [], []
        for pair, stats in {OFFLINE_ONLINE: self.stats, **self.pairs}.items():
            lead += [{"pair": pair, "statistic": s} if self.pairs else {"statistic": s}
                     for s in STATISTICS]
            found += association_results(stats, self.stats["confidence"], "experiment")
        return comparison_frame(lead, found)

    def to_dict(self) -> dict[str, Any]:
        """Every number, JSON-ready (null for undefined values)."""
        return {
            "summary": {k: plain(v) for k, v in self.stats.items()},
            "results": records(self.results()),
            "decisions": None if self.decisions is None else records(self.decisions),
            "experiments": records(self.experiments),
            "excluded": list(self.excluded),
            "pairs": {name: {k: plain(v) for k, v in stats.items()}
                      for name, stats in self.pairs.items()},
        }


def _where(source: str, frame_is_file: bool, idx: object) -> str:
    # a file's frame is indexed by the CSV line number of each row (the header is line 1)
    return f"{source} line {idx}" if frame_is_file else f"{source} row {idx!r}"


def _numeric(df: pd.DataFrame, col: str, source: str, is_file: bool) -> pd.Series:
    values = pd.to_numeric(df[col], errors="coerce")
    bad = values.isna() & df[col].notna() & (df[col].astype(str).str.strip() != "")
    if bad.any():
        idx = bad[bad].index[0]
        raise SchemaError(
            f"{_where(source, is_file, idx)}: column {col!r} must be a number, got "
            f"{df.loc[idx, col]!r} ({int(bad.sum())} such row(s)); fix or remove the value"
        )
    return values.astype(float)


def decide(offline_delta: float, online_delta: float, offline_p: float, online_p: float,
           alpha: float) -> str:
    """The decision-table category of one experiment (a null p-value counts as not
    significant: there is no evidence either way)."""
    alpha = check_level(alpha)
    sig_off = bool(offline_p < alpha)  # nan < alpha is False
    sig_on = bool(online_p < alpha)
    if sig_off and sig_on:
        same = np.sign(offline_delta) == np.sign(online_delta)
        return DECISIONS[0] if same else DECISIONS[1]
    if sig_off:
        return DECISIONS[2]
    if sig_on:
        return DECISIONS[3]
    return DECISIONS[4]


_EXPECTED = "expected columns experiment, offline_delta, online_delta[, offline_p, online_p]"


def _read_csv(path: Path) -> pd.DataFrame:
    """The CSV as text cells (empty -> None), indexed by each row's line number.

    Read with the :mod:`csv` module so that a row with more or fewer fields than the header
    is an error naming its line (pandas would silently shift it into the index or pad it).
    """
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is None or not any(h.strip() for h in header):
                raise InputError(f"{path}: the file is empty; {_EXPECTED} in a header row")
            header = [h.strip() for h in header]
            dup = sorted({h for h in header if header.count(h) > 1})
            if dup or "" in header:
                raise SchemaError(
                    f"{path} line 1: the header names column(s) {dup or ['(empty)']} "
                    f"{'twice' if dup else ''}; give every column one distinct name".replace(
                        "  ", " ")
                )
            rows, lines = [], []
            for row in reader:
                if not any(f.strip() for f in row):
                    continue  # a blank line is not an experiment
                if len(row) != len(header):
                    raise SchemaError(
                        f"{path} line {reader.line_num}: {len(row)} field(s), but the header "
                        f"has {len(header)} ({', '.join(header)}); fix the row (a comma "
                        "inside a value needs double quotes)"
                    )
                rows.append([f.strip() or None for f in row])
                lines.append(reader.line_num)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason}); save it as UTF-8") from None
    except csv.Error as exc:
        raise InputError(f"{path}: cannot read as CSV ({exc}); {_EXPECTED}") from None
    if not rows:
        raise InputError(f"{path}: the header has no rows below it; add one row per "
                         "experiment")
    return pd.DataFrame(rows, columns=header, index=pd.Index(lines, name="line"), dtype=object)


def _load(table: pd.DataFrame | str | Path) -> tuple[pd.DataFrame, str, bool]:
    if isinstance(table, pd.DataFrame):
        return table, "table", False
    path = Path(table)
    if not path.is_file():
        raise InputError(f"experiments table {str(path)!r} does not exist or is not a file")
    return _read_csv(path), str(path), True


def agreement(table: pd.DataFrame | str | Path, offline: str = "offline_delta",
              online: str = "online_delta", *, offline_p: str | None = None,
              online_p: str | None = None, experiment: str = "experiment",
              alpha: float = 0.05, confidence: float = 0.95,
              counterfactual: str | None = None) -> AgreementResult:
    """Agreement of offline deltas and online outcomes across experiments.

    Parameters
    ----------
    table : DataFrame or path of a CSV file, one row per experiment.
    offline, online : columns holding the offline delta and the online delta. Both must be
        oriented the same way (positive = the treatment is better).
    offline_p, online_p : p-value columns for the decision table; by default
        ``offline_p``/``online_p`` when the table has them. Without both, no decision table.
    experiment : the column naming the experiment (optional; row numbers otherwise).
    alpha : significance level of the decision table.
    confidence : level of the Wilson interval of the sign-agreement rate.
    counterfactual : a column holding a third source, the counterfactual delta of each
        experiment (e.g. :func:`onlineeval.counterfactual.compare_pairs` on the logging
        ranker's log, or :func:`with_counterfactual`), oriented the same way. Adds the
        column ``counterfactual_delta`` (and ``counterfactual_sign_agrees``, with the
        online delta) to ``experiments`` and the statistics of counterfactual vs online and
        offline vs counterfactual to ``pairs``, each over the rows with both values.

    Rows where either delta is missing are excluded, listed in ``excluded`` and counted in
    ``stats["n_excluded"]``. See :mod:`onlineeval.agreement.core` for the statistics (pairs
    with a zero delta are left out of the sign-agreement rate, not counted as disagreeing).
    """
    alpha = check_level(alpha)
    confidence = check_level(confidence, "confidence")
    df, source, is_file = _load(table)
    p_cols: list[str] = []
    for given, default in ((offline_p, "offline_p"), (online_p, "online_p")):
        if given is not None:
            p_cols.append(given)
        elif default in df.columns:
            p_cols.append(default)
    required = [offline, online] + ([offline_p] if offline_p else []) + (
        [online_p] if online_p else []) + ([counterfactual] if counterfactual else [])
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise SchemaError(
            f"{source}: missing column(s) {missing}; required: {offline!r}, {online!r} "
            f"(optional p-value columns for the decision table); found {list(df.columns)}"
        )
    if len(p_cols) == 1:
        raise SchemaError(
            f"{source}: the decision table needs both p-value columns; found only "
            f"{p_cols[0]!r} — add the other or drop it"
        )
    if experiment in df.columns:
        names = df[experiment].astype(object).where(df[experiment].notna(), None)
        names = pd.Series([_where(source, is_file, i) if v is None else str(v)
                           for i, v in names.items()], index=df.index, dtype=object)
        dup = names[names.duplicated(keep=False)]
        if len(dup):
            first = dup.iloc[0]
            places = [_where(source, is_file, i) for i in dup[dup == first].index]
            raise SchemaError(
                f"{source}: experiment {first!r} appears more than once ({', '.join(places)}); "
                "each row must be one experiment with its own name"
            )
    else:
        names = pd.Series([_where(source, is_file, i) for i in df.index], index=df.index,
                          dtype=object)
    x = _numeric(df, offline, source, is_file)
    y = _numeric(df, online, source, is_file)
    keep = x.notna() & y.notna()
    excluded = names[~keep].tolist()
    out = pd.DataFrame({
        "experiment": names[keep].to_numpy(),
        "offline_delta": x[keep].to_numpy(),
        "online_delta": y[keep].to_numpy(),
    })
    out["sign_agrees"] = _sign_agrees(out["offline_delta"], out["online_delta"])
    result = association(out["offline_delta"].to_numpy(), out["online_delta"].to_numpy(),
                         confidence)
    pairs: dict[str, dict[str, Any]] = {}
    if counterfactual is not None:
        full = pd.DataFrame({"offline_delta": x, "online_delta": y,
                             "counterfactual_delta": _numeric(df, counterfactual, source,
                                                              is_file)})
        out["counterfactual_delta"] = full.loc[keep, "counterfactual_delta"].to_numpy()
        out["counterfactual_sign_agrees"] = _sign_agrees(out["counterfactual_delta"],
                                                         out["online_delta"])
        for name, a, b in COUNTERFACTUAL_PAIRS:
            have = full[a].notna() & full[b].notna()
            pairs[name] = association(full.loc[have, a].to_numpy(),
                                      full.loc[have, b].to_numpy(), confidence)
            pairs[name]["n_missing"] = int((~have).sum())
    decisions = None
    if len(p_cols) == 2:
        for col, name in zip(p_cols, ("offline_p", "online_p"), strict=True):
            p = _numeric(df, col, source, is_file)[keep]
            outside = (p < 0) | (p > 1)
            if outside.any():
                idx = outside[outside].index[0]
                raise SchemaError(
                    f"{_where(source, is_file, idx)}: column {col!r} must be a p-value in "
                    f"[0, 1], got {float(p[idx])!r} ({int(outside.sum())} such row(s))"
                )
            out[name] = p.to_numpy()
        out["decision"] = [
            decide(r.offline_delta, r.online_delta, r.offline_p, r.online_p, alpha)
            for r in out.itertuples()
        ]
        counts = out["decision"].value_counts()
        decisions = pd.DataFrame({
            "decision": list(DECISIONS),
            "count": [int(counts.get(d, 0)) for d in DECISIONS],
        })
        decisions["share"] = decisions["count"] / max(len(out), 1)
    result.update({"n_excluded": len(excluded), "offline": offline, "online": online,
                   "alpha": alpha, "confidence": confidence})
    return AgreementResult(result, out, decisions, excluded, pairs)


def _sign_agrees(a: pd.Series, b: pd.Series) -> pd.arrays.BooleanArray:
    """Per row whether the signs agree; null where either value is 0 or missing."""
    return pd.array([None if not (u * v) or np.isnan(u * v) else bool(np.sign(u) == np.sign(v))
                     for u, v in zip(a, b, strict=True)], dtype="boolean")
