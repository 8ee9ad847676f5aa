-- name: logs/clicks/clean
-- computes: the clean clicks view: every clicks row but the excluded ones, with a missing
--   rank filled from the page (the highest-placed result showing the clicked doc_id) and a
--   missing doc_id from the result at the clicked rank. Only the kinds of exclusion that
--   occurred, and the fills that are needed, add a filter or a join.
-- grain: one row per kept click
-- params: none
-- identifiers: source
-- switches: fill_rank, fill_doc, orphans, off_page, nulls, low_ranks
-- source: the flagged clicks (logs/clicks/flag).
-- fill_rank: some click has a doc_id but no rank, and the log has results (_oe_doc_rank).
-- fill_doc: some click has a rank but no doc_id, and the log has results.
-- orphans: some clicks belong to an excluded or unknown search (_oe_clicks_bad_sids).
-- off_page: some clicks are not on their page (_oe_clicks_bad_keys).
-- nulls: some click lacks a required value.  low_ranks: some rank is below 1.
-- requires: the clean results view.
-- outputs: search_id, rank, doc_id, ts, dwell_ms
SELECT
    c.search_id,
    {{#fill_rank}}coalesce(c.rank, r2.rank){{/fill_rank}}{{^fill_rank}}c.rank{{/fill_rank}}
        AS rank,
    {{#fill_doc}}coalesce(c.doc_id, r1.doc_id){{/fill_doc}}{{^fill_doc}}c.doc_id{{/fill_doc}}
        AS doc_id,
    c.ts,
    c.dwell_ms
FROM {{source}} AS c
{{#fill_doc}}
LEFT JOIN results AS r1 ON c.search_id = r1.search_id AND c.rank = r1.rank
{{/fill_doc}}
{{#fill_rank}}
LEFT JOIN _oe_doc_rank AS r2 ON c.search_id = r2.search_id AND c.doc_id = r2.doc_id
{{/fill_rank}}
{{#orphans}}ANTI JOIN _oe_clicks_bad_sids AS b ON c.search_id = b.search_id{{/orphans}}
{{#off_page}}
ANTI JOIN _oe_clicks_bad_keys AS x
    ON c.search_id = x.search_id
    AND c.rank IS NOT DISTINCT FROM x.rank
    AND c.doc_id IS NOT DISTINCT FROM x.doc_id
{{/off_page}}
WHERE true {{#nulls}}AND NOT c._oe_null{{/nulls}}
    {{#low_ranks}}AND (c.rank IS NULL OR c.rank >= 1){{/low_ranks}}
