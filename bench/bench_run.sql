-- bench/bench_run.sql -- bench_run(query, settings): the query's EXPLAIN
-- ANALYZE (TIMING OFF) under the settings (SQL run first, '' for none), as
--   execution ms|algorithm|sorted runs|run kB|fill ms|run write ms|emit ms
-- of its first GpuSort, or execution ms|native|-|-|-|-|- without one.
-- Used by bench/external_sizes.sh and bench/external_sort.sh.
CREATE OR REPLACE FUNCTION bench_run(q text, settings text DEFAULT '') RETURNS text LANGUAGE plpgsql AS $$
DECLARE j json; p jsonb; s text;
BEGIN
  IF settings <> '' THEN
    EXECUTE settings;
  END IF;
  EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || q INTO j;
  p := j::jsonb -> 0 -> 'Plan';
  WHILE p ->> 'Custom Plan Provider' IS DISTINCT FROM 'GpuSort' AND p -> 'Plans' IS NOT NULL LOOP
    p := p -> 'Plans' -> 0;
  END LOOP;
  s := (j::jsonb -> 0 ->> 'Execution Time');
  IF p ->> 'Custom Plan Provider' = 'GpuSort' THEN
    RETURN s || '|' || (p ->> 'Algorithm') || '|' || coalesce(p ->> 'Sorted Runs', '0')
      || '|' || coalesce(p ->> 'Run Space Used', '0') || '|' || (p ->> 'Fill Time')
      || '|' || coalesce(p ->> 'Run Write Time', '0') || '|' || (p ->> 'Emit Time');
  END IF;
  RETURN s || '|native|-|-|-|-|-';
END $$;
