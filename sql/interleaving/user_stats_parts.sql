-- name: interleaving/user_stats_parts
-- computes: interleaving/user_stats from its rows over disjoint buckets of users (DuckDB
--   reads a large page-outcomes view one bucket of users at a time, see the bucketed switch
--   of interleaving/page_outcomes): each user's pages are all in one bucket, so the rows of
--   the buckets together are the rows over all pages. Python wrapper:
--   onlineeval.interleaving.outcomes.user_stats.
-- grain: one row per (experiment, {{by}}, team_a, team_b, user_id), as interleaving/user_stats
-- engines: duckdb (the buckets are DuckDB's)
-- params: none
-- identifiers: parts
-- parts: the tables holding interleaving/user_stats of each bucket
-- outputs: the columns of interleaving/user_stats with their types.
SELECT * FROM (
    {{parts:SELECT * FROM @| UNION ALL }}
) AS parts
