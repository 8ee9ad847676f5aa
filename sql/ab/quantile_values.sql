-- name: ab/quantile_values
-- computes: order statistics of the per-search values of each arm: for each request
--   (variant, rank), the rank-th smallest value of that variant's searches (ranks 1-based,
--   ties counted once per search). Python chooses the ranks (the quantile and the ends of its
--   interval, onlineeval.stats.quantile); the values are sorted inside DuckDB, and one row
--   per request leaves it.
-- grain: one row per distinct requested (variant, rank) with 1 <= rank <= the variant's values
-- params: none
-- identifiers: rows, requests
-- rows: a view of ab/exposure_rows over ab/unit_sums by exposure keyed by the value column
--   (one row per unit, variant and value, with its searches).
-- requests: a table of the requests, registered from Python (a table rather than bound
--   lists, which only DuckDB can unnest): variant VARCHAR, rank BIGINT; a request may repeat.
-- values: a value is the key cast to DOUBLE; NULL and NaN are no value.
-- outputs: variant VARCHAR, rank BIGINT, value DOUBLE.
WITH
counts AS (
    SELECT variant, CAST(key AS DOUBLE) AS value, sum(searches) AS cnt
    FROM {{rows}}
    WHERE key IS NOT NULL AND NOT isnan(CAST(key AS DOUBLE))
    GROUP BY variant, CAST(key AS DOUBLE)
),
running AS (
    SELECT variant, value,
        -- values are never NULL here; NULLS FIRST as BigQuery's running sums can order
        sum(cnt) OVER (PARTITION BY variant ORDER BY value NULLS FIRST) AS upto
    FROM counts
),
requests AS (
    SELECT DISTINCT variant, rank FROM {{requests}}
)
SELECT q.variant, q.rank, min(r.value) AS value
FROM requests AS q
JOIN running AS r ON r.variant = q.variant AND r.upto >= q.rank
GROUP BY q.variant, q.rank
ORDER BY q.variant, q.rank
