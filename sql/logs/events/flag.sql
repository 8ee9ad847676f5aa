-- name: logs/events/flag
-- computes: the loader's check view of the events with _oe_null, the one definition of an
--   event lacking a required value: ts or type is missing, or both user_id and search_id are
--   (nothing tells whose outcome it is). An empty text value is missing too, as for the
--   searches (logs/searches/flag says why). Python wrapper: onlineeval.logs.validate.
-- grain: one row per row of the events source
-- params: none
-- identifiers: source
-- switches: text_user, text_search
-- source: the check view of the events (onlineeval.logs.tables.Table.check); a column the
--   source lacks is NULL there.
-- text_user, text_search: user_id (search_id) is VARCHAR, so an empty value can occur.
-- outputs: every column of the source, then _oe_null BOOLEAN.
SELECT e.*,
    (e.ts IS NULL OR e.type IS NULL OR e.type = ''
        OR ((e.user_id IS NULL {{#text_user}}OR e.user_id = ''{{/text_user}})
            AND (e.search_id IS NULL {{#text_search}}OR e.search_id = ''{{/text_search}}))
    ) AS _oe_null
FROM {{source}} AS e
