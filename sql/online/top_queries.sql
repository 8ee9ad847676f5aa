-- name: online/top_queries
-- computes: the most frequent queries per group, with their users and the sums for their
--   CTR (Python divides as the metric registry says: ctr = has_click / searches).
-- grain: one row per group and query, the $n most searched queries of each group
-- params: n
-- identifiers: by, source
-- source: the per-search facts without sessions (onlineeval.online.facts.click_facts) with
--   their time buckets (online/time_buckets): one row per search, has_click defined there.
-- requires: columns search_id, user_id, query, has_click and the group columns of the source;
--   group columns may be searches columns or the time buckets __hour, __day, __week.
-- outputs: the by columns, position (1 = most searched; ties broken by query text), query,
--   searches = searches with that query, users = distinct users who searched it,
--   has_click = of those, searches with >= 1 click.
-- edge cases: searches without a query are left out.
WITH
per_query AS (
    SELECT {{by,}} query,
        count(*) AS searches,
        count(DISTINCT user_id) AS users,
        sum(has_click) AS has_click
    FROM {{source}}
    WHERE query IS NOT NULL
    GROUP BY {{by,}} query
),
ranked AS (
    SELECT *,
        row_number() OVER (PARTITION BY {{by,}} NULL ORDER BY searches DESC, query) AS position
    FROM per_query
)
SELECT {{by,}} position, query, searches, users, has_click
FROM ranked
WHERE position <= $n
ORDER BY {{by,}} position
