-- name: interleaving/experiments
-- computes: the experiments that have interleaved pages (a search with a results row whose
--   team is not NULL), to name them when the one asked for has none.
-- grain: one row per distinct searches.experiment value of an interleaved page (NULL is one)
-- params: none
-- identifiers: none
-- requires: views searches(search_id, experiment), results(search_id, team) of
--   onlineeval.load_logs.
-- outputs: experiment, sorted (NULL last).
SELECT DISTINCT s.experiment
FROM searches AS s
JOIN results AS r ON r.search_id = s.search_id
WHERE r.team IS NOT NULL
ORDER BY 1
