-- name: online/experiments
-- computes: the experiments of the log, as text, to check an experiment name and to warn
--   when a readout would pool several.
-- grain: one row per distinct non-NULL searches.experiment value
-- params: none
-- identifiers: none
-- requires: the searches view of onlineeval.load_logs.
-- outputs: experiment VARCHAR, sorted.
SELECT DISTINCT CAST(experiment AS VARCHAR) AS experiment
FROM searches
WHERE experiment IS NOT NULL
ORDER BY 1
