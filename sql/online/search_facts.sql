-- name: online/search_facts
-- computes: the per-search facts every online metric is a ratio of sums of. One row per search
--   of the cleaned `searches` view; the sessions, satisfied-click, dwell, first-click and
--   reformulation logic lives here and nowhere else (online metrics, A/B tests and the
--   benchmark all aggregate these rows). Python wrapper: onlineeval.online.search_facts.
-- grain: one row per searches.search_id
-- params: gap_s, sat_dwell_ms, derive_sessions
-- identifiers: part
-- requires: views searches(search_id, user_id, ts, session_id, query, n_results, ...) and
--   clicks(search_id, rank, ts, dwell_ms) as built by onlineeval.load_logs (cleaned rows).
-- part: the stream partition, (user_id) when sessions are derived, (user_id, session_id)
--   when given; the caller passes the column names.
-- event stream: per user, the searches and the clicks with a ts, ordered by (ts, is_click,
--   search_id, rank, dwell_ms; NULLs last) so a click sorts after a search with the same ts.
-- sessions: when $derive_sessions, a user's session ends when the next event (search OR click)
--   comes MORE than $gap_s seconds after the previous one (a gap of exactly $gap_s stays in
--   the session); otherwise sessions are the given (user_id, session_id) pairs. A search
--   belongs to the session of its own event; a click counts for the session of the search it
--   was made on (so session outcomes agree with has_click).
-- dwell: dwell_ms when given, else (derived) the time from the click to the user's next event
--   in the same session; unknown (NULL) when the click is the last event of its session or has
--   no ts. A click is satisfied when dwell >= $sat_dwell_ms, or when its dwell is unknown and
--   it is the last event of its session (a click without ts and dwell is never satisfied).
-- reformulation: a search is reformulated when the next event after it in its session is a
--   search with a known, different query (so no click in between) and it has no click without
--   ts (such a click cannot be placed; it is taken to come before the next search).
-- plan: read once, no join per metric: clicks get their user (hash join); one window pass
--   sorts each user's stream (lag/lead) and keeps narrow rows (materialized: read twice); a
--   second window numbers the sessions over the searches and the session-starting clicks
--   only; then per-search click aggregates, per-session outcomes, and the searches columns
--   are hash-joined back on search_id.
-- outputs: every searches column (search_id, user_id, ts, session_id, query, experiment,
--   variant, n_results, ...) followed by:
--   session_no BIGINT: derived sessions: sessions started by the user's events so far
--   (1-based; may skip a number for a session of clicks only); NULL when given;
--   session_first INTEGER: 1 on the first search of its session (by ts, then search_id), else 0;
--   has_click INTEGER: 1 when the search has >= 1 click;  n_clicks BIGINT: clicks on it;
--   n_sat_clicks BIGINT: satisfied clicks on it;  min_click_rank INTEGER: lowest clicked rank;
--   rr DOUBLE: 1/min_click_rank, 0 without a click (NULL when clicked but no rank known);
--   known_rr INTEGER: rr not NULL;
--   first_click_ts TIMESTAMP: earliest click ts;  ttfc_s DOUBLE: first_click_ts - ts in
--   seconds (NULL without a timed click or search ts);  has_ttfc INTEGER: ttfc_s not NULL;
--   known_n_results INTEGER: n_results not NULL;  nonzero INTEGER: n_results > 0;
--   zero_result INTEGER: n_results = 0;  abandoned INTEGER: n_results > 0 and no click;
--   known_query INTEGER: query not NULL;  reformulated INTEGER: see above;
--   session_has_click, session_success, session_abandoned INTEGER: on session_first rows
--   only (0 elsewhere), 1 when the session has >= 1 click / >= 1 satisfied click / no click.
WITH
clicked AS (
    -- each click with its search's user (and given session)
    SELECT c.search_id, {{part:s.,}} c.ts, c.rank, c.dwell_ms
    FROM clicks AS c
    JOIN searches AS s ON c.search_id = s.search_id
),
events AS (
    -- only what the stream logic needs; the other searches columns are joined at the end
    SELECT {{part,}} search_id, ts, false AS is_click, query, NULL::INTEGER AS rank,
        NULL::DOUBLE AS dwell_ms
    FROM searches
    UNION ALL
    SELECT {{part,}} search_id, ts, true AS is_click, NULL::VARCHAR AS query, rank, dwell_ms
    FROM clicked
),
flagged AS MATERIALIZED (
    -- the one sort of each user's (or given session's) stream; only narrow rows are kept,
    -- as they are read twice. Clicks without ts sort last and are kept out of the session
    -- and dwell logic by the ts IS NOT NULL guards.
    SELECT {{part,}} search_id, ts, is_click, rank, ev_ord,
        $derive_sessions AND ts IS NOT NULL AND (
            prev_ts IS NULL OR epoch_us(ts) - epoch_us(prev_ts) > $gap_s * 1000000
        ) AS starts_session,
        coalesce(dwell_ms, CASE WHEN next_in_session
                THEN (epoch_us(next_ts) - epoch_us(ts)) / 1000.0 END) >= $sat_dwell_ms
            OR (dwell_ms IS NULL AND ts IS NOT NULL AND NOT next_in_session) AS satisfied,
        next_in_session AND NOT next_is_click AND query IS NOT NULL
            AND next_query IS NOT NULL AND next_query <> query AS next_is_new_query
    FROM (
        SELECT *,
            ts IS NOT NULL AND next_ts IS NOT NULL AND (
                NOT $derive_sessions
                OR epoch_us(next_ts) - epoch_us(ts) <= $gap_s * 1000000
            ) AS next_in_session
        FROM (
            SELECT *,
                row_number() OVER w AS ev_ord,
                lag(ts) OVER w AS prev_ts,
                lead(ts) OVER w AS next_ts,
                lead(is_click) OVER w AS next_is_click,
                lead(query) OVER w AS next_query
            FROM events
            WINDOW w AS (PARTITION BY {{part}}
                         ORDER BY ts ASC NULLS LAST, is_click, search_id,
                             rank ASC NULLS LAST, dwell_ms ASC NULLS LAST)
        ) AS ordered
    ) AS gaps
),
numbered AS (
    -- session numbers, from the searches and the clicks that start a session (no other click
    -- changes a number). A search is the first of its session when it starts the session or
    -- comes right after a click that did; with given sessions, when it is the first row.
    SELECT {{part,}} search_id, is_click, next_is_new_query,
        CASE WHEN $derive_sessions THEN sum(starts_session::INTEGER) OVER w2 END AS session_no,
        CASE WHEN $derive_sessions THEN starts_session OR coalesce(lag(is_click) OVER w2, false)
            ELSE lag(is_click) OVER w2 IS NULL END AS session_first
    FROM flagged
    WHERE NOT is_click OR starts_session
    WINDOW w2 AS (PARTITION BY {{part}} ORDER BY ev_ord)
),
click_facts AS (
    SELECT search_id,
        count(*) AS n_clicks,
        count(*) FILTER (WHERE ts IS NULL) AS n_untimed_clicks,
        count(*) FILTER (WHERE satisfied) AS n_sat_clicks,
        min(rank) AS min_click_rank,
        min(ts) AS first_click_ts
    FROM flagged
    WHERE is_click
    GROUP BY search_id
),
search_rows AS (
    SELECT {{part:n.,}} n.search_id, n.session_no, n.session_first,
        coalesce(cf.n_clicks, 0) AS n_clicks,
        coalesce(cf.n_sat_clicks, 0) AS n_sat_clicks,
        cf.min_click_rank, cf.first_click_ts,
        (n.next_is_new_query AND coalesce(cf.n_untimed_clicks, 0) = 0)::INTEGER
            AS reformulated
    FROM numbered AS n
    LEFT JOIN click_facts AS cf ON n.search_id = cf.search_id
    WHERE NOT n.is_click
),
sessions AS (
    SELECT max(search_id) FILTER (WHERE session_first) AS first_search_id,
        max(n_clicks > 0)::INTEGER AS session_has_click,
        max(n_sat_clicks > 0)::INTEGER AS session_success
    FROM search_rows
    GROUP BY {{part,}} session_no
),
facts AS (
    SELECT r.search_id, r.session_no, r.n_clicks, r.n_sat_clicks, r.min_click_rank,
        r.first_click_ts, r.reformulated,
        ses.first_search_id, ses.session_has_click, ses.session_success
    FROM search_rows AS r
    LEFT JOIN sessions AS ses ON r.search_id = ses.first_search_id
)
SELECT srow.*,
    facts.session_no,
    (first_search_id IS NOT NULL)::INTEGER AS session_first,
    (n_clicks > 0)::INTEGER AS has_click,
    n_clicks,
    n_sat_clicks,
    min_click_rank,
    CASE WHEN n_clicks = 0 THEN 0.0 ELSE 1.0 / min_click_rank END AS rr,
    (n_clicks = 0 OR min_click_rank IS NOT NULL)::INTEGER AS known_rr,
    first_click_ts,
    (epoch_us(first_click_ts) - epoch_us(srow.ts)) / 1e6 AS ttfc_s,
    (first_click_ts IS NOT NULL AND srow.ts IS NOT NULL)::INTEGER AS has_ttfc,
    (srow.n_results IS NOT NULL)::INTEGER AS known_n_results,
    coalesce(srow.n_results > 0, false)::INTEGER AS nonzero,
    coalesce(srow.n_results = 0, false)::INTEGER AS zero_result,
    coalesce(srow.n_results > 0 AND n_clicks = 0, false)::INTEGER AS abandoned,
    (srow.query IS NOT NULL)::INTEGER AS known_query,
    reformulated,
    coalesce(session_has_click, 0) AS session_has_click,
    coalesce(session_success, 0) AS session_success,
    (first_search_id IS NOT NULL AND session_has_click = 0)::INTEGER AS session_abandoned
FROM facts JOIN searches AS srow ON facts.search_id = srow.search_id
