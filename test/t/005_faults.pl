# Injected GPU faults: a test-only module (test/test_modules) makes the
# n-th checked CUDA call of a sort fail -- opening the device, allocation,
# copies and the page-locking of their host memory (every copy locks it
# here, as copies of 4 MB and more do), kernel launches, stream waits --
# for every n the sort reaches,
# once with a recoverable error (cudaErrorMemoryAllocation) and once with
# one that leaves the context unusable (cudaErrorLaunchFailure).  Every
# query must still return the native Sort's rows, through the CPU path,
# with at most one WARNING and never an ERROR.  Needs a GPU.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuSortTest;

my $lib = $ENV{GPUSORT_FAULT_LIB} or plan skip_all => 'GPUSORT_FAULT_LIB not set (test/tap.sh sets it)';
# the backend's own CUDA calls: the per-backend path (the service's
# failures: test/t/009_gpu_service.pl)
my $node = GpuSortTest::new_node('faults', qq{
gpusort.service = off
max_parallel_workers_per_gather = 0
gpusort.gpu_min_elements = 0
gpusort.gpu_reorder_min_rows = 0
});
plan skip_all => 'no GPU: no CUDA call to fail' unless GpuSortTest::has_gpu($node);

$node->safe_psql('postgres', qq{
CREATE TABLE f AS
SELECT i AS id, hashint8(i) % 100000 AS k, (hashint4(i) % 1000) / 7.0::float4 AS v
FROM generate_series(1, 200000) i;
ANALYZE f;
CREATE FUNCTION gpusort_fault_inject(int, int) RETURNS void AS '$lib' LANGUAGE C STRICT;
CREATE FUNCTION gpusort_fault_calls() RETURNS int AS '$lib' LANGUAGE C STRICT;
CREATE FUNCTION gpusort_fault_last() RETURNS text AS '$lib' LANGUAGE C STRICT;
});

my $sum = "SELECT md5(coalesce(string_agg(s::text, '|'), '')) || ' ' || count(*) FROM";
my @queries = (
	[ 'radix, rows reordered on the GPU', '', "$sum (SELECT id, k, v FROM f ORDER BY k, id) s" ],
	[ 'quicksort', "SET gpusort.algorithm = 'quicksort';",
	  "$sum (SELECT id, v FROM f ORDER BY v DESC, id) s" ],
	[ 'bitonic', "SET gpusort.algorithm = 'bitonic';",
	  "$sum (SELECT id, k FROM f ORDER BY k DESC, id) s" ],
	[ 'gpu_sort()', '', "SELECT md5(gpu_sort(array_agg(k::int4))::text) FROM f" ]);

my ($injected, $survived) = (0, 0);
for my $q (@queries)
{
	my ($name, $settings, $query) = @$q;
	my $native = $node->safe_psql('postgres', "SET gpusort.enabled = off; $query");

	# how many checked CUDA calls the sort makes in a new session
	my $calls = $node->safe_psql('postgres', qq{
LOAD '$lib';
SELECT gpusort_fault_inject(0, 0);
$settings
$query;
SELECT gpusort_fault_calls();
});
	($calls) = $calls =~ /(\d+)\s*$/;
	cmp_ok($calls, '>', 3, "$name: the sort makes checked CUDA calls ($calls)");

	for my $code (2, 719)
	{
		my @bad;
		for my $n (1 .. $calls)
		{
			my ($ret, $stdout, $stderr) = $node->psql('postgres', qq{
LOAD '$lib';
SELECT gpusort_fault_inject($n, $code);
$settings
$query;
SELECT gpusort_fault_last();
});
			my @lines = split /\n/, $stdout, -1;
			my ($sum, $failed) = @lines[ -2, -1 ];
			my $warnings = () = $stderr =~ /WARNING:/g;
			# the number of stream polls varies: a call past this run's last is not reached
			$injected++ if $failed ne '';
			if ($ret == 0 && $sum eq $native && $stderr !~ /ERROR|FATAL/ && $warnings <= 1)
			{
				$survived++ if $failed ne '';
			}
			else
			{
				push @bad, "call $n ($failed) code $code: ret $ret, $sum against $native; $stderr";
			}
		}
		is(scalar(@bad), 0, "$name: each of $calls calls failed with $code: native rows, no ERROR")
		  or diag(join("\n", @bad));
	}
}
note("faults injected: $injected, survived: $survived");
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC|TRAP/, 'no crash in the log');
$node->stop;
done_testing();
