-- name: logs/clicks/off_page
-- computes: the clicks with a usable rank or doc_id that are not on their page, whatever
--   their search: the kept results hold only kept searches, so the clicks of excluded or
--   unknown searches are among them too and the caller subtracts those (this keeps the
--   searches out of this join).
-- grain: one row
-- params: none
-- identifiers: source
-- source: the clicks with their on-page test (logs/clicks/on_page).
-- outputs: off_page BIGINT
SELECT count(*) AS off_page
FROM {{source}} AS c
WHERE NOT c._oe_null AND (c.rank IS NULL OR c.rank >= 1) AND NOT c._oe_on_page
