"""``fit``: a click model fitted on a log, and what it says (``ClickModelFit``)."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from onlineeval.clickmodels._base import (
    FitTrace,
    Params,
    Prior,
    check_iterations,
    check_prior,
    pair_sums,
    rank_sums,
)
from onlineeval.clickmodels.models import MODELS
from onlineeval.clickmodels.patterns import (
    DEFAULT_MAX_RANK,
    Patterns,
    check_max_rank,
    read_patterns,
)
from onlineeval.errors import InputError, OnlineEvalError
from onlineeval.logs.coerce import as_logs

if TYPE_CHECKING:
    from onlineeval.logs import Logs

JSON_FORMAT = "onlineeval-clickmodel"
JSON_VERSION = 1


@dataclass
class Evaluation:
    """How well a fitted model predicts the clicks of a set of pages.

    ``log_likelihood`` is the sum over pages of log P(the page's clicks) under the model (the
    joint probability of the click vector; natural log); ``perplexity_by_rank`` has, per
    rank r, ``2 ** (-(1/N_r) * sum log2 P(C_r = c_r))`` over the N_r pages showing r, with
    P(C_r = 1) the model's click probability at r *not* conditioned on the page's other
    clicks (Chuklin et al. 2015, §5.2); ``perplexity`` is their mean over ranks, as there.
    1 is perfect, 2 is a coin flip. ``unseen`` counts result impressions whose (query, doc)
    the model was not fitted on (they get the prior's value); ``impossible_pages`` the pages
    with probability 0 under the model (cascade: a click below the first one).
    """

    model: str
    pages: int
    log_likelihood: float
    perplexity: float
    perplexity_by_rank: pd.DataFrame
    unseen: int
    impressions: int
    impossible_pages: int

    @property
    def log_likelihood_per_page(self) -> float:
        return self.log_likelihood / self.pages if self.pages else float("nan")


@dataclass
class ClickModelFit:
    """A click model fitted on a log.

    - :attr:`position_bias`: per rank, ``examination`` = the model's probability that a
      result at that rank is examined, averaged over the training pages showing the rank
      (PBM: its gamma_r; UBM: summed over where the last click above was; cascade models:
      the chance of reading down to it; the ``ctr`` baseline has no examination and shows
      its click-through rate), and ``relative`` = examination / examination at rank 1.
    - :attr:`attractiveness`, :attr:`satisfaction`, :attr:`relevance`: per (query, doc)
      DataFrames with ``impressions`` and ``clicks`` (pages) in training. ``relevance`` is
      attractiveness x satisfaction for sdbn/dbn (Chapelle & Zhang 2009), attractiveness x
      the largest examination for pbm/ubm (the click probability at the most examined rank:
      their attractiveness alone has no fixed scale), attractiveness for cascade/dcm, and
      NaN for ctr.
    - :attr:`log_likelihood` on the training pages; :attr:`trace` the EM objective per
      iteration; :meth:`perplexity` on other logs; :meth:`to_json` / :meth:`from_json`.
    """

    model: str
    params: Params
    pairs: pd.DataFrame
    prior: Prior
    max_rank: int
    trace: FitTrace
    log_likelihood: float
    pages: int
    n_patterns: int
    position_bias: pd.DataFrame
    counts: dict[str, int] = field(default_factory=dict)
    query_column: str = "query"

    @property
    def spec(self) -> Any:
        return MODELS.get(self.model)

    def _pair_frame(self, column: str) -> pd.DataFrame:
        out = self.pairs[["query", "doc_id"]].copy()
        out[column] = self.params.pair[column]
        out["impressions"] = self.pairs["impressions"].to_numpy()
        out["clicks"] = self.pairs["clicks"].to_numpy()
        return out

    @property
    def attractiveness(self) -> pd.DataFrame:
        if "attractiveness" not in self.params.pair:
            return pd.DataFrame(columns=["query", "doc_id", "attractiveness", "impressions",
                                         "clicks"])
        return self._pair_frame("attractiveness")

    @property
    def satisfaction(self) -> pd.DataFrame | None:
        """Satisfaction per (query, doc) for sdbn and dbn; None for the other models."""
        return self._pair_frame("satisfaction") if "satisfaction" in self.params.pair else None

    @property
    def relevance(self) -> pd.DataFrame:
        rel = self.spec.relevance(self.params)
        out = self.pairs[["query", "doc_id"]].copy()
        out["relevance"] = rel if rel is not None else np.full(len(out), np.nan)
        out["impressions"] = self.pairs["impressions"].to_numpy()
        out["clicks"] = self.pairs["clicks"].to_numpy()
        return out

    @property
    def examination_table(self) -> pd.DataFrame | None:
        """UBM: examination per (rank, distance to the click above; distance = rank when no
        click above); None for the other models."""
        if self.model != "ubm":
            return None
        table = self.params.rank["examination"]
        r, d = np.nonzero(np.isfinite(table))
        return pd.DataFrame({"rank": r, "distance": d, "examination": table[r, d]})

    def evaluate(self, patterns: Patterns) -> Evaluation:
        """Log-likelihood and perplexity of the model on ``patterns``."""
        return evaluate(self, patterns)

    def perplexity(self, test_logs: Logs, searches: str = "searches") -> Evaluation:
        """Log-likelihood and perplexity (per rank and overall) on the pages of another log
        (or of a view of its searches), read with this fit's ``max_rank`` and query column."""
        return evaluate(self, read_patterns(test_logs, searches, self.max_rank,
                                            self.query_column))

    def summary(self) -> pd.DataFrame:
        """One row: model, pages, patterns, pairs, log-likelihood, iterations, converged."""
        return pd.DataFrame([{
            "model": self.model, "pages": self.pages, "patterns": self.n_patterns,
            "pairs": len(self.pairs), "log_likelihood": self.log_likelihood,
            "log_likelihood_per_page": self.log_likelihood / self.pages if self.pages
            else float("nan"),
            "iterations": self.trace.iterations, "converged": self.trace.converged,
            "gamma": self.params.scalar.get("gamma", float("nan")),
        }])

    def to_dict(self) -> dict[str, Any]:
        pairs = {"query": [_plain(v) for v in self.pairs["query"]],
                 "doc_id": [_plain(v) for v in self.pairs["doc_id"]],
                 "impressions": [int(v) for v in self.pairs["impressions"]],
                 "clicks": [int(v) for v in self.pairs["clicks"]]}
        for name, values in self.params.pair.items():
            pairs[name] = _floats(values)
        return {
            "format": JSON_FORMAT, "version": JSON_VERSION, "model": self.model,
            "prior": list(self.prior), "max_rank": self.max_rank,
            "query_column": self.query_column,
            "pairs": pairs,
            "rank": {name: _floats(v) if v.ndim == 1 else [_floats(row) for row in v]
                     for name, v in self.params.rank.items()},
            "scalar": {k: _plain(v) for k, v in self.params.scalar.items()},
            "position_bias": {c: [_plain(v) for v in self.position_bias[c]]
                              for c in self.position_bias.columns},
            "fit": {"log_likelihood": _plain(self.log_likelihood), "pages": self.pages,
                    "patterns": self.n_patterns, "iterations": self.trace.iterations,
                    "converged": self.trace.converged,
                    "history": _floats(np.asarray(self.trace.history))},
            "counts": dict(self.counts),
        }

    def to_json(self, path: str | os.PathLike[str] | None = None) -> str:
        """The fit as JSON text (floats round-trip exactly); written atomically to ``path``
        when given."""
        text = json.dumps(self.to_dict(), allow_nan=False) + "\n"
        if path is not None:
            from onlineeval.atomic import write_text

            write_text(path, text)
        return text

    @classmethod
    def from_json(cls, source: str | os.PathLike[str]) -> ClickModelFit:
        """Read a fit written by :meth:`to_json`: JSON text, or the path of a file."""
        where = "the JSON text"
        text = str(source)
        if not text.lstrip().startswith("{"):
            where = str(source)
            try:
                text = Path(source).read_text(encoding="utf-8")
            except OSError as exc:
                raise InputError(f"{source}: cannot read the click model file ({exc})") from None
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg})"
                             ) from None
        try:
            return _from_dict(d)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            if isinstance(exc, OnlineEvalError):
                raise
            raise InputError(f"{where}: not an onlineeval click model file ({exc!r}); write "
                             f"one with `onlineeval clickmodel fit ... -o FILE`") from None


def _from_dict(d: dict[str, Any]) -> ClickModelFit:
    if d.get("format") != JSON_FORMAT:
        raise ValueError(f"format is {d.get('format')!r}, not {JSON_FORMAT!r}")
    if d.get("version") != JSON_VERSION:
        raise ValueError(f"version {d.get('version')!r}; this onlineeval reads {JSON_VERSION}")
    model = MODELS.canonical(d["model"])
    p = d["pairs"]
    pairs = pd.DataFrame({"query": p["query"], "doc_id": p["doc_id"],
                          "impressions": np.asarray(p["impressions"], dtype=np.int64),
                          "clicks": np.asarray(p["clicks"], dtype=np.int64)})
    params = Params(
        pair={k: _array(p[k]) for k in MODELS.get(model).pair_columns},
        rank={k: _array(v) for k, v in d["rank"].items()},
        scalar={k: float(v) for k, v in d["scalar"].items()},
    )
    fit = d["fit"]
    return ClickModelFit(
        model=model, params=params, pairs=pairs, prior=check_prior(d["prior"]),
        max_rank=check_max_rank(d["max_rank"]),
        trace=FitTrace(history=list(_array(fit["history"])), iterations=int(fit["iterations"]),
                       converged=bool(fit["converged"])),
        log_likelihood=_nan(fit["log_likelihood"]), pages=int(fit["pages"]),
        n_patterns=int(fit["patterns"]),
        position_bias=pd.DataFrame({
            k: np.asarray(v, dtype=np.int64) if k in ("rank", "pages") else _array(v)
            for k, v in d["position_bias"].items()}),
        counts={k: int(v) for k, v in d.get("counts", {}).items()},
        query_column=str(d.get("query_column", "query")),
    )


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _floats(values: np.ndarray) -> list[float | None]:
    return [None if not math.isfinite(x) else float(x) for x in np.asarray(values, float)]


def _nan(v: Any) -> float:
    return float("nan") if v is None else float(v)


def _array(values: Any) -> np.ndarray:
    return np.array(values, dtype=float) if not len(values) or not isinstance(
        values[0], list) else np.array([[_nan(x) for x in row] for row in values])


def fit(logs: Logs, model: str = "dbn", *, prior: tuple[float, float] = (1.0, 1.0),
        max_rank: int = DEFAULT_MAX_RANK, max_iter: int = 1000, tol: float = 1e-8,
        searches: str = "searches", query: str = "query") -> ClickModelFit:
    """Fit a click model on the pages of a loaded log.

    Parameters
    ----------
    logs
        A log with ``searches.query`` and a results table: a :class:`~onlineeval.logs.Logs`,
        a log directory or a dict of tables (:func:`onlineeval.logs.as_logs`).
    model
        ``ctr``, ``pbm``, ``cascade``, ``dcm``, ``ubm``, ``sdbn`` or ``dbn``
        (:data:`onlineeval.clickmodels.MODELS`).
    prior
        Beta pseudo-counts (a, b) added to every probability estimated from counts (default
        (1, 1): one click and one skip); (0, 0) is plain maximum likelihood. A (query, doc)
        not seen in training gets a / (a + b).
    max_rank
        Ranks above it are not modelled (counted and warned about). Default 10.
    max_iter, tol
        EM stops after ``max_iter`` iterations or when an iteration raises the log
        posterior by less than ``tol`` relative to its size.
    searches
        The name of a view of the searches to fit on (default all of them).
    query
        The searches column taken as the query (default ``query``; e.g. ``qid``).
    """
    logs = as_logs(logs)
    patterns = read_patterns(logs, searches, max_rank, query)
    fitted = fit_patterns(patterns, model, prior=prior, max_rank=max_rank, max_iter=max_iter,
                          tol=tol)
    fitted.query_column = query
    return fitted


def fit_patterns(patterns: Patterns, model: str = "dbn", *,
                 prior: tuple[float, float] = (1.0, 1.0), max_rank: int = DEFAULT_MAX_RANK,
                 max_iter: int = 1000, tol: float = 1e-8) -> ClickModelFit:
    """:func:`fit` on patterns already read (:func:`~onlineeval.clickmodels.patterns.
    read_patterns`)."""
    name = MODELS.canonical(model)
    spec = MODELS.get(name)
    prior = check_prior(prior)
    max_rank = check_max_rank(max_rank)
    max_iter, tol = check_iterations(max_iter, tol)
    if patterns.n_patterns == 0:
        raise InputError("no page to fit the click model on: every page lacks a query or "
                         "results (see the warnings above)")
    params, trace = spec.fit(patterns, prior, max_iter, tol)
    bound = spec.bind(params, patterns, patterns.pair, prior)
    ll = float((patterns.weight * spec.log_likelihood(bound, patterns)).sum())
    pairs = patterns.pairs[["query", "doc_id"]].copy()
    pairs["impressions"] = _pair_count(patterns, patterns.mask)
    pairs["clicks"] = _pair_count(patterns, patterns.mask & patterns.click)
    return ClickModelFit(
        model=name, params=params, pairs=pairs, prior=prior, max_rank=max_rank, trace=trace,
        log_likelihood=ll, pages=patterns.pages, n_patterns=patterns.n_patterns,
        position_bias=_position_bias(spec.examination(bound, patterns), patterns),
        counts=dict(patterns.counts),
    )


def _pair_count(pat: Patterns, where: np.ndarray) -> np.ndarray:
    return np.rint(pair_sums(pat, where, 1.0)).astype(np.int64)


def _per_rank(pat: Patterns, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ranks shown, the pages showing each, and the page-weighted sum of ``values``."""
    size = pat.max_rank + 1
    pages = rank_sums(pat, pat.mask, 1.0, size)
    total = rank_sums(pat, pat.mask, values, size)
    ranks = np.nonzero(pages)[0]
    return ranks, pages, total


def _position_bias(exam: np.ndarray, pat: Patterns) -> pd.DataFrame:
    ranks, pages, total = _per_rank(pat, exam)
    mean = total[ranks] / pages[ranks]
    first = mean[0] if len(ranks) and ranks[0] == 1 else float("nan")
    return pd.DataFrame({"rank": ranks, "pages": np.rint(pages[ranks]).astype(np.int64),
                         "examination": mean, "relative": mean / first})


def evaluate(fitted: ClickModelFit, pat: Patterns) -> Evaluation:
    """Log-likelihood and perplexity of ``fitted`` on the patterns ``pat``."""
    spec = fitted.spec
    index = _fitted_index(fitted.pairs, pat)
    bound = spec.bind(fitted.params, pat, index, fitted.prior)
    ll = spec.log_likelihood(bound, pat)
    probs = spec.click_probs(bound, pat)
    with np.errstate(divide="ignore", invalid="ignore"):
        log2p = np.where(pat.click, np.log2(probs), np.log2(1 - probs))
    ranks, pages, total = _per_rank(pat, log2p)
    per_rank = 2.0 ** (-total[ranks] / pages[ranks])
    m = pat.mask
    w = np.broadcast_to(pat.weight[:, None], pat.rank.shape)
    unseen = (index < 0) & m
    return Evaluation(
        model=fitted.model, pages=pat.pages,
        log_likelihood=float((pat.weight * ll).sum()),
        perplexity=float(per_rank.mean()) if len(ranks) else float("nan"),
        perplexity_by_rank=pd.DataFrame({"rank": ranks,
                                         "pages": np.rint(pages[ranks]).astype(np.int64),
                                         "perplexity": per_rank}),
        unseen=int(round(float(w[unseen].sum()))),
        impressions=int(round(float(w[m].sum()))),
        impossible_pages=int(round(float(pat.weight[np.isneginf(ll)].sum()))),
    )


def _fitted_index(pairs: pd.DataFrame, pat: Patterns) -> np.ndarray:
    """For each position of ``pat``, the row of ``pairs`` with its (query, doc_id); -1 when
    the fit has no such pair (or past the end of the page)."""
    fitted = pd.MultiIndex.from_arrays([pairs["query"], pairs["doc_id"]])
    wanted = pd.MultiIndex.from_arrays([pat.pairs["query"], pat.pairs["doc_id"]])
    lookup = fitted.get_indexer(wanted) if len(wanted) else np.zeros(0, dtype=np.int64)
    out = np.full(pat.pair.shape, -1, dtype=np.int64)
    ok = pat.pair >= 0
    out[ok] = lookup[pat.pair[ok]]
    return out
