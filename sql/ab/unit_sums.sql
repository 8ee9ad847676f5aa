-- name: ab/unit_sums
-- computes: the per-randomization-unit sums every A/B metric is a ratio of. The rows are the
--   per-search facts of online/search_facts (one row per search), so the A/B metrics cannot
--   drift from the online metrics: each online metric is sum(num) / sum(den) over these
--   columns, and its per-unit pieces are exactly these sums.
-- grain: one row per (unit, period, variant); pre-period rows have variant NULL.
-- params: use_periods, exp_start, pre_start, pre_end, experiment
-- identifiers: facts, unit
-- requires: the facts view named by `facts` (onlineeval.online.search_facts) with the unit
--   column, ts, experiment, variant and the fact columns summed below.
-- periods: without $use_periods every search is in the experiment period ('exp'). With it,
--   'pre' is $pre_start <= ts < $pre_end ($pre_start NULL: no lower bound) and 'exp' is
--   ts >= $exp_start; searches in neither (or with NULL ts) are 'none' (returned so the caller
--   can count them). $experiment, when not NULL, keeps only that experiment's searches in the
--   'exp' period (pre-period searches are kept whatever experiment they belong to).
-- outputs: unit (the unit column's value), period VARCHAR, variant VARCHAR, then per-unit
--   statistics named exactly as those of online/metrics (the numerators and denominators of
--   onlineeval.online.definitions.METRICS): searches = count(*), known_rr = count(rr), and
--   the SUM of the facts column of the same name for session_first (= sessions), has_click,
--   n_clicks, n_sat_clicks, nonzero, abandoned, known_n_results, zero_result,
--   session_has_click, session_abandoned, session_success, ttfc_s (DOUBLE seconds, 0 when
--   none), has_ttfc, rr (DOUBLE, 0 when none), reformulated, known_query.
-- formula: metric = sum over units of num / sum over units of den, e.g.
--   ctr = sum(has_click) / sum(searches); click_mrr = sum(rr) / sum(known_rr).
WITH
f AS (
    -- named columns only: a log's own extra columns (e.g. one called period) pass through
    -- the facts view and would otherwise shadow the columns made below
    SELECT
        {{unit}} AS unit, ts, experiment, variant, session_first, has_click, n_clicks,
        n_sat_clicks, nonzero, abandoned, known_n_results, zero_result, session_has_click,
        session_abandoned, session_success, ttfc_s, has_ttfc, rr, reformulated, known_query
    FROM {{facts}}
),
tagged AS (
    SELECT *,
        CASE
            WHEN NOT $use_periods THEN 'exp'
            WHEN ts >= CAST($exp_start AS TIMESTAMP) THEN 'exp'
            WHEN ts < CAST($pre_end AS TIMESTAMP)
                AND (CAST($pre_start AS TIMESTAMP) IS NULL
                     OR ts >= CAST($pre_start AS TIMESTAMP)) THEN 'pre'
            ELSE 'none'
        END AS period
    FROM f
),
kept AS (
    SELECT *
    FROM tagged
    WHERE period <> 'exp'
        OR CAST($experiment AS VARCHAR) IS NULL
        OR CAST(experiment AS VARCHAR) = CAST($experiment AS VARCHAR)
)
SELECT
    unit,
    period,
    CASE WHEN period = 'exp' THEN CAST(variant AS VARCHAR) END AS variant,
    count(*) AS searches,
    sum(session_first) AS session_first,
    sum(has_click) AS has_click,
    sum(n_clicks) AS n_clicks,
    sum(n_sat_clicks) AS n_sat_clicks,
    sum(nonzero) AS nonzero,
    sum(abandoned) AS abandoned,
    sum(known_n_results) AS known_n_results,
    sum(zero_result) AS zero_result,
    sum(session_has_click) AS session_has_click,
    sum(session_abandoned) AS session_abandoned,
    sum(session_success) AS session_success,
    coalesce(sum(ttfc_s), 0.0) AS ttfc_s,
    sum(has_ttfc) AS has_ttfc,
    coalesce(sum(rr), 0.0) AS rr,
    count(rr) AS known_rr,
    sum(reformulated) AS reformulated,
    sum(known_query) AS known_query
FROM kept
GROUP BY ALL
