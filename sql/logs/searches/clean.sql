-- name: logs/searches/clean
-- computes: the clean searches view: the kept searches with canonical columns, n_results
--   counted from the results rows when the log does not give it on every row, and the extra
--   source columns.
-- grain: one row per kept search
-- params: none
-- identifiers: columns, extras
-- switches: count_results, given
-- columns: the canonical searches columns but n_results, in schema order.
-- extras: the extra source columns kept (after the canonical ones).
-- count_results: n_results is counted from results: the log has a results table and
--   n_results is absent or NULL on some row.
-- given: the log has an n_results column (its value wins over the count when not NULL).
-- requires: the view _oe_base_searches (logs/searches/kept) and the clean results view.
-- outputs: the columns, n_results INTEGER, the extras.
SELECT {{columns:s.}},
    {{#count_results}}
    CAST(coalesce({{#given}}s.n_results, {{/given}}n.n, 0) AS INTEGER) AS n_results
    {{/count_results}}
    {{^count_results}}s.n_results{{/count_results}}
    {{extras:, s.@|}}
FROM _oe_base_searches AS s
{{#count_results}}
LEFT JOIN (SELECT search_id, count(*) AS n FROM results GROUP BY search_id) AS n
    ON s.search_id = n.search_id
{{/count_results}}
