# The extension's lifecycle: shared_preload_libraries and a server
# restart, DROP/CREATE EXTENSION with the library loaded, LOAD twice,
# pg_dump/pg_restore of a database that uses it, SCROLL and WITH HOLD
# cursors across commit, prepared statements with generic plans, and a
# savepoint rolled back in the middle of a cursor.  Each session script
# prints the same output with GpuSort on as with the native Sort.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuSortTest;

my $node = GpuSortTest::new_node('lifecycle', "max_parallel_workers_per_gather = 0\n");

$node->safe_psql('postgres', q{
CREATE TABLE t AS
SELECT i AS id, hashint4(i) % 1000 AS k, ((hashint4(i + 1) % 100000) / 3.0)::float8 AS f
FROM generate_series(1, 20000) i;
ANALYZE t;
});
my $sorted = 'SELECT id, k FROM t ORDER BY k, id';
my $expected = GpuSortTest::checksum($node, '', $sorted, 0);
my $plan = $node->safe_psql('postgres', "EXPLAIN (COSTS OFF) $sorted");
like($plan, qr/Custom Scan \(GpuSort\)/, 'preloaded: GpuSort planned');
is(GpuSortTest::checksum($node, '', $sorted, 1), $expected, 'preloaded: rows equal native');

$node->restart;
like($node->safe_psql('postgres', "EXPLAIN (COSTS OFF) $sorted"), qr/GpuSort/,
	'after a restart: GpuSort planned');
is(GpuSortTest::checksum($node, '', $sorted, 1), $expected, 'after a restart: rows equal native');

# LOAD twice, and DROP/CREATE EXTENSION, all in one session
my $out = $node->safe_psql('postgres', qq{
LOAD 'gpusort';
LOAD 'gpusort';
DROP EXTENSION gpusort;
CREATE EXTENSION gpusort;
SELECT gpu_sort(ARRAY[3, 1, NULL, 2]);
SELECT md5(string_agg(s::text, '|')) FROM ($sorted) s;
DROP EXTENSION gpusort;
SELECT md5(string_agg(s::text, '|')) FROM ($sorted) s;
CREATE EXTENSION gpusort;
});
my ($native_md5) = split / /, $expected;
is($out, "{1,2,3,NULL}\n$native_md5\n$native_md5",
	'LOAD twice, DROP and CREATE EXTENSION: gpu_sort() and ORDER BY still right');

# pg_dump / pg_restore of a database that uses the extension
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
CREATE EXTENSION gpusort;
CREATE TABLE a (id int, v int4[]);
INSERT INTO a SELECT i, ARRAY[i % 7, i % 3, NULL, -i] FROM generate_series(1, 1000) i;
CREATE VIEW sorted_a AS SELECT id, gpu_sort(v, true) AS v FROM a;
CREATE MATERIALIZED VIEW ordered AS SELECT id, v FROM a ORDER BY v[1], id;
});
my $dump = $node->basedir . '/src.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('src') ], 'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('dst'), $dump ], 'pg_restore');
my $check = 'SELECT md5(string_agg(s::text, \'|\')) FROM '
  . '(SELECT * FROM sorted_a ORDER BY id) s UNION ALL '
  . 'SELECT md5(string_agg(o::text, \'|\')) FROM ordered o';
is($node->safe_psql('dst', $check), $node->safe_psql('src', $check),
	'the restored database gives the same results');
is($node->safe_psql('dst', "SELECT extversion FROM pg_extension WHERE extname = 'gpusort'"),
	$node->safe_psql('src', "SELECT extversion FROM pg_extension WHERE extname = 'gpusort'"),
	'the restored database has the extension');

# an upgrade from 1.0 (int4 and float4 arrays) through 1.1 (any element
# type) to 1.2 (the gpusort_stat view)
$node->safe_psql('postgres', 'CREATE DATABASE upgrade');
is($node->safe_psql('upgrade', q{
CREATE EXTENSION gpusort VERSION '1.0';
SELECT count(*) FROM pg_proc WHERE proname = 'gpu_sort';
ALTER EXTENSION gpusort UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'gpusort';
SELECT gpu_sort(ARRAY['b', 'a', NULL, 'B']::text[] COLLATE "C");
SELECT gpu_sort(ARRAY[1.50, -2, 'NaN']::numeric[], true);
SELECT count(*) > 0 FROM gpusort_stat WHERE name = 'CPU path';
}), "2\n1.2\n{B,a,b,NULL}\n{NaN,1.50,-2}\nt",
	'ALTER EXTENSION UPDATE from 1.0: gpu_sort() of any type, gpusort_stat');

# cursors, generic plans and savepoints: the same output as the native Sort
my $script = q{
BEGIN;
DECLARE c SCROLL CURSOR WITH HOLD FOR SELECT id, k FROM t ORDER BY k DESC, id;
FETCH 3 FROM c;
COMMIT;
FETCH LAST FROM c;
FETCH BACKWARD 2 FROM c;
FETCH ABSOLUTE 1000 FROM c;
MOVE FIRST IN c;
FETCH RELATIVE 5 FROM c;
CLOSE c;
SET plan_cache_mode = force_generic_plan;
PREPARE p(int) AS SELECT id, f FROM t WHERE k < $1 ORDER BY f, id LIMIT 5;
EXECUTE p(10);
EXECUTE p(500);
EXECUTE p(10);
PREPARE q(int) AS SELECT id FROM t WHERE k = $1 ORDER BY f DESC, id;
EXECUTE q(7);
EXECUTE q(8);
BEGIN;
DECLARE d CURSOR FOR SELECT id, k FROM t ORDER BY k, id;
FETCH 2 FROM d;
SAVEPOINT s;
FETCH 2 FROM d;
SELECT count(*) FROM (SELECT * FROM t ORDER BY f) x;
ROLLBACK TO s;
FETCH 2 FROM d;
SAVEPOINT s2;
SELECT 1 / 0;
ROLLBACK TO s2;
FETCH 2 FROM d;
COMMIT;
};
my ($ret_on, $out_on, $err_on) = $node->psql('postgres', "SET gpusort.enabled = on;\n$script");
my ($ret_off, $out_off, $err_off) = $node->psql('postgres', "SET gpusort.enabled = off;\n$script");
is($out_on, $out_off, 'cursors, generic plans and savepoints: output equals native');
is($err_on, $err_off, 'the same errors (only the division by zero)');
like($node->safe_psql('postgres', "SET plan_cache_mode = force_generic_plan;
PREPARE p(int) AS SELECT id, f FROM t WHERE k < \$1 ORDER BY f, id LIMIT 5;
EXPLAIN (COSTS OFF) EXECUTE p(10);"), qr/GpuSort/, 'the generic plan uses GpuSort');

unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC|TRAP/, 'no crash in the log');
$node->stop;
done_testing();
