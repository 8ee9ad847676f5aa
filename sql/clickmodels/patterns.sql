-- name: clickmodels/patterns
-- computes: the sufficient statistics of every click model in onlineeval.clickmodels: the
--   distinct click patterns of the result pages, with how many pages show each. A pattern
--   is a query, the documents shown at ranks 1..$max_rank in rank order and, per rank,
--   whether it was clicked. Pages are grouped here, so the rows grow with the number of
--   distinct patterns, not with the number of pages. Python wrapper:
--   onlineeval.clickmodels.patterns.read_patterns.
-- grain: one row per pattern and shown rank (ordered by pattern_id, rank)
-- params: max_rank
-- identifiers: searches, query
-- requires: the view named by `searches` with search_id and the column named by `query`
--   (the query, or any column that names the topic, e.g. a qid), views results(search_id, rank,
--   doc_id) and clicks(search_id, rank) as built by onlineeval.load_logs.
-- pages: searches with a non-NULL query and at least one result at a rank <= $max_rank
--   (onlineeval/clickmodels/patterns.py counts the others with clickmodels/page_counts).
-- clicked: 1 when the page has at least one click at that rank (repeated clicks on one
--   result count once; click order is not used: the models read clicks top to bottom, as in
--   Chuklin et al. 2015), else 0.
-- pattern key: the page's tokens (rank zero-padded to 10 digits, click flag, length of the
--   document id, the id) sorted and joined; the fixed-width rank makes the sorted order the
--   rank order, and the length prefix means no two different pages share a key, whatever
--   characters the ids hold. The key is only compared, never parsed. (An unordered list
--   sorted afterwards, not an ordered aggregate: DuckDB keeps ordered aggregates in memory,
--   and 1M pages then did not fit 400 MB; this form did, in 26 s.)
-- outputs: pattern_id BIGINT (1, 2, ... in order of query and key), pages BIGINT (pages
--   with the pattern), rank, query, doc_id, clicked INTEGER; the rows of one pattern are
--   those of one of its pages (the smallest search_id), read again from the views.
WITH
s AS (
    SELECT search_id, {{query}} AS query FROM {{searches}} WHERE {{query}} IS NOT NULL
),
clicked AS (
    SELECT DISTINCT search_id, rank FROM clicks WHERE rank IS NOT NULL
),
shown AS (
    SELECT r.search_id, s.query, r.rank, r.doc_id,
        CASE WHEN c.rank IS NULL THEN 0 ELSE 1 END AS clicked
    FROM results AS r
    JOIN s ON r.search_id = s.search_id
    LEFT JOIN clicked AS c ON c.search_id = r.search_id AND c.rank = r.rank
    WHERE r.rank <= $max_rank
),
pages AS (
    SELECT search_id, query,
        array_to_string(list_sort(list(
            lpad(CAST(rank AS VARCHAR), 10, '0') || ':' || CAST(clicked AS VARCHAR) || ':'
                || CAST(length(CAST(doc_id AS VARCHAR)) AS VARCHAR) || ':'
                || CAST(doc_id AS VARCHAR)
        )), '|') AS pattern_key
    FROM shown
    GROUP BY search_id, query
),
patterns AS (
    SELECT query, pattern_key, count(*) AS pages, min(search_id) AS example
    FROM pages
    GROUP BY query, pattern_key
),
numbered AS (
    SELECT dense_rank() OVER (ORDER BY query, pattern_key) AS pattern_id, pages, example
    FROM patterns
)
SELECT n.pattern_id, n.pages, r.rank, s.query, r.doc_id,
    CASE WHEN c.rank IS NULL THEN 0 ELSE 1 END AS clicked
FROM numbered AS n
JOIN results AS r ON r.search_id = n.example
JOIN s ON s.search_id = n.example
LEFT JOIN clicked AS c ON c.search_id = r.search_id AND c.rank = r.rank
WHERE r.rank <= $max_rank
ORDER BY n.pattern_id, r.rank
