--
-- gpu_sort() against native ORDER BY on Cederman and Tsigas's
-- distributions (uniform, sorted, reverse, zero, bucket, gaussian,
-- staggered) plus heavy duplicates and NULLs, sizes 0, 1, 2, 1000 and
-- 1,000,000, int4 and float4, under gpusort.device = 'cpu' and under 'auto'
-- with no size threshold (the GPU where there is one).
--
\set QUIET on
-- rows (ord, v) with v in [-2^31, 2^31) following distribution dist
CREATE FUNCTION dist_values(dist text, n int) RETURNS TABLE(ord int, v int8)
LANGUAGE sql AS $$
WITH g AS (
  SELECT i, random() AS r, (random() + random() + random() + random()) / 4 AS r4
  FROM generate_series(0, n - 1) i),
p AS (SELECT 16 AS p, (4294967296 / 16)::int8 AS width, n / 16 + 1 AS block)
SELECT i, CASE dist
  WHEN 'uniform' THEN floor(r * 4294967296)::int8
  WHEN 'sorted' THEN floor((i + r) * (4294967296.0 / greatest(n, 1)))::int8
  WHEN 'reverse' THEN floor((n - 1 - i + r) * (4294967296.0 / greatest(n, 1)))::int8
  WHEN 'zero' THEN 3000000000::int8
  WHEN 'bucket' THEN ((i % block) / (block / p + 1)) % p * width + floor(r * width)::int8
  WHEN 'gaussian' THEN floor(r4 * 4294967296)::int8
  WHEN 'staggered' THEN
    (CASE WHEN i / block < p / 2 THEN 2 * (i / block) + 1 ELSE 2 * (i / block) - p END) % p * width
    + floor(r * width)::int8
  WHEN 'duplicates' THEN floor(r * 10)::int8 * 429496729
  END - 2147483648
FROM g, p
$$;

-- in-memory native sorts for the references
SET work_mem = '256MB';
SELECT setseed(0.4242);
CREATE TEMP TABLE cases AS
SELECT d.dist, s.n,
       coalesce(array_agg(v::int4 ORDER BY ord) FILTER (WHERE ord IS NOT NULL), '{}') AS a,
       coalesce(array_agg((v::float8 / 997)::float4 ORDER BY ord) FILTER (WHERE ord IS NOT NULL), '{}') AS f
FROM unnest(ARRAY['uniform','sorted','reverse','zero','bucket','gaussian','staggered','duplicates']) d(dist)
CROSS JOIN unnest(ARRAY[0, 1, 2, 1000, 1000000]) s(n)
LEFT JOIN LATERAL dist_values(d.dist, s.n) ON true
GROUP BY d.dist, s.n;

-- NULLs mixed in: every 7th element, and a mostly-NULL array
INSERT INTO cases
SELECT 'uniform with nulls', n,
       array_agg(CASE WHEN i % 7 = 3 THEN NULL ELSE (random() * 2e9 - 1e9)::int4 END),
       array_agg(CASE WHEN i % 7 = 3 THEN NULL ELSE (random() * 2e6 - 1e6)::float4 END)
FROM unnest(ARRAY[1000, 1000000]) n, generate_series(1, n) i GROUP BY n;
INSERT INTO cases
SELECT 'mostly nulls', 1000,
       array_agg(CASE WHEN i % 100 = 0 THEN i END),
       array_agg(CASE WHEN i % 100 = 0 THEN -i::float4 END)
FROM generate_series(1, 1000) i;
\set QUIET off

-- native ORDER BY of every case, once, in the four ASC/DESC x NULLS orders
CREATE TEMP TABLE refs AS
SELECT dist, n,
  (SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM unnest(a) x) AS a_asc,
  (SELECT coalesce(array_agg(x ORDER BY x NULLS FIRST), '{}') FROM unnest(a) x) AS a_asc_nf,
  (SELECT coalesce(array_agg(x ORDER BY x DESC), '{}') FROM unnest(a) x) AS a_desc,
  (SELECT coalesce(array_agg(x ORDER BY x DESC NULLS LAST), '{}') FROM unnest(a) x) AS a_desc_nl,
  (SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM unnest(f) x) AS f_asc,
  (SELECT coalesce(array_agg(x ORDER BY x NULLS FIRST), '{}') FROM unnest(f) x) AS f_asc_nf,
  (SELECT coalesce(array_agg(x ORDER BY x DESC), '{}') FROM unnest(f) x) AS f_desc,
  (SELECT coalesce(array_agg(x ORDER BY x DESC NULLS LAST), '{}') FROM unnest(f) x) AS f_desc_nl,
  (SELECT count(*) FROM unnest(f) x WHERE x::text = '-0') AS f_negzero
FROM cases;

-- 'ok', or the orders in which gpu_sort differs from native ORDER BY
-- (float4: also the count of -0 values, which compare equal to 0)
CREATE FUNCTION verdict(VARIADIC orders text[]) RETURNS text LANGUAGE sql
AS $$ SELECT coalesce(nullif(array_to_string(orders, ', '), ''), 'ok') $$;
\set check 'SELECT dist, n, verdict(CASE WHEN gpu_sort(a) IS DISTINCT FROM a_asc THEN \'asc\' END, CASE WHEN gpu_sort(a, false, true) IS DISTINCT FROM a_asc_nf THEN \'asc nulls first\' END, CASE WHEN gpu_sort(a, true) IS DISTINCT FROM a_desc THEN \'desc\' END, CASE WHEN gpu_sort(a, true, false) IS DISTINCT FROM a_desc_nl THEN \'desc nulls last\' END) AS int4, verdict(CASE WHEN gpu_sort(f) IS DISTINCT FROM f_asc THEN \'asc\' END, CASE WHEN gpu_sort(f, false, true) IS DISTINCT FROM f_asc_nf THEN \'asc nulls first\' END, CASE WHEN gpu_sort(f, true) IS DISTINCT FROM f_desc THEN \'desc\' END, CASE WHEN gpu_sort(f, true, false) IS DISTINCT FROM f_desc_nl THEN \'desc nulls last\' END, CASE WHEN (SELECT count(*) FROM unnest(gpu_sort(f)) x WHERE x::text = \'-0\') <> f_negzero THEN \'-0 lost\' END) AS float4 FROM cases JOIN refs USING (dist, n) ORDER BY dist, n;'

SELECT dist, n, cardinality(a) = n AS int4_size, cardinality(f) = n AS float4_size
FROM cases WHERE cardinality(a) <> n OR cardinality(f) <> n;

SET gpusort.device = 'cpu';
:check

SET gpusort.device = 'auto';
SET gpusort.gpu_min_elements = 0;
:check
