-- bench/order_by_table.sql -- the table of bench/order_by.sql and
-- bench/gather_configs.sql: (i int4, f float4, s int4, id int8, pad text),
-- about 80-byte rows; psql variable rows.
CREATE EXTENSION IF NOT EXISTS gpusort;
DROP TABLE IF EXISTS t;
CREATE UNLOGGED TABLE t (i int4, f float4, s int4, id int8, pad text);
INSERT INTO t
SELECT (random() * 4294967295 - 2147483648)::int8::int4, (random() * 2e6 - 1e6)::float4,
       (random() * 1000)::int4, g, md5(g::text)
FROM generate_series(1, :rows) g;
VACUUM ANALYZE t;
SELECT pg_size_pretty(pg_relation_size('t')) AS table_size,
       (pg_relation_size('t') / :rows)::int AS bytes_per_row;

