/* gpusort--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION gpusort UPDATE TO '1.2'" to load this file. \quit

-- the GPU service's work per GPU, and the jobs that took the CPU path
-- because it could not run them (no rows without shared_preload_libraries)
CREATE FUNCTION gpusort_stat(
    OUT device int,
    OUT name text,
    OUT service_pid int,
    OUT jobs bigint,
    OUT rows bigint,
    OUT bytes bigint,
    OUT queue_wait_ms double precision,
    OUT queued int,
    OUT running int,
    OUT memory_used bigint,
    OUT memory_total bigint,
    OUT failures bigint,
    OUT restarts bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpusort_stat'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE VIEW gpusort_stat AS SELECT * FROM gpusort_stat();

REVOKE ALL ON FUNCTION gpusort_stat() FROM PUBLIC;
REVOKE ALL ON gpusort_stat FROM PUBLIC;
GRANT SELECT ON gpusort_stat TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION gpusort_stat() TO pg_read_all_stats;
