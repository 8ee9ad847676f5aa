"""Click patterns: the sufficient statistics every click model is fitted on.

A *pattern* is one query, the documents a page showed in rank order and which of them were
clicked; ``sql/clickmodels/patterns.sql`` groups the pages of a log into patterns in one pass,
so what reaches Python grows with the number of distinct patterns, not with the log. Here the
long rows become padded ``[patterns, positions]`` arrays the models compute on.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from onlineeval import queries
from onlineeval.errors import InvalidParameterError, SchemaError
from onlineeval.logs.coerce import as_logs
from onlineeval.progress import Elapsed

if TYPE_CHECKING:
    from onlineeval.logs import Logs

#: ranks beyond this are left out unless ``max_rank`` says otherwise (ten blue links, as in
#: the experiments of Chuklin et al. 2015)
DEFAULT_MAX_RANK = 10


@dataclass
class Patterns:
    """Distinct click patterns as padded arrays (one row per pattern, one column per position).

    ``pair[p, k]`` indexes :attr:`pairs` (the (query, doc_id) shown at position k, -1 past the
    end of the page), ``rank[p, k]`` is its rank (0 past the end), ``click[p, k]`` whether it
    was clicked, ``mask[p, k]`` whether the position exists, ``weight[p]`` how many pages have
    the pattern. Positions are the page's shown ranks in order, so a page whose ranks have a
    gap (1, 2, 4) is read as the list it showed.
    """

    pair: np.ndarray
    rank: np.ndarray
    click: np.ndarray
    mask: np.ndarray
    weight: np.ndarray
    pairs: pd.DataFrame
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def n_patterns(self) -> int:
        return int(self.weight.shape[0])

    @property
    def pages(self) -> int:
        return int(self.weight.sum())

    @property
    def max_rank(self) -> int:
        return int(self.rank.max()) if self.rank.size else 0

    def prev_click_rank(self) -> np.ndarray:
        """Rank of the nearest click above each position (0 when none), as UBM uses it."""
        clicked_rank = np.where(self.click & self.mask, self.rank, 0)
        running = np.maximum.accumulate(clicked_rank, axis=1)
        prev = np.zeros_like(self.rank)
        prev[:, 1:] = running[:, :-1]
        return prev

    def last_click(self) -> np.ndarray:
        """Position index (0-based) of the last click of each pattern, -1 without clicks."""
        c = self.click & self.mask
        k = c.shape[1]
        has = c.any(axis=1)
        return np.where(has, k - 1 - np.argmax(c[:, ::-1], axis=1), -1)

    def first_click(self) -> np.ndarray:
        """Position index (0-based) of the first click of each pattern, -1 without clicks."""
        c = self.click & self.mask
        return np.where(c.any(axis=1), np.argmax(c, axis=1), -1)

    def n_positions(self) -> np.ndarray:
        return self.mask.sum(axis=1)


def from_rows(rows: pd.DataFrame, counts: dict[str, int] | None = None) -> Patterns:
    """Build :class:`Patterns` from long rows (pattern_id, pages, rank, query, doc_id,
    clicked) ordered by pattern and rank, as ``clickmodels/patterns`` returns."""
    counts = dict(counts or {})
    if rows.empty:
        empty_i = np.zeros((0, 0), dtype=np.int64)
        return Patterns(empty_i, empty_i.copy(), np.zeros((0, 0), bool), np.zeros((0, 0), bool),
                        np.zeros(0), pd.DataFrame({"query": [], "doc_id": []}), counts)
    pid = rows["pattern_id"].to_numpy(np.int64)
    codes, uniques = pd.factorize(pid, sort=True)
    n_pat = len(uniques)
    # position = index of the row within its pattern (rows come ordered by pattern, rank)
    starts = np.r_[0, np.flatnonzero(np.diff(codes)) + 1]
    pos = np.arange(len(codes)) - np.repeat(starts, np.diff(np.r_[starts, len(codes)]))
    width = int(pos.max()) + 1
    pair_codes, pair_index = pd.MultiIndex.from_arrays(
        [rows["query"], rows["doc_id"]]).factorize()
    pair = np.full((n_pat, width), -1, dtype=np.int64)
    rank = np.zeros((n_pat, width), dtype=np.int64)
    click = np.zeros((n_pat, width), dtype=bool)
    mask = np.zeros((n_pat, width), dtype=bool)
    pair[codes, pos] = pair_codes
    rank[codes, pos] = rows["rank"].to_numpy(np.int64)
    click[codes, pos] = rows["clicked"].to_numpy(np.int64) == 1
    mask[codes, pos] = True
    weight = np.zeros(n_pat)
    weight[codes] = rows["pages"].to_numpy(np.float64)
    pairs = pd.DataFrame({"query": pair_index.get_level_values(0),
                          "doc_id": pair_index.get_level_values(1)})
    return Patterns(pair, rank, click, mask, weight, pairs, counts)


def check_max_rank(max_rank: Any) -> int:
    if isinstance(max_rank, bool) or not isinstance(max_rank, (int, np.integer)) or max_rank < 1:
        raise InvalidParameterError(f"max_rank must be a whole number >= 1; got {max_rank!r}")
    return int(max_rank)


def read_patterns(logs: Logs, searches: str = "searches",
                  max_rank: int = DEFAULT_MAX_RANK, query: str = "query") -> Patterns:
    """The click patterns of the pages in the view ``searches`` of ``logs``.

    ``query`` names the searches column whose values the models take as the query (default
    ``query``; e.g. ``qid`` when the log also carries topic ids).

    Pages without a query or without any result at ranks <= ``max_rank`` are left out; they
    are counted in ``Patterns.counts`` (with the results and clicks beyond ``max_rank``) and
    a warning says how many.
    """
    logs = as_logs(logs)
    max_rank = check_max_rank(max_rank)
    if not logs.has_results:
        raise SchemaError(
            f"click models need the results table (the documents each page showed, in rank "
            f"order); the log {logs.source} has none. Add results.* (search_id, rank, doc_id)."
        )
    if not (logs.has("searches", query) or query in logs.extra_columns("searches")):
        raise SchemaError(
            f"click models estimate one attractiveness per (query, document); the log "
            f"{logs.source} has no searches.{query} column. Add it (or map a column to it "
            f"with columns={{'searches': {{'<name>': 'query'}}}}); searches columns: "
            f"{', '.join(logs.con.table('searches').columns)}"
        )
    count_q = queries.load("clickmodels/page_counts")
    counts_row = logs.con.execute(
        count_q.render(searches=[searches], query=[query]), count_q.bind(max_rank=max_rank)
    ).fetchone()
    names = ("pages", "no_query", "no_results", "used", "results_beyond_max_rank",
             "clicks_beyond_max_rank")
    counts = {n: int(v or 0) for n, v in zip(names, counts_row, strict=True)}
    q = queries.load("clickmodels/patterns")
    with Elapsed("grouping pages into click patterns"):
        rows = logs.con.execute(q.render(searches=[searches], query=[query]),
                                q.bind(max_rank=max_rank)).df()
    patterns = from_rows(rows, counts)
    _warn_left_out(counts, max_rank)
    return patterns


def _warn_left_out(counts: dict[str, int], max_rank: int) -> None:
    parts = []
    if counts["no_query"]:
        parts.append(f"{counts['no_query']} without a query")
    if counts["no_results"]:
        parts.append(f"{counts['no_results']} without results at ranks 1..{max_rank}")
    if parts:
        warnings.warn(
            f"click models: {counts['pages'] - counts['used']} of {counts['pages']} pages left "
            f"out ({'; '.join(parts)})", UserWarning, stacklevel=3)
    if counts["results_beyond_max_rank"]:
        warnings.warn(
            f"click models: {counts['results_beyond_max_rank']} results rows and "
            f"{counts['clicks_beyond_max_rank']} clicks at ranks beyond max_rank={max_rank} "
            f"are not modelled (raise max_rank to include them)", UserWarning, stacklevel=3)
