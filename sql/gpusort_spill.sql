--
-- Sorts past the memory budget: the rows held are sorted (GPU or CPU) and
-- written as a run to a temporary file, and the runs are merged by their
-- key words and PostgreSQL's comparators (node_spill.h).  Every result
-- equals the native Sort's: the key sequence exactly, the rows as a
-- multiset.  Also random access over the merged runs (cursors, merge
-- joins), bounds, temp_tablespaces, temp_file_limit, temporary files removed, rows
-- larger than the budget, and GPU jobs in pieces.
--
LOAD 'gpusort';
SET gpusort.min_rows = 0;
SET gpusort.cost_model = off;   -- the row threshold alone decides
SET gpusort.gpu_min_elements = 0;
SET max_parallel_workers_per_gather = 0;
\i sql/include/same_result.sql
\i sql/include/explain_json.sql

-- every run checks its own order with PostgreSQL's comparators
SET gpusort.verify_order = on;

CREATE COLLATION spill_icu (provider = icu, locale = 'en-US');

-- 40,000 rows: keys with NULLs, NaN, -0, duplicates; text that shares
-- long prefixes and ties on its first 8 bytes; numeric; uuid
CREATE TABLE sp (id int4, k int4, f float8, t text, w text, n numeric(12,2), u uuid, pad text);
INSERT INTO sp
SELECT i, hashint4(i) % 500,
       CASE WHEN i % 101 = 0 THEN NULL WHEN i % 103 = 0 THEN 'NaN' WHEN i % 107 = 0 THEN -0.0
            ELSE (hashint4(i + 7) % 1000) / 10.0 END,
       CASE WHEN i % 97 = 0 THEN NULL ELSE 'customer-' || (hashint4(i) % 3000)::text END,
       md5(i::text),
       (hashint4(i + 3) % 100000) / 100.0,
       md5((i % 5000)::text)::uuid,
       repeat('x', i % 50)
FROM generate_series(1, 40000) i;
ANALYZE sp;

SET gpusort.work_mem = 1;

-- the runs and what was written
SELECT p ->> 'Algorithm' <> 'tuplesort' AS not_tuplesort,
       (p ->> 'Sorted Runs')::int > 2 AS runs,
       (p ->> 'Rows Written to Runs')::int AS rows_written,
       (p ->> 'Run Space Used')::int > 1000 AS space,
       p ->> 'Merged Into One File' AS one_file
FROM explain_json('SELECT * FROM sp ORDER BY k, id') p;

-- keys of every kind, merged
SELECT same_result('SELECT * FROM sp ORDER BY k, id', 'k, id');
SELECT same_result('SELECT id, k FROM sp ORDER BY k DESC, id', 'k, id');
SELECT same_result('SELECT * FROM sp ORDER BY f DESC NULLS FIRST, id', 'f, id');
SELECT same_result('SELECT id, f FROM sp ORDER BY f NULLS LAST, id DESC', 'f, id');
SELECT same_result('SELECT * FROM sp ORDER BY t COLLATE "C", id', 't, id');
SELECT same_result('SELECT * FROM sp ORDER BY t COLLATE spill_icu DESC NULLS LAST, id', 't, id');
SELECT same_result('SELECT * FROM sp ORDER BY w COLLATE "C"', 'w');
SELECT same_result('SELECT * FROM sp ORDER BY t COLLATE "C", k DESC, id', 't, k, id');
SELECT same_result('SELECT id, n FROM sp ORDER BY n DESC, id', 'n, id');
SELECT same_result('SELECT id, u FROM sp ORDER BY u, id', 'u, id');
-- ties past the keys come out in input order (the merge is stable): the
-- key sequence equals native's, the rows as a multiset
SELECT same_result('SELECT * FROM sp ORDER BY k', 'k');

-- bounds: a LIMIT too large for the top-k heap, an OFFSET, parameters
SELECT same_result('SELECT * FROM sp ORDER BY f, id LIMIT 5000', 'f, id');
SELECT same_result('SELECT * FROM sp ORDER BY t COLLATE "C", id LIMIT 3000 OFFSET 20000', 't, id');
PREPARE spill_limit(int, int) AS SELECT id, k FROM sp ORDER BY k, id LIMIT $1 OFFSET $2;
CREATE TEMP TABLE lim_on AS EXECUTE spill_limit(2500, 31000);
SET gpusort.enabled = off;
CREATE TEMP TABLE lim_off AS EXECUTE spill_limit(2500, 31000);
RESET gpusort.enabled;
SELECT count(*) AS rows, count(*) FILTER (WHERE o IS DISTINCT FROM f) AS differ
FROM (SELECT row_number() OVER () r, * FROM lim_on) o FULL JOIN
     (SELECT row_number() OVER () r, * FROM lim_off) f USING (r);
DEALLOCATE spill_limit;

-- the query shapes a Sort serves: window, sorted GROUP BY, DISTINCT,
-- merge join (whose inner side is marked and restored)
SELECT same_result('SELECT id, k, row_number() OVER (ORDER BY k, id) FROM sp', 'k, id');
SET enable_hashagg = off;
SELECT same_result('SELECT t, count(*), sum(k) FROM sp GROUP BY t ORDER BY t', 't');
SELECT same_result('SELECT DISTINCT k FROM sp ORDER BY k', 'k');
RESET enable_hashagg;
SET enable_hashjoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM sp a JOIN sp b ON a.k = b.k WHERE a.id % 50 = 0;
SELECT same_result('SELECT a.id AS aid, b.id AS bid, a.k FROM sp a JOIN sp b ON a.k = b.k WHERE a.id % 50 = 0 ORDER BY a.k, a.id, b.id',
                   'k, aid, bid');
RESET enable_hashjoin;
RESET enable_nestloop;

-- random access: a scroll cursor reads the runs merged into one file,
-- forward, backward, from either end and after a rewind
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, t, length(w || pad) AS len FROM (SELECT * FROM sp ORDER BY t COLLATE "C" DESC NULLS FIRST, id) s;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
FETCH BACKWARD 2 FROM c;
FETCH ABSOLUTE 20001 FROM c;
FETCH RELATIVE -3 FROM c;
FETCH FIRST FROM c;
FETCH BACKWARD 1 FROM c;
FETCH FORWARD 1 FROM c;
MOVE LAST FROM c;
FETCH FORWARD 1 FROM c;
FETCH BACKWARD 1 FROM c;
-- the cursor's runs are in temporary files until it closes
SELECT count(*) > 0 AS temp_files FROM pg_ls_tmpdir();
CLOSE c;
SELECT count(*) AS temp_files FROM pg_ls_tmpdir();
COMMIT;
SET gpusort.enabled = off;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, t, length(w || pad) AS len FROM (SELECT * FROM sp ORDER BY t COLLATE "C" DESC NULLS FIRST, id) s;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
FETCH BACKWARD 2 FROM c;
FETCH ABSOLUTE 20001 FROM c;
FETCH RELATIVE -3 FROM c;
FETCH FIRST FROM c;
FETCH BACKWARD 1 FROM c;
FETCH FORWARD 1 FROM c;
MOVE LAST FROM c;
FETCH FORWARD 1 FROM c;
FETCH BACKWARD 1 FROM c;
COMMIT;
RESET gpusort.enabled;

-- temp_tablespaces: the runs go where the native Sort's files would
SET allow_in_place_tablespaces = true;
CREATE TABLESPACE spill_space LOCATION '';
SET temp_tablespaces = spill_space;
BEGIN;
DECLARE ts CURSOR FOR SELECT * FROM sp ORDER BY k, id;
FETCH 1 FROM ts;
SELECT count(*) > 0 AS runs_in_spill_space
FROM pg_ls_tmpdir((SELECT oid FROM pg_tablespace WHERE spcname = 'spill_space'));
SELECT count(*) AS runs_in_default FROM pg_ls_tmpdir();
COMMIT;
RESET temp_tablespaces;
DROP TABLESPACE spill_space;
RESET allow_in_place_tablespaces;

-- temp_file_limit holds as for the native Sort (SQLSTATE 53400), and the
-- files are gone after the error
SET temp_file_limit = '256kB';
\set VERBOSITY sqlstate
SELECT count(*) FROM (SELECT * FROM sp ORDER BY w COLLATE "C") s;
\set VERBOSITY default
RESET temp_file_limit;
SELECT count(*) AS temp_files FROM pg_ls_tmpdir();

-- rows each larger than the budget: a run each
SELECT p ->> 'Algorithm' <> 'tuplesort' AS not_tuplesort, p ->> 'Sorted Runs' AS runs
FROM explain_json('SELECT * FROM (SELECT i, repeat(md5(i::text), 40000) AS big FROM generate_series(1, 6) i OFFSET 0) s ORDER BY i DESC') p;
SELECT array_agg(i) AS ids, bool_and(length(big) = 1280000) AS whole
FROM (SELECT * FROM (SELECT i, repeat(md5(i::text), 40000) AS big FROM generate_series(1, 6) i OFFSET 0) s
      ORDER BY i DESC) s;

-- a run's rows are gathered into records by threads (1 +
-- max_parallel_workers_per_gather), each into a buffer of its own, here of
-- 13 kB: rows larger than that among small ones, and fixed-size records
SET max_parallel_workers_per_gather = 4;
SELECT same_result('SELECT * FROM (SELECT id, k, CASE WHEN id % 97 = 0 THEN repeat(w, 900) ELSE w END AS w FROM sp OFFSET 0) s ORDER BY k, id', 'k, id');
SELECT same_result('SELECT id, k, f FROM sp ORDER BY f DESC, id', 'f, id');
-- column records of 4.8 kB, larger than what 16 threads' share of 64 kB
-- would be: fewer threads, each with room for one
SET max_parallel_workers_per_gather = 15;
DO $$ BEGIN EXECUTE 'CREATE TABLE widecols AS SELECT g AS id, hashint4(g) % 1000 AS k, '
  || (SELECT string_agg(format('g::int8 * %s AS c%s', n, n), ', ') FROM generate_series(1, 600) n)
  || ' FROM generate_series(1, 2000) g'; END $$;
SELECT (p ->> 'Sorted Runs')::int > 2 AS runs FROM explain_json('SELECT * FROM widecols ORDER BY k DESC, id') p;
SELECT same_result('SELECT * FROM widecols ORDER BY k DESC, id', 'k, id');
DROP TABLE widecols;
SET max_parallel_workers_per_gather = 0;

-- more runs than one merge reads at once (8 at a 1 MB budget): groups of
-- runs are merged into longer runs first, pass after pass
CREATE TABLE many AS SELECT g AS id, hashint4(g) % 100000 AS k,
       CASE WHEN g % 7 = 0 THEN NULL ELSE md5(g::text) END AS t
FROM generate_series(1, 300000) g;
ANALYZE many;
SELECT (p ->> 'Sorted Runs')::int > 8 AS many_runs, (p ->> 'Merge Passes')::int >= 1 AS passes
FROM explain_json('SELECT * FROM many ORDER BY t COLLATE "C" NULLS FIRST, id') p;
SELECT (p ->> 'Sorted Runs')::int > 8 AS many_runs, (p ->> 'Merge Passes')::int >= 1 AS passes
FROM explain_json('SELECT id, k FROM many ORDER BY k, id') p;
SELECT same_result('SELECT * FROM many ORDER BY t COLLATE "C" NULLS FIRST, id', 't, id');
SELECT same_result('SELECT id, k FROM many ORDER BY k DESC', 'k');
BEGIN;
DECLARE m SCROLL CURSOR FOR SELECT id, k FROM many ORDER BY k, id;
FETCH ABSOLUTE 150000 FROM m;
FETCH BACKWARD 1 FROM m;
COMMIT;
SET gpusort.enabled = off;
SELECT id, k FROM many ORDER BY k, id OFFSET 149998 LIMIT 2;
RESET gpusort.enabled;
DROP TABLE many;

RESET gpusort.work_mem;

-- a sort larger than one GPU job may take (gpusort.gpu_job_memory, or the
-- device's free memory) is sorted on the GPU in pieces, merged on the CPU;
-- on the CPU path there are no pieces
CREATE TABLE pieces AS SELECT g AS id, hashint4(g) % 100000 AS k FROM generate_series(1, 300000) g;
ANALYZE pieces;
SET gpusort.gpu_job_memory = 4;
SELECT (p ->> 'On GPU')::bool = (coalesce((p ->> 'GPU Pieces')::int, 1) > 1) AS pieces_where_gpu
FROM explain_json('SELECT * FROM pieces ORDER BY k, id') p;
SELECT same_result('SELECT * FROM pieces ORDER BY k DESC, id', 'k, id');
SELECT same_result('SELECT * FROM pieces ORDER BY k', 'k');
RESET gpusort.gpu_job_memory;
DROP TABLE pieces;

-- within the budget: no runs
SELECT p -> 'Sorted Runs' IS NULL AS no_runs FROM explain_json('SELECT * FROM sp ORDER BY k, id') p;
DROP TABLE sp;
DROP COLLATION spill_icu;
