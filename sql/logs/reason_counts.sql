-- name: logs/reason_counts
-- computes: the excluded rows of a classified table per reason (each row has at most one).
-- grain: one row per reason that occurs
-- params: none
-- identifiers: classified
-- classified: a classified view (logs/<table>/classified).
-- outputs: reason VARCHAR, n BIGINT
SELECT _oe_reason AS reason, count(*) AS n
FROM {{classified}}
WHERE _oe_reason IS NOT NULL
GROUP BY _oe_reason
