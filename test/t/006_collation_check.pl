# The order check of a sort by strxfrm keys (text under a libc collation
# other than C): every adjacent pair of sorted rows is compared with
# strcoll, and a pair out of order sends the rows to the tuplesort.  glibc's
# strxfrm agrees with its strcoll, so a test-only hook (test/test_modules,
# gpusort_fault_disorder) swaps the first and last sorted rows before the
# check, as a strxfrm at odds with strcoll would.  The rows must still equal
# the native Sort's, EXPLAIN ANALYZE must name the fallback, and a sort
# without the hook must keep its own order.  On either path (CPU or GPU),
# serial and with parallel workers storing the rows.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuSortTest;

my $lib = $ENV{GPUSORT_FAULT_LIB} or plan skip_all => 'GPUSORT_FAULT_LIB not set (test/tap.sh sets it)';
my $node = GpuSortTest::new_node('collation_check', qq{
gpusort.gpu_min_elements = 0
});

my $has_en = $node->psql('postgres',
	"CREATE COLLATION en_libc (provider = libc, locale = 'en_US.UTF-8')") == 0;
plan skip_all => 'no en_US.UTF-8 locale (Debian: locales-all)' unless $has_en;

$node->safe_psql('postgres', qq{
CREATE TABLE names AS
SELECT i, (ARRAY['Anders', 'andersen', 'Ånge', 'Müller', 'mueller', 'Zoë', 'zoe', 'van Dijk'])[1 + i % 8]
       || ' ' || (hashint4(i) % 50000)::text AS name, md5(i::text) AS pad
FROM generate_series(1, 60000) i;
ANALYZE names;
CREATE FUNCTION gpusort_fault_disorder(bool) RETURNS void AS '$lib' LANGUAGE C STRICT;
});

my $query = 'SELECT i, name FROM names ORDER BY name COLLATE en_libc, i';
my $native = GpuSortTest::checksum($node, '', $query, 0);
my $disorder = "LOAD '$lib'; DO \$\$ BEGIN PERFORM gpusort_fault_disorder(true); END \$\$;";

for my $case (
	[ 'serial', 'SET max_parallel_workers_per_gather = 0;' ],
	[ 'workers storing the rows',
	  'SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; '
	  . 'SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;' ])
{
	my ($name, $settings) = @$case;

	# without the hook: checked, in order, no fallback
	my $plan = $node->safe_psql('postgres', qq{
$settings
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $query;
});
	like($plan, qr/Order Checked: 60000 rows/, "$name: every sorted row checked");
	unlike($plan, qr/tuplesort/, "$name: no fallback when strxfrm and strcoll agree");
	is(GpuSortTest::checksum($node, $settings, $query, 1), $native, "$name: native rows");

	# with the hook: the swapped pair is found, the tuplesort sorts
	$plan = $node->safe_psql('postgres', qq{
$disorder
$settings
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $query;
});
	like($plan, qr/algorithm: tuplesort/, "$name: a pair out of order sends the rows to the tuplesort");
	like($plan, qr/strxfrm ordered a pair of rows unlike strcoll/, "$name: EXPLAIN names the reason");
	is(GpuSortTest::checksum($node, "$disorder $settings",
							 $query, 1),
	   $native, "$name: the tuplesort's rows equal the native Sort's");
	# a cursor read backward over the fallback
	my $back = $node->safe_psql('postgres', qq{
$disorder
$settings
BEGIN;
DECLARE c SCROLL CURSOR FOR $query;
FETCH LAST FROM c;
FETCH BACKWARD 2 FROM c;
COMMIT;
});
	my $native_back = $node->safe_psql('postgres', qq{
SET gpusort.enabled = off;
BEGIN;
DECLARE c SCROLL CURSOR FOR $query;
FETCH LAST FROM c;
FETCH BACKWARD 2 FROM c;
COMMIT;
});
	is($back, $native_back, "$name: read backward after the fallback");
}

$node->stop;
done_testing();
