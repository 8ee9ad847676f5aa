-- name: logs/results/rank_suspects
-- computes: pass 2 over the results, a cheap test for repeated ranks: grouped by a hash of
--   search_id, a bitmask of the ranks 1..63 seen shows a repeat as fewer bits than rows,
--   without counting distinct (search_id, rank) pairs. A hash collision or more than one rank
--   above 63 in a group only makes it suspect a repeat, which logs/results/duplicate_ranks
--   then confirms or rules out exactly (so the engine's hash changes no number). Like a
--   repeated search_id, a rank is repeated whatever the other row holds.
-- grain: one row
-- engines: duckdb (a pre-check with DuckDB's hash and bit_count; logs/results/duplicate_ranks
--   decides every suspect exactly, so another engine runs that one on all groups)
-- params: none
-- identifiers: source
-- source: the typed view of the results (onlineeval.logs.tables.Table.typed).
-- outputs: suspects BIGINT (groups that may hold a repeated rank; 0: none has).
SELECT count(*) FILTER (WHERE n_small <> bit_count(mask) OR n_big > 1) AS suspects
FROM (
    SELECT
        hash(r.search_id) AS h,
        count(*) FILTER (WHERE r.rank BETWEEN 1 AND 63) AS n_small,
        coalesce(bit_or(CASE WHEN r.rank BETWEEN 1 AND 63
                             THEN CAST(1 AS UBIGINT) << CAST(r.rank AS UBIGINT) END),
                 CAST(0 AS UBIGINT)) AS mask,
        count(*) FILTER (WHERE r.rank > 63) AS n_big
    FROM {{source}} AS r
    WHERE r.search_id IS NOT NULL AND r.rank >= 1
    GROUP BY h
) AS hashed
