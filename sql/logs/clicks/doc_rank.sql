-- name: logs/clicks/doc_rank
-- computes: per page and document, the highest-placed rank that shows it (view
--   _oe_doc_rank): the rank a click logged with a doc_id but no rank is given, so one click
--   is credited once when the page shows the document twice.
-- grain: one row per (search_id, doc_id) of the clean results
-- params: none
-- identifiers: none
-- requires: the clean results view.
-- outputs: search_id, doc_id, rank (the smallest)
SELECT search_id, doc_id, min(rank) AS rank
FROM results
GROUP BY search_id, doc_id
