-- name: logs/results/unknown_searches
-- computes: pass 1 over results whose footers show every row valid: the rows of an excluded
--   search and those of an unknown one (the search_id join alone: one column read).
-- grain: one row
-- params: none
-- identifiers: source
-- switches: excluded
-- source: the typed view of the results (onlineeval.logs.tables.Table.typed).
-- excluded: the helper table _oe_excluded_search_ids exists.
-- requires: the view _oe_base_searches (logs/searches/kept).
-- outputs: search_excluded, unknown_search BIGINT.
SELECT
    count(*) FILTER (WHERE k.search_id IS NULL
        AND {{#excluded}}e.search_id IS NOT NULL{{/excluded}}{{^excluded}}false{{/excluded}})
        AS search_excluded,
    count(*) FILTER (WHERE k.search_id IS NULL
        AND NOT {{#excluded}}e.search_id IS NOT NULL{{/excluded}}{{^excluded}}false{{/excluded}})
        AS unknown_search
FROM {{source}} AS r
LEFT JOIN _oe_base_searches AS k ON r.search_id = k.search_id
{{#excluded}}LEFT JOIN _oe_excluded_search_ids AS e ON r.search_id = e.search_id{{/excluded}}
