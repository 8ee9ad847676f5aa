-- name: logs/events/clean
-- computes: the clean events view: every events row but those lacking a required value
--   (logs/events/flag), canonical columns only.
-- grain: one row per kept event
-- params: none
-- identifiers: source
-- switches: nulls
-- source: the flagged events (logs/events/flag).
-- nulls: some event lacks a required value.
-- outputs: user_id, ts, type, value, search_id, doc_id
SELECT e.user_id, e.ts, e.type, e.value, e.search_id, e.doc_id
FROM {{source}} AS e
{{#nulls}}WHERE NOT e._oe_null{{/nulls}}
