"""Seeded synthetic click logs for bench/online_bench.py (canonical Parquet tables).

Generated inside DuckDB from a hash of (seed, row number), so the same seed gives the same
files and generation never holds the logs in Python memory. Shape per search: 10 results
(3% zero-result pages with none), ~45% of pages clicked (some twice), 20% of clicks without
dwell, users with ~10 searches spread over a week with gaps around the 30-minute boundary.
With ``sessions=True`` the searches also carry a ``session_id`` (the given-sessions case):
each user's searches in index order fall into sessions of 1 to 4 (not the 30-minute rule,
so neighbouring sessions of a user may overlap in time).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

# u(k): a uniform in [0, 1) from hash(seed, i, k); deterministic for a given DuckDB version.
_U = "(hash($seed, i, {k}) % 1000000) / 1000000.0"


def _u(k: int) -> str:
    return _U.format(k=k)


SEARCHES = f"""
SELECT
    's' || i AS search_id,
    'u' || (i // 10) AS user_id,
    TIMESTAMP '2024-03-04 00:00:00'
        + to_seconds(((i // 10) * 7919) % (6 * 86400))
        + to_seconds((i % 10) * 900 + floor({_u(1)} * 1500)::BIGINT) AS ts,
    'q' || CASE WHEN {_u(2)} < 0.3 THEN (i // 10) % 50000 ELSE floor({_u(3)} * 50000)::BIGINT END
        AS query,
    'exp1' AS experiment,
    CASE WHEN hash($seed, i // 10) % 2 = 0 THEN 'control' ELSE 'treatment' END AS variant,
    CASE WHEN {_u(4)} < 0.03 THEN 0 ELSE 10 END::INTEGER AS n_results
    {{session_id}}
FROM range($n) AS t(i)
"""

# the given-sessions case: a session number per user from the search's index and a per-user
# offset (sessions of 1..4 searches)
SESSION_ID = ", 'u' || (i // 10) || '-' || ((i % 10 + hash($seed, i // 10, 11) % 3) // 4) " \
    "AS session_id"

RESULTS = f"""
SELECT 's' || i AS search_id, r::INTEGER AS rank,
       'd' || (hash($seed, i, r) % 1000000) AS doc_id
FROM range($n) AS t(i), range(1, 11) AS rr(r)
WHERE NOT ({_u(4)} < 0.03)
"""

CLICKS = f"""
WITH base AS (
    SELECT i, c,
        TIMESTAMP '2024-03-04 00:00:00'
            + to_seconds(((i // 10) * 7919) % (6 * 86400))
            + to_seconds((i % 10) * 900 + floor({_u(1)} * 1500)::BIGINT) AS sts
    FROM range($n) AS t(i), range(2) AS cc(c)
    WHERE NOT ({_u(4)} < 0.03)
      AND ((c = 0 AND {_u(5)} < 0.45) OR (c = 1 AND {_u(5)} < 0.12))
),
ranked AS (
    SELECT *, (1 + floor(pow(hash($seed, i, c, 6) % 1000000 / 1000000.0, 2) * 10))::INTEGER AS r
    FROM base
)
SELECT 's' || i AS search_id, r AS rank, 'd' || (hash($seed, i, r) % 1000000) AS doc_id,
       sts + to_seconds(3 + c * 40 + (hash($seed, i, c, 7) % 60)::BIGINT) AS ts,
       CASE WHEN hash($seed, i, c, 8) % 5 = 0 THEN NULL
            ELSE (hash($seed, i, c, 9) % 120000)::DOUBLE END AS dwell_ms
FROM ranked
"""


def generate(n: int, outdir: Path, seed: int = 7, sessions: bool = False) -> Path:
    """Write searches/results/clicks.parquet with ``n`` searches under ``outdir`` (with
    ``sessions``, searches carry a session_id)."""
    outdir.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = false")
    searches = SEARCHES.replace("{session_id}", SESSION_ID if sessions else "")
    for name, sql in (("searches", searches), ("results", RESULTS), ("clicks", CLICKS)):
        target = outdir / f"{name}.parquet"
        if target.exists():
            continue
        tmp = outdir / f"{name}.parquet.tmp"
        con.sql(sql, params={"n": n, "seed": seed}).write_parquet(str(tmp))
        tmp.rename(target)
    con.close()
    return outdir
