-- name: ab/aa_unit_days
-- computes: the per-unit rows of the A/A harness (onlineeval.abtest.aa_test): each unit's
--   cumulative numerator and denominator at each day, read from the rows of
--   ab/over_time_units (cumulative), the one definition of the sums by day. Python
--   re-randomises the units by salted hashes and reduces them to moments per split and look.
-- grain: one row per (unit, day), from the unit's first exposure day to the last day (or per
--   (unit, hour) with hourly looks)
-- params: none
-- identifiers: rows
-- switches: cuped
-- rows: a view of ab/over_time_units with cumulative (columns unit, variant, key, x, y; with
--   cuped also px, py, h, the unit's pre-period covariates).
-- outputs: unit VARCHAR (the unit as text), variant VARCHAR, key DATE (hourly looks: the hour's
--   start, TIMESTAMP), x DOUBLE, y DOUBLE, and with cuped px, py, h DOUBLE; ordered by unit
--   and key
SELECT CAST(unit AS VARCHAR) AS unit, variant, key, x, y{{#cuped}}, px, py, h{{/cuped}}
FROM {{rows}}
ORDER BY unit, key
