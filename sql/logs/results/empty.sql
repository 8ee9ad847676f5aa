-- name: logs/results/empty
-- computes: the results view of a log without a results table: no rows, with the columns'
--   types those of the other tables (search_id as the searches', doc_id as the clicks').
-- grain: no rows
-- params: none
-- identifiers: searches, clicks
-- searches: the typed view of the searches (onlineeval.logs.tables.Table.typed); clicks:
--   that of the clicks.
-- outputs: search_id, rank INTEGER, doc_id, team VARCHAR
SELECT s.search_id, CAST(NULL AS INTEGER) AS rank, c.doc_id, CAST(NULL AS VARCHAR) AS team
FROM {{searches}} AS s
CROSS JOIN {{clicks}} AS c
WHERE false
