-- name: logs/copy
-- computes: every row and column of a table given as a stream (an Arrow record batch reader,
--   an Iceberg scan), which can be read only once, to be stored as a temporary table that
--   validation can read as often as it needs.
--   Python wrapper: onlineeval.logs.sources (open_table).
-- grain: one row per row of the source
-- params: none
-- identifiers: source
-- outputs: the source's columns, as they are.
SELECT *
FROM {{source}}
