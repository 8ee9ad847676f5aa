-- name: logs/parquet_schema
-- computes: the schema elements of one Parquet file, to find a column named twice (which
--   DuckDB would silently rename). Python wrapper: onlineeval.logs.sources.
-- grain: one row per schema element, in file order (the root first)
-- engines: duckdb (reads a Parquet file's schema through DuckDB's reader)
-- params: p
-- identifiers: none
-- outputs: name VARCHAR, num_children BIGINT (the top-level columns follow from them)
SELECT name, num_children FROM parquet_schema($p)
