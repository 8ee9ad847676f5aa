-- name: agreement/per_query_ab_ctr
-- computes: per query (topic) of one A/B experiment, searches and searches with a click in the
--   control and treatment arms: the sums of the per-query CTR difference of the
--   within-experiment offline-online agreement. Python wrapper (which divides them as the
--   metric registry defines ctr): onlineeval.online.per_query.ab_ctr_per_query.
-- grain: one row per query value with at least one search in either arm, plus one row with
--   qid NULL when some searches of the arms have no query value: it counts those searches
--   (they name no topic, so they are not a query: the wrapper gives it no CTR difference and
--   reports the count instead of pairing it with an offline query)
-- params: experiment, control, treatment
-- identifiers: query, source
-- query: the column naming the topic (qid when the log has it, else query)
-- source: the per-search facts without sessions (onlineeval.online.facts.click_facts): one
--   row per search of the clean log, has_click defined there.
-- requires: columns experiment, variant, has_click and {{query}} of the source.
-- outputs: qid VARCHAR, searches_control, clicked_control, searches_treatment,
--   clicked_treatment BIGINT (searches of the arm, and of those the searches with
--   has_click = 1).
WITH
pages AS (
    SELECT
        CAST({{query}} AS VARCHAR) AS qid,
        CAST(variant AS VARCHAR) AS variant,
        has_click
    FROM {{source}}
    WHERE CAST(experiment AS VARCHAR) = CAST($experiment AS VARCHAR)
      AND CAST(variant AS VARCHAR) IN (CAST($control AS VARCHAR), CAST($treatment AS VARCHAR))
)
SELECT
    qid,
    count(*) FILTER (WHERE variant = CAST($control AS VARCHAR)) AS searches_control,
    count(*) FILTER (WHERE variant = CAST($control AS VARCHAR) AND has_click = 1)
        AS clicked_control,
    count(*) FILTER (WHERE variant = CAST($treatment AS VARCHAR)) AS searches_treatment,
    count(*) FILTER (WHERE variant = CAST($treatment AS VARCHAR) AND has_click = 1)
        AS clicked_treatment
FROM pages
GROUP BY qid
ORDER BY qid NULLS LAST
