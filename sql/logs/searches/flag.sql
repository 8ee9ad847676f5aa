-- name: logs/searches/flag
-- computes: the loader's check view of the searches with _oe_null, the one definition of a
--   search lacking a required value: search_id or user_id is missing, or, when the log has
--   them, ts or session_id. An empty text value is missing too (CSV reads "" as NULL, and
--   Parquet, JSON and DataFrames must not instead make every id-less row one shared user,
--   session or page). Python wrapper: onlineeval.logs.validate.
-- grain: one row per row of the searches source
-- params: none
-- identifiers: source, text_required, other_required
-- source: the check view of the searches (onlineeval.logs.tables.Table.check).
-- text_required: the required columns of type VARCHAR; other_required: the others.
--   (logs/searches/pass restates this test inline; its header says why.)
-- outputs: every column of the source, then _oe_null BOOLEAN.
SELECT s.*,
    ({{text_required:(s.@ IS NULL OR s.@ = '') OR |}}{{other_required:s.@ IS NULL OR |}} false)
        AS _oe_null
FROM {{source}} AS s
