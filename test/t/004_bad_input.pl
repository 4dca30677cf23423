# Bad and extreme input: gpu_sort() on arrays at PostgreSQL's limit of
# 134,217,727 elements (MaxArraySize; 512 MB of int4)
# (a correct result, or a clear error with a proper SQLSTATE), on arrays it
# does not take, and every GUC given invalid values (each a clear error
# with SQLSTATE 22023 or 42704, the old value kept).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuSortTest;

my $node = GpuSortTest::new_node('bad_input');
my $elements = ($ENV{GPUSORT_TAP_HUGE_ELEMENTS} // 134217727) - 4;

# at the limit: a correct result
my $out = $node->safe_psql('postgres', qq{
WITH s AS (SELECT gpu_sort(array_fill(7, ARRAY[$elements]) || ARRAY[-1, 2147483647, NULL, 3]) AS r)
SELECT cardinality(r), r[1], r[2], r[$elements + 2], r[$elements + 3], r[$elements + 4] FROM s;
});
is($out, join('|', $elements + 4, -1, 3, 7, 2147483647, ''), "gpu_sort() of $elements + 4 int4");
$out = $node->safe_psql('postgres', qq{
WITH s AS (SELECT gpu_sort(ARRAY['NaN', '-Infinity']::float4[] || array_fill(0.5::float4, ARRAY[$elements + 2]), true, false) AS r)
SELECT cardinality(r), r[1], r[2], r[$elements + 4] FROM s;
});
is($out, join('|', $elements + 4, 'NaN', '0.5', '-Infinity'), "gpu_sort() of $elements + 4 float4, DESC");

# what gpu_sort() does not take: a clear error each, with its SQLSTATE
my @errors = (
	[ 'SELECT gpu_sort(ARRAY[[1, 2], [3, 4]])', '2202E', 'two dimensions' ],
	[ "SELECT gpu_sort('{\"(1,2)\"}'::point[])", '42883', 'a point array (no ordering)' ],
	[ "SELECT gpu_sort(array_fill(1, ARRAY[134217728]))", '54000',
	  'an array of more than 134,217,727 elements' ]);
for my $e (@errors)
{
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\n$e->[0]");
	like($stderr, qr/ERROR:  $e->[1]:/, "$e->[2]: SQLSTATE $e->[1]");
}

# every GUC given invalid values
my @bad = (
	[ 'gpusort.device', "'tpu'", '22023' ],
	[ 'gpusort.algorithm', "'bogo'", '22023' ],
	[ 'gpusort.gpu_min_elements', '-1', '22023' ],
	[ 'gpusort.gpu_min_elements', "'1e12'", '22023' ],
	[ 'gpusort.enabled', "'perhaps'", '22023' ],
	[ 'gpusort.min_rows', '-5', '22023' ],
	[ 'gpusort.max_memory', '0', '22023' ],
	[ 'gpusort.max_memory', "'1 parsec'", '22023' ],
	[ 'gpusort.work_mem', '-2', '22023' ],
	[ 'gpusort.work_mem', "'lots'", '22023' ],
	[ 'gpusort.gpu_reorder_min_rows', '-1', '22023' ],
	[ 'gpusort.parallel_fill', "'maybe'", '22023' ],
	[ 'gpusort.gather_leader_scans', '2', '22023' ],
	[ 'gpusort.verify_order', "'sometimes'", '22023' ],
	[ 'gpusort.no_such_setting', '1', '42602' ]);
for my $b (@bad)
{
	my ($name, $value, $state) = @$b;
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSET $name = $value;");
	like($stderr, qr/ERROR:  $state:/, "SET $name = $value: SQLSTATE $state");
}
# and in postgresql.conf: the server warns, keeps the default and still sorts
$node->append_conf('postgresql.conf', "gpusort.work_mem = 'lots'\ngpusort.device = 'tpu'\n");
$node->restart;
is($node->safe_psql('postgres', 'SHOW gpusort.work_mem'), '-1', 'a bad value in the file: default kept');
is($node->safe_psql('postgres', 'SELECT gpu_sort(ARRAY[2, 1])'), '{1,2}', 'and gpu_sort() works');

unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC|TRAP/, 'no crash in the log');
$node->stop;
done_testing();
