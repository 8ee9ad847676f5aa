-- name: ab/over_time_units
-- computes: the per-unit rows of the effect over time (onlineeval.abtest.effect_over_time):
--   per unit and day, one metric's per-unit numerator and denominator. They stay in DuckDB:
--   ab/xy_moments reduces them to each arm's moments per day, and only those rows (a few
--   per day, however many units) reach Python, which makes the comparison
--   (onlineeval.stats.tests).
-- grain: one row per (unit, day) (cumulative: each day from the unit's first exposure day
--   to the last exposure day)
-- params: none
-- identifiers: unit_rows, num, den, calendar, pre_rows
-- switches: cumulative, per_unit, cuped
-- unit_rows: a view of ab/exposure_rows over ab/unit_sums by exposure with $daily (the
--   outcome rows of the analysed units: columns unit, variant, day, exposure_day and the
--   per-unit sums).
-- num, den: the metric's numerator and denominator columns of unit_rows. With per_unit the
--   metric is a per-unit mean: the denominator is 1 for every unit and den is not read.
-- calendar: (cumulative) a table of the keys a cumulative row may take, registered from
--   Python (engines differ in how they generate a series): key DATE (hourly: TIMESTAMP,
--   each hour's start), every day (hour) from the first to the last key of unit_rows, and
--   possibly more, outside that range, which no row takes.
-- cumulative: on, one row per calendar day d from the first to the last exposure day: the
--   units first exposed on or before d, each with the sums of its exposures on or before d
--   (a unit without searches on d keeps its sums so far). The last day's rows are therefore
--   the readout's per-unit sums. Off, one row per day since first exposure k (exposure_day
--   of ab/unit_sums): the units with exposures on their day k, with the sums of those
--   exposures only.
-- hourly: with unit_rows made with $hourly (and a calendar of hours), the keys are hours:
--   one row per hour instead of per day, key the hour's start, a TIMESTAMP.
-- cuped: (with cumulative) add each unit's pre-period sums, read from pre_rows: the view of
--   ab/unit_sums by exposure with $cuped that unit_rows was made from (its rows of period
--   'pre': one per unit, the searches before the unit's first exposure). A unit's pre-period
--   ends at its first exposure, so it is the same at every key the unit has a row for: what a
--   look at that key already knows, never data from after it.
-- outputs: unit, variant VARCHAR, key (the day: DATE when cumulative, else the INTEGER exposure
--   day), x DOUBLE, y DOUBLE (the unit's numerator and denominator); with cuped, px, py
--   DOUBLE (the same numerator and denominator over the unit's pre-period; with per_unit py
--   is h) and h DOUBLE (1 when the unit has a pre-period row, else 0, with px = py = 0): the
--   CUPED covariates of onlineeval.stats.cuped.
WITH
per_key AS (
    SELECT r.unit, r.variant,
        {{#cumulative}}r.day{{/cumulative}}{{^cumulative}}r.exposure_day{{/cumulative}} AS key,
        CAST(sum({{num:r.}}) AS DOUBLE) AS x,
        {{#per_unit}}CAST(1 AS DOUBLE){{/per_unit}}
        {{^per_unit}}CAST(sum({{den:r.}}) AS DOUBLE){{/per_unit}} AS y
    FROM {{unit_rows}} AS r
    GROUP BY r.unit, r.variant, key
){{#cumulative}},
running AS (
    SELECT unit, variant, key AS since,
        lead(key) OVER w AS until,
        sum(x) OVER w AS x,
        {{#per_unit}}y{{/per_unit}}{{^per_unit}}sum(y) OVER w{{/per_unit}} AS y
    FROM per_key
    WINDOW w AS (PARTITION BY unit ORDER BY key)
),
days AS (
    SELECT c.key
    FROM {{calendar}} AS c
    WHERE c.key <= (SELECT max(key) FROM per_key)
),
unit_days AS (
    SELECT r.unit, r.variant, d.key, r.x, r.y
    FROM running AS r
    JOIN days AS d ON d.key >= r.since AND (r.until IS NULL OR d.key < r.until)
){{/cumulative}}{{#cuped}},
pre AS (
    SELECT p.unit,
        CAST(sum({{num:p.}}) AS DOUBLE) AS px,
        {{#per_unit}}CAST(1 AS DOUBLE){{/per_unit}}
        {{^per_unit}}CAST(sum({{den:p.}}) AS DOUBLE){{/per_unit}} AS py
    FROM {{pre_rows}} AS p
    WHERE p.period = 'pre'
    GROUP BY p.unit
){{/cuped}}
SELECT u.unit, u.variant, u.key, u.x, u.y{{#cuped}},
    coalesce(p.px, CAST(0 AS DOUBLE)) AS px,
    coalesce(p.py, CAST(0 AS DOUBLE)) AS py,
    CASE WHEN p.unit IS NULL THEN CAST(0 AS DOUBLE) ELSE CAST(1 AS DOUBLE) END AS h{{/cuped}}
FROM {{#cumulative}}unit_days{{/cumulative}}{{^cumulative}}per_key{{/cumulative}} AS u
{{#cuped}}LEFT JOIN pre AS p ON p.unit = u.unit{{/cuped}}
