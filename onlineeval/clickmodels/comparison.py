"""Train/test splits of a log and the comparison of click models on held-out pages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from onlineeval import queries
from onlineeval.clickmodels.fitting import fit_patterns
from onlineeval.clickmodels.models import MODELS, ORDER
from onlineeval.clickmodels.patterns import DEFAULT_MAX_RANK, read_patterns
from onlineeval.errors import InvalidParameterError, SchemaError

if TYPE_CHECKING:
    from onlineeval.logs import Logs

SPLITS = ("session", "query")


def split_searches(logs: Logs, test_share: float = 0.2, by: str = "session",
                   seed: int = 0, query: str = "query") -> tuple[str, str]:
    """Split the searches into a training and a test view by session (or by query).

    ``by="session"`` keeps each session whole on one side (the log's ``session_id``; a log
    without one — e.g. the Yandex sample — is split by page); ``by="query"`` keeps each query
    on one side, so the test pages ask queries never seen in training. The units are sorted
    and ``round(test_share * units)`` of them drawn for the test side by a permutation from
    ``numpy.random.default_rng(seed)``: the same log, share and seed always give the same
    split. Returns the names of the two temporary views (train, test) on ``logs.con``.
    """
    if by not in SPLITS:
        raise InvalidParameterError(f"split by must be one of {', '.join(SPLITS)}; got {by!r}")
    try:
        share = float(test_share)
    except (TypeError, ValueError):
        share = -1.0
    if not 0.0 < share < 1.0:
        raise InvalidParameterError(f"test_share must lie strictly between 0 and 1; "
                                    f"got {test_share!r}")
    if by == "query":
        unit = query
        if not (logs.has("searches", query) or query in logs.extra_columns("searches")):
            raise SchemaError(f"cannot split by query: the log {logs.source} has no "
                              f"searches.{query} column")
    else:
        unit = "session_id" if logs.has("searches", "session_id") else "search_id"
    q = queries.load("clickmodels/split_units")
    units = logs.con.execute(q.render(searches=["searches"], unit=[unit])).df()
    n = len(units)
    n_test = int(round(share * n))
    if n_test < 1 or n_test > n - 1:
        raise InvalidParameterError(
            f"a test share of {share} of {n} {unit} values leaves "
            f"{'no test' if n_test < 1 else 'no training'} unit; choose another share")
    order = np.random.default_rng(seed).permutation(n)
    is_test = np.zeros(n, dtype=bool)
    is_test[order[:n_test]] = True
    views = []
    view_q = queries.load("clickmodels/split_view")
    for side, chosen in (("train", ~is_test), ("test", is_test)):
        table = f"clickmodels_units_{side}"
        logs.con.register(table, units[chosen].reset_index(drop=True))
        view = f"clickmodels_{side}"
        queries.create(logs.con, view,
                       view_q.render(searches=["searches"], unit=[unit], units=[table]))
        views.append(view)
    return views[0], views[1]


@dataclass
class Comparison:
    """Click models fitted on the training pages and scored on the test pages.

    ``table``: one row per model — model, train_pages, test_pages, log_likelihood (test,
    natural log, summed over pages), log_likelihood_per_page, perplexity (mean over ranks),
    unseen_share (test impressions of a (query, doc) not in training), impossible_pages,
    iterations, converged. ``perplexity_by_rank``: model, rank, pages, perplexity.
    """

    table: pd.DataFrame
    perplexity_by_rank: pd.DataFrame
    split: str
    test_share: float
    seed: int


def compare(logs: Logs, models: Sequence[str] | str = ORDER, *, test_share: float = 0.2,
            by: str = "session", seed: int = 0, prior: tuple[float, float] = (1.0, 1.0),
            max_rank: int = DEFAULT_MAX_RANK, max_iter: int = 1000,
            tol: float = 1e-8, query: str = "query") -> Comparison:
    """Fit each model on a seeded training split and score it on the held-out pages."""
    names = [m.strip() for m in models.split(",")] if isinstance(models, str) else list(models)
    names = [MODELS.canonical(m) for m in names if m]
    if not names:
        raise InvalidParameterError("name at least one click model to compare")
    if len(set(names)) != len(names):
        raise InvalidParameterError(f"a model is named twice: {names}")
    train_view, test_view = split_searches(logs, test_share, by, seed, query)
    train = read_patterns(logs, train_view, max_rank, query)
    test = read_patterns(logs, test_view, max_rank, query)
    rows, per_rank = [], []
    for name in names:
        fitted = fit_patterns(train, name, prior=prior, max_rank=max_rank, max_iter=max_iter,
                              tol=tol)
        ev = fitted.evaluate(test)
        rows.append({
            "model": name, "train_pages": train.pages, "test_pages": test.pages,
            "log_likelihood": ev.log_likelihood,
            "log_likelihood_per_page": ev.log_likelihood_per_page,
            "perplexity": ev.perplexity,
            "unseen_share": ev.unseen / ev.impressions if ev.impressions else float("nan"),
            "impossible_pages": ev.impossible_pages,
            "iterations": fitted.trace.iterations, "converged": fitted.trace.converged,
        })
        pr = ev.perplexity_by_rank.copy()
        pr.insert(0, "model", name)
        per_rank.append(pr)
    return Comparison(table=pd.DataFrame(rows),
                      perplexity_by_rank=pd.concat(per_rank, ignore_index=True),
                      split=by, test_share=float(test_share), seed=seed)
