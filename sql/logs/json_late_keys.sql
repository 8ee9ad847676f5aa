-- name: logs/json_late_keys
-- computes: the keys of JSON-lines objects that are not among the columns DuckDB's reader
--   found in its sample (the first 20,480 objects of at most 32 files), so that a key first
--   appearing later (a variant added to a log mid-way) is read too, not silently dropped.
--   Python wrapper: onlineeval.logs.jsontypes.late_keys.
-- grain: one row per distinct key of an object holding a key outside $known
-- engines: duckdb (inspects JSON-lines files through DuckDB's reader)
-- params: known
-- identifiers: objects
-- objects: the JSON files read as one JSON value per line (column json).
-- outputs: key VARCHAR (every key of those objects; the caller keeps the unknown ones).
SELECT DISTINCT unnest(json_keys(json)) AS key
FROM {{objects}}
WHERE NOT list_has_all($known, json_keys(json))
