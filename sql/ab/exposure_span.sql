-- name: ab/exposure_span
-- computes: the first and the last exposure of the units an A/B readout analyses (its
--   window's first_exposure and last_exposure), from the view of ab/exposure_rows.
-- grain: one row
-- params: none
-- identifiers: exposure_rows
-- exposure_rows: the view of ab/exposure_rows (outcome rows of the units in one variant).
-- requires: columns first_ts, last_ts of exposure_rows.
-- outputs: first_exposure, last_exposure TIMESTAMP (NULL without rows).
SELECT min(first_ts) AS first_exposure, max(last_ts) AS last_exposure
FROM {{exposure_rows}}
