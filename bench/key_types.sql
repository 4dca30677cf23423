-- bench/key_types.sql -- sort keys that are not encoded whole (text under
-- the C and an ICU collation, numeric, uuid, shared prefixes, a sorted
-- GROUP BY): the native Sort, GpuSort on the GPU and GpuSort's CPU path
-- (gpusort.device = cpu), interleaved round by round, at default settings.
-- Run by bench/order_by.sh (SQL=bench/key_types.sql); psql variables: rows,
-- runs, queries ('all' or a list such as '1,2,3').
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = notice;
\i bench/order_by_table.sql

-- the names, amounts, uuids, groups and 16-byte-prefix strings
DROP TABLE IF EXISTS k;
CREATE UNLOGGED TABLE k AS
SELECT g AS id,
       'customer_' || lpad((hashint8(g) & 1073741823)::text, 9, '0') AS name,
       ((hashint8(g + 1) % 10000000000) / 100.0)::numeric(12,2) AS amount,
       md5((g * 7)::text)::uuid AS u,
       'group_' || (hashint8(g + 2) & 4095) AS grp,
       'shared-16-bytes:' || md5(g::text) AS tied
FROM generate_series(1, :rows) g;
VACUUM ANALYZE k;

CREATE TEMP TABLE queries (n int, what text, q text, settings text);
INSERT INTO queries VALUES
  (1, 'md5 text, C collation', 'SELECT * FROM t ORDER BY pad', ''),
  (2, 'md5 text, ICU collation', 'SELECT * FROM t ORDER BY pad COLLATE "en-US-x-icu"', ''),
  (3, 'names with a shared prefix', 'SELECT id, name FROM k ORDER BY name', ''),
  (4, 'numeric(12,2)', 'SELECT id, amount FROM k ORDER BY amount', ''),
  (5, 'uuid', 'SELECT id, u FROM k ORDER BY u', ''),
  (6, 'sorted GROUP BY on text', 'SELECT grp, count(*) FROM k GROUP BY grp', 'SET LOCAL enable_hashagg = off'),
  (7, 'text tied on its first 16 bytes', 'SELECT id, tied FROM k ORDER BY tied', '');
DELETE FROM queries WHERE :'queries' <> 'all' AND n <> ALL (string_to_array(:'queries', ',')::int[]);

-- one EXPLAIN ANALYZE (TIMING OFF) run: its Execution Time and the GpuSort node
CREATE FUNCTION pg_temp.run1(q text, settings text, config text, OUT ms numeric, OUT node jsonb)
LANGUAGE plpgsql AS $$
DECLARE j jsonb;
BEGIN
  EXECUTE coalesce(nullif(settings, ''), 'RESET enable_hashagg');
  EXECUTE format('SET LOCAL gpusort.enabled = %s', config <> 'native');
  EXECUTE format('SET LOCAL gpusort.device = %s', CASE config WHEN 'cpu' THEN 'cpu' ELSE 'auto' END);
  EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || q INTO j;
  ms := round((j -> 0 ->> 'Execution Time')::numeric, 1);
  node := jsonb_path_query_first(j, 'strict $.**?(@."Custom Plan Provider" == "GpuSort")');
END $$;

CREATE TEMP TABLE runs (n int, config text, round int, ms numeric, node jsonb);
SELECT set_config('bench.runs', :'runs', false) AS runs;
-- the first GpuSort query of the session opens the GPU
SELECT ms AS first_gpusort_query_ms FROM pg_temp.run1('SELECT i FROM t ORDER BY i', '', 'gpu');

\echo '== per query: native, GpuSort on the GPU, GpuSort on the CPU, interleaved'
DO $$
DECLARE r record; x record; c text;
BEGIN
  FOR r IN SELECT * FROM queries ORDER BY n LOOP
    FOR k IN 1..current_setting('bench.runs')::int LOOP
      FOREACH c IN ARRAY ARRAY['native', 'gpu', 'cpu'] LOOP
        SELECT * INTO x FROM pg_temp.run1(r.q, r.settings, c);
        INSERT INTO runs VALUES (r.n, c, k, x.ms, x.node);
      END LOOP;
    END LOOP;
    RAISE NOTICE '% | native % | GPU % | CPU path % ms', r.what,
      (SELECT string_agg(ms::text, '/' ORDER BY round) FROM runs WHERE n = r.n AND config = 'native'),
      (SELECT string_agg(ms::text, '/' ORDER BY round) FROM runs WHERE n = r.n AND config = 'gpu'),
      (SELECT string_agg(ms::text, '/' ORDER BY round) FROM runs WHERE n = r.n AND config = 'cpu');
  END LOOP;
END $$;

\echo '== results (median ms of EXPLAIN ANALYZE Execution Time, TIMING OFF)'
WITH med AS (
  SELECT n, config, percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) AS ms,
         (array_agg(node ORDER BY round DESC))[1] AS node
  FROM runs GROUP BY n, config)
SELECT q.what AS query, :rows AS rows,
       nat.ms AS native_ms, gpu.ms AS gpusort_gpu_ms, cpu.ms AS gpusort_cpu_ms,
       round(nat.ms / nullif(gpu.ms, 0), 2) AS gpu_speedup,
       round(nat.ms / nullif(cpu.ms, 0), 2) AS cpu_path_speedup,
       format('%s; %s rows on CPU, %s refinement sorts; fill %s, to device %s, sort %s, from device %s, finish %s, emit %s ms',
              gpu.node ->> 'GPU Key Prefix', gpu.node ->> 'Rows Finished on CPU',
              gpu.node ->> 'Refinement Sorts',
              round((gpu.node ->> 'Fill Time')::numeric), round((gpu.node ->> 'To Device Time')::numeric, 1),
              round((gpu.node ->> 'Sort Time')::numeric, 1), round((gpu.node ->> 'From Device Time')::numeric, 1),
              round((gpu.node ->> 'Finish Time')::numeric), round((gpu.node ->> 'Emit Time')::numeric)) AS gpusort_detail
FROM queries q
JOIN med nat ON nat.n = q.n AND nat.config = 'native'
JOIN med gpu ON gpu.n = q.n AND gpu.config = 'gpu'
JOIN med cpu ON cpu.n = q.n AND cpu.config = 'cpu'
ORDER BY q.n;
