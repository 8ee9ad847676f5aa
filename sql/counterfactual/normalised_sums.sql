-- name: counterfactual/normalised_sums
-- computes: per randomization unit, the linearised sums of the self-normalised (snips)
--   estimate of a candidate ranking's clicks@k: per (query, candidate document) the clicks
--   over the examination mass (the sum of the propensities of the ranks it was shown at),
--   times the propensity of its candidate rank, averaged over the pages. The per-unit
--   column sums to the estimate's numerator, and its spread over units is the estimate's
--   delta-method variance (Python: onlineeval.counterfactual.sums.normalised_sums).
-- grain: one row per unit with at least one page whose query the candidate ranks
-- params: max_rank
-- identifiers: searches, query, unit, candidate, propensity
-- requires: as counterfactual/unit_sums (the candidate's dm_alpha and the propensity
--   table's dm_exam are not read).
-- pages, slots, supported use: as in counterfactual/unit_sums; a shown document's clicks
--   and examination are used when it was shown at a rank l <= $max_rank with a propensity
--   (at its highest rank on a page that repeats it).
-- definitions: per (query q, candidate document d at candidate rank c): C = used clicks on d
--   over the pages of q, M = the sum of propensity(l) over the pages of q that showed d at
--   a usable rank l, n = pages of q, rate = C / M, weight = propensity(c) x n / M (the
--   weight of each of its clicks). Pairs with M = 0 (never shown usably) contribute 0.
--   value(q) = sum over its pairs of propensity(c) x rate. Per unit u with n_u(q) pages of
--   q and C_u, M_u its share of C and M: snips_u = sum over q of n_u(q) x value(q) + sum
--   over pairs of weight x (C_u - rate x M_u). Summed over units: sum over q of
--   n x value(q), the estimate's numerator (the second term sums to 0 over units).
-- outputs: unit, pages BIGINT, slots, supported (the unit's page slots whose pair has
--   M > 0), snips (above), clicks_used; per unit the clicks not used
--   (clicks_without_propensity, clicks_beyond_max_rank); and the same on every row:
--   weighted_sum (sum over pairs of weight x C), weighted_sum2 (of weight^2 x C),
--   pages_without_candidate, repeated_results.
WITH
s AS (
    SELECT search_id, {{unit}} AS unit, CAST({{query}} AS VARCHAR) AS query
    FROM {{searches}}
    WHERE {{query}} IS NOT NULL
),
cand AS (
    SELECT query, doc_id, cand_rank FROM {{candidate}}
),
prop AS (
    SELECT rank, propensity FROM {{propensity}}
),
cand_query AS (
    SELECT query, count(*) AS n_cand FROM cand GROUP BY query
),
pages AS (
    SELECT s.search_id, s.unit, s.query
    FROM s
    JOIN cand_query AS cq ON cq.query = s.query
),
clicked AS (
    SELECT DISTINCT search_id, rank FROM clicks WHERE rank IS NOT NULL
),
shown AS (
    SELECT p.unit, p.query, k.doc_id, k.cand_rank, r.rank AS logged_rank,
        CASE WHEN c.rank IS NULL THEN 0 ELSE 1 END AS clicked,
        row_number() OVER (PARTITION BY r.search_id, k.doc_id ORDER BY r.rank) AS nth
    FROM pages AS p
    JOIN results AS r ON r.search_id = p.search_id
    JOIN cand AS k ON k.query = p.query AND k.doc_id = CAST(r.doc_id AS VARCHAR)
    LEFT JOIN clicked AS c ON c.search_id = r.search_id AND c.rank = r.rank
),
marked AS (
    SELECT t.unit, t.query, t.doc_id, t.cand_rank, t.logged_rank, t.clicked, t.nth,
        CAST(pl.propensity AS DOUBLE) AS exam,
        t.nth = 1 AND t.logged_rank <= $max_rank AND pl.propensity IS NOT NULL AS usable
    FROM shown AS t
    LEFT JOIN prop AS pl ON pl.rank = t.logged_rank
),
cells AS (
    SELECT unit, query, doc_id, cand_rank, sum(clicked) AS c, sum(exam) AS m
    FROM marked
    WHERE usable
    GROUP BY unit, query, doc_id, cand_rank
),
unused AS (
    SELECT unit,
        sum(CASE WHEN nth = 1 AND logged_rank <= $max_rank AND NOT usable THEN clicked
            ELSE 0 END) AS clicks_without_propensity,
        sum(CASE WHEN nth = 1 AND logged_rank > $max_rank THEN clicked ELSE 0 END)
            AS clicks_beyond_max_rank,
        sum(CASE WHEN nth > 1 THEN 1 ELSE 0 END) AS repeated
    FROM marked
    WHERE NOT usable
    GROUP BY unit
),
pairs AS (
    SELECT query, doc_id, cand_rank, sum(c) AS c, sum(m) AS m
    FROM cells
    GROUP BY query, doc_id, cand_rank
),
unit_query AS (
    SELECT unit, query, count(*) AS n FROM pages GROUP BY unit, query
),
query_pages AS (
    SELECT query, sum(n) AS n FROM unit_query GROUP BY query
),
coef AS (
    SELECT pr.query, pr.doc_id, pr.c,
        CAST(pr.c AS DOUBLE) / CAST(pr.m AS DOUBLE) AS rate,
        CAST(pc.propensity AS DOUBLE) * CAST(qp.n AS DOUBLE) / CAST(pr.m AS DOUBLE) AS weight,
        CAST(pc.propensity AS DOUBLE) * CAST(pr.c AS DOUBLE) / CAST(pr.m AS DOUBLE) AS value
    FROM pairs AS pr
    JOIN query_pages AS qp ON qp.query = pr.query
    JOIN prop AS pc ON pc.rank = pr.cand_rank
    WHERE pr.m > 0
),
query_value AS (
    SELECT query, sum(value) AS value, count(*) AS supported FROM coef GROUP BY query
),
unit_mix AS (
    SELECT uq.unit, sum(uq.n) AS pages, sum(uq.n * cq.n_cand) AS slots,
        sum(CAST(uq.n AS DOUBLE) * coalesce(qv.value, 0.0)) AS mix,
        sum(uq.n * coalesce(qv.supported, 0)) AS supported
    FROM unit_query AS uq
    JOIN cand_query AS cq ON cq.query = uq.query
    LEFT JOIN query_value AS qv ON qv.query = uq.query
    GROUP BY uq.unit
),
unit_resid AS (
    SELECT ce.unit, sum(co.weight * (ce.c - co.rate * ce.m)) AS resid,
        sum(ce.c) AS clicks_used
    FROM cells AS ce
    JOIN coef AS co ON co.query = ce.query AND co.doc_id = ce.doc_id
    GROUP BY ce.unit
),
left_out AS (
    SELECT count(*) AS n
    FROM s
    LEFT JOIN cand_query AS cq ON cq.query = s.query
    WHERE cq.query IS NULL
)
SELECT um.unit, um.pages, um.slots, um.supported,
    um.mix + coalesce(ur.resid, 0.0) AS snips,
    coalesce(ur.clicks_used, 0) AS clicks_used,
    coalesce(un.clicks_without_propensity, 0) AS clicks_without_propensity,
    coalesce(un.clicks_beyond_max_rank, 0) AS clicks_beyond_max_rank,
    (SELECT coalesce(sum(weight * c), 0.0) FROM coef) AS weighted_sum,
    (SELECT coalesce(sum(weight * weight * c), 0.0) FROM coef) AS weighted_sum2,
    (SELECT n FROM left_out) AS pages_without_candidate,
    (SELECT coalesce(sum(repeated), 0) FROM unused) AS repeated_results
FROM unit_mix AS um
LEFT JOIN unit_resid AS ur ON ur.unit = um.unit
LEFT JOIN unused AS un ON un.unit = um.unit
ORDER BY um.unit
