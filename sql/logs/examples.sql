-- name: logs/examples
-- computes: a few rows excluded for one reason, shown by strict mode.
-- grain: at most 3 rows
-- params: reason
-- identifiers: classified, columns
-- classified: a classified view (logs/<table>/classified).
-- columns: the table's canonical columns the log provides.
-- outputs: the columns
SELECT {{columns}}
FROM {{classified}}
WHERE _oe_reason = $reason
LIMIT 3
