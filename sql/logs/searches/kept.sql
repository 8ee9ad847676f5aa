-- name: logs/searches/kept
-- computes: the kept searches (view _oe_base_searches), which results and clicks are checked
--   against: every row but those lacking a required value and those of a repeated id. Only
--   the kinds of problem that occur add a filter or an anti-join.
-- grain: one row per kept search
-- params: none
-- identifiers: source
-- switches: dup, nulls
-- source: the flagged searches (logs/searches/flag).
-- dup: some search_id is repeated (the helper table _oe_dup_search_ids exists).
-- nulls: some row lacks a required value.
-- outputs: every column of the source.
SELECT s.*
FROM {{source}} AS s
{{#dup}}ANTI JOIN _oe_dup_search_ids AS d ON s.search_id = d.search_id{{/dup}}
{{#nulls}}WHERE NOT s._oe_null{{/nulls}}
