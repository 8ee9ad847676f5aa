-- name: logs/searches/pass
-- computes: the one pass over the searches that validation needs: rows, rows lacking a
--   required value, distinct and non-NULL search_ids (fewer distinct than non-NULL: some id
--   is repeated), values of each optional column (none at all: the column is treated as
--   absent) and values that cannot be read as their column's kind.
-- grain: one row
-- params: none
-- identifiers: source, optional, bad
-- source: the flagged searches (logs/searches/flag).
-- optional: the optional columns checked for having no value at all.
-- bad: the _oe_bad_<column> flags of the value-checked columns.
-- outputs, in this order: count(column) for each of optional; the rows flagged by each of
--   bad; rows, null_required, distinct_ids, ids BIGINT.
SELECT
    {{optional:count(s.@),}}
    {{bad:count(*) FILTER (WHERE s.@),}}
    count(*) AS rows,
    count(*) FILTER (WHERE s._oe_null) AS null_required,
    count(DISTINCT s.search_id) AS distinct_ids,
    count(s.search_id) AS ids
FROM {{source}} AS s
