-- name: logs/searches/classified
-- computes: every searches row with the reason it is excluded, in the fixed order of
--   onlineeval.logs.report.REASONS: null_required, then duplicate_search_id; NULL when the
--   row is kept. Read for the strict-mode examples and the excluded ids.
-- grain: one row per row of the searches source
-- params: none
-- identifiers: source
-- switches: dup
-- source: the flagged searches (logs/searches/flag).
-- dup: some search_id is repeated (the helper table _oe_dup_search_ids exists).
-- outputs: every column of the source, then _oe_reason VARCHAR.
SELECT s.*,
    CASE
        WHEN s._oe_null THEN 'null_required'
        {{#dup}}WHEN d.search_id IS NOT NULL THEN 'duplicate_search_id'{{/dup}}
    END AS _oe_reason
FROM {{source}} AS s
{{#dup}}LEFT JOIN _oe_dup_search_ids AS d ON s.search_id = d.search_id{{/dup}}
