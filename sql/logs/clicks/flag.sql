-- name: logs/clicks/flag
-- computes: the loader's check view of the clicks with _oe_null, the one definition of a
--   click lacking a required value: search_id is NULL, or both rank and doc_id are (nothing
--   tells which result was clicked).
-- grain: one row per row of the clicks source
-- params: none
-- identifiers: source
-- source: the check view of the clicks (onlineeval.logs.tables.Table.check).
-- outputs: every column of the source, then _oe_null BOOLEAN.
SELECT c.*,
    (c.search_id IS NULL OR (c.rank IS NULL AND c.doc_id IS NULL)) AS _oe_null
FROM {{source}} AS c
