-- name: logs/clicks/on_page
-- computes: whether each click is on its page (view _oe_clicks_on_page), the one definition
--   of the not_on_page reason: a click with a rank is on the page when the page shows that
--   rank (and, when the click has a doc_id too, that document there); a click with only a
--   doc_id when the page shows that document.
-- grain: one row per row of the clicks source
-- params: none
-- identifiers: source
-- switches: by_rank, by_doc
-- source: the flagged clicks (logs/clicks/flag).
-- by_rank: the clicks have a rank column (and the log has results).
-- by_doc: some click has a doc_id but no rank (and the log has results): the view
--   _oe_doc_rank (logs/clicks/doc_rank) exists. Without by_rank and by_doc nothing is on a
--   page.
-- requires: the clean results view.
-- outputs: every column of the source, then _oe_on_page BOOLEAN.
SELECT c.*,
    {{#by_rank}}
    CASE WHEN c.rank IS NOT NULL
         THEN r1.search_id IS NOT NULL AND (c.doc_id IS NULL OR r1.doc_id = c.doc_id)
         ELSE {{#by_doc}}r2.search_id IS NOT NULL{{/by_doc}}{{^by_doc}}false{{/by_doc}}
    END
    {{/by_rank}}
    {{^by_rank}}{{#by_doc}}r2.search_id IS NOT NULL{{/by_doc}}{{^by_doc}}false{{/by_doc}}{{/by_rank}}
        AS _oe_on_page
FROM {{source}} AS c
{{#by_rank}}
LEFT JOIN results AS r1 ON c.search_id = r1.search_id AND c.rank = r1.rank
{{/by_rank}}
{{#by_doc}}
LEFT JOIN _oe_doc_rank AS r2 ON c.search_id = r2.search_id AND c.doc_id = r2.doc_id
{{/by_doc}}
