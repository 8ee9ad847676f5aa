-- name: clickmodels/rank_counts
-- computes: for every (query, document, rank), how many pages showed the document there and
--   how many of them clicked it: the counts intervention harvesting compares across ranks
--   (onlineeval.clickmodels.harvest).
-- grain: one row per (query, doc_id, rank)
-- params: max_rank
-- identifiers: searches, query
-- requires: the view named by `searches` with search_id and the column named by `query`,
--   views results(search_id, rank, doc_id), clicks(search_id, rank) as built by
--   onlineeval.load_logs.
-- pages: as in clickmodels/patterns (a query, results at ranks <= $max_rank); clicked means
--   at least one click at that rank of the page.
-- outputs: query, doc_id, rank, shown BIGINT, clicked BIGINT.
WITH
s AS (
    SELECT search_id, {{query}} AS query FROM {{searches}} WHERE {{query}} IS NOT NULL
),
clicked AS (
    SELECT DISTINCT search_id, rank FROM clicks WHERE rank IS NOT NULL
)
SELECT s.query, r.doc_id, r.rank,
    count(*) AS shown,
    count(c.rank) AS clicked
FROM results AS r
JOIN s ON r.search_id = s.search_id
LEFT JOIN clicked AS c ON c.search_id = r.search_id AND c.rank = r.rank
WHERE r.rank <= $max_rank
GROUP BY s.query, r.doc_id, r.rank
ORDER BY s.query, r.doc_id, r.rank
