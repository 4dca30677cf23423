# Cancel and timeout at every phase of a large sort -- the GpuSort node
# (serial and parallel plans, rows in a tuple store or a column store, runs
# written past the budget, ties
# finished on the CPU) and gpu_sort() -- by statement_timeout,
# pg_cancel_backend and pg_terminate_backend.  A test-only module
# (test/test_modules/gpusort_phase_wait.c) stops the sort at the start of
# the phase aimed at until the cancel has reached the backend, or fires the
# statement timeout there, so that every phase is hit on every run whatever
# the machine's load.  Each cancel must take effect within 0.2 s; the
# session that was cancelled holds no more memory than before (memory
# contexts; device memory on a GPU host) and its next query sorts with
# GpuSort again (on the GPU where there is one).
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use GpuSortTest;

my $lib = $ENV{GPUSORT_PHASE_LIB}
  or plan skip_all => 'GPUSORT_PHASE_LIB not set (test/tap.sh sets it)';
my $rows = $ENV{GPUSORT_TAP_CANCEL_ROWS} // 2000000;
my $elements = $ENV{GPUSORT_TAP_ARRAY_ELEMENTS} // 20000000;
my $max_lag = 0.2;

# a budget that holds the rows: this test is about cancelling GpuSort itself
my $node = GpuSortTest::new_node('cancel', qq{
max_parallel_workers_per_gather = 0
gpusort.gpu_min_elements = 0
gpusort.max_memory = '32GB'
});
my $gpu = GpuSortTest::has_gpu($node);
note(($gpu ? 'GPU present' : 'no GPU: the CPU path') . ", $rows rows, arrays of $elements");

# (array_agg stops short of PostgreSQL's 134,217,727 elements: two halves)
my $half = int($elements / 2);
$node->safe_psql('postgres', qq{
CREATE TABLE t AS
SELECT i AS id, hashint4(i) % 100000 AS k,
       timestamptz '2020-01-01' + (hashint4(i + 1) % 10000000) * interval '1 second' AS ts,
       md5(i::text) || md5((i + 1)::text) AS pad
FROM generate_series(1, $rows) i;
VACUUM ANALYZE t;
CREATE TABLE arr (a int4[], b text[]);
-- stored out of line uncompressed: read from TOAST a slice at a time
ALTER TABLE arr ALTER a SET STORAGE EXTERNAL, ALTER b SET STORAGE EXTERNAL;
INSERT INTO arr
SELECT (SELECT array_agg(hashint4(i)) FROM generate_series(1, $half) i) ||
       (SELECT array_agg(hashint4(-i)) FROM generate_series(1, $elements - $half) i),
       (SELECT array_agg(md5(i::text)) FROM generate_series(1, $rows) i);
CREATE FUNCTION gpusort_phase_wait(text) RETURNS void AS '$lib' LANGUAGE C STRICT;
CREATE FUNCTION gpusort_phase_timeout(text, int) RETURNS void AS '$lib' LANGUAGE C STRICT;
CREATE FUNCTION gpusort_phase_lag() RETURNS float8 AS '$lib' LANGUAGE C STRICT;
CREATE FUNCTION gpusort_phase_seen() RETURNS text AS '$lib' LANGUAGE C STRICT;
});

my $count = 'SELECT count(*) FROM';
my $parallel = 'SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; '
  . 'SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;';
# [ name, settings, query, the phases it must pass on either path ]
my @sorts = (
	[ 'GpuSort, a tuple store', '',
	  "$count (SELECT * FROM t ORDER BY ts DESC, id OFFSET 0) s",
	  [qw(fill sort emit free)] ],
	[ 'GpuSort, a column store', '',
	  "$count (SELECT id, k, ts FROM t ORDER BY k, id OFFSET 0) s",
	  [qw(fill sort emit free)] ],
	[ 'GpuSort, text keys finished', '',
	  "$count (SELECT * FROM t ORDER BY pad COLLATE \"C\" OFFSET 0) s",
	  [qw(fill sort finish emit free)] ],
	[ 'GpuSort, runs past the budget', 'SET gpusort.work_mem = 64;',
	  "$count (SELECT * FROM t ORDER BY ts DESC, id OFFSET 0) s",
	  [qw(fill run sort merge emit free)] ],
	[ 'GpuSort, rows filled by workers', $parallel,
	  "$count (SELECT id, k, ts FROM t ORDER BY k DESC, id OFFSET 0) s",
	  [qw(fill sort emit free)] ],
	[ 'gpu_sort(int4[])', '',
	  'SELECT cardinality(gpu_sort(a)) FROM arr',
	  [qw(copy encode sort decode free)] ],
	[ 'gpu_sort(text[])', '',
	  'SELECT cardinality(gpu_sort(b COLLATE "C")) FROM arr',
	  [qw(copy encode sort finish decode)] ]);
my @gpu_phases = qw(to_device device_sort from_device);

# a session that stays open, to measure memory and its next query
my $session = $node->background_psql('postgres', on_error_stop => 0);
# the timeout is each query's, not the whole session's: the session lives
# through every phase of every sort, longer on a GPU (more phases)
$session->set_query_timer_restart();
my $mem_sql = 'SELECT sum(total_bytes) FROM pg_backend_memory_contexts';
$session->query_safe('SELECT gpusort_phase_seen()');	# installs the hook
$session->query_safe($sorts[0][2]);	# warm: the GPU opened, caches filled
my $mem_before = $session->query_safe($mem_sql);
my $gpu_before = $gpu ? GpuSortTest::gpu_memory_used_mb() : undef;

my @lags;
for my $s (@sorts)
{
	my ($name, $settings, $query, $must) = @$s;

	# the phases of one run, in order, with the ms each starts at
	$session->query_safe("RESET ALL; $settings");
	$session->query_safe('SELECT gpusort_phase_seen()');
	$session->query_safe($query);
	my @seen = map { [ split / / ] } split /\n/, $session->query_safe('SELECT gpusort_phase_seen()');
	my %at;
	$at{ $_->[0] } //= $_->[1] for @seen;
	my @phases = grep { defined $at{$_} } uniq(map { $_->[0] } @seen);
	note("$name: " . join(', ', map { sprintf('%s at %.0f ms', $_, $at{$_}) } @phases));
	for my $p (@$must, $gpu ? @gpu_phases : ())
	{
		ok(defined $at{$p}, "$name passes phase $p");
	}

	for my $i (0 .. $#phases)
	{
		my $phase = $phases[$i];
		my $what = "$name, $phase";
		# a cancel that comes at the very end may find the query done
		my $may_finish = $phase eq 'free';

		# statement_timeout as the phase starts, and halfway through it as the
		# last run went (not at the end: the executor's end comes after the
		# statement's last interrupt check, where a timeout is a test's artefact)
		my $next = $i < $#phases ? $at{ $phases[ $i + 1 ] } : undef;
		if (!$may_finish)
		{
			my ($lag, $stderr) = timeout_at($settings, $query, $phase, 0);
			ok(defined $lag, "$what: statement_timeout at its start reached it");
			like($stderr, qr/canceling statement due to statement timeout/,
				"$what: statement_timeout at its start cancels");
			push @lags, [ "$what, statement_timeout at its start", $lag ];
		}
		if (!$may_finish && defined $next && $next - $at{$phase} >= 20)
		{
			my $delay = int(($next - $at{$phase}) / 2);
			my ($lag, $stderr) = timeout_at($settings, $query, $phase, $delay);
			# (where the run went faster the query may end before it)
			push @lags, [ "$what, statement_timeout at ${delay} ms", $lag ]
			  if $stderr =~ /statement timeout/;
		}

		# pg_cancel_backend and pg_terminate_backend, from another session
		for my $how ('pg_cancel_backend', 'pg_terminate_backend')
		{
			my ($lag, $stderr) = signal_at($settings, $query, $phase, $how);
			like($stderr,
				$how eq 'pg_cancel_backend' ? qr/canceling statement due to user request/
				: qr/terminating connection due to administrator command|server closed the connection/,
				"$what: $how ends the query") unless $may_finish;
			push @lags, [ "$what, $how", $lag ];
		}
	}
}

sub uniq
{
	my %seen;
	return grep { !$seen{$_}++ } @_;
}

# Run $query in the open session with the statement timeout set to fire
# $delay ms after $phase starts; the seconds from when it was due to the
# query's end (an upper bound: the next command's round trip is in it), or
# undef if the phase was never reached, and the query's stderr.
sub timeout_at
{
	my ($settings, $sql, $phase, $delay) = @_;
	$session->query_safe("RESET ALL; $settings");
	$session->query_safe("SELECT gpusort_phase_timeout('$phase', $delay)");
	$session->query($sql);
	my $stderr = $session->{stderr};
	$session->{stderr} = '';	# BackgroundPsql keeps it otherwise
	my $lag;
	for my $try (1 .. 2)
	{
		$lag = $session->query('SELECT gpusort_phase_lag()');
		my $err = $session->{stderr};
		$session->{stderr} = '';
		last if $err eq '';
		# a timeout that fired after the query's last interrupt check (its
		# run went faster than the last) is taken by the next command
		die "gpusort_phase_lag(): $err" unless $try == 1 && $err =~ /statement timeout/;
	}
	return (!defined $lag || $lag eq '' ? undef : $lag, $stderr);
}

# Run $query in a new session that waits at the start of $phase until a
# signal comes, send it $how (pg_cancel_backend or pg_terminate_backend)
# from another session once it waits there, and return the seconds from
# the signal to the session's end (99 if the phase was never reached) and
# its stderr.
sub signal_at
{
	my ($settings, $sql, $phase, $how) = @_;
	my ($stdout, $stderr) = ('', '');
	my $canceller = $node->background_psql('postgres');
	my @psql = ('psql', '-X', '-d', $node->connstr('postgres'));
	push @psql, '-c', $settings if $settings ne '';
	push @psql, '-c', "SELECT gpusort_phase_wait('$phase')", '-c', $sql;
	my $h = IPC::Run::start(\@psql, '>', \$stdout, '2>', \$stderr);
	my $t0 = time();
	my $pid = '';
	while ($pid eq '')
	{
		$pid = $canceller->query_safe(
			"SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Extension' "
			  . "AND wait_event = 'Extension' AND query = \$q\$$sql\$q\$");
		next if $pid ne '';
		if (time() - $t0 > 120 || !$h->pumpable)
		{
			$h->finish;
			$canceller->quit;
			return (99, "phase $phase never reached: $stderr");
		}
		usleep(10000);	# polls a state; the test's verdict waits on no time
	}
	my $sent = time();
	my $signalled = $canceller->query_safe("SELECT $how($pid)");
	$h->finish;
	my $lag = time() - $sent;
	$canceller->quit;
	return ($signalled eq 't' ? $lag : 99, $stderr);
}

for my $l (@lags)
{
	my $lag = $l->[1] // 99;
	note(sprintf('%-70s %.3f s', $l->[0], $lag));
	cmp_ok($lag, '<', $max_lag, "$l->[0]: within $max_lag s");
}

# no memory left behind by the cancelled sorts, and the next query sorts as before
$session->query_safe('RESET ALL');
my $mem_after = $session->query_safe($mem_sql);
note("backend memory contexts: $mem_before bytes before the cancels, $mem_after after");
cmp_ok($mem_after, '<=', $mem_before + 1024 * 1024, 'no host memory left behind');
my $next = $session->query_safe(
	"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, FORMAT JSON) $sorts[0][2]");
like($next, qr/"Algorithm": "radix"|"Algorithm": "quicksort"|"Algorithm": "bitonic"/,
	'the next query in the session sorts with GpuSort');
like($next, $gpu ? qr/"On GPU": true/ : qr/"On GPU": false/,
	$gpu ? 'on the GPU' : 'on the CPU path (no GPU)');
SKIP:
{
	skip 'no GPU (nvidia-smi)', 1 unless defined $gpu_before;
	# a terminated backend answers its client before it exits and the driver
	# frees its CUDA context: wait for the memory to come back, up to the
	# suite's default timeout, and fail only then
	my $gpu_after = GpuSortTest::gpu_memory_used_mb();
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while ($gpu_after > $gpu_before + 64 && time() < $deadline)
	{
		usleep(200000);
		$gpu_after = GpuSortTest::gpu_memory_used_mb();
	}
	note("device memory used: $gpu_before MB before the cancels, $gpu_after MB after");
	cmp_ok($gpu_after, '<=', $gpu_before + 64, 'no device memory left behind');
}
$session->quit;
# the runs' temporary files went with every query cancelled, timed out or
# terminated
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_ls_tmpdir()'), '0',
	'no temporary files left');
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC|TRAP/, 'no crash in the log');
$node->stop;
done_testing();
