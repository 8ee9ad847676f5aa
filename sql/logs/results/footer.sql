-- name: logs/results/footer
-- computes: what the Parquet footers say about the results: rows, non-NULL search_id, rank
--   and doc_id, the smallest rank, and the values of each optional column. DuckDB answers
--   count(column) and min(rank) from the footer statistics without reading data; when they
--   show every row valid, pass 1 reduces to logs/results/unknown_searches.
-- grain: one row
-- params: none
-- identifiers: source, optional
-- source: the typed view of the results (onlineeval.logs.tables.Table.typed).
-- outputs, in this order: count(column) for each of optional; rows, search_ids, ranks,
--   doc_ids BIGINT, min_rank.
SELECT
    {{optional:count(r.@),}}
    count(*) AS rows,
    count(r.search_id) AS search_ids,
    count(r.rank) AS ranks,
    count(r.doc_id) AS doc_ids,
    min(r.rank) AS min_rank
FROM {{source}} AS r
