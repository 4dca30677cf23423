#!/bin/bash
# bench/external_sizes.sh -- GpuSort against the native Sort from 1M rows to
# hundreds of millions, past the memory budget: time, the backend's peak
# memory and the temporary bytes written, for each size.
#
#   KIND=narrow SIZES="1000000 10000000 50000000 200000000" bash bench/external_sizes.sh
#   KIND=wide   SIZES="1000000 10000000 50000000 100000000" bash bench/external_sizes.sh
#
# narrow: a table n (i int4), `SELECT i FROM n ORDER BY i`;
# wide:   a table t (i int4, f float4, s int4, id int8, pad text: an md5),
#         `SELECT * FROM t ORDER BY f`.
# The table grows from one size to the next (rows appended, VACUUM ANALYZE).
# Each size runs, in a fresh backend each: native at default settings;
# native tuned (work_mem 1GB, 8 workers per Gather); GpuSort at default
# settings (the cost model on: it may keep the native Sort, the plan
# column says); GpuSort with gpusort.max_memory = 256MB.  A GpuSort run
# first opens the GPU with a small sort in the same backend.  One run each
# (RUNS to change).
#
# Figures: EXPLAIN ANALYZE (TIMING OFF) execution time; the backend's peak
# private memory (RssAnon of /proc/PID/status, sampled every 10 ms; its
# parallel workers are not counted) and peak shared memory touched
# (RssShmem: shared buffers, the workers' chunks); the database's
# temp_bytes written by the query (pg_stat_database, read once the
# backend has exited).  Writes $OUT/external_sizes-KIND.csv, .md and, with
# matplotlib, external_sizes-KIND.png.
set -euo pipefail
cd "$(dirname "$0")/.."
bash test/setup.sh >/dev/null
source test/env.sh
source test/scratch_cluster.sh
KIND=${KIND:-narrow}
RUNS=${RUNS:-1}
case $KIND in
narrow) SIZES=${SIZES:-"1000000 10000000 50000000 200000000"} ;;
wide) SIZES=${SIZES:-"1000000 10000000 50000000 100000000"} ;;
*) echo "KIND is narrow or wide" >&2; exit 2 ;;
esac
out=${OUT:-bench/results}
mkdir -p "$out"
CLUSTER_OPTS="-c shared_preload_libraries=gpusort -c shared_buffers=4GB -c max_wal_size=8GB -c temp_file_limit=-1" cluster_start
bindir=$("$PG_CONFIG" --bindir)
psql=("$bindir/psql" -X -v ON_ERROR_STOP=1)
"${psql[@]}" -q <<'SQL'
CREATE EXTENSION IF NOT EXISTS gpusort;
CREATE UNLOGGED TABLE warm AS SELECT g AS i FROM generate_series(1, 200000) g;
CREATE UNLOGGED TABLE n (i int4);
CREATE UNLOGGED TABLE t (i int4, f float4, s int4, id int8, pad text);
SQL
"${psql[@]}" -q -f bench/bench_run.sql
device=$("${psql[@]}" -At -c "SELECT coalesce((SELECT name FROM gpusort_devices() LIMIT 1), 'no GPU')")
commit=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}

python3 - "$KIND" "$RUNS" "$out" "$device" "$commit" "$(nproc)" $SIZES <<'PY'
import os, subprocess, sys, threading, time, statistics, datetime

kind, runs, out, device, commit, cores = sys.argv[1:7]
runs = int(runs)
sizes = [int(x) for x in sys.argv[7:]]
bindir = subprocess.check_output([os.environ['PG_CONFIG'], '--bindir'], text=True).strip()
psql = [bindir + '/psql', '-X', '-At', '-v', 'ON_ERROR_STOP=1']
if kind == 'narrow':
    table, query = 'n', 'SELECT i FROM n ORDER BY i'
    fill = ("INSERT INTO n SELECT (random() * 4294967295 - 2147483648)::int8::int4 "
            "FROM generate_series({lo}, {hi}) g")
else:
    table, query = 't', 'SELECT * FROM t ORDER BY f'
    fill = ("INSERT INTO t SELECT (random() * 4294967295 - 2147483648)::int8::int4, "
            "(random() * 2e6 - 1e6)::float4, (random() * 1000)::int4, g, md5(g::text) "
            "FROM generate_series({lo}, {hi}) g")
configs = [
    ('native', 'SET gpusort.enabled = off', False),
    ('native tuned', "SET gpusort.enabled = off; SET work_mem = '1GB'; "
     'SET max_parallel_workers_per_gather = 8', False),
    ('GpuSort', '', True),
    ('GpuSort 256MB', "SET gpusort.max_memory = '256MB'", True),
]

def sql(text):
    return subprocess.check_output(psql + ['-c', text], text=True).strip()

def grow(to, have):
    """Append rows have+1 .. to in 8 concurrent sessions."""
    per = (to - have + 7) // 8
    procs = []
    for p in range(8):
        lo = have + p * per + 1
        hi = min(have + (p + 1) * per, to)
        if lo <= hi:
            procs.append(subprocess.Popen(psql + ['-q', '-c', fill.format(lo=lo, hi=hi)]))
    for p in procs:
        if p.wait() != 0:
            sys.exit('fill failed')
    sql(f'VACUUM ANALYZE {table}')

def status_kb(pid, field):
    try:
        with open(f'/proc/{pid}/status') as f:
            for line in f:
                if line.startswith(field + ':'):
                    return int(line.split()[1])
    except OSError:
        return None
    return None

def temp_bytes():
    return int(sql('SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()'))

def measure(settings, warm):
    before = temp_bytes()
    p = subprocess.Popen(psql + ['-q'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    p.stdin.write('SELECT pg_backend_pid();\n')
    p.stdin.flush()
    pid = int(p.stdout.readline())
    if warm:
        # the GPU opened (and the library's first-use costs paid) before the measured sort
        p.stdin.write('SET gpusort.cost_model = off; SELECT count(*) FROM (SELECT i FROM warm ORDER BY i OFFSET 0) s; '
                      'RESET gpusort.cost_model;\n')
        p.stdin.flush()
        p.stdout.readline()
    peak = {'RssAnon': 0, 'RssShmem': 0}
    done = threading.Event()
    def sample():
        while not done.is_set():
            for k in peak:
                v = status_kb(pid, k)
                if v is not None and v > peak[k]:
                    peak[k] = v
            time.sleep(0.01)
    th = threading.Thread(target=sample)
    th.start()
    q = query.replace("'", "''")
    stdout, _ = p.communicate(f"{settings};\nSELECT bench_run('{q}');\n")
    done.set()
    th.join()
    if p.returncode != 0:
        sys.exit('query failed')
    # the backend's stats are flushed as it exits
    for _ in range(500):
        if not os.path.exists(f'/proc/{pid}'):
            break
        time.sleep(0.01)
    time.sleep(0.05)
    res = stdout.strip().splitlines()[-1].split('|')
    return res, peak['RssAnon'], peak['RssShmem'], temp_bytes() - before

csvf = os.path.join(out, f'external_sizes-{kind}.csv')
have = 0
rows = []
with open(csvf, 'w') as f:
    f.write('rows,config,ms,plan,runs,run_kb,fill_ms,write_ms,emit_ms,rss_anon_mb,rss_shmem_mb,temp_mb\n')
for size in sizes:
    t0 = time.time()
    grow(size, have)
    have = size
    print(f'{size} rows: table ready in {time.time() - t0:.0f} s', flush=True)
    for r in range(runs):
        for name, settings, warm in configs:
            res, anon, shmem, temp = measure(settings, warm)
            ms, plan, nruns, kb, fill_ms, write_ms, emit_ms = res
            row = [size, name, float(ms), plan, nruns, kb, fill_ms, write_ms, emit_ms,
                   anon / 1024, shmem / 1024, temp / 1048576]
            rows.append(row)
            with open(csvf, 'a') as f:
                f.write(','.join(str(x) for x in row) + '\n')
            print(f'{size} {name}: {float(ms):.0f} ms, {plan}, runs {nruns}, '
                  f'anon {anon / 1024:.0f} MB, shmem {shmem / 1024:.0f} MB, temp {temp / 1048576:.0f} MB',
                  flush=True)

# the table: medians of the times, the last run's other figures
md = os.path.join(out, f'external_sizes-{kind}.md')
names = [c[0] for c in configs]
with open(md, 'w') as f:
    f.write(f'# `{query}` from {sizes[0]:,} to {sizes[-1]:,} rows: GpuSort past its budget against native '
            f'-- {device}, {cores} CPU cores, {datetime.date.today()}, build {commit}\n\n')
    f.write(f'`KIND={kind} SIZES="{" ".join(map(str, sizes))}" RUNS={runs} bash bench/external_sizes.sh`; '
            'native at default settings (work_mem 4MB, 2 workers per Gather) and tuned (work_mem 1GB, '
            '8 workers); GpuSort at default settings (gpusort.max_memory 2GB, the cost model on) and at '
            'gpusort.max_memory = 256MB. Median of ' + str(runs) + ' EXPLAIN ANALYZE (TIMING OFF) '
            'execution times, each in a fresh backend (GpuSort runs open the GPU first with a small sort). '
            'anon / shmem: the leader backend\'s peak RssAnon / RssShmem (MB; workers not counted); '
            'temp: MB of temporary files the query wrote (pg_stat_database.temp_bytes).\n\n')
    f.write('| rows | run | ms | × native | × tuned | plan | runs | fill ms | write ms | emit ms '
            '| anon MB | shmem MB | temp MB |\n')
    f.write('|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n')
    for size in sizes:
        med = {n: statistics.median(r[2] for r in rows if r[0] == size and r[1] == n) for n in names}
        for n in names:
            last = [r for r in rows if r[0] == size and r[1] == n][-1]
            fmt = lambda x: '-' if x in ('-', '') else f'{float(x):.0f}'
            f.write(f'| {size:,} | {n} | {med[n]:.0f} | {med["native"] / med[n]:.2f} | '
                    f'{med["native tuned"] / med[n]:.2f} | {last[3]} | {last[4]} | {fmt(last[6])} | '
                    f'{fmt(last[7])} | {fmt(last[8])} | {last[9]:.0f} | {last[10]:.0f} | {last[11]:.0f} |\n')
    f.write('\nTime per row against the smallest size at or above 10M rows, for each run:\n\n')
    base = min((s for s in sizes if s >= 10000000), default=sizes[0])
    f.write('| run | ' + ' | '.join(f'{s:,}' for s in sizes) + ' |\n')
    f.write('|---|' + '---:|' * len(sizes) + '\n')
    for n in names:
        per = {s: statistics.median(r[2] for r in rows if r[0] == s and r[1] == n) / s for s in sizes}
        f.write(f'| {n} | ' + ' | '.join(f'{per[s] / per[base]:.2f}' for s in sizes) + ' |\n')
print(open(md).read())
try:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for n in names:
        ax.plot(sizes, [statistics.median(r[2] for r in rows if r[0] == s and r[1] == n) / 1000
                        for s in sizes], marker='o', label=n)
    ax.set_xscale('log')
    ax.set_yscale('log')
    ax.set_xlabel('rows')
    ax.set_ylabel('seconds (EXPLAIN ANALYZE)')
    ax.set_title(f'{query}\n{device}, build {commit}', fontsize=9)
    ax.grid(True, which='both', alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, f'external_sizes-{kind}.png'), dpi=110)
except ImportError:
    print('no matplotlib: no plot')
PY
