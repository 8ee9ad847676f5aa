-- name: interleaving/teams
-- computes: the teams of each experiment's interleaved pages in the window, which
--   interleaving/page_outcomes pairs (its teams CTE reads this relation: a view, or a table
--   DuckDB stores once when it reads the page outcomes in buckets, switch bucketed). Python
--   wrapper: onlineeval.interleaving.outcomes.page_outcomes.
-- grain: one row per (experiment, team)
-- params: experiment, win_start, win_end
-- identifiers: none
-- requires: views searches(search_id, experiment, ts), results(search_id, team) as built by
--   onlineeval.load_logs.
-- outputs: experiment, team (the distinct non-NULL results.team values on the searches of
--   $experiment, or of every experiment when it is NULL, with $win_start <= ts < $win_end;
--   a NULL bound: no bound).
SELECT DISTINCT s.experiment, r.team
FROM searches AS s
JOIN results AS r ON r.search_id = s.search_id
WHERE (CAST($experiment AS VARCHAR) IS NULL
       OR CAST(s.experiment AS VARCHAR) = CAST($experiment AS VARCHAR))
  AND (CAST($win_start AS TIMESTAMP) IS NULL OR s.ts >= CAST($win_start AS TIMESTAMP))
  AND (CAST($win_end AS TIMESTAMP) IS NULL OR s.ts < CAST($win_end AS TIMESTAMP))
  AND r.team IS NOT NULL
