-- name: agreement/per_query_ab_ctr
-- computes: per query (topic) of one A/B experiment, searches and searches with a click in the
--   control and treatment arms, and the per-query CTR difference, for the within-experiment
--   offline-online agreement. Python wrapper: onlineeval.report.build._per_query_ab.
-- grain: one row per query value with at least one search in either arm, plus one row with
--   qid NULL when some searches of the arms have no query value: it counts those searches
--   (they name no topic, so they are not a query: its ctr_delta is always NULL, and the Python
--   wrapper reports the count instead of pairing it with an offline query)
-- params: experiment, control, treatment
-- identifiers: query
-- query: the searches column naming the topic (qid when the log has it, else query)
-- requires: views searches(search_id, experiment, variant, {{query}}) and clicks(search_id)
--   of onlineeval.load_logs.
-- formula: ctr_arm = searches of the arm with >= 1 click / searches of the arm (per query);
--   ctr_delta = ctr_treatment - ctr_control, NULL when either arm has no search of the query
--   (the query is left out of the agreement and counted) and on the qid NULL row.
-- outputs: qid VARCHAR, searches_control, clicked_control, searches_treatment,
--   clicked_treatment BIGINT, ctr_delta DOUBLE
WITH
clicked AS (
    SELECT DISTINCT search_id FROM clicks
),
pages AS (
    SELECT
        CAST({{query:s.}} AS VARCHAR) AS qid,
        CAST(s.variant AS VARCHAR) AS variant,
        c.search_id IS NOT NULL AS has_click
    FROM searches AS s
    LEFT JOIN clicked AS c ON c.search_id = s.search_id
    WHERE CAST(s.experiment AS VARCHAR) = CAST($experiment AS VARCHAR)
      AND CAST(s.variant AS VARCHAR) IN (CAST($control AS VARCHAR), CAST($treatment AS VARCHAR))
),
per_query AS (
    SELECT
        qid,
        count(*) FILTER (WHERE variant = CAST($control AS VARCHAR)) AS searches_control,
        count(*) FILTER (WHERE variant = CAST($control AS VARCHAR) AND has_click)
            AS clicked_control,
        count(*) FILTER (WHERE variant = CAST($treatment AS VARCHAR)) AS searches_treatment,
        count(*) FILTER (WHERE variant = CAST($treatment AS VARCHAR) AND has_click)
            AS clicked_treatment
    FROM pages
    GROUP BY qid
)
SELECT
    qid, searches_control, clicked_control, searches_treatment, clicked_treatment,
    CASE WHEN qid IS NOT NULL AND searches_control > 0 AND searches_treatment > 0
         THEN CAST(clicked_treatment AS DOUBLE) / searches_treatment
            - CAST(clicked_control AS DOUBLE) / searches_control
    END AS ctr_delta
FROM per_query
ORDER BY qid NULLS LAST
