-- name: clickmodels/split_view
-- computes: the searches whose unit is one of a given list: one side of a train/test split
--   (onlineeval.clickmodels.compare.split_searches makes a view of it per side).
-- grain: one row per search (the rows of `searches`, unchanged)
-- params: none
-- identifiers: searches, unit, units
-- requires: the view named by `searches` with the column named by `unit`; the table named by
--   `units` with a column unit of the same type.
-- outputs: every column of `searches`.
SELECT s.*
FROM {{searches}} AS s
WHERE s.{{unit}} IN (SELECT u.unit FROM {{units}} AS u)
