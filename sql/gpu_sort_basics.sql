--
-- gpu_sort(): API behaviour, NULL handling, errors, GUCs, gpusort_devices()
--
-- Everything here prints the same on machines with and without a GPU.

-- the examples of the README
SELECT gpu_sort(ARRAY[3, NULL, 1, 2]::int4[]);
SELECT gpu_sort('{1.5,NaN,-Infinity,-0}'::float4[]);
SELECT gpu_sort(ARRAY[3, NULL, 1, 2]::int4[], descending => true);
SELECT gpu_sort(ARRAY[3, NULL, 1, 2]::int4[], descending => true, nulls_first => false);
SELECT gpu_sort(ARRAY[3, NULL, 1, 2]::int4[], nulls_first => true);
SELECT gpu_sort('{1.5,NULL,NaN,-Infinity,-0,0}'::float4[], true);

-- NULL array, NULL options (treated as the defaults), empty, all NULL
SELECT gpu_sort(NULL::int4[]) IS NULL AS null_in_null_out;
SELECT gpu_sort(NULL::float4[]) IS NULL AS null_in_null_out;
SELECT gpu_sort(ARRAY[2, 1]::int4[], NULL, NULL);
SELECT gpu_sort('{}'::int4[]), gpu_sort('{}'::float4[]);
SELECT gpu_sort('{NULL,NULL}'::int4[]), gpu_sort('{NULL,NULL}'::float4[], true);
SELECT gpu_sort(ARRAY[7]::int4[]), gpu_sort(ARRAY[NULL, 7]::int4[]);

-- any lower bound is accepted; the result starts at 1
SELECT gpu_sort('[5:8]={4,3,2,1}'::int4[]) AS sorted,
       array_lower(gpu_sort('[-3:-1]={3,2,1}'::int4[]), 1) AS lower_bound;

-- multi-dimensional arrays are refused with a hint
\set VERBOSITY default
SELECT gpu_sort('{{1,2},{3,4}}'::int4[]);
SELECT gpu_sort(ARRAY[ARRAY[1.5]]::float4[]);
\set VERBOSITY terse
-- the same error by SQLSTATE, for scripts
DO $$
BEGIN
  PERFORM gpu_sort('{{2,1}}'::int4[]);
EXCEPTION WHEN array_subscript_error THEN
  RAISE NOTICE 'caught %', SQLSTATE;
END $$;

-- function properties
SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args,
       p.provolatile, p.proisstrict, p.proparallel
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'gpusort'
ORDER BY 1, 2;

-- GUCs: defaults, accepted values, reserved prefix
SHOW gpusort.device;
SET gpusort.device = 'cpu';
SHOW gpusort.device;
SET gpusort.device = 'bogus';
RESET gpusort.device;
SET gpusort.gpu_min_elements = -1;
SET gpusort.no_such_setting = 1;
-- (the two thresholds' defaults come from measurements: only their ranges here)
SELECT name, setting, unit, context, vartype FROM pg_settings
WHERE name LIKE 'gpusort.%' AND name NOT IN ('gpusort.gpu_min_elements', 'gpusort.min_rows')
ORDER BY name;
SELECT name, setting::int >= 0 AS non_negative, context, vartype FROM pg_settings
WHERE name IN ('gpusort.gpu_min_elements', 'gpusort.min_rows') ORDER BY name;

-- gpusort_devices(): columns; rows (if any) are plausible
SELECT * FROM gpusort_devices() WHERE false;
SELECT coalesce(bool_and(device >= 0 AND name <> '' AND compute_capability ~ '^[0-9]+\.[0-9]+$'
                         AND memory_mb > 0 AND multiprocessors > 0), true) AS devices_plausible
FROM gpusort_devices();

-- the same results whichever path sorts: forced CPU, and auto with no minimum
CREATE TEMP TABLE small AS
SELECT ARRAY[5, -3, NULL, 2147483647, -2147483648, 0, 5]::int4[] AS a;
SET gpusort.device = 'cpu';
SELECT gpu_sort(a), gpu_sort(a, true) FROM small;
SET gpusort.device = 'auto';
SET gpusort.gpu_min_elements = 0;
SELECT gpu_sort(a), gpu_sort(a, true) FROM small;
RESET gpusort.gpu_min_elements;

-- usable in parallel queries and on table data
CREATE TEMP TABLE results AS
SELECT ((i * 7919 % 1000) / 10.0)::float4 AS score FROM generate_series(1, 1000) i;
SELECT (gpu_sort(array_agg(score), descending => true))[1:5] FROM results;
