-- name: logs/clicks/classified
-- computes: every clicks row with the reason it is excluded, in the fixed order of
--   onlineeval.logs.report.REASONS: null_required, rank_below_1, search_excluded (its
--   search's rows were excluded) or unknown_search, then (with page) not_on_page; NULL when
--   kept.
-- grain: one row per row of the clicks source
-- params: none
-- identifiers: source
-- switches: excluded, page
-- source: the flagged clicks (logs/clicks/flag), or with page the clicks with their on-page
--   test (logs/clicks/on_page).
-- excluded: the helper table _oe_excluded_search_ids exists.
-- page: the log has results, so a click can be off its page.
-- requires: the view _oe_base_searches (logs/searches/kept).
-- outputs: every column of the source, then _oe_reason VARCHAR.
SELECT c.*,
    CASE
        WHEN c._oe_null THEN 'null_required'
        WHEN c.rank < 1 THEN 'rank_below_1'
        WHEN k.search_id IS NULL THEN
            {{#excluded}}
            CASE WHEN e.search_id IS NOT NULL THEN 'search_excluded' ELSE 'unknown_search' END
            {{/excluded}}
            {{^excluded}}'unknown_search'{{/excluded}}
        {{#page}}WHEN NOT c._oe_on_page THEN 'not_on_page'{{/page}}
    END AS _oe_reason
FROM {{source}} AS c
LEFT JOIN _oe_base_searches AS k ON c.search_id = k.search_id
{{#excluded}}LEFT JOIN _oe_excluded_search_ids AS e ON c.search_id = e.search_id{{/excluded}}
