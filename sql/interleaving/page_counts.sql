-- name: interleaving/page_counts
-- computes: how many rows the interleaving/page_outcomes view has, and how many interleaved
--   pages it leaves out, from the pages and their experiments' team counts alone (no click is
--   credited; counting the view itself made DuckDB choose a plan that broke a 1 GB memory
--   limit on 10M pages). Python wrapper: onlineeval.interleaving.outcomes.page_outcomes.
-- grain: one row
-- params: experiment
-- identifiers: none
-- requires: views searches(search_id, experiment), results(search_id, team) as built by
--   onlineeval.load_logs.
-- interleaved page: as in interleaving/page_outcomes (a search of $experiment, or of every
--   experiment when it is NULL, with a results row whose team is not NULL).
-- formula: n = sum over pages of C(n_teams, 2), n_teams = distinct teams of the page's
--   experiment (the view has one row per page and team pair); lonely = pages whose
--   experiment has fewer than two teams (the view has no row for them).
-- outputs: n HUGEINT, lonely BIGINT.
WITH
pages AS (
    SELECT s.search_id, s.experiment
    FROM searches AS s
    SEMI JOIN results AS r ON r.search_id = s.search_id AND r.team IS NOT NULL
    WHERE CAST($experiment AS VARCHAR) IS NULL
       OR CAST(s.experiment AS VARCHAR) = CAST($experiment AS VARCHAR)
),
teams AS (
    SELECT p.experiment, count(DISTINCT r.team) AS n_teams
    FROM pages AS p
    JOIN results AS r ON r.search_id = p.search_id
    WHERE r.team IS NOT NULL
    GROUP BY p.experiment
)
SELECT
    sum(t.n_teams * (t.n_teams - 1) // 2) AS n,
    count(*) FILTER (WHERE t.n_teams < 2) AS lonely
FROM pages AS p
JOIN teams AS t ON t.experiment IS NOT DISTINCT FROM p.experiment
