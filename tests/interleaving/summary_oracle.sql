-- name: tests/interleaving/summary_oracle (a test oracle, not part of the package)
-- computes: the interleaving outcome per experiment and ranker pair, entirely in SQL, written
--   independently of the package's one definition of the preference
--   (onlineeval.interleaving.significance.preference), so that the tests can compare the
--   readout's numbers (from interleaving/user_stats) with a second implementation.
-- grain: one row per (experiment, {{by}}, team_a, team_b)
-- params: none
-- identifiers: by
-- by: extra grouping columns of interleaving_page_outcomes (variant, day)
-- requires: temp table interleaving_page_outcomes (the rows of interleaving/page_outcomes).
-- formula: Δ_AB = (wins_a + ties / 2) / (wins_a + wins_b + ties) - 0.5 (Chapelle et al. 2012),
--   NULL when no page is decided (wins_a + wins_b + ties = 0);
--   share_a = wins_a / (wins_a + wins_b), NULL when wins_a + wins_b = 0;
--   delta_ab_per_query: Δ_q computed with the same formula from the pages of each query
--   (pages with an unknown query form one group), then averaged over the queries that have
--   a decided page; NULL when none has.
-- outputs: experiment, by columns, team_a, team_b, impressions, impressions_with_clicks,
--   wins_a, wins_b, ties, delta_ab DOUBLE, share_a DOUBLE, queries_decided BIGINT,
--   delta_ab_per_query DOUBLE, clicks_without_team, clicks_unmatched, repeat_clicks,
--   one_sided_pages (pages where only one of the two teams placed a result).
WITH
per_query AS (
    SELECT
        experiment, {{by,}} team_a, team_b, query,
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
    GROUP BY experiment, {{by,}} team_a, team_b, query
),
totals AS (
    SELECT
        experiment, {{by,}} team_a, team_b,
        sum(impressions) AS impressions,
        sum(impressions_with_clicks) AS impressions_with_clicks,
        sum(wins_a) AS wins_a,
        sum(wins_b) AS wins_b,
        sum(ties) AS ties,
        count(*) FILTER (WHERE wins_a + wins_b + ties > 0) AS queries_decided,
        avg((wins_a + ties / 2.0) / (wins_a + wins_b + ties) - 0.5)
            FILTER (WHERE wins_a + wins_b + ties > 0) AS delta_ab_per_query,
        sum(clicks_without_team) AS clicks_without_team,
        sum(clicks_unmatched) AS clicks_unmatched,
        sum(repeat_clicks) AS repeat_clicks,
        sum(one_sided_pages) AS one_sided_pages
    FROM per_query
    GROUP BY experiment, {{by,}} team_a, team_b
)
SELECT
    experiment, {{by,}} team_a, team_b,
    impressions, impressions_with_clicks, wins_a, wins_b, ties,
    CASE WHEN wins_a + wins_b + ties > 0
         THEN (wins_a + ties / 2.0) / (wins_a + wins_b + ties) - 0.5 END AS delta_ab,
    CASE WHEN wins_a + wins_b > 0 THEN wins_a / (wins_a + wins_b) END AS share_a,
    queries_decided, delta_ab_per_query,
    clicks_without_team, clicks_unmatched, repeat_clicks, one_sided_pages
FROM totals
