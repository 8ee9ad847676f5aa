-- name: interleaving/page_counts
-- computes: how many rows the interleaving/page_outcomes view has, how many interleaved
--   pages it leaves out, and the window it covers, from the pages and their experiments' team
--   counts alone (no click is credited; counting the view itself made DuckDB choose a plan
--   that broke a 1 GB memory limit on 10M pages). Python wrapper:
--   onlineeval.interleaving.outcomes.page_outcomes.
-- grain: one row
-- params: experiment, win_start, win_end
-- identifiers: none
-- requires: views searches(search_id, experiment, ts), results(search_id, team) as built by
--   onlineeval.load_logs.
-- interleaved page: as in interleaving/page_outcomes (a search of $experiment, or of every
--   experiment when it is NULL, with a results row whose team is not NULL); the window is
--   $win_start <= ts < $win_end (a NULL bound: no bound).
-- formula: n = sum over pages in the window of C(n_teams, 2), n_teams = distinct teams of the
--   page's experiment on its pages in the window (the view has one row per page and team
--   pair); lonely = pages in the window whose experiment has fewer than two teams there (the
--   view has no row for them).
-- outputs: n HUGEINT, lonely BIGINT, before_window BIGINT (pages with ts < $win_start),
--   after_window BIGINT (pages with ts >= $win_end), first_ts, last_ts TIMESTAMP (earliest and
--   latest ts of the pages the view reads out: in the window, of an experiment with two or
--   more teams).
WITH
all_pages AS (
    SELECT s.search_id, s.experiment, s.ts
    FROM searches AS s
    SEMI JOIN results AS r ON r.search_id = s.search_id AND r.team IS NOT NULL
    WHERE CAST($experiment AS VARCHAR) IS NULL
       OR CAST(s.experiment AS VARCHAR) = CAST($experiment AS VARCHAR)
),
pages AS (
    -- the window test of interleaving/page_outcomes, word for word
    SELECT search_id, experiment, ts
    FROM all_pages AS s
    WHERE (CAST($win_start AS TIMESTAMP) IS NULL OR s.ts >= CAST($win_start AS TIMESTAMP))
      AND (CAST($win_end AS TIMESTAMP) IS NULL OR s.ts < CAST($win_end AS TIMESTAMP))
),
teams AS (
    SELECT p.experiment, count(DISTINCT r.team) AS n_teams
    FROM pages AS p
    JOIN results AS r ON r.search_id = p.search_id
    WHERE r.team IS NOT NULL
    GROUP BY p.experiment
),
read_out AS (
    SELECT
        -- n(n - 1) is even and far below 2^53: the DOUBLE division is exact
        sum(CAST(CAST(t.n_teams * (t.n_teams - 1) AS DOUBLE) / 2 AS BIGINT)) AS n,
        count(*) FILTER (WHERE t.n_teams < 2) AS lonely,
        min(p.ts) FILTER (WHERE t.n_teams >= 2) AS first_ts,
        max(p.ts) FILTER (WHERE t.n_teams >= 2) AS last_ts
    FROM pages AS p
    JOIN teams AS t ON t.experiment IS NOT DISTINCT FROM p.experiment
),
outside AS (
    SELECT
        count(*) FILTER (WHERE ts < CAST($win_start AS TIMESTAMP)) AS before_window,
        count(*) FILTER (WHERE ts >= CAST($win_end AS TIMESTAMP)) AS after_window
    FROM all_pages
)
SELECT r.n, r.lonely, o.before_window, o.after_window, r.first_ts, r.last_ts
FROM read_out AS r
CROSS JOIN outside AS o
