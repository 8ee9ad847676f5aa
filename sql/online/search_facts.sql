-- name: online/search_facts
-- computes: the per-search facts every online metric is a ratio of sums of. One row per search
--   of the cleaned `searches` view; the sessions, satisfied-click, dwell, first-click and
--   reformulation logic lives here and nowhere else (online metrics, A/B tests and the
--   benchmark all aggregate these rows). Python wrapper: onlineeval.online.search_facts.
-- grain: one row per searches.search_id
-- params: gap_us, sat_dwell_ms, derive_sessions, pk_shift
-- identifiers: key, part, carry, out, extra
-- switches: sessions, hashed, materialize, per_click
-- duckdb_only: hashed, materialize (DuckDB's 64-bit hash as an integer partition key, and
--   reading the stream once; the definition is the query with both off, which partitions by
--   the key columns: tests/online/test_facts.py and tests/engines show both give the same numbers)
-- sessions: on, the full facts; off, only the facts that need no event stream (the search
--   and its clicks: has_click, n_clicks, ranks, first click, results, query), from one hash
--   aggregate of the clicks joined to the searches, with no window: the cheap view that
--   traffic summaries (online/top_queries, online/queries_over_time) and the per-query CTR
--   of agreement/per_query_ab_ctr aggregate. Both variants share every definition below
--   (click_facts, stream2 and the final SELECT), so a fact means the same in both.
-- per_click: with sessions on, the query returns instead one row per click of the event
--   stream: search_id, rank (the click's), satisfied BOOLEAN (the satisfied-click rule under
--   "dwell" below; false when it cannot tell), for a reader that needs to know which click
--   was satisfied, not how many: interleaving credit by satisfied clicks
--   (onlineeval.online.facts.satisfied_clicks). The rule is the one the facts count with, so
--   n_sat_clicks of a search = its rows with satisfied true. Off: the facts below.
-- requires: views searches(search_id, user_id, ts, session_id, query, n_results, ...) and
--   clicks(search_id, rank, ts, dwell_ms) as built by onlineeval.load_logs (cleaned rows).
-- key: the stream key, (user_id) when sessions are derived, (user_id, session_id) when given.
-- hashed: DuckDB only: compute _oe_pk (below) for part and extra to use.
-- part: what both windows partition by: the key columns, or _oe_pk = hash(key) >> $pk_shift
--   (a UBIGINT; the shift is 0 except in tests, which force collisions with it; cast, as a
--   bare integer parameter would make the shifted hash a HUGEINT). The caller
--   passes _oe_pk ONLY after checking (online/partition_check) that it takes as many
--   distinct values as the key, i.e. that no two streams share a hash; every partition is
--   then exactly one stream and the results are those of partitioning by the key, with
--   integer instead of string partition keys in both sorts (less time).
-- extra: (_oe_pk) to output the key hash before the searches columns (online_metrics counts
--   distinct users with it when it is one-to-one, so user_id need not ride through the
--   sorts), else empty.
-- carry: the other searches columns (all but search_id, ts, query and the key columns,
--   which the stream holds anyway). They ride on the search rows through both sorts (NULL on
--   the click rows) instead of being joined back at the end; DuckDB drops the ones a query
--   over the view does not use, so online/metrics carries only its group columns and
--   n_results. out: every searches column, in the searches view's order.
-- event stream: per key, the searches and the clicks, ordered by (ts, is_click, search_id,
--   rank, dwell_ms; NULLs last) so a click sorts after a search with the same ts.
-- sessions: when $derive_sessions, a user's session ends when the next event (search OR click)
--   comes MORE than $gap_us microseconds after the previous one (a gap of exactly $gap_us
--   stays in the session; the caller passes the gap in whole microseconds, rounded down,
--   which for integer microsecond differences is the same test as against the exact gap);
--   otherwise sessions are the given (user_id, session_id) pairs. A search
--   belongs to the session of its own event; a click counts for the session of the search it
--   was made on (so session outcomes agree with has_click).
-- dwell: dwell_ms when given, else (derived) the time from the click to the user's next event
--   in the same session; unknown (NULL) when the click is the last event of its session or has
--   no ts. A click is satisfied when dwell >= $sat_dwell_ms, or when its dwell is unknown and
--   it is the last event of its session (a click without ts and dwell is never satisfied).
-- reformulation: a search is reformulated when the next event after it in its session is a
--   search with a known, different query (so no click in between) and it has no click without
--   ts (such a click cannot be placed; it is taken to come before the next search).
-- plan: read once, no join per metric: clicks get their search's user (hash join); one window
--   pass sorts each stream (lag/lead) and keeps narrow rows (materialized: read twice); the
--   clicks are aggregated per search (hash aggregate) and joined to the searches and
--   session-starting clicks of the stream; a second window, over those rows newest first,
--   numbers the sessions and finds each session's outcomes from suffix minima (no
--   per-session aggregate, no join back): the session of a first search f has a click iff
--   f has one or, among the rows after f, the oldest that is a session start or a clicked
--   search is a clicked search and not a start (one minimum over 2 * order + is_start per
--   outcome; likewise satisfied). The second window carries only narrow, precomputed values
--   (INTEGER click counts, reformulated, ttfc) so ts and first_click_ts ride only when a
--   caller selects them. The searches columns ride along on the search rows, so
--   nothing is joined back at the end (bench/README.md has the measurements).
-- names: every column the query makes itself starts with _oe_, a prefix the loader never
--   lets a searches column have, so carried columns cannot clash with them.
-- outputs: the extra column, every searches column (search_id, user_id, ts, session_id,
--   query, experiment, variant, n_results, ...), then the facts below, machine-read by the
--   loader (onlineeval.queries.Query.columns). Tags: "sessions" = only when $sessions is on;
--   "summed" = a per-search statistic, which online/metrics and ab/unit_sums sum (per group,
--   per randomization unit) under its own name and the metric registry
--   (onlineeval.online.definitions.METRICS) divides; adding one here adds it there.
--   * session_no BIGINT, sessions: derived sessions: sessions started by the user's events
--     so far (1-based; may skip a number for a session of clicks only); NULL when given
--   * session_first INTEGER, sessions, summed: 1 on the first search of its session (by ts,
--     then search_id), else 0
--   * has_click INTEGER, summed: 1 when the search has >= 1 click
--   * n_clicks BIGINT, summed: click rows of the search
--   * n_sat_clicks BIGINT, sessions, summed: satisfied clicks on it
--   * min_click_rank INTEGER: lowest clicked rank (NULL without a ranked click)
--   * rr DOUBLE, summed: 1/min_click_rank, 0 without a click (NULL when clicked but no rank
--     known)
--   * known_rr INTEGER, summed: rr not NULL
--   * first_click_ts TIMESTAMP: earliest click ts (NULL without a timed click)
--   * ttfc_s DOUBLE, summed: first_click_ts - ts in seconds (NULL without a timed click or
--     search ts)
--   * has_ttfc INTEGER, summed: ttfc_s not NULL
--   * known_n_results INTEGER, summed: n_results not NULL
--   * nonzero INTEGER, summed: n_results > 0
--   * zero_result INTEGER, summed: n_results = 0
--   * abandoned INTEGER, summed: n_results > 0 and no click
--   * known_query INTEGER, summed: query not NULL
--   * reformulated INTEGER, sessions, summed: see "reformulation" above
--   * session_has_click INTEGER, sessions, summed: on session_first rows only (0 elsewhere),
--     1 when the session has >= 1 click
--   * session_success INTEGER, sessions, summed: on session_first rows only (0 elsewhere), 1
--     when the session has >= 1 satisfied click
--   * session_abandoned INTEGER, sessions, summed: on session_first rows only (0 elsewhere),
--     1 when the session has no click
WITH
events AS (
    -- the searches (with the columns to carry) and, with sessions, every click with its
    -- search's key; the carried columns, query and _oe_known_query are NULL on click rows
    SELECT {{key,}} {{carry,}}
        {{#hashed}}hash({{key}}) >> CAST($pk_shift AS UTINYINT) AS _oe_pk,{{/hashed}}
        search_id, ts, query, false AS _oe_click, CAST(NULL AS INTEGER) AS _oe_rank,
        CAST(NULL AS DOUBLE) AS _oe_dwell, query IS NOT NULL AS _oe_known_query
    FROM searches
    {{#sessions}}
    UNION ALL
    SELECT {{key:s.,}} {{carry:NULL AS @,}}
        {{#hashed}}hash({{key:s.}}) >> CAST($pk_shift AS UTINYINT) AS _oe_pk,{{/hashed}}
        c.search_id, c.ts, NULL AS query, true AS _oe_click, c.rank AS _oe_rank,
        c.dwell_ms AS _oe_dwell, NULL AS _oe_known_query
    FROM clicks AS c
    JOIN searches AS s ON c.search_id = s.search_id
    {{/sessions}}
),
{{#sessions}}
flagged AS {{#materialize}}MATERIALIZED{{/materialize}} (
    SELECT {{key,}} {{carry,}} {{#hashed}}_oe_pk,{{/hashed}} search_id, ts, query, _oe_click,
        _oe_rank,
        _oe_ord, _oe_known_query,
        $derive_sessions AND ts IS NOT NULL AND (
            _oe_prev_ts IS NULL OR date_diff('microsecond', _oe_prev_ts, ts) > $gap_us
        ) AS _oe_starts,
        coalesce(_oe_dwell, CASE WHEN _oe_next_in
                THEN CAST(date_diff('microsecond', ts, _oe_next_ts) AS DOUBLE) / 1000
                END) >= $sat_dwell_ms
            OR (_oe_dwell IS NULL AND ts IS NOT NULL AND NOT _oe_next_in) AS _oe_sat,
        _oe_next_in AND NOT _oe_next_click AND query IS NOT NULL
            AND _oe_next_query IS NOT NULL AND _oe_next_query <> query AS _oe_new_query
    FROM (
        SELECT *,
            ts IS NOT NULL AND _oe_next_ts IS NOT NULL AND (
                NOT $derive_sessions
                OR date_diff('microsecond', ts, _oe_next_ts) <= $gap_us
            ) AS _oe_next_in
        FROM (
            SELECT *,
                -- INTEGER: narrower rows in the second sort (> 2^31 events of one user
                -- would fail the cast, not wrap)
                CAST(row_number() OVER w AS INTEGER) AS _oe_ord,
                lag(ts) OVER w AS _oe_prev_ts,
                lead(ts) OVER w AS _oe_next_ts,
                lead(_oe_click) OVER w AS _oe_next_click,
                lead(query) OVER w AS _oe_next_query
            FROM events
            WINDOW w AS (PARTITION BY {{part}}
                         ORDER BY ts ASC NULLS LAST, _oe_click, search_id,
                             _oe_rank ASC NULLS LAST, _oe_dwell ASC NULLS LAST)
        ) AS ordered
    ) AS gaps
),
{{/sessions}}
click_facts AS (
    -- each search's click rows: those of the stream (which knows satisfaction), or without
    -- sessions straight from the clicks
    SELECT search_id,
        count(*) AS _oe_n_clicks,
        {{#sessions}}
        count(*) FILTER (WHERE ts IS NULL) AS _oe_n_untimed,
        count(*) FILTER (WHERE _oe_sat) AS _oe_n_sat,
        {{/sessions}}
        min(_oe_rank) AS _oe_min_rank,
        min(ts) AS _oe_first_ts
    FROM
        {{#sessions}}flagged WHERE _oe_click{{/sessions}}
        {{^sessions}}(SELECT search_id, ts, rank AS _oe_rank FROM clicks) AS c{{/sessions}}
    GROUP BY search_id
),
stream2 AS (
    -- what the second window carries is decided here, as narrow as the outputs allow:
    -- INTEGER counts (more than 2^31 clicks on one page would fail the cast, not wrap),
    -- reformulated and ttfc already computed (ts and first_click_ts then ride only when a
    -- caller selects them)
    SELECT {{key:f.,}} {{carry:f.,}} {{#hashed}}f._oe_pk,{{/hashed}} f.search_id, f.ts,
        f.query, f._oe_click, f._oe_known_query,
        {{#sessions}}f._oe_ord, f._oe_starts,{{/sessions}}
        CAST(CASE WHEN f._oe_click THEN 0 ELSE coalesce(cf._oe_n_clicks, 0) END AS INTEGER)
            AS _oe_n_clicks,
        {{#sessions}}
        CAST(CASE WHEN f._oe_click THEN 0 ELSE coalesce(cf._oe_n_sat, 0) END AS INTEGER)
            AS _oe_n_sat,
        f._oe_new_query AND coalesce(cf._oe_n_untimed, 0) = 0 AS _oe_reformulated,
        {{/sessions}}
        cf._oe_min_rank, cf._oe_first_ts,
        CAST(date_diff('microsecond', f.ts, cf._oe_first_ts) AS DOUBLE) / 1000000 AS _oe_ttfc
    FROM {{#sessions}}flagged{{/sessions}}{{^sessions}}events{{/sessions}} AS f
    LEFT JOIN click_facts AS cf ON f.search_id = cf.search_id
    {{#sessions}}WHERE NOT f._oe_click OR f._oe_starts{{/sessions}}
),
{{#sessions}}
numbered AS (
    SELECT *,
        CASE WHEN $derive_sessions THEN sum(_oe_starts::INTEGER) OVER (
                PARTITION BY {{part}} ORDER BY _oe_ord DESC
                ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)::BIGINT END AS _oe_session_no,
        CASE WHEN $derive_sessions
            THEN _oe_starts OR coalesce(lead(_oe_click) OVER (
                PARTITION BY {{part}} ORDER BY _oe_ord DESC), false)
            ELSE lead(_oe_click) OVER (PARTITION BY {{part}} ORDER BY _oe_ord DESC) IS NULL
        END AS _oe_first,
        -- the first row newer than this one that is a session start (odd) or a clicked /
        -- satisfied search (even); a start wins over a click on the same row, which belongs
        -- to the next session
        min(CASE WHEN _oe_starts THEN 2 * _oe_ord::BIGINT + 1
            WHEN _oe_n_clicks > 0 THEN 2 * _oe_ord::BIGINT
            END) OVER (PARTITION BY {{part}} ORDER BY _oe_ord DESC
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS _oe_next_click_or_start,
        min(CASE WHEN _oe_starts THEN 2 * _oe_ord::BIGINT + 1
            WHEN _oe_n_sat > 0 THEN 2 * _oe_ord::BIGINT
            END) OVER (PARTITION BY {{part}} ORDER BY _oe_ord DESC
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS _oe_next_sat_or_start
    FROM stream2
),
facts AS (
    SELECT *,
        _oe_first AND (_oe_n_clicks > 0 OR coalesce(_oe_next_click_or_start % 2 = 0, false))
            AS _oe_session_click,
        _oe_first AND (_oe_n_sat > 0 OR coalesce(_oe_next_sat_or_start % 2 = 0, false))
            AS _oe_session_sat
    FROM numbered
    WHERE NOT _oe_click
),
{{/sessions}}
done AS (
    SELECT * FROM {{#sessions}}facts{{/sessions}}{{^sessions}}stream2{{/sessions}}
)
{{#per_click}}
SELECT search_id, _oe_rank AS rank, coalesce(_oe_sat, false) AS satisfied
FROM flagged
WHERE _oe_click
{{/per_click}}
{{^per_click}}
SELECT {{extra,}} {{out}},
    {{#sessions}}
    _oe_session_no AS session_no,
    _oe_first::INTEGER AS session_first,
    {{/sessions}}
    (_oe_n_clicks > 0)::INTEGER AS has_click,
    _oe_n_clicks::BIGINT AS n_clicks,
    {{#sessions}}
    _oe_n_sat::BIGINT AS n_sat_clicks,
    {{/sessions}}
    _oe_min_rank AS min_click_rank,
    CASE WHEN _oe_n_clicks = 0 THEN CAST(0 AS DOUBLE) ELSE CAST(1 AS DOUBLE) / _oe_min_rank
        END AS rr,
    (_oe_n_clicks = 0 OR _oe_min_rank IS NOT NULL)::INTEGER AS known_rr,
    _oe_first_ts AS first_click_ts,
    _oe_ttfc AS ttfc_s,
    (_oe_ttfc IS NOT NULL)::INTEGER AS has_ttfc,
    (n_results IS NOT NULL)::INTEGER AS known_n_results,
    coalesce(n_results > 0, false)::INTEGER AS nonzero,
    coalesce(n_results = 0, false)::INTEGER AS zero_result,
    coalesce(n_results > 0 AND _oe_n_clicks = 0, false)::INTEGER AS abandoned,
    _oe_known_query::INTEGER AS known_query
    {{#sessions}},
    _oe_reformulated::INTEGER AS reformulated,
    _oe_session_click::INTEGER AS session_has_click,
    _oe_session_sat::INTEGER AS session_success,
    (_oe_first AND NOT _oe_session_click)::INTEGER AS session_abandoned
    {{/sessions}}
FROM done
{{/per_click}}
