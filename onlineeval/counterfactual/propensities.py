"""Examination propensities per rank: read from a file or table, or measured on the log."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from onlineeval.errors import InputError, InvalidParameterError, SchemaError

if TYPE_CHECKING:
    from onlineeval.clickmodels import ClickModelFit


def read_propensities(source: str | Path | pd.DataFrame | dict[int, float]) -> np.ndarray:
    """Propensities per rank from a CSV file (columns rank, propensity), a DataFrame of those
    columns or ``{rank: propensity}``; returns an array indexed by rank (NaN where absent,
    0 where given as 0)."""
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
    if df.empty:
        raise InputError(f"{where}: no propensity given; list one per rank")
    rank = pd.to_numeric(df["rank"], errors="coerce")
    prop = pd.to_numeric(df["propensity"], errors="coerce")
    # 0 is allowed: a rank never examined, whose clicks no weight can carry (the estimate
    # counts and reports what was shown there); a negative value is a mistake
    bad = rank.isna() | (rank < 1) | (rank != rank.round()) | prop.isna() | ~(prop >= 0) | \
        ~np.isfinite(prop)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{where}: row {i + 2 if where != 'the propensities' else i + 1}: "
                         f"rank must be a whole number >= 1 and propensity a finite number >= "
                         f"0; got rank {df['rank'].iloc[i]!r}, propensity "
                         f"{df['propensity'].iloc[i]!r}")
    if rank.duplicated().any():
        raise InputError(f"{where}: rank {int(rank[rank.duplicated()].iloc[0])} is listed "
                         "twice")
    out = np.full(int(rank.max()) + 1, np.nan)
    out[rank.astype(int).to_numpy()] = prop.to_numpy(float)
    return out


def from_position_bias(position_bias: pd.DataFrame) -> np.ndarray:
    """The ``relative`` column of a click model's or harvest's table, indexed by rank."""
    ranks = position_bias["rank"].to_numpy(int)
    out = np.full(int(ranks.max()) + 1 if len(ranks) else 1, np.nan)
    rel = position_bias["relative"].to_numpy(float)
    ok = np.isfinite(rel) & (rel > 0)
    out[ranks[ok]] = rel[ok]
    return out


def propensities_from(source: Any, pbm: Callable[[], ClickModelFit],
                      harvest: Callable[[], pd.DataFrame]) -> tuple[np.ndarray, str]:
    """The propensity array and a label saying where it came from. ``pbm`` gives the PBM
    fitted on the log (called when ``source`` is "pbm"), ``harvest`` the intervention
    harvesting table (when it is "harvested")."""
    if isinstance(source, str) and source == "pbm":
        return (from_position_bias(pbm().position_bias),
                "pbm (relative examination of a PBM fitted on the log)")
    if isinstance(source, str) and source == "harvested":
        return (from_position_bias(harvest()),
                "harvested (intervention harvesting on the log)")
    if isinstance(source, (dict, pd.DataFrame)):
        return read_propensities(source), "given"
    return read_propensities(source), f"file {source}"


def check_ranks(p: np.ndarray, k: int, what: str = "a propensity") -> None:
    """Every candidate rank 1..k needs a finite value > 0."""
    need = np.arange(1, k + 1)
    if p.size <= k or not np.all(np.isfinite(p[need]) & (p[need] > 0)):
        raise InvalidParameterError(
            f"clicks@{k} needs {what} > 0 for every rank 1..{k}; got "
            f"{[None if i >= p.size or not np.isfinite(p[i]) else float(p[i]) for i in need]}"
            f" (choose a smaller K, or give every rank up to K a value)")


def rank_table(p: np.ndarray, exam: np.ndarray | None, max_rank: int) -> pd.DataFrame:
    """The ``propensity`` table the SQL reads: rank 1..max(max_rank, len) with propensity and
    the click model's examination (NULL where unknown)."""
    top = max(max_rank, p.size - 1, 0 if exam is None else exam.size - 1)
    ranks = np.arange(1, top + 1)

    def column(a: np.ndarray | None) -> np.ndarray:
        out = np.full(len(ranks), np.nan)
        if a is not None:
            n = min(a.size - 1, top)
            out[:n] = a[1:n + 1]
        return out

    # nullable columns: an unknown value is NULL to the SQL, not NaN; a zero propensity
    # supports no slot, as a missing one
    prop = column(p)
    prop[~(prop > 0)] = np.nan
    return pd.DataFrame({"rank": ranks.astype(np.int32),
                         "propensity": pd.Series(prop).astype("Float64"),
                         "dm_exam": pd.Series(column(exam)).astype("Float64")})
