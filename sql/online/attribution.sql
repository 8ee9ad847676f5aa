-- name: online/attribution
-- computes: every event of the log (of $event_type, all types when NULL) with the search it
--   is attributed to, the rule that attributed it, or the reason it could not be. The rules,
--   tried in this order (docs/conversions.md has them with an executed example):
--   1. search_id: the event names its search (events.search_id not NULL) and that search is
--      among the kept searches: attributed to it, whatever the times (the source knows).
--      A named search that is not among them is unattributable (unknown_search); the event
--      is never moved to another search.
--   2. clicked_doc: the event has a doc_id; among its user's searches, those with a click on
--      that doc_id at a click time t (the click's ts, else its search's ts) with
--      t <= event ts <= t + $window_us: the one with the latest t (ties: the later search
--      ts, then the larger search_id).
--   3. last_search: the user's latest search (by ts, then search_id) with search ts <=
--      event ts, if event ts <= search ts + $window_us; that search is the last one of the
--      session the event falls in.
--   Both window ends are inclusive (an event exactly $window_us after counts; an event at
--   the same ts as the click or search counts).
-- reasons (unattributable, rule NULL): unknown_search (rule 1 above); unknown_user (no
--   search_id, and the user has no kept search); no_earlier_search (the user's searches all
--   come after the event, or have no ts); outside_window (the user's latest earlier search
--   is more than $window_us before the event).
-- grain: one row per event of the clean events view of the chosen type
-- params: window_us, event_type
-- identifiers: none
-- requires: the clean views searches(search_id, user_id, ts), clicks(search_id, doc_id, ts)
--   and events(user_id, ts, type, value, search_id, doc_id) made by onlineeval.load_logs.
-- window_us: the attribution window in whole microseconds (BIGINT).
-- plan: the candidate searches of an event are joined on its user and ranked with
--   row_number per event; a user's searches before each event are all candidates of rule
--   3, so the work grows with events x searches per user (an ASOF join would be cheaper,
--   but is DuckDB's own).
-- outputs: event_no BIGINT (1-based, in the order of user_id, ts, type, value, search_id,
--   doc_id; identical events get consecutive numbers), user_id (the event's, else its
--   search's), ts, type, value, doc_id (the event's), search_id (the attributed search;
--   NULL when unattributable), search_ts TIMESTAMP (its ts), rule VARCHAR (search_id,
--   clicked_doc, last_search; NULL when unattributable), reason VARCHAR (NULL when
--   attributed).
WITH
ev AS (
    SELECT
        row_number() OVER (ORDER BY e.user_id, e.ts, e.type, e.value, e.search_id, e.doc_id)
            AS event_no,
        e.user_id, e.ts, e.type, e.value, e.search_id, e.doc_id
    FROM events AS e
    WHERE CAST($event_type AS VARCHAR) IS NULL OR e.type = CAST($event_type AS VARCHAR)
),
direct AS (
    SELECT ev.event_no, s.search_id, s.user_id, s.ts AS search_ts
    FROM ev
    JOIN searches AS s ON ev.search_id = s.search_id
),
clicked AS (
    SELECT ev.event_no, s.search_id, s.ts AS search_ts,
        row_number() OVER (
            PARTITION BY ev.event_no
            ORDER BY coalesce(c.ts, s.ts) DESC, s.ts DESC, s.search_id DESC
        ) AS pick
    FROM ev
    JOIN searches AS s ON ev.user_id = s.user_id
    JOIN clicks AS c ON c.search_id = s.search_id AND c.doc_id = ev.doc_id
    WHERE ev.search_id IS NULL
        AND coalesce(c.ts, s.ts) <= ev.ts
        AND date_diff('microsecond', coalesce(c.ts, s.ts), ev.ts) <= $window_us
),
earlier AS (
    SELECT ev.event_no, s.search_id, s.ts AS search_ts,
        date_diff('microsecond', s.ts, ev.ts) <= $window_us AS in_window,
        row_number() OVER (PARTITION BY ev.event_no ORDER BY s.ts DESC, s.search_id DESC)
            AS pick
    FROM ev
    JOIN searches AS s ON ev.user_id = s.user_id
    WHERE ev.search_id IS NULL AND s.ts <= ev.ts
),
known_users AS (
    SELECT DISTINCT s.user_id
    FROM searches AS s
    JOIN (SELECT DISTINCT user_id FROM ev WHERE search_id IS NULL) AS u
        ON s.user_id = u.user_id
)
SELECT
    ev.event_no,
    coalesce(ev.user_id, d.user_id) AS user_id,
    ev.ts, ev.type, ev.value, ev.doc_id,
    CASE
        WHEN ev.search_id IS NOT NULL THEN d.search_id
        WHEN k.search_id IS NOT NULL THEN k.search_id
        WHEN l.in_window THEN l.search_id
    END AS search_id,
    CASE
        WHEN ev.search_id IS NOT NULL THEN d.search_ts
        WHEN k.search_id IS NOT NULL THEN k.search_ts
        WHEN l.in_window THEN l.search_ts
    END AS search_ts,
    CASE
        WHEN ev.search_id IS NOT NULL THEN
            CASE WHEN d.search_id IS NOT NULL THEN 'search_id' END
        WHEN k.search_id IS NOT NULL THEN 'clicked_doc'
        WHEN l.in_window THEN 'last_search'
    END AS rule,
    CASE
        WHEN ev.search_id IS NOT NULL THEN
            CASE WHEN d.search_id IS NULL THEN 'unknown_search' END
        WHEN k.search_id IS NOT NULL THEN NULL
        WHEN l.in_window THEN NULL
        WHEN u.user_id IS NULL THEN 'unknown_user'
        WHEN l.search_id IS NULL THEN 'no_earlier_search'
        ELSE 'outside_window'
    END AS reason
FROM ev
LEFT JOIN direct AS d ON ev.event_no = d.event_no
LEFT JOIN clicked AS k ON ev.event_no = k.event_no AND k.pick = 1
LEFT JOIN earlier AS l ON ev.event_no = l.event_no AND l.pick = 1
LEFT JOIN known_users AS u ON ev.user_id = u.user_id
