-- name: interleaving/page_outcomes
-- computes: team-draft (and team-draft multileave) click credit and outcome of every
--   interleaved page, for every pair of teams of the page's experiment. Python wrapper:
--   onlineeval.interleaving.outcomes.page_outcomes (stores it as the temp table
--   interleaving_page_outcomes that interleaving/user_stats and interleaving/summary read).
-- grain: one row per (interleaved page, unordered pair of teams seen in its experiment)
-- params: experiment, win_start, win_end, bucket, buckets
-- identifiers: attribution, teams_table
-- switches: materialize, events, satisfied, hourly, bucketed
-- duckdb_only: materialize, bucketed (materialize: DuckDB reads page_click_rows once; other
--   engines plan it their way. bucketed: DuckDB's 64-bit hash of user_id splits the users,
--   and with them their pages, into $buckets disjoint buckets; with $bucket set, the view
--   holds the pages of that bucket's users only, each with every pair of its experiment.
--   Readers that sum over pages per user read the buckets one at a time (interleaving/
--   user_stats through onlineeval.interleaving.outcomes), so the joins below hold one
--   bucket's pages and the per-user sums one bucket's users under a memory limit; split by
--   page instead, every bucket would hold nearly every user. $bucket NULL: every page.)
-- requires: views searches(search_id, user_id, ts, query, experiment, variant),
--   results(search_id, rank, doc_id, team), clicks(search_id, rank, doc_id) as built by
--   onlineeval.load_logs.
-- events: credit by events instead of clicks (onlineeval interleave --credit EVENT_TYPE):
--   the "clicks" below are then the events that online/attribution (the view named by
--   attribution, of one event type) attributed to the page, each hitting the result showing
--   its doc_id (the highest-placed one), so the team credited is the one whose result led to
--   the event. Only events attributed by their search_id or by a click on their doc_id
--   credit a result; one attributed as the user's last search (a doc seen, never clicked),
--   without a doc_id, or whose doc_id is not on the page, is unmatched.
--   Every column named after clicks then counts events.
-- satisfied: credit by satisfied clicks (onlineeval interleave --credit satisfied): the
--   "clicks" below are then only the clicks that the view named by attribution (the
--   per_click rows of online/search_facts, where the satisfied-click rule is defined) marks
--   satisfied; every column named after clicks then counts satisfied clicks. (With events
--   on, this switch is ignored.)
-- attribution: with events, the attribution view; with satisfied, the per-click view of
--   online/search_facts (search_id, rank, satisfied); unused otherwise.
-- teams_table: the relation of interleaving/teams with the same parameters (a view; with
--   bucketed, a table made once for all buckets).
-- interleaved page: a search with at least one results row whose team is not NULL, in
--   experiment $experiment (all experiments when $experiment is NULL; a NULL experiment is a
--   group of its own), inside the window $win_start <= ts < $win_end (a NULL bound: no
--   bound; pages outside it are left out, teams included: interleaving/page_counts counts
--   them).
-- teams: the distinct non-NULL results.team values on the interleaved pages of an experiment;
--   the pairs are (team_a, team_b) with team_a < team_b (byte order), so "A" is the
--   alphabetically first team. Two teams give one pair; multileaved pages give every pair.
-- click matching: a click hits the result of its page with the same rank; a click without a
--   rank hits the result with its doc_id, and when the page shows that doc_id at several
--   ranks, the highest-placed one (smallest rank; the rule onlineeval.load_logs uses to fill
--   a missing click rank), so one click is credited once. A result clicked more than once
--   counts once.
-- formula: credit_t = number of distinct results placed by team t that were clicked on the
--   page (0 when the team placed nothing on the page); outcome = 'a' when credit_a > credit_b,
--   'b' when credit_b > credit_a, 'tie' when equal and > 0, 'none' otherwise (no click, or
--   clicks only on results of other teams, without a team, or not in results).
-- hourly: day is searches.ts truncated to the hour (a TIMESTAMP) instead of its date: the
--   hourly looks of the sequential interleaving readout.
-- outputs: experiment, variant, day DATE (searches.ts as a date, or with $hourly truncated to
--   the hour; NULL without ts), query,
--   user_id, search_id, team_a, team_b, credit_a BIGINT, credit_b BIGINT,
--   has_click INTEGER (1 when the page has any click row), outcome VARCHAR,
--   clicks_without_team BIGINT (distinct clicked results whose team is NULL: reported, never
--   credited), clicks_unmatched BIGINT (click rows matching no result of the page),
--   repeat_clicks BIGINT (click rows on a result already clicked on the page),
--   one_sided INTEGER (1 when exactly one of team_a and team_b placed a result on the page:
--   its clicks can credit that team only. Team-draft places a result of each team on every
--   page of two or more results unless one ranking runs out (all its documents placed) and
--   the other fills the page, so a one-sided page is a one-result page or a filled one.
--   Multileaved pages with fewer results than teams are one-sided for some pairs by design.)
WITH
{{#bucketed}}
bucket_searches AS (
    -- the searches of the bucket's users: results carry no user_id
    SELECT search_id FROM searches
    WHERE CAST($bucket AS BIGINT) IS NULL
       OR hash(user_id) % CAST($buckets AS UBIGINT) = CAST($bucket AS UBIGINT)
),
{{/bucketed}}
interleaved AS (
    SELECT DISTINCT r.search_id FROM results AS r
    {{#bucketed}}
    SEMI JOIN bucket_searches AS b ON b.search_id = r.search_id
    {{/bucketed}}
    WHERE r.team IS NOT NULL
),
pages AS (
    SELECT s.search_id, s.user_id, s.experiment, s.variant,
        {{#hourly}}date_trunc('hour', s.ts){{/hourly}}{{^hourly}}CAST(s.ts AS DATE){{/hourly}}
            AS day,
        s.query
    FROM searches AS s
    SEMI JOIN interleaved AS i ON i.search_id = s.search_id
    WHERE (CAST($experiment AS VARCHAR) IS NULL
           OR CAST(s.experiment AS VARCHAR) = CAST($experiment AS VARCHAR))
      AND (CAST($win_start AS TIMESTAMP) IS NULL OR s.ts >= CAST($win_start AS TIMESTAMP))
      AND (CAST($win_end AS TIMESTAMP) IS NULL OR s.ts < CAST($win_end AS TIMESTAMP))
    {{#bucketed}}
      AND (CAST($bucket AS BIGINT) IS NULL
           OR hash(s.user_id) % CAST($buckets AS UBIGINT) = CAST($bucket AS UBIGINT))
    {{/bucketed}}
),
page_click_rows AS {{#materialize}}MATERIALIZED{{/materialize}} (
    -- read once: the loader's clicks view is itself a join, and it is used twice below
    {{^events}}{{^satisfied}}
    SELECT c.search_id, c.rank, c.doc_id
    FROM clicks AS c
    SEMI JOIN pages AS p ON p.search_id = c.search_id
    {{/satisfied}}{{/events}}
    {{#satisfied}}{{^events}}
    -- the loader fills a click's rank from its doc_id and drops clicks off their page, so
    -- the rank alone places a satisfied click (doc_id: none needed)
    SELECT c.search_id, c.rank, CAST(NULL AS VARCHAR) AS doc_id
    FROM {{attribution}} AS c
    SEMI JOIN pages AS p ON p.search_id = c.search_id
    WHERE c.satisfied
    {{/events}}{{/satisfied}}
    {{#events}}
    SELECT a.search_id, CAST(NULL AS INTEGER) AS rank,
        CASE WHEN a.rule <> 'last_search' THEN a.doc_id END AS doc_id
    FROM {{attribution}} AS a
    SEMI JOIN pages AS p ON p.search_id = a.search_id
    {{/events}}
),
first_shown AS (
    -- for clicks logged without a rank: the highest-placed result showing their doc_id (one
    -- row per page and doc, so a doc shown twice cannot turn one click into two)
    SELECT r.search_id, r.doc_id, min(r.rank) AS rank
    FROM results AS r
    SEMI JOIN page_click_rows AS c
        ON c.search_id = r.search_id AND c.rank IS NULL AND c.doc_id = r.doc_id
    GROUP BY r.search_id, r.doc_id
),
matched AS (
    -- every click row of an interleaved page with the result it hit (rank NULL: none)
    SELECT c.search_id, r.rank, r.team
    FROM page_click_rows AS c
    LEFT JOIN first_shown AS f
        ON c.rank IS NULL AND f.search_id = c.search_id AND f.doc_id = c.doc_id
    LEFT JOIN results AS r
        ON r.search_id = c.search_id AND r.rank = coalesce(c.rank, f.rank)
),
page_clicks AS (
    SELECT
        search_id,
        count(*) AS click_rows,
        count(*) FILTER (WHERE rank IS NULL) AS clicks_unmatched,
        count(DISTINCT rank) AS clicked_results,
        count(DISTINCT rank) FILTER (WHERE team IS NULL) AS clicks_without_team
    FROM matched
    GROUP BY search_id
),
team_credit AS (
    SELECT search_id, team, count(DISTINCT rank) AS credit
    FROM matched
    WHERE team IS NOT NULL
    GROUP BY search_id, team
),
page_teams AS (
    -- the teams that placed at least one result on each interleaved page
    SELECT DISTINCT r.search_id, r.team
    FROM results AS r
    SEMI JOIN pages AS p ON p.search_id = r.search_id
    WHERE r.team IS NOT NULL
),
teams AS (
    -- the teams that placed a result on a page of the experiment in the window, of every
    -- bucket: interleaving/teams with the same parameters (one definition). Bucketed, DuckDB
    -- stores it once as a table for all buckets: this join of every page is what the
    -- buckets avoid
    SELECT experiment, team FROM {{teams_table}}
),
pairs AS (
    SELECT a.experiment, a.team AS team_a, b.team AS team_b
    FROM teams AS a
    JOIN teams AS b ON b.experiment IS NOT DISTINCT FROM a.experiment AND a.team < b.team
),
credited AS (
    SELECT
        p.experiment, p.variant, p.day, p.query, p.user_id, p.search_id,
        pr.team_a, pr.team_b,
        coalesce(ca.credit, 0) AS credit_a,
        coalesce(cb.credit, 0) AS credit_b,
        CAST(coalesce(pc.click_rows, 0) > 0 AS INTEGER) AS has_click,
        coalesce(pc.clicks_without_team, 0) AS clicks_without_team,
        coalesce(pc.clicks_unmatched, 0) AS clicks_unmatched,
        coalesce(pc.click_rows - pc.clicks_unmatched - pc.clicked_results, 0) AS repeat_clicks,
        CAST((ta.team IS NULL) <> (tb.team IS NULL) AS INTEGER) AS one_sided
    FROM pages AS p
    JOIN pairs AS pr ON pr.experiment IS NOT DISTINCT FROM p.experiment
    LEFT JOIN page_clicks AS pc ON pc.search_id = p.search_id
    LEFT JOIN team_credit AS ca ON ca.search_id = p.search_id AND ca.team = pr.team_a
    LEFT JOIN team_credit AS cb ON cb.search_id = p.search_id AND cb.team = pr.team_b
    LEFT JOIN page_teams AS ta ON ta.search_id = p.search_id AND ta.team = pr.team_a
    LEFT JOIN page_teams AS tb ON tb.search_id = p.search_id AND tb.team = pr.team_b
)
SELECT
    experiment, variant, day, query, user_id, search_id, team_a, team_b, credit_a, credit_b,
    has_click,
    CASE
        WHEN credit_a > credit_b THEN 'a'
        WHEN credit_b > credit_a THEN 'b'
        WHEN credit_a > 0 THEN 'tie'
        ELSE 'none'
    END AS outcome,
    clicks_without_team, clicks_unmatched, repeat_clicks, one_sided
FROM credited
