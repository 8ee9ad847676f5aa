-- name: counterfactual/unit_sums
-- computes: per randomization unit, the sums of which the position-based IPS and doubly
--   robust (DR) estimates of a candidate ranking's clicks@k are ratios (sum over units of a
--   column / sum of pages). Python wrapper: onlineeval.counterfactual.sums.unit_sums.
-- grain: one row per unit with at least one page whose query the candidate ranks
-- params: max_rank, clip
-- identifiers: searches, query, unit, candidate, propensity
-- requires: the view named by `searches` with search_id and the columns named by `query`
--   and `unit`; views results(search_id, rank, doc_id), clicks(search_id, rank); the table
--   named by `candidate` (query VARCHAR, doc_id VARCHAR, cand_rank INTEGER, dm_alpha DOUBLE,
--   dm_seen BOOLEAN) holding the candidate's top-k documents per query and, for DR, the
--   click model's attractiveness of each and whether the model was fitted on the pair
--   (NULL without a model); the table named by `propensity` (rank
--   INTEGER, propensity DOUBLE, dm_exam DOUBLE): the examination propensity per rank and the
--   click model's examination per rank (NULL where unknown). Queries and document ids are
--   compared as text.
-- pages: a search with a unit value whose query (as text) the candidate ranks. The others
--   are left out and counted: pages_without_candidate (query NULL or not ranked by the
--   candidate), pages_without_unit (a ranked query, a NULL unit: no cluster to put it in).
-- slots: a page has one slot per document the candidate ranks in its top k for the page's
--   query. A slot is supported when the page showed that document at a rank l <= $max_rank
--   with a propensity; a document shown at several ranks of one page counts at its highest
--   (the other rows are counted in repeated_results).
-- weight: a supported slot of candidate rank c shown at l weighs
--   w = propensity(c) / propensity(l), capped at $clip when $clip is not NULL.
-- outputs: unit, pages BIGINT, slots, supported, ips (sum over supported slots of
--   w x clicked), dr (sum over pages of sum over slots of dm_exam(c) x dm_alpha, plus sum
--   over supported slots of w x (clicked - dm_exam(l) x dm_alpha); NULL terms count 0),
--   model_unseen (slots whose dm_seen is not true), clicks_used (clicks on supported slots), clicks_w2 (sum of w^2 x clicked),
--   clipped_clicks (clicked supported slots whose weight was capped), and per unit the
--   clicks not used: clicks_without_propensity (on a candidate document at a rank
--   <= $max_rank without a propensity), clicks_beyond_max_rank, shown_without_propensity
--   (candidate documents shown at a rank without a propensity or beyond $max_rank, clicked
--   or not); pages_without_candidate, pages_without_unit and
--   repeated_results (the same on every row).
WITH
s AS (
    SELECT search_id, {{unit}} AS unit, CAST({{query}} AS VARCHAR) AS query
    FROM {{searches}}
),
cand AS (
    SELECT query, doc_id, cand_rank, dm_alpha, dm_seen FROM {{candidate}}
),
prop AS (
    SELECT rank, propensity, dm_exam FROM {{propensity}}
),
cand_query AS (
    SELECT k.query, count(*) AS n_cand, sum(k.dm_alpha * p.dm_exam) AS dm_value,
        sum(CASE WHEN k.dm_seen THEN 0 ELSE 1 END) AS n_unseen
    FROM cand AS k
    LEFT JOIN prop AS p ON p.rank = k.cand_rank
    GROUP BY k.query
),
pages AS (
    SELECT s.search_id, s.unit, s.query, cq.n_cand, cq.dm_value, cq.n_unseen
    FROM s
    JOIN cand_query AS cq ON cq.query = s.query
    WHERE s.unit IS NOT NULL
),
clicked AS (
    SELECT DISTINCT search_id, rank FROM clicks WHERE rank IS NOT NULL
),
shown AS (
    SELECT p.unit, r.search_id, k.doc_id, k.cand_rank, k.dm_alpha,
        min(r.rank) AS logged_rank, count(*) - 1 AS repeats
    FROM pages AS p
    JOIN results AS r ON r.search_id = p.search_id
    JOIN cand AS k ON k.query = p.query AND k.doc_id = CAST(r.doc_id AS VARCHAR)
    GROUP BY p.unit, r.search_id, k.doc_id, k.cand_rank, k.dm_alpha
),
weighed AS (
    SELECT t.unit, t.logged_rank, t.repeats, t.dm_alpha, pl.dm_exam,
        CASE WHEN c.rank IS NULL THEN 0 ELSE 1 END AS clicked,
        t.logged_rank <= $max_rank AND pl.propensity IS NOT NULL AS usable,
        CAST(pc.propensity AS DOUBLE) / CAST(pl.propensity AS DOUBLE) AS w_raw
    FROM shown AS t
    LEFT JOIN clicked AS c ON c.search_id = t.search_id AND c.rank = t.logged_rank
    LEFT JOIN prop AS pl ON pl.rank = t.logged_rank
    LEFT JOIN prop AS pc ON pc.rank = t.cand_rank
),
capped AS (
    SELECT unit, logged_rank, repeats, clicked, dm_alpha, dm_exam, usable,
        CASE WHEN usable THEN w_raw END AS w_raw,
        CASE WHEN NOT usable THEN NULL
            WHEN CAST($clip AS DOUBLE) < w_raw THEN CAST($clip AS DOUBLE)
            ELSE w_raw END AS w
    FROM weighed
),
slot_sums AS (
    SELECT unit,
        sum(CASE WHEN usable THEN 1 ELSE 0 END) AS supported,
        sum(w * clicked) AS ips,
        sum(w * (clicked - coalesce(dm_exam * dm_alpha, 0.0))) AS correction,
        sum(CASE WHEN usable THEN clicked ELSE 0 END) AS clicks_used,
        sum(w * w * clicked) AS clicks_w2,
        sum(CASE WHEN usable AND w_raw > w THEN clicked ELSE 0 END) AS clipped_clicks,
        sum(CASE WHEN logged_rank <= $max_rank AND NOT usable THEN clicked ELSE 0 END)
            AS clicks_without_propensity,
        sum(CASE WHEN logged_rank > $max_rank THEN clicked ELSE 0 END)
            AS clicks_beyond_max_rank,
        sum(CASE WHEN usable THEN 0 ELSE 1 END) AS shown_without_propensity,
        sum(repeats) AS repeated
    FROM capped
    GROUP BY unit
),
unit_pages AS (
    SELECT unit, count(*) AS pages, sum(n_cand) AS slots, sum(dm_value) AS dm_value,
        sum(n_unseen) AS model_unseen
    FROM pages
    GROUP BY unit
),
left_out AS (
    SELECT count(*) AS n,
        sum(CASE WHEN cq.query IS NOT NULL AND s.unit IS NULL THEN 1 ELSE 0 END) AS no_unit
    FROM s
    LEFT JOIN cand_query AS cq ON cq.query = s.query
    WHERE cq.query IS NULL OR s.unit IS NULL
)
SELECT u.unit, u.pages, u.slots,
    coalesce(t.supported, 0) AS supported,
    coalesce(t.ips, 0.0) AS ips,
    coalesce(u.dm_value, 0.0) + coalesce(t.correction, 0.0) AS dr,
    u.model_unseen,
    coalesce(t.clicks_used, 0) AS clicks_used,
    coalesce(t.clicks_w2, 0.0) AS clicks_w2,
    coalesce(t.clipped_clicks, 0) AS clipped_clicks,
    coalesce(t.clicks_without_propensity, 0) AS clicks_without_propensity,
    coalesce(t.clicks_beyond_max_rank, 0) AS clicks_beyond_max_rank,
    coalesce(t.shown_without_propensity, 0) AS shown_without_propensity,
    (SELECT n - coalesce(no_unit, 0) FROM left_out) AS pages_without_candidate,
    (SELECT coalesce(no_unit, 0) FROM left_out) AS pages_without_unit,
    (SELECT coalesce(sum(repeated), 0) FROM slot_sums) AS repeated_results
FROM unit_pages AS u
LEFT JOIN slot_sums AS t ON t.unit = u.unit
ORDER BY u.unit
