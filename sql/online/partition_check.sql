-- name: online/partition_check
-- computes: whether the 64-bit hash of the stream key (hash(key) >> $pk_shift, exactly as
--   online/search_facts computes its _oe_pk) is one-to-one on the clean searches: it is when
--   it takes as many distinct values as the key itself. Only then may online/search_facts
--   partition its windows by the hash (and online_metrics count users by it); otherwise two
--   users (or sessions) would share a partition and the numbers would be wrong, so the
--   caller partitions by the key columns instead.
-- grain: one row
-- engines: duckdb (the gate of the DuckDB-only hashed switch of online/search_facts: DuckDB's
--   64-bit hash; Spark's hash is 32-bit, and other engines partition by the key columns)
-- params: pk_shift
-- identifiers: key
-- requires: the clean searches view of onlineeval.load_logs (user_id is never NULL there).
-- outputs: n_keys BIGINT = count(DISTINCT key), n_hashes BIGINT = count(DISTINCT hash).
SELECT
    count(DISTINCT ({{key}})) AS n_keys,
    count(DISTINCT hash({{key}}) >> CAST($pk_shift AS UTINYINT)) AS n_hashes
FROM searches
