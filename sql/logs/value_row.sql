-- name: logs/value_row
-- computes: where in a set of Parquet files the first of some values (shown as text) of one
--   column is, to name the file and row of a value that cannot be read as its column's type.
--   Python wrapper: onlineeval.logs.locate.value_place.
-- grain: at most one row
-- engines: duckdb (locates a bad value in the user's Parquet files through DuckDB's reader)
-- params: wanted
-- identifiers: source, column
-- source: the files read with their filename and file_row_number.
-- outputs: filename, file_row_number (0-based), value VARCHAR: the first (by file, then row)
--   row whose column, as text, is one of $wanted.
SELECT filename, file_row_number, CAST({{column}} AS VARCHAR) AS value
FROM {{source}}
WHERE CAST({{column}} AS VARCHAR) IN (SELECT unnest($wanted))
ORDER BY 1, 2
LIMIT 1
