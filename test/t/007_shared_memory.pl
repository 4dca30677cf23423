# The parallel workers' chunks that a GpuSort keeps -- it hands its rows up
# from where the workers stored them -- are dynamic shared memory: they
# must go when the sort ends, whether the query ends, or is cancelled,
# terminated or timed out while the node hands its rows up, and never
# outlive it.  The cluster keeps its dynamic shared memory segments as
# files (dynamic_shared_memory_type = mmap, in pg_dynshmem/), so that the
# test counts this cluster's segments alone; a test-only hook
# (test/test_modules/gpusort_phase_wait.c) holds the sort at the start of
# its emission, where the chunks are in use, until the signal comes.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use GpuSortTest;

my $lib = $ENV{GPUSORT_PHASE_LIB}
  or plan skip_all => 'GPUSORT_PHASE_LIB not set (test/tap.sh sets it)';
my $node = GpuSortTest::new_node('shared_memory', qq{
dynamic_shared_memory_type = mmap
max_parallel_workers_per_gather = 2
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
parallel_leader_participation = off
autovacuum = off
});
$node->safe_psql('postgres', qq{
CREATE TABLE t AS
SELECT i AS id, hashint4(i) % 100000 AS k, md5(i::text) AS pad
FROM generate_series(1, 200000) i;
VACUUM ANALYZE t;
CREATE FUNCTION gpusort_phase_wait(text) RETURNS void AS '$lib' LANGUAGE C STRICT;
CREATE FUNCTION gpusort_phase_timeout(text, int) RETURNS void AS '$lib' LANGUAGE C STRICT;
});

# this cluster's dynamic shared memory segments now
sub segments
{
	my $dir = $node->data_dir . '/pg_dynshmem';
	opendir(my $dh, $dir) or die "opendir $dir: $!";
	my $n = grep { !/^\.\.?$/ } readdir($dh);
	closedir($dh);
	return $n;
}

# the segments once those of the queries before have gone: a parallel
# worker may detach from its query's segment just after the query ends, and
# a terminated backend as it exits
sub settled
{
	my ($want) = @_;
	my $n = segments();
	for (my $i = 0; $n != $want && $i < 2000; $i++)
	{
		usleep(10000);	# polls a state: no verdict waits on a time
		$n = segments();
	}
	return $n;
}

my $query = 'SELECT id, k, pad FROM t ORDER BY k, id';
$node->safe_psql('postgres', 'SELECT count(*) FROM t');
my $base = segments();
for (my $i = 0; $i < 100; $i++)
{
	usleep(10000);
	$base = segments() if segments() < $base;
}

my $plan = $node->safe_psql('postgres', "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $query");
like($plan, qr/Rows Stored by Workers: 200000/, 'the workers stored every row');
is(settled($base), $base, 'a finished query leaves no segment');

# held at the start of emission, then cancelled or terminated
for my $how ('pg_cancel_backend', 'pg_terminate_backend')
{
	my ($stdout, $stderr) = ('', '');
	my $watcher = $node->background_psql('postgres');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-d', $node->connstr('postgres'),
		  '-c', "SELECT gpusort_phase_wait('emit')", '-c', $query ],
		'>', \$stdout, '2>', \$stderr);
	my $pid = '';
	my $t0 = time();
	while ($pid eq '' && time() - $t0 < 120 && $h->pumpable)
	{
		$pid = $watcher->query_safe(
			"SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Extension' "
			  . "AND query = \$q\$$query\$q\$");
		usleep(10000) if $pid eq '';	# polls a state; no verdict waits on time
	}
	isnt($pid, '', "$how: the sort reached its emission");
	cmp_ok(segments(), '>', $base, "$how: the kept chunks are in shared memory while it waits");
	$watcher->query_safe("SELECT $how($pid)");
	$h->finish;
	like($stderr, $how eq 'pg_cancel_backend' ? qr/canceling statement/ : qr/terminat/,
		 "$how: the query ended by the signal");
	$watcher->quit;
	is(settled($base), $base, "$how: no segment left");
}

# a statement timeout fired as emission starts
my ($ret, $out, $err) = $node->psql('postgres',
	"SELECT gpusort_phase_timeout('emit', 0); $query");
like($err, qr/statement timeout/, 'timeout at emission: the query timed out');
is(settled($base), $base, 'timeout at emission: no segment left');

# an error raised above the GpuSort while it hands its rows up
($ret, $out, $err) = $node->psql('postgres',
	"SELECT k, 1 / (k - (SELECT max(k) FROM t)) FROM (SELECT k FROM t ORDER BY k OFFSET 0) s");
like($err, qr/division by zero/, 'an error above the sort');
is(settled($base), $base, 'an error above the sort: no segment left');

# and the next query sorts as before
is(GpuSortTest::checksum($node, '', $query, 1), GpuSortTest::checksum($node, '', $query, 0),
   'the next query: rows equal native');
is(settled($base), $base, 'still no segment left');

$node->stop;
done_testing();
