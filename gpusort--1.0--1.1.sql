/* gpusort--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION gpusort UPDATE TO '1.1'" to load this file. \quit

-- gpu_sort() of any element type with a default btree ordering
CREATE FUNCTION gpu_sort(arr anyarray, descending boolean DEFAULT false,
                         nulls_first boolean DEFAULT NULL)
RETURNS anyarray
AS 'MODULE_PATHNAME', 'gpu_sort_any'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- element types that would otherwise also match the float4[] (numeric,
-- int8, int2) or int4[] (int2) function through an implicit cast
CREATE FUNCTION gpu_sort(arr numeric[], descending boolean DEFAULT false,
                         nulls_first boolean DEFAULT NULL)
RETURNS numeric[]
AS 'MODULE_PATHNAME', 'gpu_sort_any'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION gpu_sort(arr int8[], descending boolean DEFAULT false,
                         nulls_first boolean DEFAULT NULL)
RETURNS int8[]
AS 'MODULE_PATHNAME', 'gpu_sort_any'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION gpu_sort(arr int2[], descending boolean DEFAULT false,
                         nulls_first boolean DEFAULT NULL)
RETURNS int2[]
AS 'MODULE_PATHNAME', 'gpu_sort_any'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION gpu_sort(numeric[], boolean, boolean) IS
'sort a numeric array in ORDER BY''s order (NaN last, 1.0 = 1.00); nulls_first NULL means ORDER BY''s default';
COMMENT ON FUNCTION gpu_sort(int8[], boolean, boolean) IS
'sort an int8 array; nulls_first NULL means ORDER BY''s default';
COMMENT ON FUNCTION gpu_sort(int2[], boolean, boolean) IS
'sort an int2 array; nulls_first NULL means ORDER BY''s default';
COMMENT ON FUNCTION gpu_sort(anyarray, boolean, boolean) IS
'sort an array of any type with a default btree ordering (text under the call''s collation, numeric, uuid, ...) in ORDER BY''s order; nulls_first NULL means ORDER BY''s default';
