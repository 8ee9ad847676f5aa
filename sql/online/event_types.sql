-- name: online/event_types
-- computes: the event types of the clean events view with their number of events.
-- grain: one row per type
-- params: none
-- identifiers: none
-- requires: the clean view events(type) made by onlineeval.load_logs.
-- outputs: type VARCHAR, n BIGINT (ordered by type)
SELECT e.type, count(*) AS n
FROM events AS e
GROUP BY e.type
ORDER BY e.type
