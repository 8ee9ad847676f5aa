-- name: counterfactual/click_terms
-- computes: per randomization unit, what a position-based IPS estimate of a candidate
--   ranking's clicks@k needs: the pages whose query the candidate ranks, how many of the
--   candidate's top-k documents those pages showed, and the clicks on those documents by
--   (rank shown, rank in the candidate). Python wrapper: onlineeval.counterfactual.evaluate.
-- grain: one row per (unit, logged_rank, cand_rank) with clicks; one row with NULL ranks for
--   a unit without such clicks
-- params: max_rank
-- identifiers: searches, query, unit, candidate
-- requires: the view named by `searches` with search_id and the columns named by `query`
--   and `unit`; views results(search_id, rank, doc_id), clicks(search_id, rank); the table
--   named by `candidate` (query VARCHAR, doc_id VARCHAR, cand_rank INTEGER) holding the
--   candidate's top-k documents per query. Queries and document ids are compared as text.
-- pages: a search whose query (as text) the candidate ranks. Logged ranks above $max_rank
--   are not read (their clicks are counted in clicks_beyond_max_rank).
-- outputs: unit, pages BIGINT (of the unit), slots (sum over those pages of the number of
--   documents the candidate ranks in its top k for the page's query), shown_top BIGINT
--   (result rows of those pages that show one of those documents), logged_rank, cand_rank,
--   clicks BIGINT (pages with a click at logged_rank on the document the candidate puts at
--   cand_rank), pages_without_candidate BIGINT and clicks_beyond_max_rank BIGINT (the same
--   on every row).
WITH
s AS (
    SELECT search_id, {{unit}} AS unit, CAST({{query}} AS VARCHAR) AS query
    FROM {{searches}}
    WHERE {{query}} IS NOT NULL
),
cand AS (
    SELECT query, doc_id, cand_rank FROM {{candidate}}
),
pages AS (
    SELECT s.search_id, s.unit, s.query
    FROM s
    WHERE s.query IN (SELECT query FROM cand)
),
clicked AS (
    SELECT DISTINCT search_id, rank FROM clicks WHERE rank IS NOT NULL
),
on_top AS (
    SELECT p.unit, r.search_id, r.rank, k.cand_rank
    FROM pages AS p
    JOIN results AS r ON r.search_id = p.search_id
    JOIN cand AS k ON k.query = p.query AND k.doc_id = CAST(r.doc_id AS VARCHAR)
),
hits AS (
    SELECT t.unit, t.rank AS logged_rank, t.cand_rank, count(*) AS clicks
    FROM on_top AS t
    JOIN clicked AS c ON c.search_id = t.search_id AND c.rank = t.rank
    WHERE t.rank <= $max_rank
    GROUP BY t.unit, t.rank, t.cand_rank
),
shown AS (
    SELECT unit, count(*) AS shown_top FROM on_top WHERE rank <= $max_rank GROUP BY unit
),
cand_sizes AS (
    SELECT query, count(*) AS n_cand FROM cand GROUP BY query
),
per_unit AS (
    SELECT p.unit, count(*) AS pages, sum(cs.n_cand) AS slots
    FROM pages AS p
    JOIN cand_sizes AS cs ON cs.query = p.query
    GROUP BY p.unit
),
left_out AS (
    SELECT count(*) AS n FROM s WHERE s.query NOT IN (SELECT query FROM cand)
),
beyond AS (
    SELECT count(*) AS n
    FROM on_top AS t
    JOIN clicked AS c ON c.search_id = t.search_id AND c.rank = t.rank
    WHERE t.rank > $max_rank
)
SELECT u.unit, u.pages, u.slots, coalesce(sh.shown_top, 0) AS shown_top, h.logged_rank, h.cand_rank,
    coalesce(h.clicks, 0) AS clicks,
    (SELECT n FROM left_out) AS pages_without_candidate,
    (SELECT n FROM beyond) AS clicks_beyond_max_rank
FROM per_unit AS u
LEFT JOIN shown AS sh ON sh.unit = u.unit
LEFT JOIN hits AS h ON h.unit = u.unit
ORDER BY u.unit, h.logged_rank, h.cand_rank
