-- name: ab/over_time_moments
-- computes: the effect over time of onlineeval.abtest.effect_over_time: per variant and day,
--   the moments of one metric's per-unit numerator and denominator that the delta method
--   (or Welch's t) needs, so only a few rows per day leave DuckDB however many units there
--   are. Python turns them into the comparison (onlineeval.stats.tests).
-- grain: one row per (variant, day)
-- params: none
-- identifiers: unit_rows, num, den
-- switches: cumulative, per_unit
-- unit_rows: a view of the rows of ab/unit_sums by exposure with $daily (columns unit,
--   period, variant, day, exposure_day and the per-unit sums).
-- num, den: the metric's numerator and denominator columns of unit_rows. With per_unit the
--   metric is a per-unit mean: the denominator is 1 for every unit and den is not read.
-- units: a unit with exposures in more than one variant is left out (as in the readout);
--   every other unit with exposures counts in its variant.
-- cumulative: on, one row per calendar day d from the first to the last exposure day: the
--   units first exposed on or before d, each with the sums of its exposures on or before d
--   (a unit without searches on d keeps its sums so far). The last day's rows are therefore
--   the readout's per-unit sums. Off, one row per day since first exposure k (exposure_day
--   of ab/unit_sums): the units with exposures on their day k, with the sums of those
--   exposures only.
-- outputs: variant VARCHAR, day (DATE when cumulative, else INTEGER: the exposure day),
--   n BIGINT (units), n_den BIGINT (units with a nonzero denominator), mean_x, mean_y DOUBLE
--   (means of the per-unit numerator and denominator), var_x, var_y, cov_xy DOUBLE
--   (var_samp / covar_samp over the units: ddof 1, NULL below 2 units).
WITH
single AS (
    SELECT unit
    FROM {{unit_rows}}
    WHERE period = 'exp'
    GROUP BY unit
    HAVING count(DISTINCT variant) = 1
),
per_key AS (
    SELECT r.unit, r.variant,
        {{#cumulative}}r.day{{/cumulative}}{{^cumulative}}r.exposure_day{{/cumulative}} AS key,
        CAST(sum({{num:r.}}) AS DOUBLE) AS x,
        {{#per_unit}}CAST(1 AS DOUBLE){{/per_unit}}
        {{^per_unit}}CAST(sum({{den:r.}}) AS DOUBLE){{/per_unit}} AS y
    FROM {{unit_rows}} AS r
    JOIN single AS s ON s.unit = r.unit
    WHERE r.period = 'exp'
    GROUP BY r.unit, r.variant, key
){{#cumulative}},
running AS (
    SELECT unit, variant, key AS since,
        coalesce(lead(key) OVER w, (SELECT max(key) FROM per_key) + 1) AS until,
        sum(x) OVER w AS x,
        {{#per_unit}}y{{/per_unit}}{{^per_unit}}sum(y) OVER w{{/per_unit}} AS y
    FROM per_key
    WINDOW w AS (PARTITION BY unit ORDER BY key)
),
days AS (
    SELECT CAST(g.d AS DATE) AS key
    FROM (SELECT min(key) AS lo, max(key) AS hi FROM per_key) AS b,
        generate_series(CAST(b.lo AS TIMESTAMP), CAST(b.hi AS TIMESTAMP), INTERVAL 1 DAY)
            AS g(d)
),
unit_days AS (
    SELECT r.variant, d.key, r.x, r.y
    FROM running AS r
    JOIN days AS d ON d.key >= r.since AND d.key < r.until
){{/cumulative}}
SELECT
    variant,
    key AS day,
    count(*) AS n,
    count(*) FILTER (WHERE y <> 0) AS n_den,
    avg(x) AS mean_x,
    avg(y) AS mean_y,
    var_samp(x) AS var_x,
    var_samp(y) AS var_y,
    covar_samp(x, y) AS cov_xy
FROM {{#cumulative}}unit_days{{/cumulative}}{{^cumulative}}per_key{{/cumulative}}
GROUP BY variant, key
ORDER BY variant, day
