-- name: logs/events/pass
-- computes: the one pass over the events that validation needs: values that cannot be read
--   as their column's kind, values of each optional column (none at all: the column is
--   treated as absent), rows, and rows lacking a required value (logs/events/flag).
-- grain: one row
-- params: none
-- identifiers: source, bad, optional
-- source: the flagged events (logs/events/flag).
-- bad: the _oe_bad_<column> flags of the value-checked columns.
-- optional: the optional columns checked for having no value at all.
-- outputs, in this order: the rows flagged by each of bad; count(column) for each of
--   optional; rows, null_required BIGINT.
SELECT
    {{bad:count(*) FILTER (WHERE e.@),}}
    {{optional:count(e.@),}}
    count(*) AS rows,
    count(*) FILTER (WHERE e._oe_null) AS null_required
FROM {{source}} AS e
