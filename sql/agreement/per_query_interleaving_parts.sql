-- name: agreement/per_query_interleaving_parts
-- computes: agreement/per_query_interleaving from its rows over disjoint buckets of users
--   (DuckDB reads a large page-outcomes view one bucket of users at a time, see the
--   bucketed switch of interleaving/page_outcomes): a query's pages are spread over the
--   buckets, so its counts are the sums of its rows of the buckets. Python wrapper:
--   onlineeval.interleaving.outcomes.per_query.
-- grain: one row per (experiment, query value) of the pair, as agreement/per_query_interleaving
-- engines: duckdb (the buckets are DuckDB's)
-- params: none
-- identifiers: parts
-- parts: the tables holding agreement/per_query_interleaving of each bucket
-- outputs: experiment, team, other_team, qid VARCHAR, pages BIGINT, wins_t BIGINT,
--   wins_o BIGINT, ties BIGINT (the types of agreement/per_query_interleaving).
-- order: as agreement/per_query_interleaving.
WITH
parts AS (
    {{parts:SELECT * FROM @| UNION ALL }}
)
SELECT
    experiment, team, other_team, qid,
    CAST(sum(pages) AS BIGINT) AS pages,
    CAST(sum(wins_t) AS BIGINT) AS wins_t,
    CAST(sum(wins_o) AS BIGINT) AS wins_o,
    CAST(sum(ties) AS BIGINT) AS ties
FROM parts
GROUP BY experiment, team, other_team, qid
ORDER BY experiment, other_team, qid NULLS LAST
