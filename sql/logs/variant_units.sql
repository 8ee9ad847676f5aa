-- name: logs/variant_units
-- computes: the experiments and variants of a loaded log (the clean searches view) with their
--   units and searches, for onlineeval validate; units_elsewhere counts the units of a row
--   that also have searches in another variant of the same experiment (a broken assignment,
--   which the A/B readout leaves out). A NULL experiment or variant is its own row.
--   Python wrapper: onlineeval.logs.describe.describe.
-- grain: one row per (experiment, variant) pair present in searches
-- params: none
-- identifiers: unit
-- unit: the randomization unit column of searches (user_id by default).
-- requires: the searches view of onlineeval.load_logs.
-- outputs: experiment VARCHAR, variant (the log's type), units, searches, units_elsewhere
--   BIGINT; sorted by experiment then variant, NULLs last.
WITH per_unit AS (
    SELECT experiment, variant, {{unit}} AS unit, count(*) AS searches
    FROM searches
    GROUP BY experiment, variant, {{unit}}
),
spread AS (
    SELECT experiment, unit, count(*) AS variants
    FROM per_unit
    WHERE variant IS NOT NULL
    GROUP BY experiment, unit
)
SELECT p.experiment, p.variant,
       count(p.unit) AS units,
       sum(p.searches) AS searches,
       count(p.unit) FILTER (WHERE s.variants > 1) AS units_elsewhere
FROM per_unit AS p
LEFT JOIN spread AS s
    ON p.experiment IS NOT DISTINCT FROM s.experiment AND p.unit = s.unit
    AND p.variant IS NOT NULL
GROUP BY p.experiment, p.variant
ORDER BY p.experiment NULLS LAST, p.variant NULLS LAST
