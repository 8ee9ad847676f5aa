-- name: logs/glob
-- computes: the files DuckDB's glob finds for a pattern, to confirm that an escaped path
--   (each *, ? and [ as a one-character class) names exactly the file the user gave.
--   Python wrapper: onlineeval.logs.paths.duckdb_path.
-- grain: one row per file found
-- engines: duckdb (DuckDB's glob of the user's files: the file readers are DuckDB's)
-- params: p
-- identifiers: none
-- outputs: file VARCHAR
SELECT file FROM glob($p)
