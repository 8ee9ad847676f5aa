-- name: logs/memory_limit
-- computes: the connection's memory limit as DuckDB reports it (e.g. '476.8 MiB'), for
--   queries that split their work to fit it. Python wrapper: onlineeval.db.memory_limit_mb.
-- grain: one row
-- engines: duckdb (reads DuckDB's settings)
-- params: none
-- identifiers: none
-- outputs: value VARCHAR
SELECT value FROM duckdb_settings() WHERE name = 'memory_limit'
