-- name: online/time_buckets
-- computes: the rows of a searches-like table or view with the time buckets of its ts added,
--   so the online queries can group by hour, day or week of the search:
--   __hour = date_trunc('hour', ts), __day = date_trunc('day', ts),
--   __week = date_trunc('week', ts) (weeks start on Monday). A NULL ts gives NULL buckets.
--   The one definition of the buckets; onlineeval.online.grouping.TIME_BUCKETS names them.
-- grain: one row per row of the source
-- params: none
-- identifiers: source
-- requires: a TIMESTAMP column ts in the source (the searches view, or the per-search facts)
-- outputs: every column of the source, then __hour, __day, __week
SELECT
    *,
    date_trunc('hour', ts) AS __hour,
    date_trunc('day', ts) AS __day,
    date_trunc('week', ts) AS __week
FROM {{source}}
