-- name: clickmodels/split_units
-- computes: the distinct units (sessions, pages or queries) a train/test split of the
--   searches draws from, sorted so that a seeded draw over them is reproducible. Python
--   wrapper: onlineeval.clickmodels.compare.split_searches.
-- grain: one row per unit
-- params: none
-- identifiers: searches, unit
-- requires: the view named by `searches` with the column named by `unit`.
-- outputs: unit (the column's values, NULL left out), in ascending order.
SELECT DISTINCT {{unit}} AS unit
FROM {{searches}}
WHERE {{unit}} IS NOT NULL
ORDER BY unit
