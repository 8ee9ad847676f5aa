-- name: logs/clicks/pass
-- computes: the first pass over the clicks alone: rows, clicks with only a rank or only a
--   doc_id (which decide the joins that check and fill them), values that cannot be read as
--   their column's kind, values of each optional column, and the clicks excluded for the two
--   reasons that need no other table (lacking a required value; else a rank below 1, the
--   order of logs/clicks/classified). When no click is off its page, these two are all the
--   clicks' exclusions (onlineeval.logs.validate._search_reasons says why), and the clicks
--   need no join with the searches.
-- grain: one row
-- params: none
-- identifiers: source, bad, optional
-- source: the flagged clicks (logs/clicks/flag).
-- outputs, in this order: the rows flagged by each of bad; count(column) for each of
--   optional; rows, rank_only, doc_only, null_required, rank_below_1 BIGINT.
SELECT
    {{bad:count(*) FILTER (WHERE c.@),}}
    {{optional:count(c.@),}}
    count(*) AS rows,
    count(*) FILTER (WHERE c.rank IS NOT NULL AND c.doc_id IS NULL) AS rank_only,
    count(*) FILTER (WHERE c.rank IS NULL AND c.doc_id IS NOT NULL) AS doc_only,
    count(*) FILTER (WHERE c._oe_null) AS null_required,
    count(*) FILTER (WHERE NOT c._oe_null AND c.rank < 1) AS rank_below_1
FROM {{source}} AS c
