-- name: online/queries_over_time
-- computes: search traffic per time bucket (and group): searches, users, distinct queries and
--   the sums for the CTR (Python divides as the metric registry says: ctr = has_click /
--   searches).
-- grain: one row per time bucket and group that has searches
-- params: none
-- identifiers: by, source
-- source: the per-search facts without sessions (onlineeval.online.facts.click_facts) with
--   their time buckets (online/time_buckets): one row per search, has_click defined there.
-- requires: columns user_id, query, ts, has_click and the group columns of the source; the
--   first by column is the time bucket __hour, __day or __week (date_trunc of ts; weeks
--   start on Monday).
-- outputs: the by columns, searches = count(*), users = count(DISTINCT user_id),
--   queries = count(DISTINCT query) (NULL queries not counted), has_click = searches with
--   >= 1 click.
SELECT {{by,}}
    count(*) AS searches,
    count(DISTINCT user_id) AS users,
    count(DISTINCT query) AS queries,
    sum(has_click) AS has_click
FROM {{source}}
{{#by}}GROUP BY {{by}} ORDER BY {{by}}{{/by}}
