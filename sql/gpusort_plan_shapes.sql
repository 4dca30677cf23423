--
-- Plan shapes where the rewrite maps sort keys and target lists between
-- nodes: a Gather Merge whose output is a projection of its child Sort's
-- columns, MergeAppend over partitions, Incremental Sort, subplans, CTEs,
-- set operations.  Each result equals the native one (same_result); the
-- EXPLAINs show which node the rewrite left or replaced.
--
LOAD 'gpusort';
SET gpusort.min_rows = 0;
SET gpusort.cost_model = off;   -- the row threshold alone decides
SET gpusort.gpu_min_elements = 0;
SET extra_float_digits = 0;
\i sql/include/same_result.sql

CREATE TABLE gm_t (a int4, b int4);
INSERT INTO gm_t SELECT i, i % 100 FROM generate_series(1, 10000) i;
ANALYZE gm_t;

SET enable_hashagg = off;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;

-- a Gather Merge's keys number its child Sort's columns (here the third,
-- b + 1), not its own shorter output: this once crashed the backend
EXPLAIN (VERBOSE, COSTS OFF)
SELECT count(*), sum(a), sum(c) FROM (SELECT DISTINCT s.a, gm_t.b + 1 AS c
  FROM gm_t, LATERAL (SELECT gm_t.a FROM generate_series(1, 10)) s) q;
SELECT count(*), sum(a), sum(c) FROM (SELECT DISTINCT s.a, gm_t.b + 1 AS c
  FROM gm_t, LATERAL (SELECT gm_t.a FROM generate_series(1, 10)) s) q;
SELECT same_result('SELECT DISTINCT s.a, gm_t.b + 1 AS c
  FROM gm_t, LATERAL (SELECT gm_t.a FROM generate_series(1, 10)) s', 'a, c');

-- output expressions computed over the sorted columns
SELECT same_result('SELECT a * 2 AS x, b + 1 AS y FROM gm_t ORDER BY b + 1, a LIMIT 70000', 'y, x');
SELECT same_result('SELECT b + 1 AS y FROM gm_t ORDER BY b + 1, a DESC', 'y');
SELECT same_result('SELECT a, b FROM gm_t ORDER BY a % 7, b DESC, a', 'a % 7, b');

-- a sort key that only relabels a column the row has (COLLATE, varchar
-- sorted as text): the rows below leave the relabeled column out, the
-- GpuSort keys on the column and hands the node above its value
CREATE TABLE rl (id int4, t text, v varchar(20), n int4);
INSERT INTO rl SELECT i, md5((i % 3000)::text), 'v' || (i * 7 % 5000), i % 10
FROM generate_series(1, 10000) i;
ANALYZE rl;
-- (int4 as a domain over it: a key whose Gather Merge is replaced with a GPU or without)
CREATE DOMAIN rl_int AS int4;
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM rl ORDER BY n::rl_int DESC, id;
SELECT same_result('SELECT * FROM rl ORDER BY n::rl_int DESC, id', 'n, id');
SELECT same_result('SELECT * FROM rl ORDER BY t COLLATE "C", id', 't COLLATE "C", id');
SELECT same_result('SELECT * FROM rl ORDER BY v::text COLLATE "C" DESC, id', 'v::text COLLATE "C", id');
SELECT same_result('SELECT t COLLATE "C" AS tc, id FROM rl ORDER BY 1 DESC, 2 LIMIT 70000', 'tc, id');
-- read above the sort: a window function's peers, a join computing the rows
SELECT same_result('SELECT id, rank() OVER (ORDER BY t COLLATE "C") FROM rl', 'rank');
SELECT same_result('SELECT a.id, b.t FROM rl a JOIN rl b ON a.id = b.n + 1
  ORDER BY b.t COLLATE "C", a.id', 't COLLATE "C", id');
-- the relabeled value in the result, not only read by the junk filter
SELECT same_result('SELECT id, t, t COLLATE "C" AS tc FROM rl ORDER BY tc, id', 'tc, id');
SELECT same_result('SELECT id, v, v::text AS vt FROM rl ORDER BY vt DESC, id', 'vt, id');
-- two trailing relabeled columns, both left out; a Unique reading one
SELECT same_result('SELECT * FROM rl ORDER BY t COLLATE "C", v::text COLLATE "C", id',
  't COLLATE "C", v::text COLLATE "C", id');
SELECT same_result('SELECT DISTINCT ON (t COLLATE "C") t, id FROM rl ORDER BY t COLLATE "C", id',
  't COLLATE "C", id');
-- a Sort over the planner's own Gather: the column is left out below the
-- Gather too (a Sort, not a Gather Merge: the same plan with a GPU or without)
SET enable_gathermerge = off;
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM rl ORDER BY t COLLATE "C", id;
SELECT same_result('SELECT * FROM rl ORDER BY t COLLATE "C", id', 't COLLATE "C", id');
SELECT same_result('SELECT id, t, t COLLATE "C" AS tc FROM rl ORDER BY tc, id', 'tc, id');
RESET enable_gathermerge;

RESET max_parallel_workers_per_gather;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM rl ORDER BY v::text COLLATE "C" DESC, id;
SELECT same_result('SELECT * FROM rl ORDER BY v::text COLLATE "C" DESC, id', 'v::text COLLATE "C", id');
EXPLAIN (VERBOSE, COSTS OFF) SELECT id, t, t COLLATE "C" AS tc FROM rl ORDER BY tc, id;
SELECT same_result('SELECT id, t, t COLLATE "C" AS tc FROM rl ORDER BY tc, id', 'tc, id');
-- a scroll cursor: read backward, and rewound for FETCH ABSOLUTE; the same
-- rows with GpuSort as without
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, t, t COLLATE "C" AS tc FROM rl ORDER BY tc, id;
FETCH LAST c;
FETCH BACKWARD 3 c;
FETCH ABSOLUTE 5 c;
COMMIT;
SET gpusort.enabled = off;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, t, t COLLATE "C" AS tc FROM rl ORDER BY tc, id;
FETCH LAST c;
FETCH BACKWARD 3 c;
FETCH ABSOLUTE 5 c;
COMMIT;
RESET gpusort.enabled;
-- merge joins over GpuSorts (the joined rows come in join-key order, so the
-- keys checked are those the order decides): the first's sorted subquery
-- has no plain t to key on; the second's leaves its relabeled column out;
-- the third's inner GpuSort (marked and restored) reads a subquery whose
-- GpuSort leaves it out
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT same_result('SELECT a.id, b.tc FROM rl a
  JOIN (SELECT id, t COLLATE "C" AS tc FROM rl ORDER BY id OFFSET 0) b ON a.n = b.id', 'tc');
SELECT same_result('SELECT a.id, b.t, b.tc FROM rl a
  JOIN (SELECT id, t, t COLLATE "C" AS tc FROM rl ORDER BY id OFFSET 0) b ON a.n = b.id', 't, tc');
SELECT same_result('SELECT a.id, b.t, b.tc FROM rl a
  JOIN (SELECT id, t, t COLLATE "C" AS tc FROM rl ORDER BY tc, id OFFSET 0) b ON a.n = b.id', 't, tc');
RESET enable_hashjoin;
RESET enable_nestloop;
-- an index scan computing the rows
CREATE INDEX rl_id ON rl (id);
SET enable_seqscan = off;
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM rl WHERE id < 5000 ORDER BY t COLLATE "C", id;
SELECT same_result('SELECT * FROM rl WHERE id < 5000 ORDER BY t COLLATE "C", id', 't COLLATE "C", id');
RESET enable_seqscan;
-- FOR UPDATE: the row's ctid follows the relabeled column, which stays
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM rl WHERE id < 100 ORDER BY t COLLATE "C", id FOR UPDATE;
SELECT same_result('SELECT * FROM rl WHERE id < 100 ORDER BY t COLLATE "C", id FOR UPDATE',
  't COLLATE "C", id');
DROP TABLE rl;
DROP DOMAIN rl_int;

-- MergeAppend over partitions: a partition's Sort becomes a GpuSort
CREATE TABLE pt (k int4, v int8) PARTITION BY RANGE (k);
CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (5000);
CREATE TABLE pt2 PARTITION OF pt FOR VALUES FROM (5000) TO (10000);
INSERT INTO pt SELECT i, hashint4(i) FROM generate_series(0, 9999) i;
ANALYZE pt;
CREATE INDEX ON pt1 (v);
EXPLAIN (COSTS OFF) SELECT * FROM pt ORDER BY v LIMIT 9000;
SELECT same_result('SELECT * FROM pt ORDER BY v LIMIT 9000', 'v');
SET enable_partitionwise_aggregate = on;
SELECT same_result('SELECT * FROM pt ORDER BY k, v', 'k, v');
SELECT same_result('SELECT v, count(*) FROM pt GROUP BY v ORDER BY v', 'v');
SELECT same_result('(SELECT v FROM pt1 ORDER BY v) UNION ALL (SELECT v FROM pt2 ORDER BY v DESC)', 'v');
SELECT same_result('SELECT v FROM pt1 UNION SELECT k FROM pt2', 'v');

-- Incremental Sort stays native; its input's Sort may be replaced
CREATE INDEX ON gm_t (b);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM gm_t ORDER BY b, a LIMIT 10;
SELECT same_result('SELECT * FROM gm_t ORDER BY b, a LIMIT 10', 'b, a');
RESET enable_seqscan;
DROP INDEX gm_t_b_idx;

-- subplans, initplans and CTEs keep their own Sorts
SELECT same_result('SELECT a, (SELECT max(x) FROM (SELECT y.a AS x FROM gm_t y
  WHERE y.b = gm_t.b ORDER BY y.a LIMIT 3) s) FROM gm_t WHERE a < 200 ORDER BY 2, 1', 'max, a');
SELECT same_result('WITH c AS MATERIALIZED (SELECT * FROM gm_t ORDER BY b DESC, a)
  SELECT * FROM c ORDER BY a', 'a');
SELECT same_result('SELECT a FROM gm_t WHERE a > (SELECT percentile_disc(0.5)
  WITHIN GROUP (ORDER BY b) FROM gm_t) ORDER BY a DESC', 'a');

-- window functions over several orderings, and a merge join
SELECT same_result('SELECT a, b, row_number() OVER (PARTITION BY b ORDER BY a DESC),
  sum(a) OVER (ORDER BY b, a) FROM gm_t', 'b, a');
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT same_result('SELECT x.a, y.b FROM gm_t x JOIN gm_t y ON x.a = y.b + 1 ORDER BY 1, 2', 'a, b');
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_hashagg;
DROP TABLE gm_t, pt;
