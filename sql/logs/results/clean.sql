-- name: logs/results/clean
-- computes: the clean results view: every results row but the excluded ones. Only the kinds
--   of exclusion that occurred add a filter or an anti-join, so a log without problems is
--   read through a plain projection.
-- grain: one row per kept results row
-- params: none
-- identifiers: source
-- switches: dup, orphans, nulls, low_ranks
-- source: the flagged results (logs/results/flag).
-- dup: the helper table _oe_dup_ranks holds repeated (search_id, rank) pairs.
-- orphans: some rows belong to a search that is not kept (_oe_results_bad_sids).
-- nulls: some row lacks a required value.  low_ranks: some rank is below 1.
-- outputs: search_id, rank, doc_id, team
SELECT r.search_id, r.rank, r.doc_id, r.team
FROM {{source}} AS r
{{#dup}}ANTI JOIN _oe_dup_ranks AS dr ON r.search_id = dr.search_id AND r.rank = dr.rank{{/dup}}
{{#orphans}}ANTI JOIN _oe_results_bad_sids AS b ON r.search_id = b.search_id{{/orphans}}
WHERE true {{#nulls}}AND NOT r._oe_null{{/nulls}} {{#low_ranks}}AND r.rank >= 1{{/low_ranks}}
