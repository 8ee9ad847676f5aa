-- name: logs/bad_values
-- computes: up to three distinct source values of one column that cannot be read as the
--   column's kind, to quote in the error message (which names the file and line of one).
-- grain: at most 3 rows
-- params: none
-- identifiers: source, value, flag
-- source: the check view of a table (onlineeval.logs.tables.Table.check).
-- value: the column's _oe_src_<column> (the source value); flag: its _oe_bad_<column>.
-- outputs: value VARCHAR
SELECT DISTINCT CAST({{value}} AS VARCHAR) AS value
FROM {{source}}
WHERE {{flag}}
LIMIT 3
