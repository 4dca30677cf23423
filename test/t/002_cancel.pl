# Cancel and timeout at many points of a large GpuSort -- while it takes in
# rows, while it sorts, while it hands rows up -- by statement_timeout,
# pg_cancel_backend and pg_terminate_backend.  Each must take effect within
# 0.2 s; the session that was cancelled holds no more memory than before
# (memory contexts; device memory on a GPU host) and its next query sorts
# with GpuSort again (on the GPU where there is one).
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use GpuSortTest;

my $rows = $ENV{GPUSORT_TAP_CANCEL_ROWS} // 2000000;
my $max_lag = 0.2;

# a budget that holds the rows: this test is about cancelling GpuSort itself
my $node = GpuSortTest::new_node('cancel', qq{
max_parallel_workers_per_gather = 0
gpusort.gpu_min_elements = 0
gpusort.max_memory = '32GB'
});
my $gpu = GpuSortTest::has_gpu($node);
note(($gpu ? 'GPU present' : 'no GPU: the CPU path') . ", $rows rows");

$node->safe_psql('postgres', qq{
CREATE TABLE t AS
SELECT i AS id, hashint4(i) % 100000 AS k,
       timestamptz '2020-01-01' + (hashint4(i + 1) % 10000000) * interval '1 second' AS ts,
       md5(i::text) || md5((i + 1)::text) AS pad
FROM generate_series(1, $rows) i;
VACUUM ANALYZE t;
});
my $query = 'SELECT count(*) FROM (SELECT * FROM t ORDER BY ts DESC, id OFFSET 0) s';

# the phases of one run, to aim at each of them
my $json = $node->safe_psql('postgres',
	"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, FORMAT JSON) $query");
my %ms;
for my $field ('Fill Time', 'To Device Time', 'Sort Time', 'From Device Time', 'Emit Time')
{
	($ms{$field}) = $json =~ /"$field": ([\d.]+)/;
	die "no $field in EXPLAIN: $json" unless defined $ms{$field};
}
my $fill = $ms{'Fill Time'} / 1000;
my $sort = ($ms{'To Device Time'} + $ms{'Sort Time'} + $ms{'From Device Time'}) / 1000;
my $emit = $ms{'Emit Time'} / 1000;

# a session that stays open, to measure memory and its next query
my $session = $node->background_psql('postgres', on_error_stop => 0);
my $mem_sql = 'SELECT sum(total_bytes) FROM pg_backend_memory_contexts';
$session->query_safe($query);	# warm: the GPU opened, caches filled
my $start = time();
$session->query_safe($query);
my $scale = (time() - $start) / ($fill + $sort + $emit);	# EXPLAIN's own cost out
note(sprintf('phases: fill %.3f s, sort %.3f s, emit %.3f s (EXPLAIN ANALYZE); '
	  . 'the query alone %.3f s', $fill, $sort, $emit, $scale * ($fill + $sort + $emit)));
my %points = (
	'intake (early)' => $scale * $fill * 0.3,
	'intake (late)' => $scale * $fill * 0.8,
	'sort' => $scale * ($fill + $sort * 0.5),
	'emission' => $scale * ($fill + $sort + $emit * 0.4));
my $mem_before = $session->query_safe($mem_sql);
my $gpu_before = $gpu ? GpuSortTest::gpu_memory_used_mb() : undef;

my @lags;
for my $point (sort keys %points)
{
	my $at = $points{$point};

	# statement_timeout, in the open session
	my $lag = timeout_query($query, $at);
	ok(defined $lag, "statement_timeout at $point cancels");
	push @lags, [ "statement_timeout, $point", $lag // 99 ];

	# pg_cancel_backend and pg_terminate_backend, from another session
	for my $how ('pg_cancel_backend', 'pg_terminate_backend')
	{
		my ($lag2, $stderr);

		# a query that ended before the signal came is tried again earlier
		for (my $try = 0; $try < 4 && !defined $lag2; $try++)
		{
			($lag2, $stderr) = signal_query($how, $at * 0.7**$try);
		}
		ok(defined $lag2, "$how at $point reached the query");
		like($stderr // '',
			$how eq 'pg_cancel_backend' ? qr/canceling statement due to user request/
			: qr/terminating connection due to administrator command|server closed the connection/,
			"$how at $point ends the query");
		push @lags, [ "$how, $point", $lag2 // 99 ];
	}
}

# Run $sql in the open session under a statement_timeout of $at seconds
# (or earlier ones, where it ended before); the seconds it ran past the
# timeout, or undef if it never was cancelled.
sub timeout_query
{
	my ($sql, $at) = @_;
	for (my $try = 0; $try < 4; $try++, $at *= 0.7)
	{
		$session->query_safe(sprintf('SET statement_timeout = %d', $at * 1000));
		my $start = time();
		$session->query($sql);
		my $lag = time() - $start - $at;
		my $cancelled = $session->{stderr} =~ /canceling statement due to statement timeout/;
		$session->{stderr} = '';	# BackgroundPsql keeps it otherwise
		reset_timeout();
		return $lag if $cancelled;
	}
	return undef;
}

# RESET statement_timeout in the open session.  A timeout that fires just as
# a query ends is taken by the next command instead: that RESET fails, and
# is run once more.
sub reset_timeout
{
	for (my $try = 0; $try < 2; $try++)
	{
		$session->query('RESET statement_timeout');
		my $stderr = $session->{stderr};
		$session->{stderr} = '';
		return if $stderr eq '';
		die "RESET statement_timeout: $stderr"
		  unless $stderr =~ /canceling statement due to statement timeout/;
	}
	die 'RESET statement_timeout failed twice';
}

# Run $query in a new session, send it $how (pg_cancel_backend or
# pg_terminate_backend) $at seconds after it started, and return the
# seconds from the signal to the session's end and its stderr; undef if the
# query ended before the signal reached it.
sub signal_query
{
	my ($how, $at) = @_;
	my ($stdout, $stderr) = ('', '');
	my $canceller = $node->background_psql('postgres');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-d', $node->connstr('postgres'), '-c', $query ],
		'>', \$stdout, '2>', \$stderr);
	my $t0 = time();
	my $pid = '';
	while ($pid eq '')
	{
		$pid = $canceller->query_safe(
			"SELECT pid FROM pg_stat_activity WHERE query = '$query' AND state = 'active'");
		die 'query not seen running' if time() - $t0 > 30;
	}
	my $wait = $at - (time() - $t0);
	usleep($wait * 1e6) if $wait > 0;
	my $sent = time();
	# (a WARNING, not an error, if the query has just ended)
	my $signalled = $canceller->query("SELECT $how($pid)");
	$h->finish;
	my $lag = time() - $sent;
	$canceller->quit;
	return (undef, $stderr) if $signalled ne 't' || $stdout =~ /\d/;
	return ($lag, $stderr);
}

# gpu_sort() on a large array: statement_timeout halfway through
my $elements = $ENV{GPUSORT_TAP_ARRAY_ELEMENTS} // 20000000;
# (array_agg stops short of PostgreSQL's 134,217,727 elements: two halves)
my $half = int($elements / 2);
$node->safe_psql('postgres', qq{
CREATE TABLE arr (a int4[]);
ALTER TABLE arr ALTER a SET STORAGE EXTERNAL;	-- no decompression before the sort
INSERT INTO arr
SELECT (SELECT array_agg(hashint4(i)) FROM generate_series(1, $half) i) ||
       (SELECT array_agg(hashint4(-i)) FROM generate_series(1, $elements - $half) i);
});
my $array_query = 'SELECT cardinality(gpu_sort(a)) FROM arr';
$start = time();
is($session->query_safe($array_query), $elements, "gpu_sort() of $elements elements");
my $array_s = time() - $start;
for my $fraction (0.3, 0.6, 0.9)
{
	my $lag = timeout_query($array_query, $array_s * $fraction);
	ok(defined $lag, "statement_timeout at $fraction of gpu_sort() cancels");
	push @lags, [ sprintf('gpu_sort() of %d, at %.1f of %.3f s', $elements, $fraction, $array_s),
		$lag // 99 ];
}

for my $l (@lags)
{
	note(sprintf('%-45s %.3f s', $l->[0], $l->[1]));
	cmp_ok($l->[1], '<', $max_lag, "$l->[0]: within $max_lag s");
}

# no memory left behind by the cancelled sorts, and the next query sorts as before
my $mem_after = $session->query_safe($mem_sql);
note("backend memory contexts: $mem_before bytes before the cancels, $mem_after after");
cmp_ok($mem_after, '<=', $mem_before + 1024 * 1024, 'no host memory left behind');
my $next = $session->query_safe(
	"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, FORMAT JSON) $query");
like($next, qr/"Algorithm": "radix"|"Algorithm": "quicksort"|"Algorithm": "bitonic"/,
	'the next query in the session sorts with GpuSort');
like($next, $gpu ? qr/"On GPU": true/ : qr/"On GPU": false/,
	$gpu ? 'on the GPU' : 'on the CPU path (no GPU)');
SKIP:
{
	skip 'no GPU (nvidia-smi)', 1 unless defined $gpu_before;
	my $gpu_after = GpuSortTest::gpu_memory_used_mb();
	note("device memory used: $gpu_before MB before the cancels, $gpu_after MB after");
	cmp_ok($gpu_after, '<=', $gpu_before + 64, 'no device memory left behind');
}
$session->quit;
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC|TRAP/, 'no crash in the log');
$node->stop;
done_testing();
