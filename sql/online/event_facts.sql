-- name: online/event_facts
-- computes: the per-search facts of online/search_facts with the outcome facts of the
--   events attributed to each search (online/attribution) added; with no events (a log
--   without an events table) the outcome facts are 0 or NULL on every search, so the
--   metrics of online/metrics and ab/unit_sums read one set of columns for every log.
-- grain: one row per searches.search_id (the rows of the facts view)
-- params: none
-- identifiers: facts, attribution, session
-- switches: events, sessions
-- facts: the per-search facts view (onlineeval.online.search_facts' base view).
-- attribution: the view of online/attribution for the chosen window and event type.
-- session: the columns naming a session in the facts: user_id and session_id when the log
--   gives sessions, user_id and session_no when they are derived.
-- events: the log has an events table (else attribution and session are unused).
-- sessions: the facts have sessions (session_first); off for a log without ts and
--   session_id, whose session facts are meaningless anyway.
-- outputs: every column of facts, then (tag "summed": a per-search statistic that
--   online/metrics and ab/unit_sums sum, as for search_facts):
--   * n_events BIGINT, summed: events attributed to the search
--   * converted INTEGER, summed: 1 when at least one event is attributed to the search
--   * revenue DOUBLE, summed: sum of the value of its attributed events (an event without a
--     value adds 0); 0 without events
--   * first_event_ts TIMESTAMP: the earliest ts of its attributed events
--   * ttc_s DOUBLE, summed: first_event_ts - ts in seconds (NULL without an attributed event
--     or search ts; negative when an event named its search but came before it)
--   * has_ttc INTEGER, summed: ttc_s not NULL
--   * session_converted INTEGER, summed: on session_first rows only (0 elsewhere), 1 when a
--     search of the session is converted
WITH
{{#events}}
per_search AS (
    SELECT a.search_id, count(*) AS n_events, sum(coalesce(a.value, 0)) AS revenue,
        min(a.ts) AS first_event_ts
    FROM {{attribution}} AS a
    WHERE a.search_id IS NOT NULL
    GROUP BY a.search_id
),
{{/events}}
joined AS (
    SELECT f.*,
        {{#events}}
        coalesce(p.n_events, 0) AS n_events,
        CAST(CASE WHEN p.n_events > 0 THEN 1 ELSE 0 END AS INTEGER) AS converted,
        coalesce(p.revenue, CAST(0 AS DOUBLE)) AS revenue,
        p.first_event_ts
        {{/events}}
        {{^events}}
        CAST(0 AS BIGINT) AS n_events,
        CAST(0 AS INTEGER) AS converted,
        CAST(0 AS DOUBLE) AS revenue,
        CAST(NULL AS TIMESTAMP) AS first_event_ts
        {{/events}}
    FROM {{facts}} AS f
    {{#events}}LEFT JOIN per_search AS p ON f.search_id = p.search_id{{/events}}
)
SELECT j.*,
    CAST(date_diff('microsecond', j.ts, j.first_event_ts) AS DOUBLE)
        / CAST(1000000 AS DOUBLE) AS ttc_s,
    CAST(CASE WHEN j.first_event_ts IS NOT NULL AND j.ts IS NOT NULL THEN 1 ELSE 0 END
        AS INTEGER) AS has_ttc,
    {{#events}}{{#sessions}}
    CAST(CASE WHEN j.session_first = 1
        AND max(j.converted) OVER (PARTITION BY {{session:j.@}}) = 1 THEN 1 ELSE 0 END
        AS INTEGER) AS session_converted
    {{/sessions}}{{/events}}
    {{^events}}CAST(0 AS INTEGER) AS session_converted{{/events}}
    {{#events}}{{^sessions}}CAST(0 AS INTEGER) AS session_converted{{/sessions}}{{/events}}
FROM joined AS j
