-- name: ab/unit_sums
-- computes: the per-randomization-unit sums every A/B metric is a ratio of. The rows are the
--   per-search facts of online/search_facts (one row per search), so the A/B metrics cannot
--   drift from the online metrics: each online metric is sum(num) / sum(den) over these
--   columns, and its per-unit pieces are exactly these sums.
-- grain: with $by_exposure (the readout): one row per (unit, variant) of the analysed
--   searches (period 'exp'); one row per unit of pre-period searches (period 'pre') when
--   $cuped; one row per other period, summed over units (unit NULL). Without $by_exposure
--   (onlineeval.power's baseline): one row per (unit, variant) of every search of
--   $experiment (of the whole log when $experiment is NULL), period 'exp', NULL units kept.
-- params: by_exposure, cuped, experiment, win_start, win_end, pre_start
-- identifiers: facts, unit, stats, key
-- switches: daily, keyed, hourly
-- requires: the facts view named by `facts` (onlineeval.online.search_facts) with the unit
--   column, ts, experiment, variant and the fact columns named by stats.
-- stats: the per-search statistics to sum: the facts online/search_facts tags "summed"
--   (onlineeval.online.facts.STATISTICS), the same as online/metrics sums.
-- exposure: a search of $experiment (any search when $experiment is NULL) carrying a variant,
--   with $win_start <= ts < $win_end (a NULL bound: no bound). A unit's first exposure is the
--   earliest; a unit without an exposure is not analysed.
-- periods (with $by_exposure), each search in exactly one:
--   'null_unit' the unit column is NULL;
--   'unexposed' its unit has no exposure;
--   'exp' an exposure (the outcome; every exposure is at or after its unit's first one);
--   'pre' before its unit's first exposure, whatever its experiment or variant (so with
--     $win_start everything before it), and ts >= $pre_start when that is not NULL: the
--     CUPED pre-period, never outcome;
--   'before_pre_period' before its unit's first exposure and before $pre_start;
--   'after_window' at or after the first exposure and ts >= $win_end;
--   'outside_experiment' at or after the first exposure, inside the window, of another
--     experiment or of none;
--   'no_variant' at or after the first exposure, inside the window, of $experiment without a
--     variant.
--   A search without ts (a log without ts) cannot be placed before an exposure: it is 'exp'
--   when it is an exposure, else 'outside_experiment' or 'no_variant'.
-- outputs: unit (the unit column's value; NULL on rows summed over units), period VARCHAR,
--   variant VARCHAR ('exp' rows only), first_ts, last_ts TIMESTAMP (earliest and latest ts
--   of the row's searches), then per-unit statistics named exactly as those of
--   online/metrics (the numerators and denominators of onlineeval.online.definitions.METRICS):
--   searches = count(*) and, for every statistic in stats, the SUM of the facts column of
--   the same name, 0 when it has no value (ttfc_s and rr, DOUBLE, may be NULL per search);
--   with $keyed, key (the key column's value, 'exp' rows only); with $daily, day DATE (the
--   search's ts cast to a date, in the log's time) and exposure_day INTEGER (whole 24-hour
--   periods from the unit's first exposure to the search: 0 for its first 24 hours), both
--   on 'exp' rows only (NULL on the other rows, which are not split). With $hourly as well,
--   day is the search's ts truncated to the hour (a TIMESTAMP: hourly looks).
-- formula: metric = sum over units of num / sum over units of den, e.g.
--   ctr = sum(has_click) / sum(searches); click_mrr = sum(rr) / sum(known_rr).
WITH
f AS (
    -- named columns only: a log's own extra columns (e.g. one called period) pass through
    -- the facts view and would otherwise shadow the columns made below
    SELECT
        {{unit}} AS unit, ts, experiment, variant, {{key:@ AS _oe_key,}} {{stats}}
    FROM {{facts}}
),
marked AS (
    SELECT *,
        CAST($experiment AS VARCHAR) IS NULL
            OR coalesce(CAST(experiment AS VARCHAR) = CAST($experiment AS VARCHAR), false)
            AS in_experiment
    FROM f
),
exposures AS (
    SELECT *,
        in_experiment AND variant IS NOT NULL
            AND (CAST($win_start AS TIMESTAMP) IS NULL OR ts >= CAST($win_start AS TIMESTAMP))
            AND (CAST($win_end AS TIMESTAMP) IS NULL OR ts < CAST($win_end AS TIMESTAMP))
            AS exposure
    FROM marked
),
first_exposure AS (
    SELECT unit, min(ts) AS first_ts, true AS exposed
    FROM exposures
    WHERE $by_exposure AND exposure AND unit IS NOT NULL
    GROUP BY unit
),
tagged AS (
    SELECT e.*,
        CASE
            WHEN NOT $by_exposure THEN CASE WHEN e.in_experiment THEN 'exp' END
            WHEN e.unit IS NULL THEN 'null_unit'
            WHEN x.exposed IS NULL THEN 'unexposed'
            WHEN e.exposure THEN 'exp'
            WHEN e.ts < x.first_ts THEN
                CASE WHEN CAST($pre_start AS TIMESTAMP) IS NULL
                          OR e.ts >= CAST($pre_start AS TIMESTAMP) THEN 'pre'
                     ELSE 'before_pre_period' END
            WHEN e.ts >= CAST($win_end AS TIMESTAMP) THEN 'after_window'
            WHEN NOT e.in_experiment THEN 'outside_experiment'
            ELSE 'no_variant'
        END AS period,
        x.first_ts AS _oe_first_exposure
    FROM exposures AS e
    LEFT JOIN first_exposure AS x ON x.unit = e.unit
)
SELECT
    CASE WHEN NOT $by_exposure OR period = 'exp' OR (period = 'pre' AND $cuped)
         THEN unit END AS unit,
    period,
    CASE WHEN period = 'exp' THEN CAST(variant AS VARCHAR) END AS variant,
    {{#keyed}}CASE WHEN period = 'exp' THEN _oe_key END AS key,{{/keyed}}
    {{#daily}}
    CASE WHEN period = 'exp' THEN
        {{#hourly}}date_trunc('hour', ts){{/hourly}}{{^hourly}}CAST(ts AS DATE){{/hourly}}
    END AS day,
    CASE WHEN period = 'exp' THEN CAST(floor(
        CAST(date_diff('microsecond', _oe_first_exposure, ts) AS DOUBLE)
        / CAST(86400000000 AS DOUBLE)
    ) AS INTEGER) END AS exposure_day,
    {{/daily}}
    min(ts) AS first_ts,
    max(ts) AS last_ts,
    count(*) AS searches,
    {{stats:coalesce(sum(@), 0) AS @}}
FROM tagged
WHERE period IS NOT NULL
-- unit, period, variant (then key, day, exposure_day when switched on): by position, as the
-- names unit and variant are also input columns
GROUP BY 1, 2, 3{{#keyed}}, 4{{#daily}}, 5, 6{{/daily}}{{/keyed}}{{^keyed}}{{#daily}}, 4, 5{{/daily}}{{/keyed}}
