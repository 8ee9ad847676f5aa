-- name: ab/aa_unit_days
-- computes: the per-unit rows of the A/A harness (onlineeval.abtest.aa_test): each unit's
--   cumulative numerator and denominator at each day, read from the rows of
--   ab/over_time_units (cumulative), the one definition of the sums by day. Python
--   re-randomises the units by salted hashes and reduces them to moments per split and look.
-- grain: one row per (unit, day), from the unit's first exposure day to the last day
-- params: none
-- identifiers: rows
-- rows: a view of ab/over_time_units with cumulative (columns unit, variant, key, x, y)
-- outputs: unit VARCHAR (the unit as text), variant VARCHAR, key DATE, x DOUBLE, y DOUBLE; ordered by unit
--   and key
SELECT CAST(unit AS VARCHAR) AS unit, variant, key, x, y
FROM {{rows}}
ORDER BY unit, key
