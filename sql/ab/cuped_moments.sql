-- name: ab/cuped_moments
-- computes: per variant and key, the moments over units that CUPED's delta method
--   (onlineeval.stats.cuped.cuped_compare) needs of a metric's per-unit numerator and
--   denominator and of their pre-period covariates: the number of units, the mean of each
--   column and the sample covariance of each pair. One row per (variant, key) leaves DuckDB
--   however many units there are (the sequential readout's CUPED at every look).
-- grain: one row per (variant, key) of rows
-- params: none
-- identifiers: rows, means, pairs
-- rows: a view with one row per unit and key: columns variant, key, y and the columns named
--   by means (ab/over_time_units with cuped: x, y, px, py, h).
-- means: the per-unit columns whose mean is wanted.
-- pairs: the (a, b) pairs of columns whose covariance is wanted.
-- outputs, in this order (Python reads them by position): variant VARCHAR, key (as in rows),
--   for each of means its avg (DOUBLE), for each of pairs its covar_samp (ddof 1, computed by
--   DuckDB without the cancellation of raw sums of squares; NULL below 2 units), n BIGINT
--   (units), n_den BIGINT (units with a nonzero y); ordered by variant and key.
SELECT
    variant,
    key,
    {{means:avg(@),}}
    {{pairs:covar_samp(@1, @2),}}
    count(*) AS n,
    count(*) FILTER (WHERE y <> 0) AS n_den
FROM {{rows}}
GROUP BY variant, key
ORDER BY variant, key
