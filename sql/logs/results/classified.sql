-- name: logs/results/classified
-- computes: every results row with the reason it is excluded, in the fixed order of
--   onlineeval.logs.report.REASONS: null_required, rank_below_1, duplicate_rank, then
--   search_excluded (its search's rows were excluded) or unknown_search; NULL when kept.
-- grain: one row per row of the results source
-- params: none
-- identifiers: source
-- switches: dup, excluded
-- source: the flagged results (logs/results/flag).
-- dup: the helper table _oe_dup_ranks exists and is not empty.
-- excluded: the helper table _oe_excluded_search_ids exists.
-- requires: the view _oe_base_searches (logs/searches/kept).
-- outputs: every column of the source, then _oe_reason VARCHAR.
SELECT r.*,
    CASE
        WHEN r._oe_null THEN 'null_required'
        WHEN r.rank < 1 THEN 'rank_below_1'
        {{#dup}}WHEN dr.search_id IS NOT NULL THEN 'duplicate_rank'{{/dup}}
        WHEN k.search_id IS NULL THEN
            {{#excluded}}
            CASE WHEN e.search_id IS NOT NULL THEN 'search_excluded' ELSE 'unknown_search' END
            {{/excluded}}
            {{^excluded}}'unknown_search'{{/excluded}}
    END AS _oe_reason
FROM {{source}} AS r
LEFT JOIN _oe_base_searches AS k ON r.search_id = k.search_id
{{#excluded}}LEFT JOIN _oe_excluded_search_ids AS e ON r.search_id = e.search_id{{/excluded}}
{{#dup}}
LEFT JOIN _oe_dup_ranks AS dr ON r.search_id = dr.search_id AND r.rank = dr.rank
{{/dup}}
