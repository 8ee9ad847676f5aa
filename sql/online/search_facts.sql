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
--   sorts each user's stream (lag/lead) and keeps narrow rows (materialized: read twice);
--   the clicks are aggregated per search (hash aggregate) and joined to the searches and
--   session-starting clicks of the stream; a second window, over those rows newest first,
--   numbers the sessions and finds each session's outcomes from suffix minima (no
--   per-session aggregate, no join back); finally the searches columns are hash-joined back
--   on search_id. (The second window replaced a per-session GROUP BY + join, which held
--   about 35% more memory at the same CPU; bench/README.md.)
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
click_facts AS (
    -- one hash aggregate of each search's clicks
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
stream2 AS (
    -- the searches and the session-starting clicks (no other click changes a session number
    -- or the first search of a session), each search with its click aggregates
    SELECT {{part:f.,}} f.search_id, f.is_click, f.ev_ord, f.starts_session,
        f.next_is_new_query,
        CASE WHEN f.is_click THEN 0 ELSE coalesce(cf.n_clicks, 0) END AS n_clicks,
        CASE WHEN f.is_click THEN 0 ELSE coalesce(cf.n_sat_clicks, 0) END AS n_sat_clicks,
        coalesce(cf.n_untimed_clicks, 0) AS n_untimed_clicks,
        cf.min_click_rank, cf.first_click_ts
    FROM flagged AS f
    LEFT JOIN click_facts AS cf ON f.search_id = cf.search_id
    WHERE NOT f.is_click OR f.starts_session
),
numbered AS (
    -- ONE window sort, each stream newest first, gives sessions and their outcomes without
    -- a per-session aggregate and join back:
    --   session_no = session starts at or before the row (frame: the row and all older);
    --   a search is the first of its session when it starts the session or comes right
    --   after a click that did (older neighbour = lead in this order); with given
    --   sessions, when it is the oldest row;
    --   the session of a first search f holds exactly the searches from f up to the next
    --   session start after f, so it has a click iff the oldest clicked search at or after
    --   f comes before the oldest session start strictly after f (likewise satisfied).
    SELECT {{part,}} search_id, is_click, next_is_new_query, n_clicks, n_sat_clicks,
        n_untimed_clicks, min_click_rank, first_click_ts,
        CASE WHEN $derive_sessions THEN sum(starts_session::INTEGER) OVER (
                PARTITION BY {{part}} ORDER BY ev_ord DESC
                ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
            - sum(starts_session::INTEGER) OVER (
                PARTITION BY {{part}} ORDER BY ev_ord DESC
                ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
            + starts_session::INTEGER END AS session_no,
        CASE WHEN $derive_sessions
            THEN starts_session OR coalesce(lead(is_click) OVER (
                PARTITION BY {{part}} ORDER BY ev_ord DESC), false)
            ELSE lead(is_click) OVER (PARTITION BY {{part}} ORDER BY ev_ord DESC) IS NULL
        END AS session_first,
        min(ev_ord) FILTER (WHERE n_clicks > 0) OVER (
            PARTITION BY {{part}} ORDER BY ev_ord DESC
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS next_clicked_ord,
        min(ev_ord) FILTER (WHERE n_sat_clicks > 0) OVER (
            PARTITION BY {{part}} ORDER BY ev_ord DESC
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS next_sat_ord,
        min(ev_ord) FILTER (WHERE starts_session) OVER (
            PARTITION BY {{part}} ORDER BY ev_ord DESC
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS next_start_ord
    FROM stream2
),
facts AS (
    SELECT search_id, session_no, session_first, n_clicks, n_sat_clicks, min_click_rank,
        first_click_ts,
        (next_is_new_query AND n_untimed_clicks = 0)::INTEGER AS reformulated,
        session_first AND next_clicked_ord IS NOT NULL
            AND (next_start_ord IS NULL OR next_clicked_ord < next_start_ord)
            AS session_has_click,
        session_first AND next_sat_ord IS NOT NULL
            AND (next_start_ord IS NULL OR next_sat_ord < next_start_ord) AS session_success
    FROM numbered
    WHERE NOT is_click
)
SELECT srow.*,
    facts.session_no,
    session_first::INTEGER AS session_first,
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
    session_has_click::INTEGER AS session_has_click,
    session_success::INTEGER AS session_success,
    (session_first AND NOT session_has_click)::INTEGER AS session_abandoned
FROM facts JOIN searches AS srow ON facts.search_id = srow.search_id
