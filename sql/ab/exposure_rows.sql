-- name: ab/exposure_rows
-- computes: the outcome rows of ab/unit_sums by exposure (period 'exp') of the units the
--   readout analyses: those with exposures in exactly one variant. A unit in several
--   variants has a broken assignment and belongs to no arm (onlineeval.abtest.units counts
--   it); the queries that aggregate these rows further in DuckDB (effect over time,
--   quantiles) read them through this one definition.
-- grain: one row per row of unit_rows with period 'exp' (per unit and variant, and per key
--   value or day when unit_rows has them) of a unit in one variant
-- params: none
-- identifiers: unit_rows
-- unit_rows: a view of the rows of ab/unit_sums by exposure.
-- requires: columns unit, period, variant of unit_rows.
-- outputs: the columns of unit_rows, unchanged.
WITH
single AS (
    SELECT unit
    FROM {{unit_rows}}
    WHERE period = 'exp'
    GROUP BY unit
    HAVING count(DISTINCT variant) = 1
)
SELECT r.*
FROM {{unit_rows}} AS r
JOIN single AS s ON s.unit = r.unit
WHERE r.period = 'exp'
