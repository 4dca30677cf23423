/* gpusort--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION gpusort" to load this file. \quit

CREATE FUNCTION gpu_sort(arr int4[], descending boolean DEFAULT false,
                         nulls_first boolean DEFAULT NULL)
RETURNS int4[]
AS 'MODULE_PATHNAME', 'gpu_sort_int4'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION gpu_sort(int4[], boolean, boolean) IS
'sort an int4 array (on the GPU when worthwhile); nulls_first NULL means ORDER BY''s default';

CREATE FUNCTION gpu_sort(arr float4[], descending boolean DEFAULT false,
                         nulls_first boolean DEFAULT NULL)
RETURNS float4[]
AS 'MODULE_PATHNAME', 'gpu_sort_float4'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION gpu_sort(float4[], boolean, boolean) IS
'sort a float4 array in ORDER BY''s order (NaN last, -0 = 0); nulls_first NULL means ORDER BY''s default';

CREATE FUNCTION gpusort_devices(
    OUT device int4,
    OUT name text,
    OUT compute_capability text,
    OUT memory_mb int8,
    OUT multiprocessors int4)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpusort_devices'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION gpusort_devices() IS
'the CUDA devices this server can use (no rows without a GPU)';
