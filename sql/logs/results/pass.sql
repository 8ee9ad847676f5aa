-- name: logs/results/pass
-- computes: pass 1 over the results, each row joined to the kept searches: rows, rows lacking
--   a required value, ranks below 1, valid rows of an excluded search and of an unknown
--   one, values that cannot be read as their column's kind, values of each optional column.
-- grain: one row
-- params: none
-- identifiers: source, bad, optional
-- switches: excluded
-- source: the check view of the results (onlineeval.logs.tables.Table.check).
-- null: the test of logs/results/flag for a missing required value is restated here
--   inline, in aggregate FILTERs: DuckDB evaluates those row by row, so the load reads every
--   required column and a damaged page is found now (a flag column of a view is folded away
--   when the file statistics prove it false).
-- excluded: some searches rows were excluded (the helper table _oe_excluded_search_ids
--   exists); without it no results row can be of an excluded search.
-- requires: the view _oe_base_searches (logs/searches/kept).
-- outputs, in this order: the rows flagged by each of bad; count(column) for each of
--   optional; rows, null_required, rank_below_1, search_excluded, unknown_search BIGINT.
SELECT
    {{bad:count(*) FILTER (WHERE r.@),}}
    {{optional:count(r.@),}}
    count(*) AS rows,
    count(*) FILTER (WHERE r.search_id IS NULL OR r.rank IS NULL OR r.doc_id IS NULL)
        AS null_required,
    count(*) FILTER (WHERE NOT (r.search_id IS NULL OR r.rank IS NULL OR r.doc_id IS NULL)
        AND r.rank < 1) AS rank_below_1,
    count(*) FILTER (WHERE NOT (r.search_id IS NULL OR r.rank IS NULL OR r.doc_id IS NULL)
        AND r.rank >= 1 AND k.search_id IS NULL
        AND {{#excluded}}e.search_id IS NOT NULL{{/excluded}}{{^excluded}}false{{/excluded}})
        AS search_excluded,
    count(*) FILTER (WHERE NOT (r.search_id IS NULL OR r.rank IS NULL OR r.doc_id IS NULL)
        AND r.rank >= 1 AND k.search_id IS NULL
        AND NOT {{#excluded}}e.search_id IS NOT NULL{{/excluded}}{{^excluded}}false{{/excluded}})
        AS unknown_search
FROM {{source}} AS r
LEFT JOIN _oe_base_searches AS k ON r.search_id = k.search_id
{{#excluded}}LEFT JOIN _oe_excluded_search_ids AS e ON r.search_id = e.search_id{{/excluded}}
