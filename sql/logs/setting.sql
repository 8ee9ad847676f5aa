-- name: logs/setting
-- computes: one setting of the connection as DuckDB reports it (memory_limit e.g.
--   '476.8 MiB', threads e.g. '2'), for queries that split their work to fit the memory
--   limit (each thread holds its own buffers). Python wrapper: onlineeval.db.setting.
-- grain: one row (none for a name DuckDB does not know)
-- engines: duckdb (reads DuckDB's settings)
-- params: name
-- identifiers: none
-- outputs: value VARCHAR
SELECT value FROM duckdb_settings() WHERE name = $name
