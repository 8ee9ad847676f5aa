-- name: online/metrics
-- computes: the sufficient statistics of every online metric, per group: sums (and counts) of
--   the per-search facts of online/search_facts. Python (onlineeval.online.metrics) divides
--   them as the metric registry (onlineeval.online.definitions.METRICS) says, e.g.
--   ctr = has_click / searches, session_success_rate = session_success / sessions.
-- grain: one row per group of the by columns (one row in all when by is empty)
-- params: none
-- identifiers: by, facts, user, stats
-- requires: the facts view named by the caller (onlineeval.online.search_facts, with the
--   time buckets of online/time_buckets added) and the group columns, which may be any of its
--   columns or the time buckets __hour, __day, __week of the search ts.
-- user: the column identifying a user in the facts: user_id, or the facts' _oe_pk when the
--   caller has checked that this 64-bit hash of user_id is one-to-one on the log
--   (onlineeval.online.facts.facts_view), so that user_id need not ride through its sorts.
-- stats: the per-search statistics to sum: the facts online/search_facts tags "summed"
--   (onlineeval.online.facts.STATISTICS), so a statistic declared there is summed here.
-- outputs: the by columns, then users = count(DISTINCT user_id), searches = count(*) and, for
--   every statistic in stats, the SUM of the fact column of the same name (ttfc_s sums
--   seconds over searches with a timed click; has_ttfc counts them).
-- plan: two hash aggregates: per (group, user) sums, then per group their sums and the number
--   of (group, user) rows = distinct users. Exact (user_id is never NULL in the clean view),
--   and unlike count(DISTINCT) beside the sums it does not make DuckDB materialize the facts.
WITH
per_user AS (
    -- the user under its own name: by may hold the user column too
    SELECT {{by,}} {{user}} AS _oe_user, count(*) AS searches,
        {{stats:sum(@) AS @}}
    FROM {{facts}}
    GROUP BY {{by,}} {{user}}
)
SELECT {{by,}}
    count(*) AS users,
    sum(searches) AS searches,
    {{stats:sum(@) AS @}}
FROM per_user
{{#by}}GROUP BY {{by}} ORDER BY {{by}}{{/by}}
