"""Position-based IPS estimate of a candidate ranking's clicks@k (see the package docstring)."""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from onlineeval import queries
from onlineeval.errors import InputError, InvalidParameterError, SchemaError
from onlineeval.levels import check_level
from onlineeval.stats.moments import Moments, ratio

if TYPE_CHECKING:
    from onlineeval.logs import Logs

ESTIMATORS = ("ips",)
_METRIC = re.compile(r"^clicks@(\d+)$")


@dataclass
class CounterfactualResult:
    """The estimate and everything needed to judge it."""

    metric: str
    estimator: str
    value: float
    se: float
    ci_low: float
    ci_high: float
    confidence: float
    units: int
    pages: int
    weighted_clicks: int
    effective_sample_size: float
    clip: float | None
    clipped_clicks: int
    unsupported_share: float
    pages_without_candidate: int
    clicks_without_propensity: int
    propensity_source: str
    propensities: pd.DataFrame

    def summary(self) -> pd.DataFrame:
        """One row with every field but the propensity table."""
        d = {k: v for k, v in self.__dict__.items() if k != "propensities"}
        d["clip"] = float("nan") if self.clip is None else self.clip
        return pd.DataFrame([d])


def parse_metric(metric: str) -> int:
    m = _METRIC.match(str(metric).strip())
    if not m or int(m.group(1)) < 1:
        raise InvalidParameterError(
            f"counterfactual metric must be clicks@K (expected clicks in the candidate's top "
            f"K per page, K >= 1); got {metric!r}")
    return int(m.group(1))


def read_propensities(source: str | Path | pd.DataFrame | dict[int, float]) -> np.ndarray:
    """Propensities per rank from a CSV file (columns rank, propensity), a DataFrame of those
    columns or ``{rank: propensity}``; returns an array indexed by rank (NaN where absent)."""
    where = "the propensities"
    if isinstance(source, dict):
        df = pd.DataFrame({"rank": list(source), "propensity": list(source.values())})
    elif isinstance(source, pd.DataFrame):
        df = source
    else:
        where = str(source)
        try:
            df = pd.read_csv(source)
        except (OSError, ValueError) as exc:
            raise InputError(f"{source}: cannot read propensities as CSV with columns rank, "
                             f"propensity ({exc})") from None
    missing = {"rank", "propensity"} - set(df.columns)
    if missing:
        raise SchemaError(f"{where}: needs columns rank and propensity; has "
                          f"{', '.join(map(str, df.columns))}")
    rank = pd.to_numeric(df["rank"], errors="coerce")
    prop = pd.to_numeric(df["propensity"], errors="coerce")
    bad = rank.isna() | (rank < 1) | (rank != rank.round()) | prop.isna() | ~(prop > 0) | \
        ~np.isfinite(prop)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{where}: row {i + 2 if where != 'the propensities' else i + 1}: "
                         f"rank must be a whole number >= 1 and propensity a finite number > "
                         f"0; got rank {df['rank'].iloc[i]!r}, propensity "
                         f"{df['propensity'].iloc[i]!r}")
    if rank.duplicated().any():
        raise InputError(f"{where}: rank {int(rank[rank.duplicated()].iloc[0])} is listed "
                         "twice")
    out = np.full(int(rank.max()) + 1, np.nan)
    out[rank.astype(int).to_numpy()] = prop.to_numpy(float)
    return out


def ips_from_terms(terms: pd.DataFrame, propensity: np.ndarray, k: int, *,
                   clip: float | None = None, confidence: float = 0.95) -> dict[str, Any]:
    """The IPS estimate from per-unit terms (``counterfactual/click_terms`` rows: unit,
    pages, slots, shown_top, logged_rank, cand_rank, clicks)."""
    if clip is not None and not clip > 0:
        raise InvalidParameterError(f"clip must be > 0; got {clip!r}")
    confidence = check_level(confidence, "confidence")
    p = np.asarray(propensity, float)
    need = np.arange(1, k + 1)
    if p.size <= k or not np.all(np.isfinite(p[need]) & (p[need] > 0)):
        raise InvalidParameterError(
            f"clicks@{k} needs a propensity > 0 for every rank 1..{k}; got "
            f"{[None if i >= p.size or not np.isfinite(p[i]) else float(p[i]) for i in need]}")
    units = terms.drop_duplicates("unit")[["unit", "pages", "slots", "shown_top"]]
    hits = terms.dropna(subset=["logged_rank"])
    hits = hits[hits["clicks"] > 0]
    lr = hits["logged_rank"].to_numpy(np.int64)
    cr = hits["cand_rank"].to_numpy(np.int64)
    n = hits["clicks"].to_numpy(float)
    known = (lr < p.size) & np.isfinite(p[np.minimum(lr, p.size - 1)])
    w = np.zeros(len(hits))
    w[known] = p[cr[known]] / p[lr[known]]
    clipped = np.zeros(len(hits), dtype=bool)
    if clip is not None:
        clipped = w > clip
        w = np.minimum(w, clip)
    y = pd.Series(n * w).groupby(hits["unit"].to_numpy()).sum()
    per_unit = units.set_index("unit")
    values = np.c_[y.reindex(per_unit.index, fill_value=0.0).to_numpy(),
                   per_unit["pages"].to_numpy(float)]
    est = ratio(Moments.from_units(values), 0, 1)
    value, var = float(est.value), float(est.var)
    se = math.sqrt(var) if var >= 0 else float("nan")
    z = float(norm.ppf((1 + confidence) / 2))
    used = n[known]
    sw, sw2 = float((used * w[known]).sum()), float((used * w[known] ** 2).sum())
    pages = float(per_unit["pages"].sum())
    return {
        "value": value, "se": se, "ci_low": value - z * se, "ci_high": value + z * se,
        "units": len(per_unit), "pages": int(pages),
        "weighted_clicks": int(used.sum()),
        "effective_sample_size": sw * sw / sw2 if sw2 > 0 else 0.0,
        "clipped_clicks": int(n[clipped].sum()),
        "unsupported_share": 1 - float(per_unit["shown_top"].sum())
        / float(per_unit["slots"].sum()) if pages else float("nan"),
        "clicks_without_propensity": int(n[~known].sum()),
    }


def _candidate_table(run: Any, k: int) -> pd.DataFrame:
    from onlineeval.offline.ranked_lists import ranked_lists

    lists = ranked_lists(run, what="candidate run")
    rows = [(q, d, i + 1) for q, docs in lists.items() for i, d in enumerate(docs[:k])]
    if not rows:
        raise InputError("the candidate run ranks no document; give a TREC run with at least "
                         "one query")
    return pd.DataFrame(rows, columns=["query", "doc_id", "cand_rank"])


def _propensities(logs: Logs, source: Any, query: str, max_rank: int
                  ) -> tuple[np.ndarray, str]:
    if isinstance(source, str) and source in ("pbm", "harvested"):
        if source == "pbm":
            from onlineeval.clickmodels import fit

            pb = fit(logs, "pbm", query=query, max_rank=max_rank).position_bias
            label = "pbm (relative examination of a PBM fitted on the log)"
        else:
            from onlineeval.clickmodels.harvest import harvest_position_bias

            pb = harvest_position_bias(logs, query=query, max_rank=max_rank)
            label = "harvested (intervention harvesting on the log)"
        out = np.full(int(pb["rank"].max()) + 1, np.nan)
        out[pb["rank"].to_numpy(int)] = pb["relative"].to_numpy(float)
        return out, label
    if isinstance(source, (dict, pd.DataFrame)):
        return read_propensities(source), "given"
    return read_propensities(source), f"file {source}"


def evaluate(logs: Logs, run: Any, *, metric: str = "clicks@10",
             propensities: Any = "pbm", estimator: str = "ips", clip: float | None = None,
             query: str = "query", unit: str = "user_id", max_rank: int = 10,
             confidence: float = 0.95) -> CounterfactualResult:
    """Estimate the candidate ranking ``run``'s clicks@k per page from ``logs``.

    Parameters
    ----------
    logs
        The log of the ranker that was shown, with results.
    run
        The candidate ranking: a TREC run file, DataFrame (qid, docno, score) or dict; its
        qids must be values of the searches column ``query`` (e.g. ``query="qid"``).
    metric
        ``clicks@K``: expected clicks per page in the candidate's top K.
    propensities
        ``"pbm"`` (the relative examination of a PBM fitted on the log), ``"harvested"``
        (intervention harvesting on the log), a CSV file with columns rank, propensity, a
        DataFrame of those columns or ``{rank: propensity}``.
    estimator
        ``"ips"`` (the only one implemented).
    clip
        Cap on the weights p_c / p_l (default none).
    unit
        The randomization unit the standard error clusters on (default ``user_id``).
    """
    confidence = check_level(confidence, "confidence")
    k = parse_metric(metric)
    if estimator not in ESTIMATORS:
        raise InvalidParameterError(f"unknown estimator {estimator!r}; known: "
                                    f"{', '.join(ESTIMATORS)}")
    if not logs.has_results:
        raise SchemaError(f"counterfactual evaluation needs the results table; the log "
                          f"{logs.source} has none")
    for col in (query, unit):
        if col not in logs.con.table("searches").columns:
            raise SchemaError(f"the log {logs.source} has no searches.{col} column")
    if k > max_rank:
        raise InvalidParameterError(f"clicks@{k} needs max_rank >= {k}; got {max_rank}")
    p, label = _propensities(logs, propensities, query, max_rank)
    cand = _candidate_table(run, k)
    table = "counterfactual_candidate"
    logs.con.register(table, cand)
    try:
        q = queries.load("counterfactual/click_terms")
        terms = logs.con.execute(
            q.render(searches=["searches"], query=[query], unit=[unit], candidate=[table]),
            q.bind(max_rank=max_rank)).df()
    finally:
        logs.con.unregister(table)
    if terms.empty:
        raise InputError(f"no page of the log has a query the candidate run ranks (compare "
                         f"the run's qids with searches.{query}; use query= to choose the "
                         "column)")
    res = ips_from_terms(terms, p, k, clip=clip, confidence=confidence)
    without = int(terms["pages_without_candidate"].iloc[0])
    beyond = int(terms["clicks_beyond_max_rank"].iloc[0])
    if without:
        warnings.warn(f"counterfactual: {without} pages have a query the candidate run does "
                      "not rank; they are left out of the estimate", UserWarning, stacklevel=2)
    if res["clicks_without_propensity"] or beyond:
        warnings.warn(f"counterfactual: {res['clicks_without_propensity'] + beyond} clicks on "
                      f"candidate top-{k} documents at logged ranks without a propensity (or "
                      f"beyond max_rank={max_rank}) are left out: the estimate is low by "
                      "their share", UserWarning, stacklevel=2)
    if res["unsupported_share"] > 0:
        warnings.warn(f"counterfactual: {res['unsupported_share']:.1%} of the candidate's "
                      f"top-{k} slots hold a document the logged page did not show; no click "
                      "can be counted for them, so the estimate is biased low",
                      UserWarning, stacklevel=2)
    ranks = np.flatnonzero(np.isfinite(p))
    return CounterfactualResult(
        metric=f"clicks@{k}", estimator=estimator, confidence=confidence, clip=clip,
        pages_without_candidate=without, propensity_source=label,
        propensities=pd.DataFrame({"rank": ranks, "propensity": p[ranks]}),
        **{**res, "clicks_without_propensity": res["clicks_without_propensity"] + beyond},
    )
