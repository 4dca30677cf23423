--
-- gpusort.cost_model: a Sort is replaced only where GpuSort's estimated
-- cost (src/gpusort_cost.c, doc/cost_model.md) is below the native plan's.
-- gpusort.device = cpu makes the model use the CPU path's figures, the same
-- with and without a GPU; one worker-free plan per query.
--
LOAD 'gpusort';
SET gpusort.min_rows = 0;
SET gpusort.device = cpu;
SET max_parallel_workers_per_gather = 0;
SHOW gpusort.cost_model;

CREATE TABLE cost_wide AS
	SELECT g AS id, (g * 7919) % 200000 AS k, g % 10 AS g10, repeat(md5(g::text), 3) AS pad
	FROM generate_series(1, 200000) g;
ANALYZE cost_wide;

-- many wide rows: GpuSort is expected to win
EXPLAIN (COSTS OFF) SELECT * FROM cost_wide ORDER BY k;
-- a text key too
EXPLAIN (COSTS OFF) SELECT * FROM cost_wide ORDER BY pad COLLATE "C";

-- a tiny sort: the native Sort
EXPLAIN (COSTS OFF) SELECT * FROM cost_wide WHERE id <= 20 ORDER BY k;

-- a sort whose input is tiny next to the work below it: the native Sort
EXPLAIN (COSTS OFF) SELECT g10, count(*) FROM cost_wide GROUP BY g10 ORDER BY 2 DESC;

-- a bounded sort of few rows: the native bounded heap
EXPLAIN (COSTS OFF) SELECT * FROM cost_wide WHERE id <= 20 ORDER BY k LIMIT 5;
-- LIMIT 1000 of many rows: GpuSort's top-k heap reads a row for less
EXPLAIN (COSTS OFF) SELECT * FROM cost_wide ORDER BY k LIMIT 1000;

-- the same sort expected past a 1 MB budget costs its runs' writes and
-- reads on top
CREATE FUNCTION plan_cost(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN (j -> 0 -> 'Plan' ->> 'Total Cost')::float8;
END $$;
CREATE TEMP TABLE budget_costs AS SELECT plan_cost('SELECT * FROM cost_wide ORDER BY k') AS in_memory;
SET gpusort.work_mem = 1;
SELECT plan_cost('SELECT * FROM cost_wide ORDER BY k') > in_memory * 1.2 AS runs_cost_more FROM budget_costs;
RESET gpusort.work_mem;
DROP FUNCTION plan_cost(text);

-- gpusort.cost_model = off: the row threshold alone decides
SET gpusort.cost_model = off;
EXPLAIN (COSTS OFF) SELECT * FROM cost_wide WHERE id <= 20 ORDER BY k;
EXPLAIN (COSTS OFF) SELECT * FROM cost_wide WHERE id <= 20 ORDER BY k LIMIT 5;
RESET gpusort.cost_model;

-- results equal the native Sort's
SELECT md5(string_agg(id::text || ':' || k::text, ',')) = (
		SELECT md5(string_agg(id::text || ':' || k::text, ',' ORDER BY k, id)) FROM cost_wide) AS same
FROM (SELECT id, k FROM cost_wide ORDER BY k, id) s;

RESET max_parallel_workers_per_gather;
RESET gpusort.device;
RESET gpusort.min_rows;
DROP TABLE cost_wide;
