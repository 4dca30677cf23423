--
-- gpu_sort() on the values that break sorts: NaN, +-Infinity, -0,
-- denormals, FLT_MAX, INT_MIN/INT_MAX, NULLs and heavy duplicates --
-- compared with native ORDER BY on the CPU path and with no GPU threshold.
--
\i sql/include/check_sort.sql

CREATE TEMP TABLE special(name text, a int4[], f float4[]);
INSERT INTO special VALUES
('int limits', '{2147483647,-2147483648,0,-1,1,-2147483647,2147483646,NULL,-2147483648}', NULL),
('float specials', NULL,
 '{NaN,Infinity,-Infinity,0,-0,3.4028235e38,-3.4028235e38,1e-45,-1e-45,1.1754944e-38,-1.1754944e-38,NULL,1,-1,NaN,-0,-Infinity}'),
('nan and zeros only', NULL, '{-0,NaN,0,-0,NaN,0,NULL,NaN}');

-- shuffled copies with many duplicates
INSERT INTO special
SELECT 'duplicates ' || k,
       array_agg((ARRAY[2147483647,-2147483648,0,-1,7])[1 + (i * 7 + k) % 5] ORDER BY (i * 7919 + k) % 1009),
       array_agg((ARRAY['NaN','Infinity','-Infinity','-0','0','1e-45','3.4028235e38'])[1 + (i * 3 + k) % 7]::float4
                 ORDER BY (i * 7919 + k) % 1009)
FROM generate_series(1, 1000) i, generate_series(1, 3) k GROUP BY k;
UPDATE special SET a = a || NULL::int4, f = NULL::float4 || f WHERE name = 'duplicates 2';

SET gpusort.device = 'cpu';
SELECT name, check_sort(a) AS int4, check_sort(f) AS float4 FROM special ORDER BY name;
SET gpusort.device = 'auto';
SET gpusort.gpu_min_elements = 0;
SELECT name, check_sort(a) AS int4, check_sort(f) AS float4 FROM special ORDER BY name;

-- the sorted special values themselves (stable: -0 and 0 keep input order)
SELECT gpu_sort(f) FROM special WHERE name IN ('float specials', 'nan and zeros only') ORDER BY name;
SELECT gpu_sort(f, true) FROM special WHERE name IN ('float specials', 'nan and zeros only') ORDER BY name;
SELECT gpu_sort(a, true, true) FROM special WHERE name = 'int limits';
