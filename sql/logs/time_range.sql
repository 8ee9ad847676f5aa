-- name: logs/time_range
-- computes: the time range of a loaded log's searches (the clean view), for
--   onlineeval validate: the first and last ts, and how many searches have one.
--   Python wrapper: onlineeval.logs.describe.describe.
-- grain: one row
-- params: none
-- identifiers: none
-- requires: the searches view of onlineeval.load_logs.
-- outputs: first_ts, last_ts TIMESTAMP (NULL without any ts), searches_with_ts, searches BIGINT
SELECT min(ts) AS first_ts, max(ts) AS last_ts, count(ts) AS searches_with_ts,
       count(*) AS searches
FROM searches
