-- test/citus_queries.sql -- the distributed-table queries of
-- test/citus_test.sh, one per line (the driver runs each with gpusort on
-- and off on every node and compares the outputs byte for byte).  Every
-- ORDER BY is total (it ends in a unique column, or ranks groups that are
-- unique), so that the two outputs must be identical.  Comments and empty
-- lines are skipped.  With gpusort on, a query's plan must hold a GpuSort
-- (on the coordinator or in the task shown), unless its line ends in a
-- comment "-- native: why", where it must hold none.
-- ORDER BY without LIMIT: the coordinator sorts what the workers return
SELECT * FROM events ORDER BY i, id
SELECT id, f FROM events ORDER BY f DESC NULLS FIRST, id
-- ORDER BY ... LIMIT and OFFSET: pushed down, then merged on the coordinator
SELECT id, i FROM events ORDER BY i DESC, id LIMIT 1000
SELECT id, i, f FROM events ORDER BY f, id LIMIT 100000
SELECT id, t FROM events ORDER BY t, id OFFSET 700 LIMIT 500  -- native: a small bound (1200) on a text key: the top-N heap compares fewer values
SELECT id FROM events ORDER BY amount DESC, id OFFSET 199000
-- window functions: partitioned by the distribution column (pushed down), and not
SELECT tenant, id, row_number() OVER (PARTITION BY tenant ORDER BY i, id) FROM events ORDER BY tenant, id
SELECT id, rank() OVER (ORDER BY i) FROM events ORDER BY id
SELECT id, sum(i) OVER (ORDER BY f, id) FROM events ORDER BY id
-- GROUP BY the distribution column (pushed down), another column, an aggregate's order
SELECT tenant, count(*), sum(i) FROM events GROUP BY tenant ORDER BY tenant
SELECT i % 1000 AS g, count(*) FROM events GROUP BY 1 ORDER BY 2 DESC, 1
SELECT tenant, max(t) FROM events GROUP BY tenant ORDER BY max(t), tenant
-- DISTINCT
SELECT DISTINCT i % 5000 AS g FROM events ORDER BY 1
SELECT DISTINCT ON (tenant) tenant, id, i FROM events ORDER BY tenant, i, id
-- joins on the distribution column
SELECT e.id, l.label FROM events e JOIN tenants l USING (tenant) ORDER BY e.t, e.id
SELECT e.tenant, count(*) FROM events e JOIN tenants l USING (tenant) GROUP BY 1 ORDER BY 2, 1
-- text keys under C and under ICU
SELECT id, t FROM events ORDER BY t COLLATE "C" DESC, id
SELECT id, name FROM events ORDER BY name COLLATE "en-x-icu", id
SELECT id, name FROM events ORDER BY name COLLATE "en-x-icu" DESC, id LIMIT 5000  -- native: a small bound on a text key, as above
-- subquery and CTE on the coordinator
WITH c AS MATERIALIZED (SELECT id, i FROM events ORDER BY i, id LIMIT 150000) SELECT count(*), sum(i) FROM c
SELECT * FROM (SELECT id, f FROM events ORDER BY f, id LIMIT 120000) s WHERE id % 3 = 0 ORDER BY f, id
