-- name: online/attribution_counts
-- computes: the events of an attribution view per rule (attributed) and per reason
--   (unattributable); each event has exactly one of the two.
-- grain: one row per (rule, reason) that occurs
-- params: none
-- identifiers: attribution
-- attribution: a view of online/attribution.
-- outputs: rule VARCHAR, reason VARCHAR, n BIGINT
SELECT a.rule, a.reason, count(*) AS n
FROM {{attribution}} AS a
GROUP BY a.rule, a.reason
