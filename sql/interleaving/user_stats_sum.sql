-- name: interleaving/user_stats_sum
-- computes: interleaving/user_stats from its rows over disjoint buckets of pages (DuckDB
--   reads a large page-outcomes view one bucket at a time, see the bucketed switch of
--   interleaving/page_outcomes): every column is a sum over a user's pages, so the user's
--   rows of the buckets add up to the user's row over all pages. Python wrapper:
--   onlineeval.interleaving.outcomes.user_stats.
-- grain: one row per (experiment, {{by}}, team_a, team_b, user_id), as interleaving/user_stats
-- params: none
-- identifiers: by, parts
-- by: the grouping columns the parts were computed with
-- parts: the tables holding interleaving/user_stats of each bucket
-- outputs: the columns of interleaving/user_stats with their types (the counts of pages
--   BIGINT, the sums of page columns as user_stats sums them).
-- order: as interleaving/user_stats.
WITH
parts AS (
    {{parts:SELECT * FROM @| UNION ALL }}
)
SELECT
    experiment, {{by,}} team_a, team_b, user_id,
    CAST(sum(impressions) AS BIGINT) AS impressions,
    sum(impressions_with_clicks) AS impressions_with_clicks,
    CAST(sum(wins_a) AS BIGINT) AS wins_a,
    CAST(sum(wins_b) AS BIGINT) AS wins_b,
    CAST(sum(ties) AS BIGINT) AS ties,
    sum(clicks_without_team) AS clicks_without_team,
    sum(clicks_unmatched) AS clicks_unmatched,
    sum(repeat_clicks) AS repeat_clicks,
    sum(one_sided_pages) AS one_sided_pages
FROM parts
GROUP BY experiment, {{by,}} team_a, team_b, user_id
ORDER BY experiment, {{by,}} team_a, team_b, user_id
