-- name: interleaving/query_user_comparisons
-- computes: the comparisons of the per-query readout with their page counts: the rows of
--   interleaving/query_user_codes added up per comparison. Python wrapper:
--   onlineeval.interleaving.outcomes.query_user_stats.
-- grain: one row per (experiment, {{by}}, team_a, team_b)
-- params: none
-- identifiers: codes, by
-- codes: the table holding interleaving/query_user_codes
-- by: the breakdown columns besides query (variant, day)
-- outputs: experiment, {{by}}, team_a, team_b, comparison BIGINT, and the sums of impressions, impressions_with_clicks, wins_a, wins_b, ties,
--   clicks_without_team, clicks_unmatched, repeat_clicks, one_sided_pages.
SELECT
    experiment, {{by,}} team_a, team_b, comparison,
    sum(impressions) AS impressions,
    sum(impressions_with_clicks) AS impressions_with_clicks,
    sum(wins_a) AS wins_a,
    sum(wins_b) AS wins_b,
    sum(ties) AS ties,
    sum(clicks_without_team) AS clicks_without_team,
    sum(clicks_unmatched) AS clicks_unmatched,
    sum(repeat_clicks) AS repeat_clicks,
    sum(one_sided_pages) AS one_sided_pages
FROM {{codes}}
GROUP BY experiment, {{by,}} team_a, team_b, comparison
