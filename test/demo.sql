-- test/demo.sql -- what gpusort does, on a scratch cluster (run by test/demo.sh)
\set ON_ERROR_STOP on
\pset footer off
CREATE EXTENSION IF NOT EXISTS gpusort;

\echo '== GPUs this server sees (no rows: every sort takes the CPU path)'
SELECT * FROM gpusort_devices();

\echo '== the basics'
SELECT gpu_sort(ARRAY[3, NULL, 1, 2]::int4[]) AS ascending,
       gpu_sort(ARRAY[3, NULL, 1, 2]::int4[], descending => true) AS descending;
SELECT gpu_sort('{1.5,NaN,-Infinity,-0}'::float4[]) AS float4_in_order_by_order;

\echo '== timing: native ORDER BY vs gpu_sort() on the CPU path vs on the GPU'
SET work_mem = '1GB';
CREATE TEMP TABLE demo AS
SELECT array_agg((random() * 4e9 - 2e9)::int4) AS i,
       array_agg((random() * 2e6 - 1e6)::float4) AS f
FROM generate_series(1, :rows);

-- median of 3 runs of a query, in milliseconds
CREATE FUNCTION pg_temp.time_ms(q text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE t timestamptz; ms numeric[] := '{}';
BEGIN
  FOR k IN 1..3 LOOP
    t := clock_timestamp();
    EXECUTE q;
    ms := ms || (extract(epoch FROM clock_timestamp() - t) * 1000)::numeric(12, 1);
  END LOOP;
  RETURN (SELECT x FROM unnest(ms) x ORDER BY x OFFSET 1 LIMIT 1);
END $$;

SET gpusort.device = 'gpu';
SET client_min_messages = error;   -- "no GPU" warnings: the table says which path ran
SELECT cardinality(gpu_sort(i)) FROM demo;   -- opens the GPU (once per session)
RESET client_min_messages;

SELECT key, :rows AS n,
  pg_temp.time_ms(format('SELECT array(SELECT x FROM unnest(%s) x ORDER BY x) FROM demo', key)) AS native_order_by_ms,
  (SELECT pg_temp.time_ms(format('SET LOCAL gpusort.device = cpu; SELECT gpu_sort(%s) FROM demo', key))) AS gpu_sort_cpu_path_ms,
  CASE WHEN EXISTS (SELECT FROM gpusort_devices())
       THEN pg_temp.time_ms(format('SET LOCAL gpusort.device = gpu; SELECT gpu_sort(%s) FROM demo', key)) END
    AS gpu_sort_gpu_ms
FROM unnest(ARRAY['i', 'f']) key;

\echo '== the results agree with native ORDER BY'
RESET gpusort.device;
SELECT gpu_sort(i) = array(SELECT x FROM unnest(i) x ORDER BY x) AS int4_equal,
       gpu_sort(f, true) = array(SELECT x FROM unnest(f) x ORDER BY x DESC) AS float4_desc_equal
FROM demo;

\echo '== GpuSort: the executor''s Sort replaced (LOAD, or shared_preload_libraries = gpusort)'
LOAD 'gpusort';
CREATE TEMP TABLE events AS
SELECT g AS id, CASE WHEN g % 100 = 0 THEN NULL ELSE (random() * 1e6)::float4 END AS score,
       md5(g::text) AS pad
FROM generate_series(1, :rows) g;
ANALYZE events;
EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM events ORDER BY score DESC NULLS LAST, id LIMIT 100;
EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM events ORDER BY score DESC NULLS LAST, id;
SET gpusort.enabled = off;
EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM events ORDER BY score DESC NULLS LAST, id;
RESET gpusort.enabled;

\echo '== GpuSort on int4 keys of a narrow range (0 .. 999,999): two 10-bit radix passes over key - min'
\echo '   (with a GPU and at least 4,194,304 rows, one 32-bit record a row between them); its rows in'
\echo '   the same order as native ORDER BY k, id (the sort is stable and the scan gives id in order)'
SET max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE banded AS
SELECT g AS id, (random() * 999999)::int4 AS k FROM generate_series(1, :rows) g;
ANALYZE banded;
EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM banded ORDER BY k;
SET gpusort.enabled = off;
CREATE TEMP TABLE native AS
SELECT md5(string_agg(k || ':' || id, ',')) AS m FROM (SELECT k, id FROM banded ORDER BY k, id) s;
RESET gpusort.enabled;
SELECT md5(string_agg(k || ':' || id, ',')) = (SELECT m FROM native) AS same_as_native
FROM (SELECT k, id FROM banded ORDER BY k) s;
RESET max_parallel_workers_per_gather;
