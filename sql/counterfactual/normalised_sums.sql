-- name: counterfactual/normalised_sums
-- computes: per randomization unit, the linearised sums of the two estimates of a candidate
--   ranking's clicks@k that pool each (query, candidate document)'s clicks over its pages:
--   snips, and dr with the log's own position-based model (examination = the propensities,
--   attractiveness = the pair's clicks over its examination mass). Each per-unit column
--   sums to its estimate's numerator, and its spread over units is the estimate's
--   delta-method variance, the pooled rates' own noise included (Python:
--   onlineeval.counterfactual.sums.per_unit).
-- grain: one row per unit with at least one page whose query the candidate ranks
-- params: max_rank, clip
-- identifiers: searches, query, unit, candidate, propensity
-- requires: as counterfactual/unit_sums (the candidate's dm_alpha and dm_seen and the
--   propensity table's dm_exam are not read).
-- pages, slots, usable slots: as in counterfactual/unit_sums (a document repeated on a
--   page is read at its highest rank); w = propensity(c) / propensity(l) of a usable slot,
--   capped at $clip when that is not NULL.
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
--   capped); per unit the clicks not used (clicks_without_propensity,
--   clicks_beyond_max_rank) and shown_without_propensity (as in counterfactual/unit_sums);
--   the same on every row: weighted_sum and weighted_sum2 (sum
--   over used clicks of their weight in the snips estimate, g, and of its square),
--   dr_weighted_sum and dr_weighted_sum2 (the same for dr, where a click weighs w + h),
--   pages_without_candidate, pages_without_unit, repeated_results.
WITH
s AS (
    SELECT search_id, {{unit}} AS unit, CAST({{query}} AS VARCHAR) AS query
    FROM {{searches}}
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
    WHERE s.unit IS NOT NULL
),
clicked AS (
    SELECT DISTINCT search_id, rank FROM clicks WHERE rank IS NOT NULL
),
shown AS (
    SELECT p.unit, p.query, r.search_id, k.doc_id, k.cand_rank,
        min(r.rank) AS logged_rank, count(*) - 1 AS repeats
    FROM pages AS p
    JOIN results AS r ON r.search_id = p.search_id
    JOIN cand AS k ON k.query = p.query AND k.doc_id = CAST(r.doc_id AS VARCHAR)
    GROUP BY p.unit, p.query, r.search_id, k.doc_id, k.cand_rank
),
marked AS (
    SELECT t.unit, t.query, t.doc_id, t.cand_rank, t.logged_rank, t.repeats,
        CASE WHEN c.rank IS NULL THEN 0 ELSE 1 END AS clicked,
        CAST(pl.propensity AS DOUBLE) AS exam,
        CAST(pc.propensity AS DOUBLE) AS exam_c,
        t.logged_rank <= $max_rank AND pl.propensity IS NOT NULL AS usable,
        CAST(pc.propensity AS DOUBLE) / CAST(pl.propensity AS DOUBLE) AS w_raw
    FROM shown AS t
    LEFT JOIN clicked AS c ON c.search_id = t.search_id AND c.rank = t.logged_rank
    LEFT JOIN prop AS pl ON pl.rank = t.logged_rank
    LEFT JOIN prop AS pc ON pc.rank = t.cand_rank
),
weighed AS (
    SELECT unit, query, doc_id, cand_rank, clicked, exam, exam_c, w_raw,
        CASE WHEN CAST($clip AS DOUBLE) < w_raw THEN CAST($clip AS DOUBLE) ELSE w_raw END
            AS w
    FROM marked
    WHERE usable
),
cells AS (
    SELECT unit, query, doc_id, cand_rank, count(*) AS s, sum(clicked) AS c, sum(exam) AS m,
        sum(w * clicked) AS a, sum(w * w * clicked) AS a2, sum(exam_c - w * exam) AS b,
        sum(CASE WHEN w_raw > w THEN clicked ELSE 0 END) AS clipped
    FROM weighed
    GROUP BY unit, query, doc_id, cand_rank
),
unused AS (
    SELECT unit,
        sum(CASE WHEN logged_rank <= $max_rank AND NOT usable THEN clicked ELSE 0 END)
            AS clicks_without_propensity,
        sum(CASE WHEN logged_rank > $max_rank THEN clicked ELSE 0 END)
            AS clicks_beyond_max_rank,
        sum(CASE WHEN usable THEN 0 ELSE 1 END) AS shown_without_propensity,
        sum(repeats) AS repeated
    FROM marked
    GROUP BY unit
),
pairs AS (
    SELECT query, doc_id, cand_rank, sum(s) AS s, sum(c) AS c, sum(m) AS m, sum(b) AS b
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
    SELECT pr.query, pr.doc_id, pr.c, CAST(pc.propensity AS DOUBLE) AS exam_c,
        CAST(pr.c AS DOUBLE) / CAST(pr.m AS DOUBLE) AS rate,
        CAST(pc.propensity AS DOUBLE) * CAST(qp.n AS DOUBLE) / CAST(pr.m AS DOUBLE) AS g,
        (CAST(pr.b AS DOUBLE) + CAST(qp.n - pr.s AS DOUBLE) * CAST(pc.propensity AS DOUBLE))
            / CAST(pr.m AS DOUBLE) AS h,
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
        sum(ce.a2 + 2.0 * co.h * ce.a + co.h * co.h * ce.c) AS dr_w2
    FROM cells AS ce
    JOIN coef AS co ON co.query = ce.query AND co.doc_id = ce.doc_id
),
left_out AS (
    SELECT count(*) AS n,
        sum(CASE WHEN cq.query IS NOT NULL AND s.unit IS NULL THEN 1 ELSE 0 END) AS no_unit
    FROM s
    LEFT JOIN cand_query AS cq ON cq.query = s.query
    WHERE cq.query IS NULL OR s.unit IS NULL
)
SELECT um.unit, um.pages, um.slots, um.supported,
    um.mix + coalesce(uc.snips_resid, 0.0) AS snips,
    um.mix + coalesce(uc.dr_resid, 0.0) AS dr,
    coalesce(uc.clicks_used, 0) AS clicks_used,
    coalesce(uc.clipped_clicks, 0) AS clipped_clicks,
    coalesce(un.clicks_without_propensity, 0) AS clicks_without_propensity,
    coalesce(un.clicks_beyond_max_rank, 0) AS clicks_beyond_max_rank,
    coalesce(un.shown_without_propensity, 0) AS shown_without_propensity,
    (SELECT coalesce(w1, 0.0) FROM click_weights) AS weighted_sum,
    (SELECT coalesce(w2, 0.0) FROM click_weights) AS weighted_sum2,
    (SELECT coalesce(dr_w1, 0.0) FROM click_weights) AS dr_weighted_sum,
    (SELECT coalesce(dr_w2, 0.0) FROM click_weights) AS dr_weighted_sum2,
    (SELECT n - coalesce(no_unit, 0) FROM left_out) AS pages_without_candidate,
    (SELECT coalesce(no_unit, 0) FROM left_out) AS pages_without_unit,
    (SELECT coalesce(sum(repeated), 0) FROM unused) AS repeated_results
FROM unit_mix AS um
LEFT JOIN unit_cells AS uc ON uc.unit = um.unit
LEFT JOIN unused AS un ON un.unit = um.unit
ORDER BY um.unit
