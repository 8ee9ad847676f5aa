-- name: counterfactual/unit_sums
-- computes: per randomization unit, the sums of which the position-based IPS and doubly
--   robust (DR, with a given click model) estimates of a candidate ranking's clicks@k are
--   ratios (sum over units of a column / sum of pages). Python wrapper:
--   onlineeval.counterfactual.sums.per_unit.
-- grain: one row per unit with at least one used page
-- params: none
-- identifiers: pages, slots
-- requires: the views named by `pages` (counterfactual/pages) and `slots`
--   (counterfactual/slots, made from that pages view).
-- slots: a used page has one slot per document the candidate ranks in its top k for the
--   page's query; a slot is supported when the page showed the document usably (a row of
--   `slots` with usable true), and weighs w there.
-- outputs: unit, pages BIGINT, slots, supported, ips (sum over supported slots of
--   w x clicked), dr (sum over pages of the model's dm_value, plus sum over supported slots
--   of w x (clicked - dm_exam(l) x dm_alpha); NULL terms count 0), model_unseen (slots
--   whose dm_seen is not true), clicks_used (clicks on supported slots), clicks_w2 (sum of
--   w^2 x clicked), clipped_clicks (clicked supported slots whose weight was capped), and
--   per unit the candidate documents shown but not used: clicks_without_propensity (their
--   clicks at a rank <= $max_rank of `slots` without a propensity), clicks_beyond_max_rank,
--   shown_without_propensity (all of them, clicked or not); the same on every row:
--   pages_without_candidate (query NULL or not ranked), pages_without_unit (ranked query,
--   NULL unit), repeated_results (result rows repeating a candidate document higher on
--   the same page).
WITH
slot_sums AS (
    SELECT unit,
        sum(CASE WHEN usable THEN 1 ELSE 0 END) AS supported,
        sum(w * clicked) AS ips,
        sum(w * (clicked - coalesce(dm_exam * dm_alpha, CAST(0 AS DOUBLE)))) AS correction,
        sum(CASE WHEN usable THEN clicked ELSE 0 END) AS clicks_used,
        sum(w * w * clicked) AS clicks_w2,
        sum(CASE WHEN usable AND w_raw > w THEN clicked ELSE 0 END) AS clipped_clicks,
        sum(CASE WHEN NOT usable AND NOT beyond_max_rank THEN clicked ELSE 0 END)
            AS clicks_without_propensity,
        sum(CASE WHEN beyond_max_rank THEN clicked ELSE 0 END) AS clicks_beyond_max_rank,
        sum(CASE WHEN usable THEN 0 ELSE 1 END) AS shown_without_propensity,
        sum(repeats) AS repeated
    FROM {{slots}}
    GROUP BY unit
),
unit_pages AS (
    SELECT unit, count(*) AS pages, sum(n_cand) AS slots, sum(dm_value) AS dm_value,
        sum(n_unseen) AS model_unseen
    FROM {{pages}}
    WHERE used
    GROUP BY unit
),
left_out AS (
    SELECT sum(CASE WHEN n_cand IS NULL THEN 1 ELSE 0 END) AS no_candidate,
        sum(CASE WHEN n_cand IS NOT NULL AND unit IS NULL THEN 1 ELSE 0 END) AS no_unit
    FROM {{pages}}
)
SELECT u.unit, u.pages, u.slots,
    coalesce(t.supported, 0) AS supported,
    coalesce(t.ips, CAST(0 AS DOUBLE)) AS ips,
    u.dm_value + coalesce(t.correction, CAST(0 AS DOUBLE)) AS dr,
    u.model_unseen,
    coalesce(t.clicks_used, 0) AS clicks_used,
    coalesce(t.clicks_w2, CAST(0 AS DOUBLE)) AS clicks_w2,
    coalesce(t.clipped_clicks, 0) AS clipped_clicks,
    coalesce(t.clicks_without_propensity, 0) AS clicks_without_propensity,
    coalesce(t.clicks_beyond_max_rank, 0) AS clicks_beyond_max_rank,
    coalesce(t.shown_without_propensity, 0) AS shown_without_propensity,
    (SELECT coalesce(no_candidate, 0) FROM left_out) AS pages_without_candidate,
    (SELECT coalesce(no_unit, 0) FROM left_out) AS pages_without_unit,
    (SELECT coalesce(sum(repeated), 0) FROM slot_sums) AS repeated_results
FROM unit_pages AS u
LEFT JOIN slot_sums AS t ON t.unit = u.unit
ORDER BY u.unit
