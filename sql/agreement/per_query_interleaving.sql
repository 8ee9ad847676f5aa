-- name: agreement/per_query_interleaving
-- computes: per query (topic) of one interleaving comparison, the pages and outcomes from the
--   point of view of team $team against team $other: the sufficient statistics of Δ_q for
--   the within-experiment offline-online agreement. Only pages comparing exactly this pair
--   count: on multileaved pages (three or more teams) the other pairs are left out, so each
--   query has one row. Python wrapper (which computes Δ_q from these counts with the one
--   definition of the preference): onlineeval.interleaving.outcomes.per_query.
-- grain: one row per (experiment, query value) of the pair ($team, $other), plus one row with
--   qid NULL when some pages have no query value: it counts those pages (they name no topic,
--   so they are not a query: the wrapper gives it no Δ_q and reports the count instead of
--   pairing it with an offline query)
-- params: team, other
-- identifiers: query
-- query: the searches column naming the topic (qid when the log has it, else query)
-- requires: temp table interleaving_page_outcomes (interleaving/page_outcomes) and the
--   searches view of onlineeval.load_logs.
-- formula: wins_t = pages won by $team, wins_o = pages won by the other team, ties = tied
--   pages (Δ_q, from these: onlineeval.interleaving.significance.preference).
-- outputs: experiment, team, other_team, qid VARCHAR, pages BIGINT, wins_t BIGINT,
--   wins_o BIGINT, ties BIGINT
WITH
pages AS (
    SELECT
        p.experiment,
        CAST($team AS VARCHAR) AS team,
        CASE WHEN p.team_a = $team THEN p.team_b ELSE p.team_a END AS other_team,
        CAST({{query:s.}} AS VARCHAR) AS qid,
        CASE
            WHEN p.outcome = 'tie' THEN 'tie'
            WHEN (p.outcome = 'a' AND p.team_a = $team)
              OR (p.outcome = 'b' AND p.team_b = $team) THEN 'won'
            WHEN p.outcome IN ('a', 'b') THEN 'lost'
            ELSE 'none'
        END AS result
    FROM interleaving_page_outcomes AS p
    JOIN searches AS s ON s.search_id = p.search_id
    WHERE (p.team_a = $team AND p.team_b = $other) OR (p.team_a = $other AND p.team_b = $team)
)
SELECT
    experiment, team, other_team, qid,
    count(*) AS pages,
    count(*) FILTER (WHERE result = 'won') AS wins_t,
    count(*) FILTER (WHERE result = 'lost') AS wins_o,
    count(*) FILTER (WHERE result = 'tie') AS ties
FROM pages
GROUP BY experiment, team, other_team, qid
ORDER BY experiment, other_team, qid NULLS LAST
