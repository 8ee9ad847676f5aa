-- name: logs/results/by_search
-- computes: passes 1 and 2 over results whose footers show every row valid, sharing one
--   grouping of the rows by search_id: per search its rows and a bitmask of its ranks
--   1..63; then, the groups joined to the kept searches, the rows of an excluded search and
--   of an unknown one (logs/results/pass's counts, here summed per search instead of joined
--   row by row), and the searches that may hold a repeated rank, as in
--   logs/results/rank_suspects but exact per search_id (fewer bits than rows among ranks
--   1..63), so only a search with more than one rank above 63 is suspected without a repeat;
--   logs/results/duplicate_ranks decides every suspect exactly. One grouping of the results
--   and a join of one row per search replace a join of every results row and a second
--   grouping (bench/README.md has the measurements). Reads search_id and rank only.
-- grain: one row
-- engines: duckdb (bit_or and bit_count on a UBIGINT mask; the footer path runs only on
--   DuckDB's Parquet reader, and another engine takes logs/results/pass)
-- params: none
-- identifiers: source
-- switches: excluded
-- source: the typed view of the results (onlineeval.logs.tables.Table.typed), every row
--   holding a search_id and a rank >= 1 (the footers said so).
-- excluded: the helper table _oe_excluded_search_ids exists.
-- requires: the view _oe_base_searches (logs/searches/kept).
-- outputs: search_excluded, unknown_search, suspects BIGINT.
SELECT
    coalesce(sum(g.n) FILTER (WHERE k.search_id IS NULL
        AND {{#excluded}}e.search_id IS NOT NULL{{/excluded}}{{^excluded}}false{{/excluded}}),
        0) AS search_excluded,
    coalesce(sum(g.n) FILTER (WHERE k.search_id IS NULL
        AND NOT {{#excluded}}e.search_id IS NOT NULL{{/excluded}}{{^excluded}}false{{/excluded}}),
        0) AS unknown_search,
    count(*) FILTER (WHERE g.n_small <> bit_count(g.mask) OR g.n_big > 1) AS suspects
FROM (
    SELECT
        r.search_id,
        count(*) AS n,
        count(*) FILTER (WHERE r.rank <= 63) AS n_small,
        coalesce(bit_or(CASE WHEN r.rank <= 63
                             THEN CAST(1 AS UBIGINT) << CAST(r.rank AS UBIGINT) END),
                 CAST(0 AS UBIGINT)) AS mask,
        count(*) FILTER (WHERE r.rank > 63) AS n_big
    FROM {{source}} AS r
    GROUP BY r.search_id
) AS g
LEFT JOIN _oe_base_searches AS k ON g.search_id = k.search_id
{{#excluded}}LEFT JOIN _oe_excluded_search_ids AS e ON g.search_id = e.search_id{{/excluded}}
