-- bench/min_rows.sql -- where GpuSort starts to beat the native Sort on
-- small inputs (sets the default of gpusort.min_rows): SELECT * ... ORDER BY
-- f over n-row tables, median of 7 EXPLAIN ANALYZE runs each.
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpusort;
SET gpusort.min_rows = 0;
SET gpusort.cost_model = off;
CREATE OR REPLACE FUNCTION pg_temp.med(q text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE j jsonb; ms numeric[] := '{}';
BEGIN
  FOR k IN 1..7 LOOP
    EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || q INTO j;
    ms := ms || (j -> 0 ->> 'Execution Time')::numeric;
  END LOOP;
  RETURN round((SELECT x FROM unnest(ms) x ORDER BY x OFFSET 3 LIMIT 1), 3);
END $$;
CREATE TEMP TABLE sizes AS SELECT unnest(ARRAY[100, 300, 1000, 3000, 10000, 30000, 100000]) AS n;
CREATE TEMP TABLE small_results (n int, native_ms numeric, gpusort_ms numeric);
DO $$
DECLARE sz int;
BEGIN
  FOR sz IN SELECT * FROM sizes ORDER BY 1 LOOP
    EXECUTE 'DROP TABLE IF EXISTS small';
    EXECUTE format('CREATE TABLE small AS SELECT g AS i, (random() * 2e6 - 1e6)::float4 AS f, md5(g::text) AS pad FROM generate_series(1, %s) g', sz);
    EXECUTE 'ANALYZE small';
    SET LOCAL gpusort.enabled = off;
    INSERT INTO small_results VALUES (sz, pg_temp.med('SELECT * FROM small ORDER BY f'), NULL);
    SET LOCAL gpusort.enabled = on;
    UPDATE small_results SET gpusort_ms = pg_temp.med('SELECT * FROM small ORDER BY f') WHERE small_results.n = sz;
  END LOOP;
END $$;
\echo '== small inputs: native Sort vs GpuSort (median ms, 7 runs)'
SELECT n AS rows, native_ms, gpusort_ms, round(native_ms / gpusort_ms, 2) AS speedup FROM small_results ORDER BY n;
