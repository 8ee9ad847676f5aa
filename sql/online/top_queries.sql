-- name: online/top_queries
-- computes: the most frequent queries per group, with their users and CTR.
-- grain: one row per group and query, the $n most searched queries of each group
-- searches: the searches view with its time buckets (online/time_buckets)
-- params: n
-- identifiers: by, searches
-- requires: views searches(search_id, user_id, query, ts, group columns), clicks(search_id);
--   group columns may be searches columns or the time buckets __hour, __day, __week.
-- outputs: the by columns, position (1 = most searched; ties broken by query text), query,
--   searches = searches with that query, users = distinct users who searched it,
--   ctr = searches with >= 1 click / searches.
-- edge cases: searches without a query are left out.
WITH
s AS (
    SELECT * FROM {{searches}}
    WHERE query IS NOT NULL
),
clicked AS (
    SELECT DISTINCT search_id FROM clicks
),
per_query AS (
    SELECT {{by:s.,}} s.query,
        count(*) AS searches,
        count(DISTINCT s.user_id) AS users,
        count(c.search_id) AS clicked
    FROM s
    LEFT JOIN clicked AS c ON s.search_id = c.search_id
    GROUP BY ALL
),
ranked AS (
    SELECT *,
        row_number() OVER (PARTITION BY {{by,}} NULL ORDER BY searches DESC, query) AS position
    FROM per_query
)
SELECT {{by,}} position, query, searches, users, clicked / searches AS ctr
FROM ranked
WHERE position <= $n
ORDER BY {{by,}} position
