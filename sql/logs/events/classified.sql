-- name: logs/events/classified
-- computes: every events row with the reason it is excluded: null_required (see
--   logs/events/flag) or NULL when kept. An event whose search or user is not in the log is
--   kept here: attribution (online/attribution) counts it as unattributable, by reason.
-- grain: one row per row of the events source
-- params: none
-- identifiers: source
-- source: the flagged events (logs/events/flag).
-- outputs: every column of the source, then _oe_reason VARCHAR.
SELECT e.*,
    CASE WHEN e._oe_null THEN 'null_required' END AS _oe_reason
FROM {{source}} AS e
