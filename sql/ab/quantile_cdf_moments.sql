-- name: ab/quantile_cdf_moments
-- computes: for each request (variant, threshold), the moments over the variant's units of
--   the per-unit count of values at or below the threshold (x) and of values (y): the
--   empirical CDF at the threshold is sum(x) / sum(y), a ratio metric whose delta-method
--   variance respects the clustering of searches in units (Deng, Knoblich & Lu 2018; Python:
--   onlineeval.stats.quantile). One row per request leaves DuckDB.
-- grain: one row per distinct requested (variant, threshold)
-- params: variants, thresholds
-- identifiers: rows
-- rows: a view of ab/exposure_rows over ab/unit_sums by exposure keyed by the value column
--   (one row per unit, variant and value, with its searches).
-- variants, thresholds: lists of equal length; request i is (variants[i], thresholds[i]).
-- units: those of the variant with at least one value.
-- values: a value is the key cast to DOUBLE; NULL and NaN are no value.
-- outputs: variant VARCHAR, threshold DOUBLE, n BIGINT (units), n_den BIGINT (units with a
--   value: all of them), mean_x, mean_y DOUBLE, var_x, var_y, cov_xy DOUBLE (var_samp /
--   covar_samp over the units: ddof 1, NULL below 2 units).
WITH
requests AS (
    SELECT DISTINCT
        unnest(CAST($variants AS VARCHAR[])) AS variant,
        unnest(CAST($thresholds AS DOUBLE[])) AS threshold
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
SELECT
    variant,
    threshold,
    count(*) AS n,
    count(*) FILTER (WHERE y <> 0) AS n_den,
    avg(x) AS mean_x,
    avg(y) AS mean_y,
    var_samp(x) AS var_x,
    var_samp(y) AS var_y,
    covar_samp(x, y) AS cov_xy
FROM per_unit
GROUP BY variant, threshold
ORDER BY variant, threshold
