-- name: ab/excluded_counts
-- computes: what the outcome of an A/B readout leaves out, from the rows of ab/unit_sums by
--   exposure, aggregated in DuckDB for callers that never fetch the per-unit rows (effect
--   over time, quantiles): the searches of each period other than 'exp', and the units with
--   exposures in more than one variant with their exposures (onlineeval.abtest.units
--   .EXCLUDED names the counts; unit_arrays counts the same from fetched rows).
-- grain: one row per period other than 'exp' present in unit_rows, plus one row
--   'multi_variant'
-- params: none
-- identifiers: unit_rows
-- unit_rows: a view of the rows of ab/unit_sums by exposure.
-- requires: columns unit, period, variant, searches of unit_rows.
-- outputs: period VARCHAR, searches BIGINT, units BIGINT (NULL except on 'multi_variant').
WITH
multi AS (
    SELECT unit, sum(searches) AS searches
    FROM {{unit_rows}}
    WHERE period = 'exp'
    GROUP BY unit
    HAVING count(DISTINCT variant) > 1
)
SELECT period, CAST(sum(searches) AS BIGINT) AS searches, CAST(NULL AS BIGINT) AS units
FROM {{unit_rows}}
WHERE period <> 'exp'
GROUP BY period
UNION ALL
SELECT 'multi_variant', CAST(coalesce(sum(searches), 0) AS BIGINT), count(*)
FROM multi
