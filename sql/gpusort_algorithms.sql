--
-- gpusort.algorithm: every choice (auto, radix, quicksort, bitonic, cpu)
-- gives the native order, in GpuSort and in gpu_sort(). On a GPU machine
-- the forced GPU sorts run on the GPU (below gpusort.gpu_min_elements too);
-- on a CPU machine all of them take the CPU path. Quicksort and bitonic
-- take keys of up to 64 bits: wider keys (several int8/float8 keys, or keys
-- with NULLs beside two int4) are radix sorted. Nothing printed depends on
-- whether the machine has a GPU.
--
LOAD 'gpusort';
SET gpusort.min_rows = 0;
SET gpusort.cost_model = off;   -- the row threshold alone decides
SET max_parallel_workers_per_gather = 0;
SET extra_float_digits = 0;
\i sql/include/same_result.sql
\i sql/include/check_sort.sql

CREATE TABLE alg (i int4, f float4, b int8, d float8, few int4, one int4, s int2, nn int4);
INSERT INTO alg
SELECT i,
       CASE i % 37 WHEN 0 THEN 'NaN' WHEN 1 THEN 'Infinity' WHEN 2 THEN '-Infinity'
                   WHEN 3 THEN '-0' WHEN 4 THEN NULL ELSE (hashint4(i) % 100000) / 7.0 END,
       CASE WHEN i % 23 = 0 THEN NULL ELSE hashint8(i) END,
       (hashint4(i + 1) % 5000) / 3.0,
       (hashint4(i + 2) % 5) * 1000000,
       42,
       (hashint4(i + 3) % 300)::int2,
       hashint4(i + 4)
FROM generate_series(1, 30000) i;
ANALYZE alg;
CREATE TABLE alg_small AS SELECT * FROM alg WHERE i <= 1500;

-- each query under each gpusort.algorithm
CREATE FUNCTION by_algorithm(q text, keys text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE a text;
BEGIN
  FOREACH a IN ARRAY ARRAY['auto', 'radix', 'quicksort', 'bitonic', 'cpu'] LOOP
    PERFORM set_config('gpusort.algorithm', a, true);
    RETURN NEXT a || ': ' || same_result(q, keys);
  END LOOP;
  PERFORM set_config('gpusort.algorithm', 'auto', true);
END $$;
SELECT by_algorithm('SELECT * FROM alg ORDER BY nn', 'nn');
SELECT by_algorithm('SELECT * FROM alg ORDER BY i DESC', 'i');
SELECT by_algorithm('SELECT * FROM alg ORDER BY f NULLS FIRST', 'f');
SELECT by_algorithm('SELECT * FROM alg ORDER BY f DESC NULLS LAST, i', 'f, i');
SELECT by_algorithm('SELECT * FROM alg ORDER BY few, nn DESC', 'few, nn');
SELECT by_algorithm('SELECT * FROM alg ORDER BY few', 'few');
SELECT by_algorithm('SELECT * FROM alg ORDER BY one', 'one');
SELECT by_algorithm('SELECT * FROM alg ORDER BY d DESC', 'd');
SELECT by_algorithm('SELECT * FROM alg ORDER BY b NULLS FIRST, d', 'b, d');
SELECT by_algorithm('SELECT * FROM alg ORDER BY s, few, i', 's, few, i');
SELECT by_algorithm('SELECT * FROM alg_small ORDER BY s DESC, i', 's, i');
SELECT by_algorithm('SELECT few, count(*) FROM alg GROUP BY few ORDER BY 2, 1', 'count, few');

-- gpu_sort() on arrays under each gpusort.algorithm
SET gpusort.gpu_min_elements = 0;
CREATE FUNCTION arrays_by_algorithm() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE a text;
BEGIN
  FOREACH a IN ARRAY ARRAY['auto', 'radix', 'quicksort', 'bitonic', 'cpu'] LOOP
    PERFORM set_config('gpusort.algorithm', a, true);
    RETURN NEXT a || ': ' ||
      check_sort((SELECT array_agg(nn) FROM alg)) || ' ' ||
      check_sort((SELECT array_agg(few) FROM alg)) || ' ' ||
      check_sort((SELECT array_agg(CASE WHEN i % 11 = 0 THEN NULL ELSE i % 700 END) FROM alg_small)) || ' ' ||
      check_sort((SELECT array_agg(f) FROM alg)) || ' ' ||
      check_sort(ARRAY[3, 1, 2]::int4[]) || ' ' ||
      check_sort('{}'::float4[]);
  END LOOP;
  PERFORM set_config('gpusort.algorithm', 'auto', true);
END $$;
SELECT arrays_by_algorithm();

-- EXPLAIN ANALYZE names the algorithm and why (the CPU choice is the same everywhere)
SET gpusort.algorithm = cpu;
\i sql/include/explain_json.sql
SELECT p ->> 'Algorithm' AS algorithm, p ->> 'Device Reason' AS device_reason, p ->> 'Algorithm Reason' AS algorithm_reason,
       p ->> 'On GPU' AS on_gpu
FROM explain_json('SELECT * FROM alg ORDER BY i') p;
RESET gpusort.algorithm;
SET gpusort.algorithm = 'mergesort';
SHOW gpusort.algorithm;

DROP TABLE alg, alg_small;
