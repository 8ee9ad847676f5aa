-- name: logs/read_all
-- computes: nothing of interest; it makes DuckDB read and decode every value of one file, to
--   find out whether that file is the damaged one behind a read error.
--   Python wrapper: onlineeval.logs.locate.
-- grain: one row
-- engines: duckdb (re-reads one file through DuckDB's reader to find a damaged one)
-- params: none
-- identifiers: source, columns
-- outputs: rows BIGINT, a DuckDB hash of every row (discarded).
SELECT count(*) AS rows, min(hash({{columns}})) AS any_hash
FROM {{source}}
