-- name: logs/searches/pass
-- computes: the one pass over the searches that validation needs: rows, rows lacking a
--   required value, distinct and non-NULL search_ids (fewer distinct than non-NULL: some id
--   is repeated), values of each optional column (none at all: the column is treated as
--   absent) and values that cannot be read as their column's kind.
-- grain: one row
-- params: none
-- identifiers: source, text_required, other_required, optional, bad
-- source: the check view of the searches (onlineeval.logs.tables.Table.check).
-- text_required, other_required: as for logs/searches/flag, whose test for a missing
--   required value is restated here inline, in an aggregate FILTER: DuckDB evaluates that
--   row by row, so the load reads every required column and a damaged page is found now.
--   (The flag column of a view is folded away when the file statistics prove it false, and
--   the column would then be read first by a later query.)
-- optional: the optional columns checked for having no value at all.
-- bad: the _oe_bad_<column> flags of the value-checked columns.
-- outputs, in this order: count(column) for each of optional; the rows flagged by each of
--   bad; rows, null_required, distinct_ids, ids BIGINT.
SELECT
    {{optional:count(s.@),}}
    {{bad:count(*) FILTER (WHERE s.@),}}
    count(*) AS rows,
    count(*) FILTER (WHERE
        {{text_required:(s.@ IS NULL OR s.@ = '') OR |}}{{other_required:s.@ IS NULL OR |}} false
    ) AS null_required,
    count(DISTINCT s.search_id) AS distinct_ids,
    count(s.search_id) AS ids
FROM {{source}} AS s
