-- Bounded sorts above the top-k heap's bound: ORDER BY ... LIMIT n with
-- n > 65536.  Every process that reads rows (the parallel workers and the
-- leader's share of the scan) drops the rows that cannot be in the result
-- and passes on no more than n of its own, whatever the order rows come in.
LOAD 'gpusort';
SET gpusort.cost_model = off;   -- every bounded sort here is a GpuSort
\i sql/include/same_result.sql
\i sql/include/explain_json.sql
-- 400,000 rows stored in ascending i: ORDER BY i DESC meets every row as
-- the best so far, the worst order for a cut learned from rows seen
CREATE TABLE bd AS
SELECT i, CASE WHEN i % 101 = 0 THEN NULL ELSE hashint4(i) % 50 END AS a,
       (hashint4(i + 7) % 100000)::float8 / 3 AS d, md5(i::text) AS t
FROM generate_series(1, 400000) i;
ANALYZE bd;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
-- under auto the workers store whole rows (a text column) under a bound
EXPLAIN (COSTS OFF) SELECT * FROM bd ORDER BY i DESC LIMIT 70000;
-- three processes pass on at most 70,000 rows each
SELECT (p -> 'Plans' -> 0 ->> 'Rows Sorted')::int <= 3 * 70000 AS candidates_bounded,
       (p -> 'Plans' -> 0 ->> 'Rows Stored by Workers')::int > 0 AS workers_stored
FROM explain_json('SELECT * FROM bd ORDER BY i DESC LIMIT 70000') p;
SELECT same_result('SELECT * FROM bd ORDER BY i DESC LIMIT 70000', 'i');
SELECT same_result('SELECT * FROM bd ORDER BY i LIMIT 70000 OFFSET 1234', 'i');
-- ties at the cut (50 values of a), NULLs first and last, several keys
SELECT same_result('SELECT * FROM bd ORDER BY a NULLS FIRST, i LIMIT 90000', 'a, i');
SELECT same_result('SELECT * FROM bd ORDER BY a DESC, d, i LIMIT 100000', 'a, d, i');
SELECT same_result('SELECT i, a FROM bd ORDER BY a DESC NULLS LAST, i DESC LIMIT 66000', 'a, i');
-- a byte-prefix key, and rows of fixed-length columns (stored as columns)
SELECT same_result('SELECT * FROM bd ORDER BY t LIMIT 80000', 't');
SELECT same_result('SELECT i, a, d FROM bd ORDER BY d DESC, i LIMIT 75000', 'd, i');
-- a bound above the row count drops nothing
SELECT same_result('SELECT * FROM bd ORDER BY d, i LIMIT 1000000', 'd, i');
-- only the workers read (the leader collects), and without parallel workers
SET parallel_leader_participation = off;
SELECT same_result('SELECT * FROM bd ORDER BY i DESC LIMIT 70000', 'i');
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;
SELECT same_result('SELECT * FROM bd ORDER BY a, i DESC LIMIT 70000', 'a, i');
-- a serial GpuSort drops the rows past its own cut as it reads them (t is
-- in no particular order, so many rows fall past it)
SELECT (p -> 'Plans' -> 0 ->> 'Rows Sorted')::int < 400000 AS dropped_some
FROM explain_json('SELECT * FROM bd ORDER BY t LIMIT 70000') p;
SELECT same_result('SELECT * FROM bd ORDER BY t LIMIT 70000', 't');
SELECT same_result('SELECT * FROM bd ORDER BY a DESC NULLS FIRST, t LIMIT 100000 OFFSET 7', 'a, t');
SET max_parallel_workers_per_gather = 2;
-- a memory budget the workers meet part way: the rest of their rows come
-- up through the Gather (still dropped by the cut), or go to the tuplesort
SET gpusort.work_mem = '12MB';
SELECT same_result('SELECT * FROM bd ORDER BY i DESC LIMIT 70000', 'i');
SELECT same_result('SELECT * FROM bd ORDER BY t DESC LIMIT 100000', 't');
RESET gpusort.work_mem;
-- LIMIT and OFFSET as query parameters (a generic plan): the GpuSort
-- evaluates them as the Limit does, and its workers drop rows by them
SET plan_cache_mode = force_generic_plan;
PREPARE lim(int8, int8) AS SELECT * FROM bd ORDER BY i DESC LIMIT $1 OFFSET $2;
EXPLAIN (COSTS OFF) EXECUTE lim(70000, 5);
SELECT p -> 'Plans' -> 0 ->> 'Sort Bound' AS bound,
       (p -> 'Plans' -> 0 ->> 'Rows Sorted')::int <= 3 * 70005 AS candidates_bounded
FROM explain_json('EXECUTE lim(70000, 5)') p;
CREATE TEMP TABLE got AS EXECUTE lim(70000, 5);
SET gpusort.enabled = off;
CREATE TEMP TABLE want AS SELECT * FROM bd ORDER BY i DESC LIMIT 70000 OFFSET 5;
SET gpusort.enabled = on;
SELECT (SELECT count(*) FROM got) AS rows,
       (SELECT count(*) FROM (TABLE got EXCEPT ALL TABLE want) x) AS differ;
DROP TABLE got, want;
PREPARE limi(int8, int8) AS SELECT i FROM bd ORDER BY i DESC LIMIT $1 OFFSET $2;
EXECUTE limi(3, NULL);
EXECUTE limi(2, 399997);
CREATE TEMP TABLE got AS EXECUTE limi(NULL, 0);
SELECT count(*) AS rows_without_limit FROM got;
DROP TABLE got;
EXECUTE limi(-1, 0);
-- an expression of parameters; a LIMIT from a subquery (not a query
-- parameter) is no bound, and the GpuSort sorts every row
PREPARE lime(int8) AS SELECT i, a FROM bd ORDER BY a, i LIMIT $1 + 1;
CREATE TEMP TABLE got AS EXECUTE lime(99999);
SET gpusort.enabled = off;
CREATE TEMP TABLE want AS SELECT i, a FROM bd ORDER BY a, i LIMIT 100000;
SET gpusort.enabled = on;
SELECT (SELECT count(*) FROM got) AS rows,
       (SELECT count(*) FROM (TABLE got EXCEPT ALL TABLE want) x) AS differ;
DROP TABLE got, want;
DEALLOCATE lim;
DEALLOCATE limi;
DEALLOCATE lime;
RESET plan_cache_mode;
SELECT same_result('SELECT * FROM bd ORDER BY i DESC LIMIT (SELECT 70000)', 'i');
-- a cursor reads the bounded result backwards and forwards
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT i FROM bd ORDER BY i DESC LIMIT 70000;
FETCH LAST FROM c;
FETCH BACKWARD 2 FROM c;
FETCH ABSOLUTE 3 FROM c;
COMMIT;
DROP TABLE bd;
