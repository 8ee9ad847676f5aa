-- name: logs/json_types
-- computes: for each JSON-lines column the loader uses, how many of its values have each JSON
--   type (json_type: VARCHAR, UBIGINT, BIGINT, DOUBLE, BOOLEAN, OBJECT, ARRAY, NULL for a
--   JSON null), so that a column mixing types (a number in one line, a string in another)
--   is refused with the first offending line named instead of silently cast.
--   Python wrapper: onlineeval.logs.jsontypes.check.
-- grain: one row
-- engines: duckdb (inspects JSON-lines files through DuckDB's reader (json_type, histogram))
-- params: none
-- identifiers: source, columns
-- source: the JSON table read with every column of columns typed JSON.
-- outputs: for each of columns, in order, a MAP from JSON type to count (a missing key, SQL
--   NULL, is not counted).
SELECT {{columns:histogram(json_type(@))}}
FROM {{source}}
