-- bench/gather_configs.sql -- GpuSort over Gather: whether the Gather's
-- leader scans too (gpusort.gather_leader_scans) and whether the workers
-- store their rows for the GpuSort (gpusort.parallel_fill), each
-- combination and the native Sort (default settings) run in turn, round
-- after round, so that a slow stretch of the host falls on all of them.
-- Run by bench/order_by.sh with SQL=bench/gather_configs.sql; psql
-- variables: rows, runs (rounds).
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = warning;
\i bench/order_by_table.sql

CREATE TEMP TABLE configs (c int, config text, enabled text, leader_scans text, fill text, workers int);
INSERT INTO configs VALUES
  (0, 'native Sort (defaults)', 'off', 'on', 'off', 2),
  (1, 'leader scans, workers store no rows', 'on', 'on', 'off', 2),
  (2, 'leader scans, workers store by-value rows', 'on', 'on', 'auto', 2),
  (3, 'leader collects, workers store no rows', 'on', 'off', 'off', 2),
  (4, 'leader collects, workers store by-value rows', 'on', 'off', 'auto', 2),
  (5, 'no parallel workers', 'on', 'on', 'off', 0);
CREATE TEMP TABLE queries (n int, q text);
INSERT INTO queries VALUES
  (1, 'SELECT i FROM t ORDER BY i'),
  (2, 'SELECT * FROM t ORDER BY f'),
  (3, 'SELECT * FROM t ORDER BY s, i'),
  (4, 'SELECT i, s FROM t ORDER BY s, i'),
  (5, 'SELECT * FROM t WHERE s < 100 ORDER BY f'),
  (6, 'SELECT i FROM t WHERE s < 100 ORDER BY i');
-- per run: execution time, and the GpuSort node's fill and emit times and
-- rows its workers stored (NULL for the native Sort)
CREATE TEMP TABLE runs (n int, c int, round int, ms numeric, fill_ms numeric, emit_ms numeric,
                        stored bigint);

-- warm up: the GPU opened, the table read once
SELECT count(*) FROM (SELECT i FROM t ORDER BY i) s;

SELECT set_config('bench.rounds', :'runs', false) AS rounds;
DO $$
DECLARE j jsonb; node jsonb; r record;
BEGIN
  FOR round IN 1..current_setting('bench.rounds')::int LOOP
    FOR r IN SELECT * FROM queries, configs ORDER BY n, c LOOP
      PERFORM set_config('gpusort.enabled', r.enabled, true);
      PERFORM set_config('gpusort.gather_leader_scans', r.leader_scans, true);
      PERFORM set_config('gpusort.parallel_fill', r.fill, true);
      PERFORM set_config('max_parallel_workers_per_gather', r.workers::text, true);
      EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || r.q INTO j;
      node := jsonb_path_query_first(j, 'strict $.**?(@."Custom Plan Provider" == "GpuSort")');
      INSERT INTO runs VALUES (r.n, r.c, round, round((j -> 0 ->> 'Execution Time')::numeric, 1),
                               round((node ->> 'Fill Time')::numeric, 1),
                               round((node ->> 'Emit Time')::numeric, 1),
                               (node ->> 'Rows Stored by Workers')::bigint);
    END LOOP;
  END LOOP;
END $$;

\echo '== median ms per query and configuration (all runs in round order); speed-up: the native Sort''s median over this median'
SELECT q AS query, config,
       percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) AS median_ms,
       round((SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x.ms) FROM runs x
              WHERE x.n = runs.n AND x.c = 0) /
             percentile_disc(0.5) WITHIN GROUP (ORDER BY ms), 2) AS speedup,
       percentile_disc(0.5) WITHIN GROUP (ORDER BY fill_ms) AS fill_ms,
       percentile_disc(0.5) WITHIN GROUP (ORDER BY emit_ms) AS emit_ms,
       max(stored) AS stored_by_workers,
       string_agg(ms::text, ' ' ORDER BY round) AS runs_ms
FROM runs JOIN queries USING (n) JOIN configs USING (c)
GROUP BY n, q, c, config ORDER BY n, c;
