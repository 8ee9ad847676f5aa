"""An independent click simulator and exact likelihood for the click-model tests.

Each model is written once here as a *generative program*: a plain loop over the ranks that
asks ``draw(p)`` for every coin it tosses. Run with a random ``draw`` it simulates pages; run
under :func:`distribution`, which branches on every coin, it gives the exact probability of
every click vector of a page. Nothing here shares code with ``onlineeval.clickmodels`` (no
forward-backward, no closed forms), so agreeing numbers are a real check.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

import onlineeval


class _Branch(Exception):
    def __init__(self, p: float) -> None:
        self.p = p


def program(model: str, params: dict[str, Any], query: str, docs: list[str],
            draw: Callable[[float], bool]) -> tuple[int, ...]:
    """The click vector one user produces on one page, tossing coins with ``draw``."""
    clicks = [0] * len(docs)
    alpha = params.get("alpha", {})
    if model == "ctr":
        for i in range(len(docs)):
            clicks[i] = int(draw(params["ctr"][i + 1]))
    elif model == "pbm":
        for i, d in enumerate(docs):
            clicks[i] = int(draw(params["exam"][i + 1] * alpha[query, d]))
    elif model == "ubm":
        prev = 0
        for i, d in enumerate(docs):
            r = i + 1
            if draw(params["exam"][r, r - prev] * alpha[query, d]):
                clicks[i] = 1
                prev = r
    else:  # cascade family: examine top down
        for i, d in enumerate(docs):
            r = i + 1
            if draw(alpha[query, d]):
                clicks[i] = 1
                if model == "cascade":
                    break
                if model == "dcm":
                    if not draw(params["lam"][r]):
                        break
                    continue
                if draw(params["sigma"][query, d]):
                    break
            if model in ("dbn",) and i + 1 < len(docs) and not draw(params["gamma"]):
                break
    return tuple(clicks)


def distribution(model: str, params: dict[str, Any], query: str, docs: list[str]
                 ) -> dict[tuple[int, ...], float]:
    """Exact P(click vector) by branching on every coin the program tosses."""
    out: dict[tuple[int, ...], float] = defaultdict(float)

    def explore(prefix: list[bool], prob: float) -> None:
        it = iter(prefix)

        def draw(p: float) -> bool:
            try:
                return next(it)
            except StopIteration:
                raise _Branch(p) from None

        try:
            vec = program(model, params, query, docs, draw)
        except _Branch as b:
            if b.p > 0:
                explore(prefix + [True], prob * b.p)
            if b.p < 1:
                explore(prefix + [False], prob * (1 - b.p))
            return
        out[vec] += prob

    explore([], 1.0)
    return dict(out)


def simulate_pages(model: str, params: dict[str, Any], queries: dict[str, list[str]],
                   n_pages: int, k: int, seed: int) -> list[tuple[str, list[str], tuple]]:
    """Pages with a random query and a random ranking of k of its documents."""
    rng = np.random.default_rng(seed)
    names = sorted(queries)
    pages = []
    for _ in range(n_pages):
        q = names[rng.integers(len(names))]
        docs = [queries[q][j] for j in rng.permutation(len(queries[q]))[:k]]
        pages.append((q, docs, program(model, params, q, docs, lambda p: rng.random() < p)))
    return pages


def tables(pages: list[tuple[str, list[str], tuple]]) -> dict[str, pd.DataFrame]:
    """The canonical searches/results/clicks tables of a list of pages."""
    s, r, c = [], [], []
    for i, (q, docs, clicks) in enumerate(pages):
        sid = f"s{i:07d}"
        s.append((sid, f"u{i:07d}", q))
        for j, d in enumerate(docs):
            r.append((sid, j + 1, d))
            if clicks[j]:
                c.append((sid, j + 1))
    return {"searches": pd.DataFrame(s, columns=["search_id", "user_id", "query"]),
            "results": pd.DataFrame(r, columns=["search_id", "rank", "doc_id"]),
            "clicks": pd.DataFrame(c, columns=["search_id", "rank"])}


def load(pages: list[tuple[str, list[str], tuple]]) -> Any:
    t = tables(pages)
    if t["clicks"].empty:
        t["clicks"] = pd.DataFrame({"search_id": ["nothing"], "rank": [1]})
    return onlineeval.load_logs(**t)


def log_likelihood(model: str, params: dict[str, Any],
                   pages: list[tuple[str, list[str], tuple]]) -> float:
    total = 0.0
    cache: dict[tuple, dict] = {}
    for q, docs, clicks in pages:
        key = (q, tuple(docs))
        if key not in cache:
            cache[key] = distribution(model, params, q, docs)
        p = cache[key].get(tuple(clicks), 0.0)
        total += np.log(p) if p > 0 else -np.inf
    return total


def marginals(model: str, params: dict[str, Any], query: str, docs: list[str]) -> np.ndarray:
    """P(C_r = 1) per rank from the exact distribution."""
    out = np.zeros(len(docs))
    for vec, p in distribution(model, params, query, docs).items():
        out += p * np.asarray(vec)
    return out


@pytest.fixture(scope="session")
def sim() -> SimpleNamespace:
    return SimpleNamespace(program=program, distribution=distribution,
                           simulate_pages=simulate_pages, tables=tables, load=load,
                           log_likelihood=log_likelihood, marginals=marginals)
