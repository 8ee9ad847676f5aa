-- name: interleaving/query_user_rows
-- computes: what the per-query bootstrap of one comparison reads: per (query, user) row its
--   codes and its wins and ties, as numbers (interleaving/query_user_codes). Python
--   wrapper: onlineeval.interleaving.outcomes.query_user_stats.
-- grain: one row per (query, user) of comparison $comparison
-- params: comparison
-- identifiers: codes
-- codes: the table holding interleaving/query_user_codes
-- outputs: query_code INTEGER, user_code INTEGER, wins_a DOUBLE, wins_b DOUBLE, ties DOUBLE
--   (the caller orders them by query_code, user_code).
SELECT
    query_code,
    user_code,
    CAST(wins_a AS DOUBLE) AS wins_a,
    CAST(wins_b AS DOUBLE) AS wins_b,
    CAST(ties AS DOUBLE) AS ties
FROM {{codes}}
WHERE comparison = $comparison
