# 32 clients sort at once for a bounded time (pgbench, six scripts: several
# key types, LIMIT, window functions, merge join, sorted GROUP BY and a
# parallel plan).  Every transaction checks its rows against the native
# Sort's checksum (a mismatch divides by zero), so the run must end with 0
# failed transactions.  On a GPU host, device memory returns to its
# baseline once the clients have disconnected.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuSortTest;

my $clients = $ENV{GPUSORT_TAP_CLIENTS} // 32;
my $seconds = $ENV{GPUSORT_TAP_SECONDS} // 20;

my $node = GpuSortTest::new_node('concurrency', qq{
gpusort.verify_order = on
gpusort.gpu_min_elements = 0
});
my $gpu = GpuSortTest::has_gpu($node);
note($gpu ? 'GPU present' : 'no GPU: the CPU path');

$node->safe_psql('postgres', q{
CREATE TABLE c AS
SELECT i AS id, hashint8(i) % 5000 AS k,
       CASE WHEN i % 19 = 0 THEN NULL ELSE (hashint4(i) % 100000) / 7.0 END::float8 AS f,
       timestamptz '2020-01-01' + (hashint4(i + 1) % 1000000) * interval '1 second' AS ts,
       md5(i::text) AS pad
FROM generate_series(1, 50000) i;
CREATE TABLE j AS SELECT i AS id, (i % 5000)::int8 AS k FROM generate_series(1, 10000) i;
ANALYZE c, j;
CREATE TABLE expected (q int PRIMARY KEY, sum text);
});

# each query's rows have one order only (its keys end with a unique column)
my @queries = (
	[ '', 'SELECT id, k FROM c ORDER BY k, id' ],
	[ '', 'SELECT id, f FROM c ORDER BY f DESC NULLS LAST, id LIMIT 50' ],
	[ '', 'SELECT id, row_number() OVER (ORDER BY ts, id) FROM c WHERE id % 4 = 0' ],
	[ 'SET enable_hashjoin = off; SET enable_nestloop = off;',
	  'SELECT c.id, j.id FROM c JOIN j ON c.k = j.k WHERE c.id % 8 = 0 ORDER BY c.id, j.id' ],
	[ 'SET enable_hashagg = off;',
	  'SELECT k, count(*), sum(id) FROM c GROUP BY k ORDER BY k' ],
	[ 'SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; '
	  . 'SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;',
	  'SELECT id, ts FROM c ORDER BY ts DESC, id' ]);

my %scripts;
for my $q (0 .. $#queries)
{
	my ($settings, $query) = @{ $queries[$q] };
	my $native = GpuSortTest::checksum($node, $settings, $query, 0);
	my $ours = GpuSortTest::checksum($node, $settings, $query, 1);
	is($ours, $native, "query $q: GpuSort's rows equal the native Sort's");
	my $plan = $node->safe_psql('postgres', "$settings EXPLAIN (COSTS OFF) $query");
	like($plan, qr/GpuSort/, "query $q: planned with GpuSort");
	$node->safe_psql('postgres', "INSERT INTO expected VALUES ($q, '$native')");
	my $script = join('', map { "$_;\n" } grep { $_ ne '' } split(/;\s*/, $settings));
	$script .= "SELECT 1 / (md5(coalesce(string_agg(s::text, '|'), '')) || ' ' || count(*) = "
		. "(SELECT sum FROM expected WHERE q = $q))::int FROM ($query) s;\n";
	$scripts{"001_concurrency_q$q"} = $script;
}

my $gpu_before = $gpu ? GpuSortTest::gpu_memory_used_mb() : undef;
$node->pgbench(
	"--no-vacuum --client=$clients --jobs=4 --time=$seconds",
	0,
	[ qr{number of failed transactions: 0 \(0\.000%\)}, qr{processed: [1-9]} ],
	[ qr{^$} ],
	"$clients clients for $seconds s: no failed transaction, every checksum equal",
	\%scripts);

# the server survived and nobody is left connected
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'client backend' "
	. "AND pid <> pg_backend_pid()") or die 'clients did not disconnect';
is($node->safe_psql('postgres', 'SELECT count(*) FROM c'), '50000', 'server still up');
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC|TRAP/, 'no crash in the log');

SKIP:
{
	skip 'no GPU (nvidia-smi)', 1 unless defined $gpu_before;
	# a backend leaves pg_stat_activity before its process ends and the driver
	# frees its CUDA context: wait for the memory to come back, up to the
	# suite's default timeout, and fail only then
	my $gpu_after = GpuSortTest::gpu_memory_used_mb();
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while ($gpu_after > $gpu_before + 64 && time() < $deadline)
	{
		sleep 1;
		$gpu_after = GpuSortTest::gpu_memory_used_mb();
	}
	note("device memory used: $gpu_before MB before the clients, $gpu_after MB after");
	cmp_ok($gpu_after, '<=', $gpu_before + 64, 'device memory back to its baseline');
}

$node->stop;
done_testing();
