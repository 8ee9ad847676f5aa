-- name: interleaving/user_stats
-- computes: the sufficient statistics of the interleaving readout per randomization unit:
--   page counts, wins and ties of one user in one comparison. The readout sums them for the
--   totals and resamples users (rows) for the bootstrap CI. Python wrapper:
--   onlineeval.interleaving.outcomes.user_stats.
-- grain: one row per (experiment, {{by}}, team_a, team_b, user_id)
-- params: none
-- identifiers: by
-- by: extra grouping columns of interleaving_page_outcomes (variant, day, query)
-- requires: temp table interleaving_page_outcomes (the rows of interleaving/page_outcomes).
-- outputs: experiment, by columns, team_a, team_b, user_id, impressions BIGINT (pages),
--   impressions_with_clicks BIGINT (pages with any click row), wins_a, wins_b, ties BIGINT
--   (pages with outcome 'a', 'b', 'tie'), clicks_without_team, clicks_unmatched,
--   repeat_clicks BIGINT (sums of the page columns), one_sided_pages BIGINT (pages where
--   only one of the two teams placed a result: sum of the page column one_sided).
-- order: by experiment, by columns, team_a, team_b, user_id (NULLs last).
WITH
per_user AS (
    SELECT
        experiment, {{by,}} team_a, team_b, user_id,
        count(*) AS impressions,
        sum(has_click) AS impressions_with_clicks,
        count(*) FILTER (WHERE outcome = 'a') AS wins_a,
        count(*) FILTER (WHERE outcome = 'b') AS wins_b,
        count(*) FILTER (WHERE outcome = 'tie') AS ties,
        sum(clicks_without_team) AS clicks_without_team,
        sum(clicks_unmatched) AS clicks_unmatched,
        sum(repeat_clicks) AS repeat_clicks,
        sum(one_sided) AS one_sided_pages
    FROM interleaving_page_outcomes
    GROUP BY experiment, {{by,}} team_a, team_b, user_id
)
SELECT * FROM per_user
-- a fixed row order: the bootstrap numbers users by first appearance, so an order that
-- varied between runs (DuckDB's hash aggregation has none) would change the seeded CI
ORDER BY experiment, {{by,}} team_a, team_b, user_id
