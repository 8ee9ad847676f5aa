-- name: online/queries_over_time
-- computes: search traffic per time bucket (and group): searches, users, distinct queries, CTR.
-- grain: one row per time bucket and group that has searches
-- searches: the searches view with its time buckets (online/time_buckets)
-- params: none
-- identifiers: by, searches
-- requires: views searches(search_id, user_id, query, ts, group columns), clicks(search_id);
--   the first by column is the time bucket __hour, __day or __week (date_trunc of ts;
--   weeks start on Monday).
-- outputs: the by columns, searches = count(*), users = count(DISTINCT user_id),
--   queries = count(DISTINCT query) (NULL queries not counted), ctr = searches with >= 1
--   click / searches.
WITH
s AS (
    SELECT * FROM {{searches}}
),
clicked AS (
    SELECT DISTINCT search_id FROM clicks
)
SELECT {{by:s.,}}
    count(*) AS searches,
    count(DISTINCT s.user_id) AS users,
    count(DISTINCT s.query) AS queries,
    count(c.search_id) / count(*) AS ctr
FROM s
LEFT JOIN clicked AS c ON s.search_id = c.search_id
GROUP BY ALL
ORDER BY ALL
