-- name: ab/arm_rows
-- computes: one arm's per-unit rows for the A/B readout (onlineeval.abtest.units
--   .load_units with columns): the chosen per-unit sums of the arm's units, as DOUBLE, in
--   unit order, and with $cuped each unit's pre-period sums beside them (0 without a
--   pre-period row) and has_pre. Only the columns a readout's metrics need leave DuckDB,
--   never the unit values or the rows of other periods.
-- grain: one row per unit of exposure_rows in variant $variant
-- params: variant
-- identifiers: exposure_rows, unit_rows, sums, pre
-- switches: cuped
-- exposure_rows: the view of ab/exposure_rows over unit_rows (outcome rows of the units in
--   one variant).
-- unit_rows: the rows of ab/unit_sums by exposure (its 'pre' rows: one per unit).
-- sums: the per-unit sums wanted (columns of unit_rows; at least one).
-- pre: with $cuped, (sum, pre_<sum>) for each of sums: the column and its output name.
-- requires: columns unit, variant, period and the sums of unit_rows.
-- outputs, in this order: for each of sums, its value (DOUBLE); with $cuped, for each of
--   sums pre_<sum> (DOUBLE, the unit's pre-period sum, 0 without a pre-period row or for a
--   NULL sum) and has_pre (DOUBLE, 1 with a pre-period row, else 0). Ordered by unit.
SELECT
    {{sums:CAST(e.@ AS DOUBLE) AS @}}
    {{#cuped}},
    {{pre:coalesce(CAST(p.@1 AS DOUBLE), CAST(0 AS DOUBLE)) AS @2}},
    CAST(CASE WHEN p.unit IS NULL THEN 0 ELSE 1 END AS DOUBLE) AS has_pre
    {{/cuped}}
FROM {{exposure_rows}} AS e
{{#cuped}}
LEFT JOIN (SELECT * FROM {{unit_rows}} WHERE period = 'pre') AS p ON p.unit = e.unit
{{/cuped}}
WHERE e.variant = CAST($variant AS VARCHAR)
ORDER BY e.unit
