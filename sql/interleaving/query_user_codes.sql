-- name: interleaving/query_user_codes
-- computes: the rows of the per-query readout with numbers for what its bootstrap draws by:
--   each row of interleaving/user_stats grouped by (query, {{by}}) with its comparison's
--   number and the query's and the user's codes within the comparison. The codes are the
--   first-appearance numbers of the rows in interleaving/user_stats' order (experiment,
--   {{by}}, query, team_a, team_b, user_id, NULLs last): within a comparison the queries in
--   their order, and each user at its smallest query, users of one smallest query in
--   user_id order. So the seeded bootstrap numbers the users as it did when it read those
--   rows in pandas, and Python fetches numbers instead of five strings a row. Python
--   wrapper: onlineeval.interleaving.outcomes.query_user_stats.
-- grain: one row per (experiment, {{by}}, query, team_a, team_b, user_id)
-- params: none
-- identifiers: stats, by
-- stats: the table holding interleaving/user_stats by ({{by}}, query)
-- by: the breakdown columns besides query (variant, day)
-- outputs: comparison BIGINT (1, 2, ... over the (experiment, {{by}}, team_a, team_b) in
--   their order, NULLs last), the columns of interleaving/user_stats, first_query (the
--   user's smallest query in the comparison), query_code INTEGER and user_code INTEGER
--   (0-based).
WITH
comparisons AS (
    SELECT
        experiment, {{by,}} team_a, team_b,
        row_number() OVER (ORDER BY experiment NULLS LAST, {{by:@ NULLS LAST,}}
                                    team_a NULLS LAST, team_b NULLS LAST) AS comparison
    FROM {{stats}}
    GROUP BY experiment, {{by,}} team_a, team_b
),
firsts AS (
    SELECT
        s.*,
        min(s.query) OVER (PARTITION BY s.experiment, {{by:s.@,}} s.team_a, s.team_b,
                                        s.user_id) AS first_query
    FROM {{stats}} AS s
)
SELECT
    c.comparison,
    f.*,
    CAST(dense_rank() OVER (PARTITION BY c.comparison ORDER BY f.query NULLS LAST) - 1
         AS INTEGER) AS query_code,
    CAST(dense_rank() OVER (PARTITION BY c.comparison
                            ORDER BY f.first_query NULLS LAST, f.user_id NULLS LAST) - 1
         AS INTEGER) AS user_code
FROM firsts AS f
JOIN comparisons AS c
  ON f.experiment IS NOT DISTINCT FROM c.experiment
 {{by:AND f.@ IS NOT DISTINCT FROM c.@|}}
 AND f.team_a IS NOT DISTINCT FROM c.team_a
 AND f.team_b IS NOT DISTINCT FROM c.team_b
