-- name: logs/clicks/orphan_ids
-- computes: the search_ids of clicks whose search is excluded or unknown (stored as the
--   helper table _oe_clicks_bad_sids, which the clean view anti-joins).
-- grain: one row per distinct such search_id
-- params: none
-- identifiers: classified
-- classified: the clicks classified without the page test (logs/clicks/classified).
-- outputs: search_id
SELECT DISTINCT search_id
FROM {{classified}}
WHERE _oe_reason IN ('search_excluded', 'unknown_search')
