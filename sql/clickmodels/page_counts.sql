-- name: clickmodels/page_counts
-- computes: how many pages of the `searches` view the click models use and why the others
--   are left out, to report them beside a fitted model (clickmodels/patterns uses exactly
--   the pages counted in `used`). Python wrapper: onlineeval.clickmodels.patterns.
-- grain: one row
-- params: max_rank
-- identifiers: searches, query
-- requires: the view named by `searches` with search_id and the column named by `query`,
--   views results(search_id, rank), clicks(search_id, rank) as built by onlineeval.load_logs.
-- outputs: pages BIGINT (rows of `searches`), no_query BIGINT (query NULL), no_results
--   BIGINT (a query but no results row at a rank <= $max_rank), used BIGINT,
--   results_beyond_max_rank BIGINT (results rows of used-or-not pages with rank >
--   $max_rank), clicks_beyond_max_rank BIGINT (click rows at such ranks).
WITH
s AS (
    SELECT search_id, {{query}} AS query FROM {{searches}}
),
per_page AS (
    SELECT s.search_id, s.query,
        count(r.rank) FILTER (WHERE r.rank <= $max_rank) AS n_shown,
        count(r.rank) FILTER (WHERE r.rank > $max_rank) AS n_beyond
    FROM s
    LEFT JOIN results AS r ON r.search_id = s.search_id
    GROUP BY s.search_id, s.query
),
beyond_clicks AS (
    SELECT count(*) AS n
    FROM clicks AS c
    JOIN s ON s.search_id = c.search_id
    WHERE c.rank > $max_rank
)
SELECT count(*) AS pages,
    count(*) FILTER (WHERE query IS NULL) AS no_query,
    count(*) FILTER (WHERE query IS NOT NULL AND n_shown = 0) AS no_results,
    count(*) FILTER (WHERE query IS NOT NULL AND n_shown > 0) AS used,
    coalesce(sum(n_beyond), 0) AS results_beyond_max_rank,
    (SELECT n FROM beyond_clicks) AS clicks_beyond_max_rank
FROM per_page
