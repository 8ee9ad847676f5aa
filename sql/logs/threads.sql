-- name: logs/threads
-- computes: the number of threads the connection's queries run on, as DuckDB reports it,
--   for queries that split their work to fit the memory limit (each thread holds its own
--   buffers). Python wrapper: onlineeval.db.threads.
-- grain: one row
-- engines: duckdb (reads DuckDB's settings)
-- params: none
-- identifiers: none
-- outputs: value VARCHAR
SELECT value FROM duckdb_settings() WHERE name = 'threads'
