-- name: logs/searches/duplicate_ids
-- computes: the search_ids on more than one row (stored as the helper table
--   _oe_dup_search_ids, which the clean view anti-joins). An id is a duplicate whatever the
--   other columns of its rows hold: with a twin row (even one lacking its user), which row
--   is "the" page is unknowable, so no row of the id is kept.
-- grain: one row per repeated search_id
-- params: none
-- identifiers: source
-- source: the flagged searches (logs/searches/flag).
-- outputs: search_id, n BIGINT: rows of the id not already excluded as null_required (the
--   reason that comes first).
SELECT s.search_id, count(*) FILTER (WHERE NOT s._oe_null) AS n
FROM {{source}} AS s
WHERE s.search_id IS NOT NULL
GROUP BY s.search_id
HAVING count(*) > 1
