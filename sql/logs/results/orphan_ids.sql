-- name: logs/results/orphan_ids
-- computes: the search_ids of results rows whose search is not kept (stored as the helper
--   table _oe_results_bad_sids, which the clean view anti-joins).
-- grain: one row per distinct such search_id
-- params: none
-- identifiers: source
-- source: the typed view of the results (onlineeval.logs.tables.Table.typed).
-- requires: the view _oe_base_searches (logs/searches/kept).
-- outputs: search_id
SELECT DISTINCT r.search_id
FROM {{source}} AS r
ANTI JOIN _oe_base_searches AS k ON r.search_id = k.search_id
WHERE r.search_id IS NOT NULL
