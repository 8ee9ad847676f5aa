-- name: ab/variants
-- computes: the variant names of one experiment (of the whole log when $experiment is NULL),
--   as text, to check the control and treatment names.
-- grain: one row per distinct non-NULL searches.variant value
-- params: experiment
-- identifiers: none
-- requires: the searches view of onlineeval.load_logs.
-- outputs: variant VARCHAR, sorted.
SELECT DISTINCT CAST(variant AS VARCHAR) AS variant
FROM searches
WHERE variant IS NOT NULL
  AND (CAST($experiment AS VARCHAR) IS NULL
       OR CAST(experiment AS VARCHAR) = CAST($experiment AS VARCHAR))
ORDER BY 1
