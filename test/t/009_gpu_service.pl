# The GPU service (src/service_worker.c, src/service_client.c) with two
# emulated devices (test/test_modules/gpusort_service_emulation.c): its
# workers start with the server, sorts go through its queue and give the
# native Sort's rows, both devices take jobs, and every fault the service
# can meet ends in the right rows through the CPU path: a backend cancelled
# or terminated while its job runs, the service terminated mid-job (and
# restarted by the postmaster), a failed job, a job no device takes within
# gpusort.service_queue_wait.  Each state is reached through the module's
# hold file (a job taken by a device waits while it exists), never by
# sleeping.  No GPU needed.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GpuSortTest;

my $lib = $ENV{GPUSORT_SERVICE_LIB}
  or plan skip_all => 'GPUSORT_SERVICE_LIB not set (test/tap.sh sets it)';

my $node = PostgreSQL::Test::Cluster->new('gpu_service');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'gpusort,$lib'
gpusort.min_rows = 0
gpusort.cost_model = off
gpusort.gpu_min_elements = 0
max_parallel_workers_per_gather = 0
max_connections = 60
restart_after_crash = on
jit = off
log_min_messages = warning
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION gpusort;
CREATE TABLE t AS
SELECT i AS id, hashint4(i) % 1000 AS k, md5(i::text) AS s
FROM generate_series(1, 50000) i;
ANALYZE t;
});
my $hold = $node->data_dir . '/gpusort_service_hold';
my $fail = $node->data_dir . '/gpusort_service_fail';
my $sort = 'SELECT id, k FROM t ORDER BY k, s';
my $sum = "SELECT md5(string_agg(x::text, '|')) || ' ' || count(*) FROM ($sort) x";
my $native = $node->safe_psql('postgres', "SET gpusort.enabled = off; $sum");

sub stat_value
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', $sql);
}

# the service: two workers, one per emulated device, both ready
ok($node->poll_query_until('postgres',
		'SELECT count(*) FROM gpusort_stat WHERE service_pid IS NOT NULL', '2'),
	'a service worker per device');
is(stat_value(q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'gpusort service'}),
	'2', 'the workers show in pg_stat_activity');
is(stat_value(q{SELECT string_agg(device || ' ' || name, ', ' ORDER BY device) FROM gpusort_devices()}),
	'0 emulated GPU 0, 1 emulated GPU 1', 'gpusort_devices(): the service\'s GPUs (once they are open)');

# sorts through the service: the native rows, and EXPLAIN names it
is($node->safe_psql('postgres', $sum), $native, 'GpuSort through the service: the native rows');
my $plan = $node->safe_psql('postgres', "EXPLAIN (ANALYZE, COSTS OFF) $sort");
like($plan, qr/GPU: emulated GPU \d, algorithm: radix/, 'EXPLAIN: the service GPU');
like($plan, qr/GPU Service: GPU \d, queue wait [\d.]+ ms/, 'EXPLAIN ANALYZE: the queue wait');
is($node->safe_psql('postgres',
		q{SELECT gpu_sort(ARRAY[3, 1, NULL, 2]::int4[]), gpu_sort(ARRAY['b', 'a']::text[] COLLATE "C")}),
	'{1,2,3,NULL}|{a,b}', 'gpu_sort() through the service');
cmp_ok(stat_value('SELECT sum(jobs) FROM gpusort_stat WHERE device IS NOT NULL'), '>=', 3,
	'gpusort_stat counts the jobs');

# rows of fixed-length columns also put in order by the service's GPU
$node->safe_psql('postgres', q{
CREATE TABLE fixed AS
SELECT i AS id, hashint4(i) % 500 AS k, (hashint4(i + 3) % 1000) / 8.0::float8 AS f,
       CASE WHEN i % 7 = 0 THEN NULL ELSE i % 11 END AS maybe
FROM generate_series(1, 100000) i;
ANALYZE fixed;
});
my $fixed_sum = "SELECT md5(string_agg(x::text, '|')) || ' ' || count(*) FROM "
  . "(SELECT id, k, f, maybe FROM fixed ORDER BY k, f DESC, id) x";
my $permuted = $node->data_dir . '/gpusort_service_permuted';
unlink($permuted);
is($node->safe_psql('postgres', "SET gpusort.gpu_reorder_min_rows = 0; $fixed_sum"),
	$node->safe_psql('postgres', "SET gpusort.enabled = off; $fixed_sum"),
	'fixed-length rows put in order through the service: the native rows');
ok(-e $permuted, 'the service put the columns in order');
unlink($permuted);
my $bounded_sum = "SELECT md5(string_agg(x::text, '|')) || ' ' || count(*) FROM "
  . "(SELECT id, k, f, maybe FROM fixed ORDER BY k, f DESC, id LIMIT 70000) x";
is($node->safe_psql('postgres', "SET gpusort.gpu_reorder_min_rows = 0; $bounded_sum"),
	$node->safe_psql('postgres', "SET gpusort.enabled = off; $bounded_sum"),
	'and the first 70000 of them under a LIMIT (above the top-k heap)');
ok(-e $permuted, 'the service put those columns in order');
unlink($permuted);
$node->safe_psql('postgres', 'CREATE ROLE watcher LOGIN IN ROLE pg_read_all_stats; CREATE ROLE nobody LOGIN');
is($node->safe_psql('postgres', 'SELECT count(*) FROM gpusort_stat', extra_params => [ '-U', 'watcher' ]),
	'3', 'gpusort_stat: readable by pg_read_all_stats');
my ($denied_rc, $denied_out, $denied_err) =
  $node->psql('postgres', 'SELECT count(*) FROM gpusort_stat', extra_params => [ '-U', 'nobody' ]);
like($denied_err, qr/permission denied/, 'and by nobody else');

# A sort in a session of its own, in the background: (harness, stdout, stderr, pid).
sub start_sort
{
	my ($settings, $query) = @_;
	my ($out, $err) = ('', '');
	my @psql = ('psql', '-X', '-q', '-A', '-t', '-d', $node->connstr('postgres'),
		'-c', "SET application_name = 'bg_sort'; $settings", '-c', $query);
	my $h = IPC::Run::start(\@psql, '>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err };
}

# Wait until $n jobs are taken by the devices (held there).
sub wait_running
{
	my ($n) = @_;
	return $node->poll_query_until('postgres',
		'SELECT sum(running) FROM gpusort_stat WHERE device IS NOT NULL', $n);
}

# Create an empty file (the emulation's hold and fail files).
sub touch
{
	my ($path) = @_;
	open(my $fh, '>', $path) or die "$path: $!";
	close($fh);
}

# A sort started in the background whose job a device has taken and holds
# (until the hold file goes): its start_sort handle.
sub start_held_sort
{
	my ($what) = @_;
	touch($hold);
	my $x = start_sort('', $sum);
	ok(wait_running(1), "$what: the job runs");
	return $x;
}

sub bg_pid
{
	return $node->safe_psql('postgres',
		q{SELECT pid FROM pg_stat_activity WHERE application_name = 'bg_sort' AND state = 'active'});
}

# many sessions at once through the queue: every checksum equal (a failed
# check divides by zero), no failed transaction, no WARNING
$node->safe_psql('postgres', "CREATE TABLE expected AS SELECT '$native'::text AS sum");
$node->pgbench(
	'--no-vacuum --client=12 --jobs=4 --transactions=40',
	0,
	[ qr{number of failed transactions: 0 \(0\.000%\)}, qr{processed: 480/480} ],
	[ qr{^$} ],
	'12 clients through the service: the native rows every time',
	{ '009_gpu_service_sum' =>
		  "SELECT 1 / ((($sum) = (SELECT sum FROM expected))::int);\n" });

# both devices take jobs: two sorts held at once, one on each
{
	touch($hold);
	my @s = (start_sort('', $sum), start_sort('', $sum));
	ok(wait_running(2), 'two jobs running at once');
	is(stat_value('SELECT count(*) FROM gpusort_stat WHERE running = 1'), '2',
		'one on each device');

	# a third finds both devices busy: after gpusort.service_queue_wait it takes the CPU path
	my $third = $node->safe_psql('postgres', qq{
SET gpusort.service_queue_wait = '50ms';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $sort});
	like($third, qr/Device Reason: no GPU of the service took the job within gpusort.service_queue_wait/,
		'a job no device takes in time: CPU path');
	unlink($hold);
	for my $x (@s)
	{
		$x->{h}->finish;
		is(${ $x->{out} }, "$native\n", 'the held sorts: the native rows');
	}
}

# a backend cancelled while its job runs returns at once; the slot is freed after
{
	my $x = start_held_sort('cancel');
	my $pid = bg_pid();
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	$x->{h}->finish;
	like(${ $x->{err} }, qr/canceling statement due to user request/,
		'cancelled while its job runs (held): the session returns');
	is(stat_value('SELECT sum(running) FROM gpusort_stat WHERE device IS NOT NULL'), '1',
		'the abandoned job still holds its device');
	unlink($hold);
	ok(wait_running(0), 'the service frees the abandoned job');
}

# a backend terminated while its job runs: no slot left behind
{
	my $x = start_held_sort('terminate');
	my $pid = bg_pid();
	$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
	$x->{h}->finish;
	unlink($hold);
	ok(wait_running(0), 'the job of a terminated backend is freed');
	is(stat_value('SELECT sum(queued) FROM gpusort_stat WHERE device IS NOT NULL'), '0',
		'nothing queued');
}

# a failed job: one WARNING, the native rows through the CPU path
{
	touch($fail);
	my ($ret, $out, $err) = $node->psql('postgres', $sum);
	my ($fret, $fout, $ferr) = $node->psql('postgres', "SET gpusort.gpu_reorder_min_rows = 0; $fixed_sum");
	unlink($fail);
	is($fout, $node->safe_psql('postgres', "SET gpusort.enabled = off; $fixed_sum"),
		'a failed job with columns to put in order: the native rows');
	is($out, $native, 'a failed job: the native rows');
	like($err, qr/WARNING:  gpusort: the GPU service failed a sort of \d+ rows, using the CPU path/,
		'a failed job: a WARNING');
	cmp_ok(stat_value('SELECT sum(failures) FROM gpusort_stat WHERE device IS NOT NULL'), '>=', 1,
		'gpusort_stat counts the failure');
	cmp_ok(stat_value(q{SELECT jobs FROM gpusort_stat WHERE name = 'CPU path'}), '>=', 2,
		'and the jobs that took the CPU path');
}

# the service terminated while a job runs: that sort and the next ones give
# the native rows on the CPU path, and the postmaster starts the service again
{
	my $old = stat_value(
		q{SELECT string_agg(service_pid::text, ' ' ORDER BY device) FROM gpusort_stat WHERE device IS NOT NULL});
	my $x = start_held_sort('service stop');
	$node->safe_psql('postgres',
		q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'gpusort service'});
	$x->{h}->finish;
	unlink($hold);
	is(${ $x->{out} }, "$native\n", 'the sort whose service stopped: the native rows');
	like(${ $x->{err} }, qr/WARNING:  gpusort: the GPU service failed a sort/,
		'and one WARNING');

	# while it is down (until every worker is back), sorts take the CPU path
	my ($ret, $out, $err) = $node->psql('postgres', $sum);
	is($out, $native, 'a sort while the service restarts: the native rows');

	ok($node->poll_query_until('postgres',
			q{SELECT count(*) FROM gpusort_stat WHERE service_pid IS NOT NULL AND restarts >= 1}, '2'),
		'the postmaster starts the service again');
	isnt(stat_value(
			q{SELECT string_agg(service_pid::text, ' ' ORDER BY device) FROM gpusort_stat WHERE device IS NOT NULL}),
		$old, 'new worker processes');
	like($node->safe_psql('postgres', "EXPLAIN (ANALYZE, COSTS OFF) $sort"),
		qr/GPU Service: GPU \d/, 'sorts go through the service again');
}

# a worker that crashes (SIGKILL): the postmaster resets the server, as for
# any process attached to shared memory, and the service comes back with it
{
	my $pids = stat_value('SELECT string_agg(service_pid::text, \',\') FROM gpusort_stat');
	my ($pid) = stat_value('SELECT service_pid FROM gpusort_stat WHERE device = 1');
	kill 'KILL', $pid;
	ok($node->poll_query_until('postgres',
			"SELECT count(*) FROM gpusort_stat WHERE service_pid IS NOT NULL "
			  . "AND service_pid NOT IN ($pids)", '2'),
		'after a worker crash the server and both workers are back');
	is(stat_value(q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'gpusort service'}),
		'2', 'one worker per device, none twice');
	is($node->safe_psql('postgres', $sum), $native, 'and sorts through the service give the native rows');
}

# gpusort.service = off: the backend opens the GPU itself (or takes the CPU path)
my $own = $node->safe_psql('postgres', "SET gpusort.service = off; EXPLAIN (ANALYZE, COSTS OFF) $sort");
unlike($own, qr/GPU Service|emulated/, 'gpusort.service = off: not through the service');

$node->stop;
done_testing();
