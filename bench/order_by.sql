-- bench/order_by.sql -- native Sort vs GpuSort on a table like
-- (i int4, f float4, s int4, id int8, pad text), about 80-byte rows.
-- Run by bench/order_by.sh; psql variables: rows, runs, extra (1: also
-- GpuSort over a serial scan and without the column reorder).
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = warning;
\i bench/order_by_table.sql

-- median Execution Time of `runs` EXPLAIN ANALYZE (TIMING OFF) runs, in ms,
-- and what the GpuSort node (if any) reported in the last of them (its phase
-- times are its own clock readings, shown with TIMING OFF too)
CREATE OR REPLACE FUNCTION pg_temp.bench(q text, runs int)
RETURNS TABLE (median_ms numeric, gpusort text) LANGUAGE plpgsql AS $$
DECLARE j jsonb; ms numeric[] := '{}'; node jsonb;
BEGIN
  FOR k IN 1..runs LOOP
    EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || q INTO j;
    ms := ms || round((j -> 0 ->> 'Execution Time')::numeric, 1);
  END LOOP;
  median_ms := (SELECT x FROM unnest(ms) x ORDER BY x OFFSET (runs - 1) / 2 LIMIT 1);
  gpusort := NULL;
  IF current_setting('gpusort.enabled')::bool THEN
    node := jsonb_path_query_first(j, 'strict $.**?(@."Custom Plan Provider" == "GpuSort")');
    IF node IS NOT NULL THEN
      gpusort := format('%s %s (%s rows): fill %s, to device %s, sort %s, from device %s, emit %s ms',
        node ->> 'Device', node ->> 'Algorithm', node ->> 'Rows Sorted',
        round((node ->> 'Fill Time')::numeric), round((node ->> 'To Device Time')::numeric, 1),
        round((node ->> 'Sort Time')::numeric, 1), round((node ->> 'From Device Time')::numeric, 1),
        round((node ->> 'Emit Time')::numeric));
    END IF;
  END IF;
  RETURN NEXT;
END $$;

CREATE TEMP TABLE results (q text, config text, median_ms numeric, gpusort text);
CREATE TEMP TABLE queries (n int, q text);
INSERT INTO queries VALUES
  (0, 'SELECT * FROM t'),
  (1, 'SELECT i FROM t ORDER BY i'),
  (2, 'SELECT * FROM t ORDER BY f'),
  (3, 'SELECT * FROM t ORDER BY s, i'),
  (4, 'SELECT * FROM t ORDER BY i LIMIT 100'),
  (5, 'SELECT * FROM t WHERE s < 100 ORDER BY f');

-- the first GpuSort query of a session opens the GPU; later ones do not
SET gpusort.enabled = on;
SELECT 'first GpuSort query of the session' AS what, median_ms AS ms, gpusort
FROM pg_temp.bench('SELECT i FROM t ORDER BY i', 1);

SET gpusort.enabled = off;
INSERT INTO results SELECT q, 'native (defaults)', b.* FROM queries, pg_temp.bench(q, :runs) b ORDER BY n;
SET work_mem = '8GB';
INSERT INTO results SELECT q, 'native (work_mem 8GB)', b.* FROM queries, pg_temp.bench(q, :runs) b WHERE n > 0 ORDER BY n;
RESET work_mem;
SET gpusort.enabled = on;
INSERT INTO results SELECT q, 'GpuSort', b.* FROM queries, pg_temp.bench(q, :runs) b WHERE n > 0 ORDER BY n;

\if :extra
-- GpuSort reading a serial scan instead of Gather
SET max_parallel_workers_per_gather = 0;
INSERT INTO results SELECT q, 'GpuSort (no parallel workers)', b.* FROM queries, pg_temp.bench(q, :runs) b WHERE n > 0 ORDER BY n;
RESET max_parallel_workers_per_gather;

-- GpuSort without moving the rows into sorted order on the GPU
SET gpusort.gpu_reorder_min_rows = 2147483647;
INSERT INTO results SELECT q, 'GpuSort (rows not reordered)', b.* FROM queries, pg_temp.bench(q, :runs) b WHERE n BETWEEN 1 AND 3 ORDER BY n;
RESET gpusort.gpu_reorder_min_rows;

-- the Gather's leader only takes in the workers' rows (single copy; by
-- default it scans too, PostgreSQL's way)
SET gpusort.gather_leader_scans = off;
INSERT INTO results SELECT q, 'GpuSort (Gather leader only collects)', b.* FROM queries, pg_temp.bench(q, :runs) b WHERE n BETWEEN 1 AND 5 AND n <> 4 ORDER BY n;
RESET gpusort.gather_leader_scans;

-- the workers store their rows in shared memory (GpuSortFill): auto (the
-- default, so this repeats the GpuSort row), only rows of by-value columns,
-- stored as columns; on, whole rows as tuples too
SET gpusort.parallel_fill = auto;
INSERT INTO results SELECT q, 'GpuSort (workers store by-value rows)', b.* FROM queries, pg_temp.bench(q, :runs) b WHERE n = 1 ORDER BY n;
SET gpusort.parallel_fill = on;
INSERT INTO results SELECT q, 'GpuSort (workers store all rows)', b.* FROM queries, pg_temp.bench(q, :runs) b WHERE n BETWEEN 2 AND 3 ORDER BY n;
RESET gpusort.parallel_fill;
\endif

\echo '== the LIMIT query, native and GpuSort runs interleaved (7 pairs; ms)'
CREATE TEMP TABLE ab (k int, native_ms numeric, gpusort_ms numeric);
DO $$
DECLARE j jsonb; a numeric; b numeric;
BEGIN
  FOR k IN 1..7 LOOP
    SET LOCAL gpusort.enabled = off;
    EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT * FROM t ORDER BY i LIMIT 100' INTO j;
    a := (j -> 0 ->> 'Execution Time')::numeric;
    SET LOCAL gpusort.enabled = on;
    EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT * FROM t ORDER BY i LIMIT 100' INTO j;
    b := (j -> 0 ->> 'Execution Time')::numeric;
    INSERT INTO ab VALUES (k, round(a, 1), round(b, 1));
  END LOOP;
END $$;
SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY native_ms) AS native_median_ms,
       percentile_disc(0.5) WITHIN GROUP (ORDER BY gpusort_ms) AS gpusort_median_ms,
       string_agg(native_ms || '/' || gpusort_ms, '  ' ORDER BY k) AS pairs
FROM ab;

\echo '== results (median ms of EXPLAIN ANALYZE Execution Time, TIMING OFF)'
SELECT r.q AS query, :rows AS rows,
       max(median_ms) FILTER (WHERE config = 'native (defaults)') AS native_default_ms,
       max(median_ms) FILTER (WHERE config = 'native (work_mem 8GB)') AS native_8gb_ms,
       max(median_ms) FILTER (WHERE config = 'GpuSort') AS gpusort_ms,
       max(median_ms) FILTER (WHERE config = 'GpuSort (no parallel workers)') AS gpusort_serial_ms,
       round(max(median_ms) FILTER (WHERE config = 'native (defaults)') /
             nullif(max(median_ms) FILTER (WHERE config = 'GpuSort'), 0), 2) AS speedup_vs_default,
       round(max(median_ms) FILTER (WHERE config = 'native (work_mem 8GB)') /
             nullif(max(median_ms) FILTER (WHERE config = 'GpuSort'), 0), 2) AS speedup_vs_8gb,
       max(gpusort) FILTER (WHERE config = 'GpuSort') AS gpusort_detail
FROM results r JOIN queries USING (q) GROUP BY r.q, n ORDER BY n;

\echo '== every GpuSort configuration (median ms; phases of the last run)'
SELECT r.q AS query, config, median_ms, gpusort
FROM results r JOIN queries USING (q) WHERE config LIKE 'GpuSort%' ORDER BY n, config;
