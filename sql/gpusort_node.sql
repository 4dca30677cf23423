--
-- GpuSort: the custom plan node that replaces PostgreSQL's Sort.
--
-- For each query shape the result with gpusort.enabled = on equals the
-- result with it off: the sequence of sort keys exactly, the rows as a
-- multiset (ties may come in any order). EXPLAIN (COSTS OFF) shows where
-- GpuSort is used and where the native Sort stays. Nothing printed depends
-- on whether the machine has a GPU.
--
LOAD 'gpusort';
SET gpusort.min_rows = 0;            -- replace even the small sorts here
SET gpusort.cost_model = off;
SET gpusort.gpu_min_elements = 0;    -- and use the GPU where there is one
SET max_parallel_workers_per_gather = 0;
SET extra_float_digits = 0;

CREATE TABLE g (
  i int4, a int4, f float4, s int2, b int8, d float8, dt date, ts timestamp,
  tz timestamptz, o oid, t text, n numeric);
INSERT INTO g
SELECT i,
       CASE WHEN i % 17 = 0 THEN NULL ELSE (hashint4(i) % 1000)::int4 END,
       CASE i % 41 WHEN 0 THEN 'NaN' WHEN 1 THEN 'Infinity' WHEN 2 THEN '-Infinity'
                   WHEN 3 THEN '-0' WHEN 4 THEN '0' WHEN 5 THEN NULL
                   ELSE (hashint4(i + 1) % 10000) / 7.0 END,
       (hashint4(i + 2) % 300)::int2,
       CASE WHEN i % 13 = 0 THEN NULL ELSE hashint8(i) END,
       CASE i % 29 WHEN 0 THEN 'NaN' WHEN 1 THEN '-Infinity' WHEN 2 THEN '-0' ELSE (hashint4(i + 3) % 5000) / 3.0 END,
       date '2000-01-01' + (hashint4(i + 4) % 3000),
       timestamp '2020-01-01' + (hashint4(i + 5) % 100000) * interval '1 minute',
       CASE WHEN i % 31 = 0 THEN 'infinity' ELSE timestamptz '2020-01-01 00:00+00' + (hashint4(i + 6) % 1000) * interval '1 hour' END,
       (abs(hashint4(i + 7)) % 100000)::oid,
       md5(i::text),
       (hashint4(i + 8) % 100)::numeric / 3
FROM generate_series(1, 5000) i;
-- the column "f" alone
UPDATE g SET f = f WHERE i = 1;
ANALYZE g;

\i sql/include/same_result.sql

-- single keys: every supported type, all four ASC/DESC x NULLS orders
SELECT k, o, same_result(format('SELECT * FROM g ORDER BY %s %s', k, o), k)
FROM unnest(ARRAY['i', 'a', 'f', 's', 'b', 'd', 'dt', 'ts', 'tz', 'o']) k,
     unnest(ARRAY['', 'NULLS FIRST', 'DESC', 'DESC NULLS LAST']) o
ORDER BY k, o;

EXPLAIN (COSTS OFF) SELECT * FROM g ORDER BY f DESC NULLS LAST;
EXPLAIN (COSTS OFF) SELECT * FROM g ORDER BY i NULLS FIRST;

-- several keys of mixed types
SELECT same_result('SELECT * FROM g ORDER BY s, i', 's, i');
SELECT same_result('SELECT * FROM g ORDER BY s DESC, f NULLS FIRST, b', 's, f, b');
SELECT same_result('SELECT * FROM g ORDER BY dt, d DESC NULLS LAST, o', 'dt, d, o');
SELECT same_result('SELECT f, i FROM g ORDER BY f, i DESC', 'f, i');
EXPLAIN (COSTS OFF) SELECT * FROM g ORDER BY s DESC, f NULLS FIRST, b;

-- LIMIT / OFFSET: the bound is taken at plan time
SELECT same_result('SELECT * FROM g ORDER BY f, i LIMIT 10', 'f, i');
SELECT same_result('SELECT * FROM g ORDER BY b DESC NULLS LAST LIMIT 25 OFFSET 100', 'b');
SELECT same_result('SELECT * FROM g ORDER BY i LIMIT 100000 OFFSET 4990', 'i');
SELECT same_result('SELECT * FROM g ORDER BY i LIMIT 0', 'i');
SELECT i, f FROM g ORDER BY f DESC, i LIMIT 5;
EXPLAIN (COSTS OFF) SELECT * FROM g ORDER BY b DESC NULLS LAST LIMIT 25 OFFSET 100;

-- subquery, window function
SELECT same_result('SELECT * FROM (SELECT i, f, s FROM g ORDER BY s, i) q WHERE i % 3 = 0', 's, i');
SELECT same_result('SELECT i, f, rank() OVER (ORDER BY f), sum(i) OVER (PARTITION BY s ORDER BY i) FROM g', 'f');
-- (the plan without the line "Window: w1 AS (...)" that PostgreSQL 18 prints)
\i sql/include/plan_lines.sql
SELECT l AS "QUERY PLAN" FROM plan_lines('SELECT i, rank() OVER (ORDER BY f) FROM g') l
WHERE l !~ '^ *Window: ';

-- merge join (mark/restore), GROUP BY and DISTINCT by sorting
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_hashagg = off;
SELECT same_result('SELECT a.i, a.s, b.i AS j FROM g a JOIN g b ON a.s = b.s ORDER BY a.s, a.i, b.i', 's, i, j');
EXPLAIN (COSTS OFF) SELECT a.i, b.i FROM g a JOIN g b ON a.s = b.s;
SELECT same_result('SELECT s, count(*), sum(i) FROM g GROUP BY s', 's');
SELECT same_result('SELECT DISTINCT f FROM g', 'f');
EXPLAIN (COSTS OFF) SELECT s, count(*) FROM g GROUP BY s;
EXPLAIN (COSTS OFF) SELECT DISTINCT f FROM g;
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_hashagg;

-- SCROLL cursor, fetched backward (GpuSort supports backward scans)
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT i, s FROM g WHERE i <= 40 ORDER BY s DESC, i;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
FETCH BACKWARD 3 FROM c;
FETCH ABSOLUTE 5 FROM c;
FETCH RELATIVE -10 FROM c;
FETCH NEXT FROM c;
COMMIT;
-- the same fetches from PostgreSQL's Sort
SET gpusort.enabled = off;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT i, s FROM g WHERE i <= 40 ORDER BY s DESC, i;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
FETCH BACKWARD 3 FROM c;
FETCH ABSOLUTE 5 FROM c;
FETCH RELATIVE -10 FROM c;
FETCH NEXT FROM c;
COMMIT;
SET gpusort.enabled = on;
EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT i, s FROM g ORDER BY s DESC, i;

-- prepared statement under a generic plan (bound is a parameter: no bound)
SET plan_cache_mode = force_generic_plan;
PREPARE p(int, int) AS SELECT i, b FROM g WHERE i > $1 ORDER BY b NULLS FIRST, i LIMIT $2;
EXPLAIN (COSTS OFF) EXECUTE p(100, 5);
EXECUTE p(100, 5);
SET gpusort.enabled = off;
EXECUTE p(100, 5);   -- the plan was made with GpuSort on
SET gpusort.enabled = on;
DEALLOCATE p;
RESET plan_cache_mode;

-- parallel plan: Gather Merge -> Sort becomes GpuSort -> Gather
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT * FROM g ORDER BY b;
SELECT same_result('SELECT * FROM g ORDER BY b', 'b');
-- with a small LIMIT the workers' Sorts become GpuSorts (CPU top-k)
EXPLAIN (COSTS OFF) SELECT * FROM g ORDER BY b LIMIT 7;
SELECT same_result('SELECT * FROM g ORDER BY b, i LIMIT 7', 'b, i');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;

-- empty table, all-NULL keys, special floats only
CREATE TABLE empty (i int4, f float4);
SELECT same_result('SELECT * FROM empty ORDER BY i', 'i');
SELECT * FROM empty ORDER BY f DESC;
CREATE TABLE nulls AS SELECT i, NULL::float4 AS f, NULL::int8 AS b FROM generate_series(1, 100) i;
SELECT same_result('SELECT * FROM nulls ORDER BY f, b DESC', 'f, b');
SELECT same_result('SELECT * FROM nulls ORDER BY f NULLS FIRST, i DESC', 'f, i');
CREATE TABLE specials (f float4, d float8);
INSERT INTO specials VALUES ('NaN', 'NaN'), ('-Infinity', '-Infinity'), ('-0', '-0'), ('0', '0'),
  ('Infinity', 'Infinity'), (NULL, NULL), ('1e-45', '5e-324'), ('-3.4028235e38', '-1.7976931348623157e308'),
  ('NaN', '-0'), ('-0', 'NaN');
SELECT same_result('SELECT * FROM specials ORDER BY f, d', 'f, d');
SELECT same_result('SELECT * FROM specials ORDER BY d DESC, f DESC', 'd, f');
SELECT f FROM specials ORDER BY f;
SELECT d FROM specials ORDER BY d DESC NULLS LAST;

-- a domain over a supported type sorts as its base type
CREATE DOMAIN score AS float4 CHECK (VALUE IS NULL OR VALUE <> 1e30);
CREATE DOMAIN day AS date;
CREATE TABLE dom AS SELECT i, f::score AS sc, dt::day AS dy FROM g;
SELECT same_result('SELECT * FROM dom ORDER BY sc DESC NULLS LAST, dy, i', 'sc, dy, i');
EXPLAIN (COSTS OFF) SELECT * FROM dom ORDER BY sc, dy DESC;
DROP TABLE dom;
DROP DOMAIN score, day;

-- text and numeric keys: the GPU sorts by their leading bytes or
-- abbreviated keys, the CPU orders ties (gpusort_key_types tests them all)
EXPLAIN (COSTS OFF) SELECT * FROM g ORDER BY t;
EXPLAIN (COSTS OFF) SELECT * FROM g ORDER BY n;
EXPLAIN (COSTS OFF) SELECT * FROM g ORDER BY i, t;
SELECT same_result('SELECT * FROM g ORDER BY t DESC', 't');
SELECT same_result('SELECT * FROM g ORDER BY n NULLS FIRST, t', 'n, t');
-- a computed key, and a key with no btree words first (money has no
-- abbreviated key) keep the native Sort
EXPLAIN (COSTS OFF) SELECT * FROM g ORDER BY i + 1;
EXPLAIN (COSTS OFF) SELECT * FROM g ORDER BY i::money;
-- disabled, and under gpusort.min_rows
SET gpusort.enabled = off;
EXPLAIN (COSTS OFF) SELECT * FROM g ORDER BY i;
RESET gpusort.enabled;
SET gpusort.min_rows = 1000000;
EXPLAIN (COSTS OFF) SELECT * FROM g ORDER BY i;
SET gpusort.min_rows = 0;

-- EXPLAIN ANALYZE in every format (device-independent parts shown; the
-- algorithm fixed, since auto may pick another one on a GPU)
SET gpusort.algorithm = radix;
\i sql/include/explain_json.sql
SELECT p ->> 'Custom Plan Provider' AS node, p -> 'Sort Key' AS keys, p ->> 'Algorithm' AS algorithm,
       p ->> 'Rows Sorted' AS rows, p ? 'Device' AS has_device, p ? 'Sort Time' AS has_sort_time,
       p ? 'Fill Time' AS has_fill_time, p ? 'To Device Time' AS has_to_device_time
FROM explain_json('SELECT * FROM g ORDER BY f DESC, i') p;
SELECT p ->> 'Sort Bound' AS bound, p ->> 'Algorithm' AS algorithm, p ->> 'Rows Sorted' AS rows
FROM explain_json('SELECT * FROM g ORDER BY i LIMIT 3') j, LATERAL (SELECT j -> 'Plans' -> 0) x(p);
CREATE FUNCTION explain_lines(q text, fmt text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  -- BUFFERS OFF: PostgreSQL 18 shows buffers by default; its row counts
  -- have two decimals ("rows=5000.00"), printed here as 15-17 print them
  FOR l IN EXECUTE format('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF, FORMAT %s) %s', fmt, q) LOOP
    RETURN NEXT regexp_replace(regexp_replace(regexp_replace(l, '(GPU|Device): [^,<]*,', 'GPU or CPU: ...,'),
                                              'Reason: .*', 'Reason: ...'), 'rows=([0-9]+)\.00 ', 'rows=\1 ', 'g');
  END LOOP;
END $$;
SELECT explain_lines('SELECT i FROM g ORDER BY i DESC', 'text');
SELECT count(*) > 0 AS yaml_has_algorithm FROM explain_lines('SELECT i FROM g ORDER BY i', 'yaml') l WHERE l LIKE '%Algorithm: "radix"%';
SELECT count(*) > 0 AS xml_has_algorithm FROM explain_lines('SELECT i FROM g ORDER BY i', 'xml') l WHERE l LIKE '%<Algorithm>radix</Algorithm>%';

RESET gpusort.algorithm;

-- a small gpusort.work_mem (a user may lower gpusort.max_memory): rows
-- that exceed it, whether the plan expected them or not (a plan made
-- before it was set, as with a row misestimate), are sorted in runs
-- written to temporary files and merged; a cursor that may go backward
-- reads the runs merged into one file
CREATE TABLE wide AS SELECT i, repeat(md5(i::text), 20) AS pad FROM generate_series(1, 3000) i;
ANALYZE wide;
SELECT p ->> 'Algorithm' <> 'tuplesort' AS not_tuplesort, (p ->> 'Sorted Runs')::int > 1 AS runs,
       p ->> 'Merged Into One File' AS one_file
FROM explain_json_later('SELECT * FROM wide ORDER BY i DESC', 'SET gpusort.work_mem = 1') p;
EXPLAIN (COSTS OFF) SELECT * FROM wide ORDER BY i DESC;
SELECT same_result('SELECT * FROM wide ORDER BY i DESC', 'i');
RESET gpusort.work_mem;
BEGIN;
DECLARE w SCROLL CURSOR FOR SELECT i FROM wide ORDER BY i DESC;
SET LOCAL gpusort.work_mem = 1;
FETCH 2 FROM w;
FETCH BACKWARD 1 FROM w;
FETCH LAST FROM w;
COMMIT;
-- rows of fixed-length columns only are kept column-wise; they make runs too
CREATE TABLE narrow AS
SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE (i % 7)::float4 END AS f
FROM generate_series(1, 100000) i;
ANALYZE narrow;
SELECT p ->> 'Algorithm' <> 'tuplesort' AS not_tuplesort, (p ->> 'Sorted Runs')::int > 1 AS runs
FROM explain_json_later('SELECT * FROM narrow ORDER BY f, i DESC', 'SET gpusort.work_mem = 1') p;
RESET gpusort.work_mem;
BEGIN;
DECLARE n SCROLL CURSOR FOR SELECT f, i FROM narrow ORDER BY f NULLS FIRST, i;
SET LOCAL gpusort.work_mem = 1;
FETCH 2 FROM n;
FETCH BACKWARD 1 FROM n;
FETCH LAST FROM n;
FETCH ABSOLUTE 10001 FROM n;
COMMIT;
RESET gpusort.work_mem;
SELECT p ->> 'Algorithm' <> 'tuplesort' AS sorted_without_tuplesort FROM explain_json('SELECT * FROM narrow ORDER BY f, i DESC') p;
SELECT same_result('SELECT * FROM narrow ORDER BY f, i DESC', 'f, i');

-- with a GPU, rows kept column-wise also go through it and come back in
-- sorted order (gpusort.gpu_reorder_min_rows); results stay the same
SET gpusort.gpu_reorder_min_rows = 0;
SELECT same_result('SELECT * FROM g ORDER BY f DESC NULLS LAST, i', 'f, i');
SELECT same_result('SELECT * FROM g ORDER BY tz, i LIMIT 1234', 'tz, i');
SELECT same_result('SELECT * FROM narrow ORDER BY f, i DESC', 'f, i');
SELECT same_result('SELECT * FROM narrow ORDER BY i DESC LIMIT 70000 OFFSET 5', 'i');
SELECT same_result('SELECT i, a, f, d FROM g ORDER BY d, a NULLS FIRST, i', 'd, a, i');
-- columns of 1, 2, 4 and 8 bytes (negative int2 values, NULL flags)
SELECT same_result('SELECT s, i % 3 = 0 AS e, chr(65 + i % 26)::"char" AS c, a, dt, b, -s AS m FROM g ORDER BY s DESC, b NULLS FIRST', 's, b');
BEGIN;
DECLARE r SCROLL CURSOR FOR SELECT i, t FROM g ORDER BY a DESC, i;
FETCH 2 FROM r;
FETCH LAST FROM r;
FETCH BACKWARD 2 FROM r;
FETCH ABSOLUTE 300 FROM r;
COMMIT;
RESET gpusort.gpu_reorder_min_rows;

-- parallel plans with gpusort.parallel_fill: the workers encode the keys and
-- store the rows of a GpuSort -> Gather in shared memory (GpuSortFill), more rows than one
-- chunk each; rows as tuples (a text column) or as columns (fixed-length
-- columns only); NULL keys in every chunk (a) or in the last rows only (z)
CREATE TABLE pf AS
SELECT i, CASE WHEN i % 11 = 0 THEN NULL ELSE hashint4(i) % 5000 END AS a,
       (hashint8(i) % 100000)::float8 / 7 AS d,
       CASE WHEN i > 90000 THEN NULL ELSE i % 1000 END AS z, md5(i::text) AS t
FROM generate_series(1, 100000) i;
ANALYZE pf;
SET gpusort.parallel_fill = on;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT i, a, d FROM pf ORDER BY a, d DESC;
SELECT p ->> 'Rows Sorted' AS rows, p ->> 'Rows Stored by Workers' AS stored_by_workers
FROM explain_json('SELECT * FROM pf ORDER BY a NULLS FIRST, i') p;
SELECT same_result('SELECT * FROM pf ORDER BY a NULLS FIRST, i', 'a, i');
SELECT same_result('SELECT i, a, d FROM pf ORDER BY a, d DESC', 'a, d');
SELECT same_result('SELECT * FROM pf ORDER BY z DESC, d', 'z, d');
SELECT same_result('SELECT i, z FROM pf ORDER BY z NULLS FIRST, i DESC', 'z, i');
-- the leader scans and reads rows too, and a bound above the top-k heap's
SET parallel_leader_participation = on;
SELECT same_result('SELECT * FROM pf ORDER BY d DESC, i', 'd, i');
SELECT same_result('SELECT i, z, a FROM pf ORDER BY z, a, i LIMIT 70000', 'z, a, i');
-- ... and takes the workers' chunks between its own rows: NULL keys first
-- in late chunks (z), tuples and columns, and a memory limit met part way
-- (the first chunks of tuples kept where they lie, up to three quarters of
-- the budget, the rest copied)
SELECT same_result('SELECT * FROM pf ORDER BY z DESC, d', 'z, d');
SELECT same_result('SELECT i, z FROM pf ORDER BY z NULLS FIRST, i DESC', 'z, i');
SET gpusort.work_mem = '12MB';
SELECT same_result('SELECT * FROM pf ORDER BY d, i', 'd, i');
RESET gpusort.work_mem;
-- gpusort.gather_leader_scans = off: the Gather is single-copy, its leader
-- only takes in rows
SET gpusort.gather_leader_scans = off;
EXPLAIN (COSTS OFF) SELECT * FROM pf ORDER BY d DESC, i;
SELECT same_result('SELECT * FROM pf ORDER BY d DESC, i', 'd, i');
RESET gpusort.gather_leader_scans;
SET parallel_leader_participation = off;
-- a memory limit the workers meet part way: the rest of their rows comes
-- up through the Gather, and the GpuSort writes runs
SELECT p ->> 'Algorithm' <> 'tuplesort' AS not_tuplesort, (p ->> 'Sorted Runs')::int > 1 AS runs,
       (p ->> 'Rows Stored by Workers')::int BETWEEN 1 AND 99999 AS workers_stored_some
FROM explain_json_later('SELECT * FROM pf ORDER BY d, i', 'SET gpusort.work_mem = ''12MB''') p;
RESET gpusort.work_mem;
-- gpusort.parallel_fill = auto: the workers store rows of every shape, as
-- columns where all are of fixed length, else as tuples (here with a text
-- column), which the GpuSort reads where they lie in the workers' chunks
SET gpusort.parallel_fill = auto;
EXPLAIN (COSTS OFF) SELECT * FROM pf ORDER BY a;
SELECT p ->> 'Rows Sorted' AS rows, p ->> 'Rows Stored by Workers' AS stored_by_workers
FROM explain_json('SELECT * FROM pf ORDER BY a') p;
SELECT same_result('SELECT * FROM pf ORDER BY a, i', 'a, i');
EXPLAIN (COSTS OFF) SELECT i, a, d FROM pf ORDER BY d;
SELECT p ->> 'Rows Sorted' AS rows, (p ->> 'Rows Stored by Workers')::int > 0 AS workers_stored
FROM explain_json('SELECT i, a, d FROM pf ORDER BY d') p;
SELECT same_result('SELECT i, a, d FROM pf ORDER BY d, i', 'd, i');
-- columns of every by-value width (1, 2, 4 and 8 bytes; stored at their
-- widths), negative values and NULLs among them, stored by the workers and
-- by a serial GpuSort
SELECT p ->> 'Rows Sorted' AS rows, (p ->> 'Rows Stored by Workers')::int > 0 AS workers_stored
FROM explain_json('SELECT (i % 7 - 3)::int2 AS s, i % 3 = 0 AS b, -i::int8 AS n, chr(65 + i % 26)::"char" AS c, a, d FROM pf ORDER BY s, n') p;
SELECT same_result('SELECT (i % 7 - 3)::int2 AS s, i % 3 = 0 AS b, -i::int8 AS n, chr(65 + i % 26)::"char" AS c, a, d FROM pf ORDER BY s, n', 's, n');
SELECT same_result('SELECT (i % 7 - 3)::int2 AS s, i % 3 = 0 AS b, -i::int8 AS n, a, -d::float4 AS f FROM pf ORDER BY a DESC, n', 'a, n');
-- fixed-length columns passed by reference (uuid, interval, macaddr,
-- macaddr8, name, point, timetz) are stored as columns too, at their
-- lengths rounded up to 8 bytes, NULLs among them
CREATE VIEW pf_fixed AS
SELECT i, a, md5(i::text)::uuid AS u, make_interval(days => i % 40, secs => i % 1000) AS iv,
       CASE WHEN i % 7 = 0 THEN NULL
            ELSE ('08:00:2b:01:' || lpad(to_hex(i / 256 % 256), 2, '0') || ':' || lpad(to_hex(i % 256), 2, '0'))::macaddr END AS mac,
       ('08:00:2b:01:02:03:04:' || lpad(to_hex(i % 256), 2, '0'))::macaddr8 AS m8,
       (a::text || '_name')::name AS nm, point(i, d) AS p, ('12:34:56+0' || i % 10)::timetz AS tt
FROM pf;
SELECT p ->> 'Rows Sorted' AS rows, (p ->> 'Rows Stored by Workers')::int > 0 AS workers_stored
FROM explain_json('SELECT * FROM pf_fixed ORDER BY a, i') p;
SELECT same_result('SELECT * FROM pf_fixed ORDER BY a, i', 'a, i');
SELECT same_result('SELECT * FROM pf_fixed ORDER BY u DESC', 'u');
SELECT same_result('SELECT * FROM pf_fixed ORDER BY mac NULLS FIRST, tt, i', 'mac, tt, i');
SET max_parallel_workers_per_gather = 0;
SELECT same_result('SELECT (i % 7 - 3)::int2 AS s, i % 3 = 0 AS b, -i::int8 AS n, chr(65 + i % 26)::"char" AS c, a, -d::float4 AS f FROM pf ORDER BY f, n', 'f, n');
SELECT same_result('SELECT * FROM pf_fixed ORDER BY iv, nm DESC, i', 'iv, nm, i');
SELECT same_result('SELECT * FROM pf_fixed ORDER BY m8 DESC, u', 'm8, u');
-- with a GPU, the columns of every width go through it into sorted order
SET gpusort.gpu_reorder_min_rows = 0;
SELECT same_result('SELECT * FROM pf_fixed ORDER BY u', 'u');
SELECT same_result('SELECT * FROM pf_fixed ORDER BY a DESC, iv, i', 'a, iv, i');
RESET gpusort.gpu_reorder_min_rows;
SET max_parallel_workers_per_gather = 2;
-- off: every row comes up through the Gather
SET gpusort.parallel_fill = off;
EXPLAIN (COSTS OFF) SELECT i, a, d FROM pf ORDER BY d;
-- a serial Seq Scan under a GpuSort becomes a parallel one whose workers
-- store the rows (gpusort.parallel_fill = auto, the default: rows of
-- fixed-length columns) where the standard planner kept the scan serial (here
-- a Gather priced too dear for it); the leader scans too
RESET gpusort.parallel_fill;
SET parallel_setup_cost = 1e9;
SET parallel_leader_participation = on;
EXPLAIN (COSTS OFF) SELECT i, a, d FROM pf ORDER BY d;
SELECT p ->> 'Rows Sorted' AS rows
FROM explain_json('SELECT i, a, d FROM pf ORDER BY a NULLS FIRST, d DESC') p;
SELECT same_result('SELECT i, a, d FROM pf ORDER BY a NULLS FIRST, d DESC', 'a, d');
-- the workers' share is asserted with the leader out of the scan: where it
-- scans too, workers that start late may find every block taken
SET parallel_leader_participation = off;
SELECT p ->> 'Rows Sorted' AS rows, (p ->> 'Rows Stored by Workers')::int > 0 AS workers_stored
FROM explain_json('SELECT i, a, d FROM pf ORDER BY a NULLS FIRST, d DESC') p;
SET parallel_leader_participation = on;
SELECT same_result('SELECT i, z FROM pf WHERE i % 3 <> 0 ORDER BY z DESC, i', 'z, i');
-- both sides of a merge join: two Gathers in one plan
SET enable_hashjoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT x.i, y.a, y.d FROM pf x JOIN pf y ON x.i = y.a;
SELECT same_result('SELECT x.i, y.a, y.d FROM pf x JOIN pf y ON x.i = y.a', 'i');
RESET enable_hashjoin;
RESET enable_nestloop;
-- two under an Append, with bounds above the top-k heap's
EXPLAIN (COSTS OFF) SELECT * FROM ((SELECT i, a FROM pf ORDER BY a, i LIMIT 70000) UNION ALL (SELECT i, a FROM pf ORDER BY i DESC LIMIT 70000)) u;
SELECT same_result('SELECT * FROM ((SELECT i, a FROM pf ORDER BY a, i LIMIT 70000) UNION ALL (SELECT i, a FROM pf ORDER BY i DESC LIMIT 70000)) u', 'i, a');
-- read row by row from PL/pgSQL
CREATE FUNCTION loop_check() RETURNS text LANGUAGE plpgsql AS $$
DECLARE r record; n int := 0; prev_a int; prev_i int; bad int := 0;
BEGIN
  FOR r IN SELECT i, a FROM pf WHERE a IS NOT NULL ORDER BY a, i LOOP
    n := n + 1;
    IF prev_a IS NOT NULL AND (r.a, r.i) < (prev_a, prev_i) THEN bad := bad + 1; END IF;
    prev_a := r.a;
    prev_i := r.i;
  END LOOP;
  RETURN n || ' rows, ' || bad || ' out of order';
END $$;
SELECT loop_check();
DROP FUNCTION loop_check();
-- left serial: a LIMIT the top-k heap takes, a subplan (CTE), parallel_fill
-- off, no workers allowed
EXPLAIN (COSTS OFF) SELECT i, a FROM pf ORDER BY a LIMIT 10;
EXPLAIN (COSTS OFF) WITH w AS MATERIALIZED (SELECT i, a FROM pf ORDER BY a) SELECT count(*) FROM w;
SET gpusort.parallel_fill = off;
EXPLAIN (COSTS OFF) SELECT i, a, d FROM pf ORDER BY d;
RESET gpusort.parallel_fill;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT i, a, d FROM pf ORDER BY d;
SET max_parallel_workers_per_gather = 2;
-- a cursor is planned without parallel workers; read backward it gives the
-- same rows
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT i, a FROM pf ORDER BY a DESC NULLS LAST, i;
FETCH 2 FROM c;
FETCH LAST FROM c;
FETCH BACKWARD 2 FROM c;
COMMIT;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;

DROP VIEW pf_fixed;
DROP TABLE g, empty, nulls, specials, wide, narrow, pf;
