-- name: logs/results/duplicate_ranks
-- computes: the (search_id, rank) pairs on more than one results row (stored as the helper
--   table _oe_dup_ranks, which the clean view anti-joins): which document such a page showed
--   at that rank is unknowable, so no row of the pair is kept.
-- grain: one row per repeated (search_id, rank)
-- params: none
-- identifiers: source
-- source: the typed view of the results (onlineeval.logs.tables.Table.typed).
-- outputs: search_id, rank, n BIGINT (its rows).
SELECT r.search_id, r.rank, count(*) AS n
FROM {{source}} AS r
WHERE r.search_id IS NOT NULL AND r.rank >= 1
GROUP BY r.search_id, r.rank
HAVING count(*) > 1
