-- name: logs/clicks/pass
-- computes: the first pass over the clicks alone: rows, clicks with only a rank or only a
--   doc_id (which decide the joins that check and fill them), values that cannot be read as
--   their column's kind, values of each optional column.
-- grain: one row
-- params: none
-- identifiers: source, bad, optional
-- source: the check view of the clicks (onlineeval.logs.tables.Table.check).
-- outputs, in this order: the rows flagged by each of bad; count(column) for each of
--   optional; rows, rank_only, doc_only BIGINT.
SELECT
    {{bad:count(*) FILTER (WHERE c.@),}}
    {{optional:count(c.@),}}
    count(*) AS rows,
    count(*) FILTER (WHERE c.rank IS NOT NULL AND c.doc_id IS NULL) AS rank_only,
    count(*) FILTER (WHERE c.rank IS NULL AND c.doc_id IS NOT NULL) AS doc_only
FROM {{source}} AS c
