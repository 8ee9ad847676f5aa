-- name: online/metrics
-- computes: the sufficient statistics of every online metric, per group: sums (and counts) of
--   the per-search facts of online/search_facts. Python (onlineeval.online.metrics) divides
--   them as the metric registry (onlineeval.online.definitions.METRICS) says, e.g.
--   ctr = has_click / searches, session_success_rate = session_success / sessions.
-- grain: one row per group of the by columns (one row in all when by is empty)
-- params: none
-- identifiers: by, facts, user
-- requires: the facts view named by the caller (onlineeval.online.search_facts, with the
--   time buckets of online/time_buckets added) and the group columns, which may be any of its
--   columns or the time buckets __hour, __day, __week of the search ts.
-- user: the column identifying a user in the facts: user_id, or the facts' _oe_pk when the
--   caller has checked that this 64-bit hash of user_id is one-to-one on the log
--   (onlineeval.online.facts.facts_view), so that user_id need not ride through its sorts.
-- outputs: the by columns, then users = count(DISTINCT user_id), searches = count(*) and, for
--   every other statistic, the SUM of the fact column of the same name (ttfc_s sums seconds
--   over searches with a timed click; has_ttfc counts them).
-- plan: two hash aggregates: per (group, user) sums, then per group their sums and the number
--   of (group, user) rows = distinct users. Exact (user_id is never NULL in the clean view),
--   and unlike count(DISTINCT) beside the sums it does not make DuckDB materialize the facts.
WITH
per_user AS (
    -- the user under its own name: by may hold the user column too
    SELECT {{by,}} {{user}} AS _oe_user, count(*) AS searches,
        sum(session_first) AS session_first,
        sum(has_click) AS has_click,
        sum(n_clicks) AS n_clicks,
        sum(nonzero) AS nonzero,
        sum(abandoned) AS abandoned,
        sum(known_n_results) AS known_n_results,
        sum(zero_result) AS zero_result,
        sum(session_has_click) AS session_has_click,
        sum(session_abandoned) AS session_abandoned,
        sum(session_success) AS session_success,
        sum(ttfc_s) AS ttfc_s,
        sum(has_ttfc) AS has_ttfc,
        sum(rr) AS rr,
        sum(known_rr) AS known_rr,
        sum(reformulated) AS reformulated,
        sum(known_query) AS known_query
    FROM {{facts}}
    GROUP BY ALL
)
SELECT {{by,}}
    count(*) AS users,
    -- every per-user sum summed again, under its own name (the list lives in per_user only)
    sum(COLUMNS(* EXCLUDE ({{by,}} _oe_user)))
FROM per_user
GROUP BY ALL
ORDER BY ALL
