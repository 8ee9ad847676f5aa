-- name: logs/results/flag
-- computes: the loader's check view of the results with _oe_null, the one definition of a
--   results row lacking a required value: search_id, rank or doc_id is NULL.
-- grain: one row per row of the results source
-- params: none
-- identifiers: source
-- source: the check view of the results (onlineeval.logs.tables.Table.check).
-- outputs: every column of the source, then _oe_null BOOLEAN. (logs/results/pass restates
--   this test inline; its header says why.)
SELECT r.*,
    (r.search_id IS NULL OR r.rank IS NULL OR r.doc_id IS NULL) AS _oe_null
FROM {{source}} AS r
