-- name: logs/copy
-- computes: every row and column of a table given as a stream (an Arrow record batch reader,
--   an Iceberg scan), which can be read only once, to be stored as a temporary table that
--   validation can read as often as it needs; also the check view of a small text table or
--   DataFrame, stored so that each later query plans over a table, not the file reader.
--   Python wrappers: onlineeval.logs.sources (open_table), onlineeval.logs.validate (_store).
-- grain: one row per row of the source
-- params: none
-- identifiers: source
-- outputs: the source's columns, as they are.
SELECT *
FROM {{source}}
