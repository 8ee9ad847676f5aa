-- name: logs/searches/excluded_ids
-- computes: the search_ids of excluded searches rows (stored as the helper table
--   _oe_excluded_search_ids), so that a result or click of such a search is counted as
--   search_excluded rather than unknown_search.
-- grain: one row per distinct search_id with an excluded row
-- params: none
-- identifiers: classified
-- classified: the classified searches (logs/searches/classified).
-- outputs: search_id
SELECT DISTINCT search_id
FROM {{classified}}
WHERE _oe_reason IS NOT NULL AND search_id IS NOT NULL
