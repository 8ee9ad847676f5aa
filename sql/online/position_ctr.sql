-- name: online/position_ctr
-- computes: click-through rate per rank (position CTR): searches with a click at that rank /
--   searches that showed that rank.
-- grain: one row per group and rank
-- source: the searches view with its time buckets (online/time_buckets)
-- params: win_start, win_end
-- window: only searches with $win_start <= ts < $win_end count (a NULL bound: no bound; with
--   a bound, a search without ts is left out)
-- identifiers: by, source
-- requires: views searches(search_id, ts, group columns), results(search_id, rank),
--   clicks(search_id, rank); group columns may be searches columns or the time buckets
--   __hour, __day, __week (date_trunc of the search ts).
-- outputs: the by columns, rank, shown = searches that showed the rank (results rows),
--   clicked = those with >= 1 click at that rank, clicks = click rows at that rank,
--   ctr = clicked / shown.
-- edge cases: clicks without a rank are ignored; several clicks on one result count once in
--   clicked (all in clicks); a rank shown and never clicked has ctr 0; a click at a rank that
--   the page did not show was excluded by the loader (reason not_on_page).
WITH
s AS (
    SELECT * FROM {{source}}
    WHERE (CAST($win_start AS TIMESTAMP) IS NULL OR ts >= CAST($win_start AS TIMESTAMP))
        AND (CAST($win_end AS TIMESTAMP) IS NULL OR ts < CAST($win_end AS TIMESTAMP))
),
clicked AS (
    SELECT search_id, rank, count(*) AS n
    FROM clicks
    WHERE rank IS NOT NULL
    GROUP BY search_id, rank
),
shown AS (
    SELECT {{by:s.,}} r.rank, c.n
    FROM results AS r
    JOIN s ON r.search_id = s.search_id
    LEFT JOIN clicked AS c ON r.search_id = c.search_id AND r.rank = c.rank
)
SELECT {{by,}} rank,
    count(*) AS shown,
    count(n) AS clicked,
    coalesce(sum(n), 0)::BIGINT AS clicks,
    CAST(count(n) AS DOUBLE) / count(*) AS ctr
FROM shown
GROUP BY {{by,}} rank
ORDER BY {{by,}} rank
