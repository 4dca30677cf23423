--
-- Memory: one budget per GpuSort node (gpusort.max_memory, set by a
-- superuser; gpusort.work_mem, which any user may set lower), the top-k
-- heap counted against it, and sorted runs past it (gpusort_spill tests
-- them further).  Also gpusort.verify_order, and invalid settings.
--
LOAD 'gpusort';
SET gpusort.min_rows = 0;
SET gpusort.cost_model = off;   -- the row threshold alone decides
SET gpusort.gpu_min_elements = 0;
SET max_parallel_workers_per_gather = 0;
\i sql/include/same_result.sql
\i sql/include/explain_json.sql

-- every GpuSort below checks its own order with PostgreSQL's comparators
SET gpusort.verify_order = on;

CREATE TABLE m (id int4, k int4, pad text);
INSERT INTO m SELECT i, hashint4(i) % 1000, repeat(md5(i::text), 10)
FROM generate_series(1, 20000) i;
ANALYZE m;

-- past the budget, sorts are still GpuSorts (they write sorted runs); a
-- top-k heap that exceeds it when the plan runs goes to a bounded
-- tuplesort
SET gpusort.work_mem = 1;
EXPLAIN (COSTS OFF) SELECT * FROM m ORDER BY k, id LIMIT 10000;
EXPLAIN (COSTS OFF) SELECT * FROM m ORDER BY k, id;
RESET gpusort.work_mem;
SELECT p ->> 'Algorithm' AS algorithm, p ->> 'Device Reason' AS device_reason
FROM explain_json_later('SELECT * FROM m ORDER BY k, id LIMIT 10000', 'SET gpusort.work_mem = 1') j,
     LATERAL (SELECT j -> 'Plans' -> 0) x(p);
RESET gpusort.work_mem;
SELECT p ->> 'Algorithm' <> 'tuplesort' AS not_tuplesort, (p ->> 'Sorted Runs')::int > 1 AS runs
FROM explain_json_later('SELECT * FROM m ORDER BY id DESC', 'SET gpusort.work_mem = 1') p;
RESET gpusort.work_mem;
BEGIN;
DECLARE c CURSOR FOR SELECT id, k FROM m ORDER BY k DESC, id LIMIT 10 OFFSET 19980;
SET LOCAL gpusort.work_mem = 1;
FETCH ALL FROM c;
COMMIT;
SET gpusort.enabled = off;
SELECT id, k FROM m ORDER BY k DESC, id LIMIT 10 OFFSET 19980;
RESET gpusort.enabled;
-- within the budget
SELECT p ->> 'Algorithm' AS algorithm FROM explain_json('SELECT * FROM m ORDER BY k, id LIMIT 10000') j,
     LATERAL (SELECT j -> 'Plans' -> 0) x(p);
SELECT p ->> 'Algorithm' <> 'tuplesort' AS not_tuplesort FROM explain_json('SELECT * FROM m ORDER BY k, id') p;
SELECT same_result('SELECT * FROM m ORDER BY k, id', 'k, id');

-- only a superuser may raise gpusort.max_memory; a user's gpusort.work_mem
-- above it has no effect: the sort still writes runs
CREATE ROLE gpusort_user;
GRANT SELECT ON m TO gpusort_user;
SET gpusort.max_memory = 1;
SET ROLE gpusort_user;
SET gpusort.max_memory = '1TB';
SET gpusort.verify_order = off;
SET gpusort.work_mem = '1TB';
SELECT (p ->> 'Sorted Runs')::int > 1 AS runs
FROM explain_json('SELECT * FROM m ORDER BY k, id') p;
RESET gpusort.work_mem;
RESET ROLE;
RESET gpusort.max_memory;
REVOKE SELECT ON m FROM gpusort_user;
DROP ROLE gpusort_user;

-- invalid settings: clear errors, the old value stays
SET gpusort.work_mem = -2;
SET gpusort.work_mem = 'lots';
SET gpusort.max_memory = 0;
SET gpusort.min_rows = -1;
SET gpusort.gpu_min_elements = 1e12;
SET gpusort.device = 'tpu';
SET gpusort.algorithm = 'bogo';
SET gpusort.parallel_fill = 'maybe';
SET gpusort.enabled = 'perhaps';
SET gpusort.no_such_setting = 1;
SHOW gpusort.work_mem;
SHOW gpusort.device;

-- 100 sorts in one session: the backend's memory does not grow
CREATE FUNCTION backend_bytes() RETURNS bigint LANGUAGE sql AS
$$ SELECT sum(total_bytes)::bigint FROM pg_backend_memory_contexts $$;
CREATE TEMP TABLE mem (round int, bytes bigint);
DO $$
BEGIN
  FOR r IN 1..100 LOOP
    PERFORM count(*) FROM (SELECT * FROM m ORDER BY k, id) s;
    PERFORM count(*) FROM (SELECT * FROM m ORDER BY id DESC LIMIT 5000) s;
    IF r IN (10, 100) THEN
      INSERT INTO mem SELECT r, backend_bytes();
    END IF;
  END LOOP;
END $$;
SELECT (SELECT bytes FROM mem WHERE round = 100) - (SELECT bytes FROM mem WHERE round = 10)
       < 256 * 1024 AS no_growth;
DROP TABLE m;
