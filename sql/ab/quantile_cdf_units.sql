-- name: ab/quantile_cdf_units
-- computes: for each request (variant, threshold), per unit of the variant, the count of
--   values at or below the threshold (x) and of values (y): the empirical CDF at the
--   threshold is sum(x) / sum(y), a ratio metric whose delta-method variance respects the
--   clustering of searches in units (Deng, Knoblich & Lu 2018; Python:
--   onlineeval.stats.quantile). The rows stay in DuckDB: ab/xy_moments reduces them to one
--   row per request.
-- grain: one row per distinct requested (variant, threshold) and unit of the variant with
--   a value
-- params: none
-- identifiers: rows, requests
-- rows: a view of ab/exposure_rows over ab/unit_sums by exposure keyed by the value column
--   (one row per unit, variant and value, with its searches).
-- requests: a table of the requests, registered from Python (a table rather than bound
--   lists, which only DuckDB can unnest): variant VARCHAR, threshold DOUBLE; a request may
--   repeat.
-- units: those of the variant with at least one value.
-- values: a value is the key cast to DOUBLE; NULL and NaN are no value.
-- outputs: variant VARCHAR, key DOUBLE (the threshold), x DOUBLE, y DOUBLE.
WITH
requests AS (
    SELECT DISTINCT variant, threshold FROM {{requests}}
),
per_unit AS (
    SELECT q.variant, q.threshold, r.unit,
        CAST(coalesce(sum(r.searches) FILTER (WHERE CAST(r.key AS DOUBLE) <= q.threshold), 0)
            AS DOUBLE) AS x,
        CAST(sum(r.searches) AS DOUBLE) AS y
    FROM {{rows}} AS r
    JOIN requests AS q ON q.variant = r.variant
    WHERE r.key IS NOT NULL AND NOT isnan(CAST(r.key AS DOUBLE))
    GROUP BY q.variant, q.threshold, r.unit
)
SELECT variant, threshold AS key, x, y
FROM per_unit
