-- name: interleaving/query_user_id
-- computes: the user_id of the user coded $user_code in comparison $comparison of
--   interleaving/query_user_codes (the readout names its heaviest user). Python wrapper:
--   onlineeval.interleaving.outcomes.query_user_stats.
-- grain: one row (none when no such user)
-- params: comparison, user_code
-- identifiers: codes
-- codes: the table holding interleaving/query_user_codes
-- outputs: user_id
SELECT user_id
FROM {{codes}}
WHERE comparison = $comparison AND user_code = $user_code
LIMIT 1
