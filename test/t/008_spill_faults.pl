# Failed writes of a GpuSort past its budget: a test-only hook (test/
# test_modules, gpusort_fault_write) fails the n-th write to a run's
# temporary file with ENOSPC or EIO -- a run written from the stores, or a
# longer one written by a merge pass -- for writes spread over the whole
# sort.  The query must end in an ERROR with the SQLSTATE PostgreSQL gives
# that errno (53100 disk_full, 58030 io_error) and the message naming the
# temporary file, leave no temporary file behind, and the same session's
# next sort must return the native Sort's rows.  Serial plans (a column
# store and a tuple store, their runs gathered by 5 threads), and a
# parallel plan whose workers store the rows.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuSortTest;

my $lib = $ENV{GPUSORT_FAULT_LIB} or plan skip_all => 'GPUSORT_FAULT_LIB not set (test/tap.sh sets it)';
my $node = GpuSortTest::new_node('spill_faults', qq{
gpusort.gpu_min_elements = 0
});

$node->safe_psql('postgres', qq{
CREATE TABLE s AS
SELECT g AS id, hashint4(g) % 100000 AS k, md5(g::text) AS t, repeat('x', g % 40) AS pad
FROM generate_series(1, 200000) g;
-- s: serial plans only; w: the same rows, scanned by parallel workers
CREATE TABLE w AS SELECT * FROM s;
ALTER TABLE s SET (parallel_workers = 0);
ANALYZE s, w;
CREATE FUNCTION gpusort_fault_write(int, int) RETURNS void AS '$lib' LANGUAGE C STRICT;
CREATE FUNCTION gpusort_fault_writes() RETURNS int AS '$lib' LANGUAGE C STRICT;
});

# serial plans whose runs are gathered by 5 threads (1 + max_parallel_workers_per_gather)
my $serial = 'SET max_parallel_workers_per_gather = 4; SET gpusort.work_mem = 1;';
# a budget that holds the workers' 2 MB chunks beside the GpuSort's rows
my $parallel = 'SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; '
  . 'SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET gpusort.work_mem = 8;';
# [ name, settings, query, parallel ]
my @cases = (
	[ 'tuple rows', $serial, 'SELECT * FROM s ORDER BY t COLLATE "C", id', 0 ],
	[ 'column rows', $serial, 'SELECT id, k, id::int8 * 3 AS b, k / 7.0::float8 AS f FROM s ORDER BY k DESC, id', 0 ],
	[ 'rows stored by workers', $parallel, 'SELECT id, k, t FROM w ORDER BY k, id', 1 ]);
my %errnos = (28 => [ '53100', qr/No space left on device/ ], 5 => [ '58030', qr/Input\/output error/ ]);
my $sum = "SELECT md5(coalesce(string_agg(q::text, '|'), '')) || ' ' || count(*) FROM";

for my $c (@cases)
{
	my ($name, $settings, $query, $parallel) = @$c;
	my $native = GpuSortTest::checksum($node, $settings, $query, 0);
	my $setup = "LOAD '$lib'; $settings";

	# the writes one sort makes, and its runs
	my $out = $node->safe_psql('postgres', qq{
$setup
SELECT gpusort_fault_write(0, 0);
EXPLAIN (ANALYZE, FORMAT JSON) $query;
SELECT gpusort_fault_writes();
});
	my ($runs) = $out =~ /"Sorted Runs": (\d+)/;
	my ($writes) = $out =~ /(\d+)\s*$/;
	cmp_ok($runs // 0, '>', 2, "$name: runs past the budget (" . ($runs // 'none') . ")");
	cmp_ok($writes, '>=', $runs // 0, "$name: a write a run at least ($writes)");
	if ($parallel)
	{
		like($out, qr/"Rows Stored by Workers": [1-9]/, "$name: the workers stored rows");
	}
	else
	{
		unlike($out, qr/Gather/, "$name: a serial plan");
		like($out, qr/"Merge Passes": [1-9]/, "$name: merge passes write runs too");
	}

	# failures spread over the sort: the first writes, every tenth, the last
	# (with workers the writes vary from run to run: the first half only)
	my $last = $parallel ? int($writes / 2) : $writes;
	my %at = map { $_ => 1 } grep { $_ >= 1 && $_ <= $last }
	  (1, 2, (map { int($last * $_ / 10) } 1 .. 9), $last - 1, $last);
	for my $n (sort { $a <=> $b } keys %at)
	{
		for my $errno (sort keys %errnos)
		{
			my ($state, $text) = @{ $errnos{$errno} };
			my ($ret, $stdout, $stderr) = $node->psql('postgres', qq{
$setup
SELECT gpusort_fault_write($n, $errno);
\\set VERBOSITY verbose
$sum ($query) q;
\\set VERBOSITY default
SELECT 'temp files: ' || count(*) FROM pg_ls_tmpdir();
SELECT gpusort_fault_write(0, 0);
$sum ($query) q;
}, on_error_stop => 0);
			my $what = "$name: write $n of $writes failed with errno $errno";
			like($stderr, qr/ERROR:  $state: gpusort: could not write to a temporary file: $text/,
				"$what: ERROR $state");
			like($stdout, qr/^temp files: 0$/m, "$what: no temporary file left");
			my @lines = split /\n/, $stdout;
			is($lines[-1], $native, "$what: the next sort returns the native rows");
		}
	}
}

# nothing left behind once the sessions are gone
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_ls_tmpdir()'), '0', 'no temporary files');

done_testing();
