-- name: counterfactual/normalised_sums
-- computes: per randomization unit, the linearised sums of the two estimates of a candidate
--   ranking's clicks@k that pool each (query, candidate document)'s clicks over its pages:
--   snips, and dr with the log's own position-based model (examination = the propensities,
--   attractiveness = the pair's clicks over its examination mass). Each per-unit column
--   sums to its estimate's numerator, and its spread over units is the estimate's
--   delta-method variance, the pooled rates' own noise included (Python:
--   onlineeval.counterfactual.sums.per_unit).
-- grain: one row per unit with at least one used page
-- params: none
-- identifiers: pages, slots
-- requires: the views named by `pages` (counterfactual/pages) and `slots`
--   (counterfactual/slots, made from that pages view); the model columns are not read.
-- pages, slots, usable slots, w: as defined in counterfactual/pages and counterfactual/slots.
-- definitions: per (query q, candidate document d at candidate rank c, propensity p_c):
--   n = pages of q; S = its usable slots; C = their clicks; M = the sum of propensity(l)
--   over them (the examination mass); A = sum of w x click; B = sum of (p_c - w x
--   propensity(l)) (0 without a cap). Pairs with M = 0 (never shown usably) contribute 0.
--   rate = C / M. value(q) = sum over its pairs of p_c x rate. A unit's share of a pair's
--   sums is written with a suffix u, n_u(q) its pages of q.
--   snips = sum over q of n x value(q); per unit: sum over q of n_u(q) x value(q) + sum
--   over pairs of g x (C_u - rate x M_u), with g = p_c x n / M.
--   dr = the sum over usable slots of w x click + rate x (p_c - w x propensity(l)), plus
--   p_c x rate for each of the pair's n - S slots not shown; per unit: sum over q of
--   n_u(q) x value(q) + sum over pairs of A_u + rate x (B_u - S_u x p_c) + h x (C_u - rate
--   x M_u), with h = (B + (n - S) x p_c) / M. (The second terms, the rates' influence,
--   sum to 0 over units.)
-- outputs: unit, pages BIGINT, slots, supported (the unit's page slots whose pair has
--   M > 0), snips, dr, clicks_used, clipped_clicks (clicked usable slots whose w was
--   capped); per unit the candidate documents shown but not used (clicks_without_propensity,
--   clicks_beyond_max_rank, shown_without_propensity, as in counterfactual/unit_sums); the
--   same on every row: weighted_sum and weighted_sum2 (sum over used clicks of their weight
--   in the snips estimate, g, and of its square),
--   dr_weighted_sum and dr_weighted_sum2 (the same for dr, where a click weighs w + h),
--   pages_without_candidate, pages_without_unit, repeated_results.
WITH
unit_query AS (
    SELECT unit, query, count(*) AS n, max(n_cand) AS n_cand
    FROM {{pages}}
    WHERE used
    GROUP BY unit, query
),
query_pages AS (
    SELECT query, sum(n) AS n FROM unit_query GROUP BY query
),
cells AS (
    -- the one read of the slots: per unit and pair, the usable slots' sums and the others'
    SELECT unit, query, doc_id, cand_rank,
        sum(CASE WHEN usable THEN 1 ELSE 0 END) AS s,
        sum(CASE WHEN usable THEN clicked ELSE 0 END) AS c,
        sum(CASE WHEN usable THEN exam ELSE CAST(0 AS DOUBLE) END) AS m,
        sum(CASE WHEN usable THEN w * clicked ELSE CAST(0 AS DOUBLE) END) AS a,
        sum(CASE WHEN usable THEN w * w * clicked ELSE CAST(0 AS DOUBLE) END) AS a2,
        sum(CASE WHEN usable THEN exam_c - w * exam ELSE CAST(0 AS DOUBLE) END) AS b,
        sum(CASE WHEN usable AND w_raw > w THEN clicked ELSE 0 END) AS clipped,
        max(exam_c) AS exam_c,
        sum(CASE WHEN NOT usable AND NOT beyond_max_rank THEN clicked ELSE 0 END)
            AS clicks_without_propensity,
        sum(CASE WHEN beyond_max_rank THEN clicked ELSE 0 END) AS clicks_beyond_max_rank,
        sum(CASE WHEN usable THEN 0 ELSE 1 END) AS shown_without_propensity,
        sum(repeats) AS repeated
    FROM {{slots}}
    GROUP BY unit, query, doc_id, cand_rank
),
unused AS (
    SELECT unit, sum(clicks_without_propensity) AS clicks_without_propensity,
        sum(clicks_beyond_max_rank) AS clicks_beyond_max_rank,
        sum(shown_without_propensity) AS shown_without_propensity, sum(repeated) AS repeated
    FROM cells
    GROUP BY unit
),
pairs AS (
    SELECT query, doc_id, cand_rank, sum(s) AS s, sum(c) AS c, sum(m) AS m, sum(b) AS b,
        max(exam_c) AS exam_c
    FROM cells
    GROUP BY query, doc_id, cand_rank
),
coef AS (
    SELECT pr.query, pr.doc_id, pr.exam_c,
        CAST(pr.c AS DOUBLE) / CAST(pr.m AS DOUBLE) AS rate,
        pr.exam_c * CAST(qp.n AS DOUBLE) / CAST(pr.m AS DOUBLE) AS g,
        (CAST(pr.b AS DOUBLE) + CAST(qp.n - pr.s AS DOUBLE) * pr.exam_c)
            / CAST(pr.m AS DOUBLE) AS h,
        pr.exam_c * CAST(pr.c AS DOUBLE) / CAST(pr.m AS DOUBLE) AS value
    FROM pairs AS pr
    JOIN query_pages AS qp ON qp.query = pr.query
    WHERE pr.m > 0
),
query_value AS (
    SELECT query, sum(value) AS value, count(*) AS supported FROM coef GROUP BY query
),
unit_mix AS (
    SELECT uq.unit, sum(uq.n) AS pages, sum(uq.n * uq.n_cand) AS slots,
        sum(CAST(uq.n AS DOUBLE) * coalesce(qv.value, CAST(0 AS DOUBLE))) AS mix,
        sum(uq.n * coalesce(qv.supported, 0)) AS supported
    FROM unit_query AS uq
    LEFT JOIN query_value AS qv ON qv.query = uq.query
    GROUP BY uq.unit
),
unit_cells AS (
    SELECT ce.unit,
        sum(co.g * (ce.c - co.rate * ce.m)) AS snips_resid,
        sum(ce.a + co.rate * (ce.b - ce.s * co.exam_c) + co.h * (ce.c - co.rate * ce.m))
            AS dr_resid,
        sum(ce.c) AS clicks_used,
        sum(ce.clipped) AS clipped_clicks
    FROM cells AS ce
    JOIN coef AS co ON co.query = ce.query AND co.doc_id = ce.doc_id
    GROUP BY ce.unit
),
click_weights AS (
    SELECT sum(co.g * ce.c) AS w1, sum(co.g * co.g * ce.c) AS w2,
        sum(ce.a + co.h * ce.c) AS dr_w1,
        sum(ce.a2 + CAST(2 AS DOUBLE) * co.h * ce.a + co.h * co.h * ce.c) AS dr_w2
    FROM cells AS ce
    JOIN coef AS co ON co.query = ce.query AND co.doc_id = ce.doc_id
),
left_out AS (
    SELECT sum(CASE WHEN n_cand IS NULL THEN 1 ELSE 0 END) AS no_candidate,
        sum(CASE WHEN n_cand IS NOT NULL AND unit IS NULL THEN 1 ELSE 0 END) AS no_unit
    FROM {{pages}}
)
SELECT um.unit, um.pages, um.slots, um.supported,
    um.mix + coalesce(uc.snips_resid, CAST(0 AS DOUBLE)) AS snips,
    um.mix + coalesce(uc.dr_resid, CAST(0 AS DOUBLE)) AS dr,
    coalesce(uc.clicks_used, 0) AS clicks_used,
    coalesce(uc.clipped_clicks, 0) AS clipped_clicks,
    coalesce(un.clicks_without_propensity, 0) AS clicks_without_propensity,
    coalesce(un.clicks_beyond_max_rank, 0) AS clicks_beyond_max_rank,
    coalesce(un.shown_without_propensity, 0) AS shown_without_propensity,
    (SELECT coalesce(w1, CAST(0 AS DOUBLE)) FROM click_weights) AS weighted_sum,
    (SELECT coalesce(w2, CAST(0 AS DOUBLE)) FROM click_weights) AS weighted_sum2,
    (SELECT coalesce(dr_w1, CAST(0 AS DOUBLE)) FROM click_weights) AS dr_weighted_sum,
    (SELECT coalesce(dr_w2, CAST(0 AS DOUBLE)) FROM click_weights) AS dr_weighted_sum2,
    (SELECT coalesce(no_candidate, 0) FROM left_out) AS pages_without_candidate,
    (SELECT coalesce(no_unit, 0) FROM left_out) AS pages_without_unit,
    (SELECT coalesce(sum(repeated), 0) FROM unused) AS repeated_results
FROM unit_mix AS um
LEFT JOIN unit_cells AS uc ON uc.unit = um.unit
LEFT JOIN unused AS un ON un.unit = um.unit
ORDER BY um.unit
