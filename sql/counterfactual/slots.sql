-- name: counterfactual/slots
-- computes: the candidate's documents as the logged pages showed them: per used page (see
--   counterfactual/pages) and candidate top-k document the page shows, where, whether it
--   was clicked, whether a propensity supports it and the weight p_c / p_l. Python
--   (onlineeval.counterfactual.sums.per_unit) stores it as a temporary view that
--   counterfactual/unit_sums and counterfactual/normalised_sums sum, so the slot, its
--   support and its weight are defined here once.
-- grain: one row per (used page, candidate top-k document the page shows)
-- params: max_rank, clip
-- identifiers: pages, candidate, propensity
-- requires: the view named by `pages` (counterfactual/pages); the tables named by
--   `candidate` and `propensity` (as counterfactual/pages describes them); views
--   results(search_id, rank, doc_id) and clicks(search_id, rank). Document ids are
--   compared as text.
-- logged rank: a document shown at several ranks of one page is read at its highest (the
--   other rows are counted in repeats); clicked is 1 when that rank has a click.
-- usable: the logged rank l is <= $max_rank and has a propensity (not NULL: the caller
--   makes a 0 NULL). Only a usable slot has a weight: w_raw = propensity(c) /
--   propensity(l), with c the candidate rank; w = w_raw capped at $clip when $clip is not
--   NULL.
-- outputs: unit, query, search_id, doc_id, cand_rank, dm_alpha (as in the candidate table),
--   logged_rank, repeats, clicked INTEGER, usable BOOLEAN, beyond_max_rank BOOLEAN, exam
--   DOUBLE (propensity(l); NULL when not usable), exam_c DOUBLE (propensity(c)), dm_exam
--   (the click model's examination at l), w_raw, w (NULL when not usable).
WITH
cand AS (
    SELECT query, doc_id, cand_rank, dm_alpha FROM {{candidate}}
),
prop AS (
    SELECT rank, propensity, dm_exam FROM {{propensity}}
),
clicked AS (
    SELECT DISTINCT search_id, rank FROM clicks WHERE rank IS NOT NULL
),
shown AS (
    SELECT p.unit, p.query, r.search_id, k.doc_id, k.cand_rank, k.dm_alpha,
        min(r.rank) AS logged_rank, count(*) - 1 AS repeats
    FROM {{pages}} AS p
    JOIN results AS r ON r.search_id = p.search_id
    JOIN cand AS k ON k.query = p.query AND k.doc_id = CAST(r.doc_id AS VARCHAR)
    WHERE p.used
    GROUP BY p.unit, p.query, r.search_id, k.doc_id, k.cand_rank, k.dm_alpha
),
marked AS (
    SELECT t.unit, t.query, t.search_id, t.doc_id, t.cand_rank, t.dm_alpha, t.logged_rank,
        t.repeats,
        CASE WHEN c.rank IS NULL THEN 0 ELSE 1 END AS clicked,
        t.logged_rank <= $max_rank AND pl.propensity IS NOT NULL AS usable,
        t.logged_rank > $max_rank AS beyond_max_rank,
        CAST(pl.propensity AS DOUBLE) AS p_l,
        CAST(pc.propensity AS DOUBLE) AS exam_c,
        pl.dm_exam
    FROM shown AS t
    LEFT JOIN clicked AS c ON c.search_id = t.search_id AND c.rank = t.logged_rank
    LEFT JOIN prop AS pl ON pl.rank = t.logged_rank
    LEFT JOIN prop AS pc ON pc.rank = t.cand_rank
),
weighed AS (
    SELECT unit, query, search_id, doc_id, cand_rank, dm_alpha, logged_rank, repeats,
        clicked, usable, beyond_max_rank, exam_c, dm_exam,
        CASE WHEN usable THEN p_l END AS exam,
        CASE WHEN usable THEN CAST(exam_c AS DOUBLE) / p_l END AS w_raw
    FROM marked
)
SELECT unit, query, search_id, doc_id, cand_rank, dm_alpha, logged_rank, repeats, clicked,
    usable, beyond_max_rank, exam, exam_c, dm_exam, w_raw,
    CASE WHEN CAST($clip AS DOUBLE) < w_raw THEN CAST($clip AS DOUBLE) ELSE w_raw END AS w
FROM weighed
