-- name: logs/column_counts
-- computes: the values each column of a converted table holds, and its rows, so the converter
--   can leave out a column that is entirely null (absent from the source).
--   Python wrapper: onlineeval.logs.convert.parquet.TableWriter.finish.
-- grain: one row
-- params: none
-- identifiers: table, columns
-- outputs: for each of columns, in order, count(column) BIGINT; then rows BIGINT.
SELECT {{columns:count(@),}} count(*) AS rows
FROM {{table}}
