-- name: ab/power_moments
-- computes: the baseline moments onlineeval.power needs, from the per-unit rows of
--   ab/unit_sums (a unit's searches pooled over its variants, or only those of $variant):
--   the number of units, the mean of each per-unit sum and the sample covariance of each
--   pair of them. One row leaves DuckDB however many units the log has; Python turns the
--   moments into each metric's delta-method variance (onlineeval.stats.moments.ratio).
-- grain: one row
-- params: variant
-- identifiers: unit_rows, sums, means, pairs
-- unit_rows: a view of the rows of ab/unit_sums without exposure (one per unit and variant,
--   NULL units kept).
-- sums: the per-unit statistics the chosen metrics need (columns of unit_rows), summed per
--   unit over the kept rows; the column units (1 for every unit) is always there.
-- means: the per-unit columns whose mean is wanted (sums and/or units).
-- pairs: the (a, b) pairs of per-unit columns whose covariance is wanted.
-- requires: columns unit, variant, searches and the sums of unit_rows.
-- baseline: a unit is in it when its unit value is not NULL and it has a row of $variant
--   (any row when $variant is NULL); its sums are over those rows. Units with no search in
--   $variant are not part of that baseline.
-- outputs, in this order (Python reads them by position): for each of means, avg over the
--   baseline units (DOUBLE); for each of pairs, covar_samp over the baseline units (ddof 1,
--   computed by DuckDB without the cancellation of raw sums of squares); then n BIGINT, the
--   baseline units, and null_searches, the searches whose unit value is NULL.
WITH
tagged AS (
    SELECT *,
        (CAST($variant AS VARCHAR) IS NULL
         OR variant = CAST($variant AS VARCHAR)) IS TRUE AS _oe_kept
    FROM {{unit_rows}}
),
per_unit AS (
    SELECT
        unit IS NOT NULL AND bool_or(_oe_kept) AS _oe_in_base,
        sum(searches) FILTER (WHERE unit IS NULL) AS _oe_null_searches,
        CAST(1 AS DOUBLE) AS units,
        {{sums:CAST(sum(@) FILTER (WHERE _oe_kept) AS DOUBLE) AS @,}}
        unit
    FROM tagged
    GROUP BY unit
)
SELECT
    {{means:avg(@) FILTER (WHERE _oe_in_base),}}
    {{pairs:covar_samp(@1, @2) FILTER (WHERE _oe_in_base),}}
    count(*) FILTER (WHERE _oe_in_base) AS n,
    coalesce(sum(_oe_null_searches), 0) AS null_searches
FROM per_unit
