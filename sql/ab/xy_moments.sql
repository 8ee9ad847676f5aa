-- name: ab/xy_moments
-- computes: per variant and key, the moments over units of a per-unit pair (x, y) — a
--   numerator and a denominator — that the delta method (onlineeval.stats.moments.ratio) and
--   Welch's t need: the number of units, the means and the sample (co)variances. One row
--   per (variant, key) leaves DuckDB however many units there are; Python reads them with
--   onlineeval.abtest.over_time.moments_of.
-- grain: one row per (variant, key) of rows
-- params: none
-- identifiers: rows
-- rows: a view with one row per unit and key: columns variant, key, x, y (ab/over_time_units,
--   ab/quantile_cdf_units).
-- outputs: variant VARCHAR, key (as in rows), n BIGINT (units), n_den BIGINT (units with a
--   nonzero y), mean_x, mean_y DOUBLE, var_x, var_y, cov_xy DOUBLE (var_samp / covar_samp:
--   ddof 1, computed by DuckDB without the cancellation of raw sums of squares; NULL below
--   2 units).
SELECT
    variant,
    key,
    count(*) AS n,
    count(*) FILTER (WHERE y <> 0) AS n_den,
    avg(x) AS mean_x,
    avg(y) AS mean_y,
    var_samp(x) AS var_x,
    var_samp(y) AS var_y,
    covar_samp(x, y) AS cov_xy
FROM {{rows}}
GROUP BY variant, key
ORDER BY variant, key
