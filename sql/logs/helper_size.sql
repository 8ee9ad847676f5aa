-- name: logs/helper_size
-- computes: the size of one of the loader's helper tables of bad keys: its rows and the sum
--   of its column n (the rows of the log those keys stand for).
-- grain: one row
-- params: none
-- identifiers: table
-- outputs: keys BIGINT, n (NULL when the table is empty)
SELECT count(*) AS keys, sum(n) AS n
FROM {{table}}
