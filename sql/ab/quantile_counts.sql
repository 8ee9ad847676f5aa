-- name: ab/quantile_counts
-- computes: per variant, how many per-search values a quantile of onlineeval.abtest
--   .quantile_effects rests on: the values (searches with a value), the units with at least
--   one value and the searches without one (e.g. no timed click: no time to first click).
-- grain: one row per variant of rows
-- params: none
-- identifiers: rows
-- rows: a view of ab/exposure_rows over ab/unit_sums by exposure keyed by the value column
--   (one row per unit, variant and value, with its searches).
-- values: a value is the key cast to DOUBLE; NULL and NaN are no value.
-- outputs: variant VARCHAR, n_values BIGINT, units_with_values BIGINT, units BIGINT,
--   searches_without_value BIGINT.
WITH
marked AS (
    SELECT unit, variant, searches,
        key IS NOT NULL AND NOT isnan(CAST(key AS DOUBLE)) AS has_value
    FROM {{rows}}
)
SELECT
    variant,
    coalesce(sum(searches) FILTER (WHERE has_value), 0) AS n_values,
    count(DISTINCT unit) FILTER (WHERE has_value) AS units_with_values,
    count(DISTINCT unit) AS units,
    coalesce(sum(searches) FILTER (WHERE NOT has_value), 0) AS searches_without_value
FROM marked
GROUP BY variant
ORDER BY variant
