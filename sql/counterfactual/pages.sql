-- name: counterfactual/pages
-- computes: the pages a counterfactual estimate of a candidate ranking's clicks@k reads:
--   every search with its randomization unit, its query as text and the candidate's top-k
--   slots for that query. Python (onlineeval.counterfactual.sums.per_unit) stores it as a
--   temporary view that counterfactual/slots, counterfactual/unit_sums and
--   counterfactual/normalised_sums read, so what a page is is defined here once.
-- grain: one row per search of the view named by `searches`
-- params: none
-- identifiers: searches, query, unit, candidate, propensity
-- requires: the view named by `searches` with search_id and the columns named by `query`
--   and `unit`; the table named by `candidate` (query VARCHAR, doc_id VARCHAR, cand_rank
--   INTEGER, dm_alpha DOUBLE, dm_seen BOOLEAN) holding the candidate's top-k documents per
--   query and, for DR with a given click model, the model's attractiveness of each and
--   whether the model was fitted on the pair (NULL without a model); the table named by
--   `propensity` (rank INTEGER, propensity DOUBLE, dm_exam DOUBLE): the examination
--   propensity per rank (NULL where there is none, 0 included) and the click model's
--   examination per rank (NULL where unknown). Queries are compared as text.
-- used: a page is in the estimate when the candidate ranks its query and its unit is not
--   NULL; the others are counted by the estimates (pages_without_candidate: query NULL or
--   not ranked; pages_without_unit: ranked, but no unit to cluster it in).
-- outputs: search_id, unit, query, used BOOLEAN, n_cand (the candidate's top-k documents
--   for the query; NULL when it ranks none), dm_value (sum over them of the model's
--   dm_exam(cand_rank) x dm_alpha; NULL terms count 0), n_unseen (of them, those whose
--   dm_seen is not true).
WITH
s AS (
    SELECT search_id, {{unit}} AS unit, CAST({{query}} AS VARCHAR) AS query
    FROM {{searches}}
),
cand_query AS (
    SELECT k.query, count(*) AS n_cand, sum(k.dm_alpha * p.dm_exam) AS dm_value,
        sum(CASE WHEN k.dm_seen THEN 0 ELSE 1 END) AS n_unseen
    FROM {{candidate}} AS k
    LEFT JOIN {{propensity}} AS p ON p.rank = k.cand_rank
    GROUP BY k.query
)
SELECT s.search_id, s.unit, s.query,
    cq.query IS NOT NULL AND s.unit IS NOT NULL AS used,
    cq.n_cand, coalesce(cq.dm_value, CAST(0 AS DOUBLE)) AS dm_value, cq.n_unseen
FROM s
LEFT JOIN cand_query AS cq ON cq.query = s.query
