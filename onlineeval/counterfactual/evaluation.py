"""``evaluate``: a candidate ranking's clicks@k from the log of another ranker (see the
package docstring for the estimators and when each is unbiased)."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from onlineeval.counterfactual import sums
from onlineeval.counterfactual.direct import DirectModel, direct_model
from onlineeval.counterfactual.estimators import ESTIMATORS, estimate
from onlineeval.counterfactual.propensities import check_ranks, propensities_from, rank_table
from onlineeval.errors import InputError, InvalidParameterError, SchemaError
from onlineeval.levels import check_level
from onlineeval.logs.coerce import as_logs

if TYPE_CHECKING:
    from onlineeval.logs import Logs

_METRIC = re.compile(r"^clicks@(\d+)$")
OWN_MODEL = ("pbm on this log: examination = the propensities, attractiveness = the pair's "
             "clicks over its examination mass")


@dataclass
class CounterfactualResult:
    """The estimate and everything needed to judge it.

    ``unsupported_share`` is the share of candidate top-k slots (over pages) the estimate has
    no logged observation for: ips and dr, the page did not show the document at a rank with
    a propensity (ips counts 0 there, dr the model's prediction); snips, no page of the query
    did. ``model`` and ``model_unseen_share`` (slots whose (query, doc) the model was not
    fitted on) are dr's; empty and NaN for the others.

    ``shown_without_propensity`` counts the candidate's documents shown on a logged page at a
    rank with no positive propensity (``ranks_without_propensity`` lists those ranks up to
    max_rank; a propensity given as 0 is one) or beyond max_rank, ``clicks_without_propensity``
    their clicks: no weight can carry them, so they are not used (see the warning for what
    that does to each estimator). ``clip`` is the cap on the weights, None unless asked for;
    ``clipped_clicks`` the used clicks whose weight it lowered.
    """

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
    pages_without_unit: int
    shown_without_propensity: int
    clicks_without_propensity: int
    ranks_without_propensity: str
    repeated_results: int
    propensity_source: str
    model: str
    model_unseen_share: float
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


def candidate_table(run: Any, k: int) -> pd.DataFrame:
    """query, doc_id, cand_rank of the run's top k per query (as text)."""
    from onlineeval.offline.ranked_lists import ranked_lists

    lists = ranked_lists(run, what="candidate run")
    rows = [(str(q), str(d), i + 1) for q, docs in lists.items() for i, d in enumerate(docs[:k])]
    if not rows:
        raise InputError("the candidate run ranks no document; give a TREC run with at least "
                         "one query")
    out = pd.DataFrame(rows, columns=["query", "doc_id", "cand_rank"])
    out["cand_rank"] = out["cand_rank"].astype(np.int32)
    return out


def evaluate(logs: Logs, run: Any, *, metric: str = "clicks@10",
             propensities: Any = "pbm", estimator: str = "ips", clip: float | None = None,
             model: Any = None, query: str = "query", unit: str = "user_id",
             max_rank: int = 10, confidence: float = 0.95,
             searches: str = "searches") -> CounterfactualResult:
    """Estimate the candidate ranking ``run``'s clicks@k per page from ``logs``.

    Parameters
    ----------
    logs
        The log of the ranker(s) that were shown, with results.
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
        ``"ips"``, ``"snips"`` or ``"dr"`` (:data:`ESTIMATORS`; the package docstring says
        when each is unbiased).
    clip
        Cap on the weights p_c / p_l of ips and dr (default none); snips has no such weight.
    model
        dr's click model: ``None`` or ``"pbm"`` (default: the log's own, examination = the
        propensities, attractiveness = clicks over examination mass, its noise in the
        interval), or, taken as exact, the path of a pbm model written by ``onlineeval
        clickmodel fit --model pbm -o``, a pbm :class:`~onlineeval.clickmodels.ClickModelFit`
        or a :class:`DirectModel` (fit those on other data than ``logs``).
    unit
        The randomization unit the standard error clusters on (default ``user_id``).
    searches
        The name of a view of the searches to read (default all of them).
    """
    setup = prepare(logs, metric=metric, propensities=propensities, estimator=estimator,
                    clip=clip, model=model, query=query, unit=unit, max_rank=max_rank,
                    confidence=confidence, searches=searches)
    return setup.result(run)[0]


@dataclass
class Prepared:
    """What every candidate estimated on one log shares: the checked arguments, the
    propensities (a PBM or harvest fitted once) and dr's model. :meth:`result` estimates one
    candidate and also returns the per-unit rows its interval is computed from."""

    logs: Any
    name: str
    k: int
    p: np.ndarray
    label: str
    dm: DirectModel | None
    clip: float | None
    query: str
    unit: str
    max_rank: int
    confidence: float
    searches: str

    def result(self, run: Any, warn: bool = True) -> tuple[CounterfactualResult, pd.DataFrame]:
        res, used, rows = estimate_rows(
            self.logs.con, self.name, candidate_table(run, self.k), self.p, self.dm,
            k=self.k, max_rank=self.max_rank, clip=self.clip, confidence=self.confidence,
            searches=self.searches, query=self.query, unit=self.unit)
        if warn:
            pooled = sums.query_for(self.name, self.dm is not None) == sums.POOLED
            _warn("pooled" if pooled else self.name, self.k, self.max_rank, res, used,
                  self.unit)
        ranks = np.flatnonzero(np.isfinite(used))
        res["clicks_without_propensity"] += res.pop("clicks_beyond_max_rank")
        return CounterfactualResult(
            metric=f"clicks@{self.k}", estimator=self.name, confidence=self.confidence,
            clip=self.clip, propensity_source=self.label, ranks_without_propensity=", ".join(
                str(r) for r in range(1, self.max_rank + 1) if not np.isfinite(used[r])),
            model=self.dm.source if self.dm is not None else OWN_MODEL if self.name == "dr"
            else "",
            propensities=pd.DataFrame({"rank": ranks, "propensity": used[ranks]}), **res), rows


def prepare(logs: Logs, *, metric: str = "clicks@10", propensities: Any = "pbm",
            estimator: str = "ips", clip: float | None = None, model: Any = None,
            query: str = "query", unit: str = "user_id", max_rank: int = 10,
            confidence: float = 0.95, searches: str = "searches") -> Prepared:
    """The arguments of :func:`evaluate` checked, the log read and the propensities (and
    dr's model) found, once for any number of candidates."""
    confidence = check_level(confidence, "confidence")
    k = parse_metric(metric)
    name = ESTIMATORS.canonical(estimator)
    if clip is not None and not clip > 0:
        raise InvalidParameterError(f"clip must be > 0; got {clip!r}")
    if clip is not None and name == "snips":
        raise InvalidParameterError(
            "clip caps the weights p_c / p_l of ips and dr; snips has none to cap (it divides "
            "each (query, document)'s clicks by the examination they were shown with)")
    if model is not None and name != "dr":
        raise InvalidParameterError(f"a click model is dr's direct method; the {name} "
                                    "estimate does not use one")
    logs = as_logs(logs)  # after the argument checks: a path is read only when they pass
    if not logs.has_results:
        raise SchemaError(f"counterfactual evaluation needs the results table; the log "
                          f"{logs.source} has none")
    columns = logs.con.table(searches).columns
    for col in (query, unit):
        if col not in columns:
            raise SchemaError(f"the log {logs.source} has no searches.{col} column")
    if k > max_rank:
        raise InvalidParameterError(f"clicks@{k} needs max_rank >= {k}; got {max_rank}")

    @cache
    def pbm() -> Any:
        from onlineeval.clickmodels import fit

        return fit(logs, "pbm", query=query, max_rank=max_rank, searches=searches)

    def harvested() -> pd.DataFrame:
        from onlineeval.clickmodels.harvest import harvest_position_bias

        return harvest_position_bias(logs, query=query, max_rank=max_rank, searches=searches)

    p, label = propensities_from(propensities, pbm, harvested)
    own = model is None or (isinstance(model, str) and model == "pbm")
    dm = direct_model(model, query) if name == "dr" and not own else None
    return Prepared(logs=logs, name=name, k=k, p=p, label=label, dm=dm, clip=clip,
                    query=query, unit=unit, max_rank=max_rank, confidence=confidence,
                    searches=searches)


def estimate_inputs(name: str, cand: pd.DataFrame, p: np.ndarray, dm: DirectModel | None,
                    *, k: int, max_rank: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two tables the estimator's SQL reads: the candidate's top k with the model's
    attractiveness (dr) and the propensities per rank with the model's examination (dr drops
    the logged ranks the model has no examination for: a slot shown there gets the model's
    prediction alone, as one not shown)."""
    check_ranks(p, k)
    cand = cand.copy()
    exam = None
    if dm is not None:
        exam = dm.examination
        check_ranks(exam, k, "the click model's examination")
        alpha, seen = dm.lookup(cand["query"], cand["doc_id"])
        cand["dm_alpha"] = pd.array(alpha, dtype="Float64")
        cand["dm_seen"] = pd.array(seen, dtype="boolean")
        known = np.zeros(p.size, bool)
        n = min(p.size, exam.size)
        known[:n] = np.isfinite(exam[:n])
        p = np.where(known, p, np.nan)
    else:
        cand["dm_alpha"] = pd.array([pd.NA] * len(cand), dtype="Float64")
        cand["dm_seen"] = pd.array([pd.NA] * len(cand), dtype="boolean")
    return cand, rank_table(p, exam, max_rank)


def estimate_on(con: Any, name: str, cand: pd.DataFrame, p: np.ndarray,
                dm: DirectModel | None, *, k: int, max_rank: int, clip: float | None = None,
                confidence: float = 0.95, searches: str = "searches", query: str = "query",
                unit: str = "user_id") -> tuple[dict[str, Any], np.ndarray]:
    """The estimate's fields from the views ``searches``, ``results``, ``clicks`` of the
    DuckDB connection ``con``, given the candidate's top k (:func:`candidate_table`), the
    propensities per rank and, for dr, the model; also the propensities used."""
    res, used, _ = estimate_rows(con, name, cand, p, dm, k=k, max_rank=max_rank, clip=clip,
                                 confidence=confidence, searches=searches, query=query,
                                 unit=unit)
    return res, used


def estimate_rows(con: Any, name: str, cand: pd.DataFrame, p: np.ndarray,
                  dm: DirectModel | None, *, k: int, max_rank: int, clip: float | None = None,
                  confidence: float = 0.95, searches: str = "searches", query: str = "query",
                  unit: str = "user_id") -> tuple[dict[str, Any], np.ndarray, pd.DataFrame]:
    """:func:`estimate_on` and the per-unit rows of the estimator's SQL it was computed
    from (a difference of two candidates pairs them by unit)."""
    confidence = check_level(confidence, "confidence")
    cand, table = estimate_inputs(name, cand, p, dm, k=k, max_rank=max_rank)
    rows = sums.per_unit(con, sums.query_for(name, dm is not None), candidate=cand,
                         propensity=table, max_rank=max_rank, clip=clip, searches=searches,
                         query=query, unit=unit)
    if rows.empty:
        raise InputError(f"no page of the log has a query the candidate run ranks and a "
                         f"value of searches.{unit} (compare the run's qids with "
                         f"searches.{query}; use query= to choose the column)")
    res = estimate(rows, name, confidence)
    res["model_unseen_share"] = (float(rows["model_unseen"].sum()) / float(rows["slots"].sum())
                                 if "model_unseen" in rows.columns and name == "dr"
                                 else float("nan"))
    used = table["propensity"].to_numpy(float, na_value=np.nan)
    return res, np.r_[np.nan, used], rows


def _warn(kind: str, k: int, max_rank: int, res: dict[str, Any], used: np.ndarray,
          unit: str) -> None:
    """``kind``: ips, dr (with a given model) or pooled (snips; dr with the log's model)."""
    unseen = res["model_unseen_share"]
    without = res["pages_without_candidate"]
    if without:
        warnings.warn(f"counterfactual: {without} pages have no query or one the candidate run "
                      "does not rank; they are left out of the estimate", UserWarning,
                      stacklevel=3)
    if res["pages_without_unit"]:
        warnings.warn(f"counterfactual: {res['pages_without_unit']} pages have no value of "
                      f"the unit column {unit!r}; they are left out of the estimate (the "
                      "interval clusters by unit)", UserWarning, stacklevel=3)
    shown = res["shown_without_propensity"]
    if shown:
        lost = res["clicks_without_propensity"] + res["clicks_beyond_max_rank"]
        missing = [r for r in range(1, max_rank + 1) if not np.isfinite(used[r])]
        effect = {"ips": "those slots count 0, so the estimate is low by their share",
                  "dr": "those slots get the model's prediction alone",
                  "pooled": "they are left out of both the clicks and the examination "
                            "mass, which costs data but not bias"}[kind]
        warnings.warn(f"counterfactual: {shown} candidate top-{k} documents shown at logged "
                      f"ranks without a positive propensity (ranks "
                      f"{', '.join(map(str, missing)) or 'none'} up to max_rank={max_rank}) "
                      f"or beyond max_rank, with {lost} clicks, are not used: {effect}",
                      UserWarning, stacklevel=3)
    if res["repeated_results"]:
        warnings.warn(f"counterfactual: {res['repeated_results']} result rows repeat a "
                      "candidate document shown higher on the same page; only its highest "
                      "rank is read", UserWarning, stacklevel=3)
    share = res["unsupported_share"]
    if share > 0:
        effect = {"ips": "the logged page did not show at a rank with a propensity; no click "
                         "can be counted for them, so the estimate is biased low",
                  "pooled": "no page of the query showed at a rank with a propensity; no "
                            "click can be counted for them, so the estimate is biased low",
                  "dr": "the logged page did not show at a rank with a propensity; they are "
                        "the click model's prediction alone, right only as far as the model "
                        "is, and the interval treats the model as exact"}[kind]
        warnings.warn(f"counterfactual: {share:.1%} of the candidate's top-{k} slots hold a "
                      f"document {effect}", UserWarning, stacklevel=3)
    if unseen > 0:
        warnings.warn(f"counterfactual: {unseen:.1%} of the candidate's top-{k} slots hold a "
                      "(query, doc) the click model was not fitted on; it predicts its prior "
                      "attractiveness there", UserWarning, stacklevel=3)
