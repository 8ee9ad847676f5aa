-- name: logs/clicks/off_page_keys
-- computes: the (search_id, rank, doc_id) of the clicks not on their page (stored as the
--   helper table _oe_clicks_bad_keys, which the clean view anti-joins, NULLs matching).
-- grain: one row per distinct key
-- params: none
-- identifiers: classified
-- classified: the clicks classified with the page test (logs/clicks/classified).
-- outputs: search_id, rank, doc_id
SELECT DISTINCT search_id, rank, doc_id
FROM {{classified}}
WHERE _oe_reason = 'not_on_page'
