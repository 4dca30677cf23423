#!/usr/bin/env bash
# bench/gpu_service.sh -- the GPU service against the per-backend path and
# native PostgreSQL, in one run on one scratch cluster with gpusort in
# shared_preload_libraries:
#   - a fresh connection's ORDER BY of a table of ROWS rows (psql -c per
#     run: every run a new backend), median of RUNS wall times;
#   - the same in one session per setting after a first, untimed run (the
#     per-backend path's GPU already open), median of RUNS;
#   - pgbench, CLIENTS (space-separated counts) clients each running that
#     ORDER BY, its rows counted inside the server (not sent), for
#     SECONDS_EACH seconds each: transactions per
#     second, failed transactions, and the highest GPU memory sampled.
# The three settings: native (gpusort.enabled off), per-backend
# (gpusort.service off) and service (gpusort.service on), through
# PGOPTIONS, interleaved run by run.
#   - PAIR_ROWS=N (default 0: skipped): two sessions at once each sorting a
#     table of N rows through the service, with the server seeing one GPU
#     (CUDA_VISIBLE_DEVICES=0, the server restarted) and then every GPU:
#     wall time of the pair, median of RUNS, and the ratio.
#
#   ROWS=1000000 RUNS=5 CLIENTS="16 64" SECONDS_EACH=15 bash bench/gpu_service.sh
#
# CLIENTS="" skips pgbench.
#
# Writes bench/results/gpu_service-ROWS.md (or $OUT).
set -euo pipefail
cd "$(dirname "$0")/.."
bash test/setup.sh >/dev/null
source test/env.sh
source test/scratch_cluster.sh

ROWS=${ROWS:-1000000}
RUNS=${RUNS:-5}
CLIENTS=${CLIENTS-16 64}
SECS=${SECONDS_EACH:-15}
PAIR_ROWS=${PAIR_ROWS:-0}
bindir=$("$PG_CONFIG" --bindir)
CLUSTER_OPTS="-c shared_preload_libraries=gpusort -c max_connections=200 -c shared_buffers=2GB" cluster_start >/dev/null
psql() { "$bindir/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

psql -c "CREATE EXTENSION gpusort" -c "CREATE TABLE s AS SELECT i AS id,
	hashint4(i) AS k, (hashint4(i + 7) % 100000) / 7.0::float8 AS f
	FROM generate_series(1, $ROWS) i" -c "ANALYZE s"
query="SELECT id, k FROM s ORDER BY k, id"
# the rows sorted and read in the server, only a count sent back
counted="SELECT count(*) FROM (SELECT id, k FROM s ORDER BY k, id OFFSET 0) x WHERE id >= 0"
declare -A opts=([native]="-c gpusort.enabled=off" [per-backend]="-c gpusort.service=off"
	[service]="-c gpusort.service=on")
modes=(native per-backend service)

# the service's GPUs must be open before the first timed run
for _ in $(seq 1 300); do
	[ "$(psql -At -c "SELECT count(*) FROM gpusort_stat WHERE service_pid IS NOT NULL")" != 0 ] && break
	sleep 0.1
done
devices=$(psql -At -c "SELECT string_agg(device || ': ' || name, '; ') FROM gpusort_stat WHERE device IS NOT NULL")

raw=$(mktemp)
smi=$(mktemp)
trap 'rm -f "$raw" "$raw.sql" "$smi"; cluster_stop' EXIT
for r in $(seq 1 "$RUNS"); do
	for m in "${modes[@]}"; do
		t0=$(date +%s%N)
		PGOPTIONS="${opts[$m]}" psql -c "COPY ($query) TO '/dev/null'" >/dev/null
		t1=$(date +%s%N)
		echo "fresh|$m|$(((t1 - t0) / 1000000))" >>"$raw"
	done
done

# one session per setting: a first run, then RUNS timed ones
for m in "${modes[@]}"; do
	{
		echo "COPY ($query) TO '/dev/null';"
		echo '\timing on'
		for _ in $(seq 1 "$RUNS"); do echo "COPY ($query) TO '/dev/null';"; done
	} | PGOPTIONS="${opts[$m]}" psql | sed -nE 's/^Time: ([0-9.]+) ms.*/\1/p' |
		while read -r t; do echo "warm|$m|${t%.*}" >>"$raw"; done
done

echo "$counted;" >"$raw.sql"
# peak_mem OUTFILE COMMAND...: runs it (output to OUTFILE), prints the highest GPU memory (MiB per GPU)
peak_mem() {
	local log=$1
	shift
	command -v nvidia-smi >/dev/null || { "$@" >"$log" 2>&1 || true; echo "-"; return; }
	: >"$smi"
	(while :; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | paste -sd';' >>"$smi"; sleep 0.2; done) &
	local s=$!
	"$@" >"$log" 2>&1 || true
	kill "$s"; wait "$s" 2>/dev/null || true
	python3 -c "
rows = [list(map(int, l.split(';'))) for l in open('$smi') if l.strip() and all(c.strip().isdigit() for c in l.split(';'))]
print(';'.join(str(max(c)) for c in zip(*rows)) if rows else '-')"
}
for c in $CLIENTS; do
	for m in "${modes[@]}"; do
		out=$(mktemp)
		mem=$(peak_mem "$out" env PGOPTIONS="${opts[$m]}" "$bindir/pgbench" -n -f "$raw.sql" \
			-c "$c" -j "$c" -T "$SECS" postgres)
		tps=$(sed -nE 's/^tps = ([0-9.]+).*/\1/p' "$out" | head -1)
		failed=$(sed -nE 's/^number of failed transactions: ([0-9]+).*/\1/p' "$out")
		done_tx=$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' "$out")
		echo "bench|$m|$c|${tps:-0}|${failed:-?}|${done_tx:-0}|$mem" >>"$raw"
		rm -f "$out"
	done
done
stat=$(psql -c "SELECT * FROM gpusort_stat")

# two large sorts at once, through the service on one GPU and on all
if [ "$PAIR_ROWS" -gt 0 ]; then
	psql -c "CREATE TABLE p AS SELECT i AS id, hashint4(i) AS k FROM generate_series(1, $PAIR_ROWS) i" \
		-c "ANALYZE p"
	pair="COPY (SELECT id, k FROM p ORDER BY k, id) TO '/dev/null'"
	restart_with() {
		env ${1:+CUDA_VISIBLE_DEVICES=$1} "${CLUSTER_RUN[@]}" "$bindir/pg_ctl" -D "$CLUSTER_DIR/data" \
			-l "$CLUSTER_DIR/server.log" -w -m fast restart >/dev/null
		for _ in $(seq 1 300); do
			[ "$(psql -At -c "SELECT count(*) FROM gpusort_stat WHERE service_pid IS NOT NULL AND name <> '(not open)'")" != 0 ] && break
			sleep 0.1
		done
		psql -c "$pair" >/dev/null	# the table read into shared buffers
	}
	for gpus in 0 ""; do
		restart_with "$gpus"
		n=$(psql -At -c "SELECT count(*) FROM gpusort_stat WHERE device IS NOT NULL")
		for _ in $(seq 1 "$RUNS"); do
			t0=$(date +%s%N)
			psql -c "$pair" >/dev/null &
			a=$!
			psql -c "$pair" >/dev/null &
			b=$!
			wait "$a" "$b"
			t1=$(date +%s%N)
			echo "pair|$n|$(((t1 - t0) / 1000000))" >>"$raw"
		done
	done
	pair_stat=$(psql -c "SELECT device, name, jobs, rows FROM gpusort_stat")
fi

out=${OUT:-bench/results}
mkdir -p "$out"
file="$out/gpu_service-$ROWS.md"
{
	echo "# The GPU service against the per-backend path and native PostgreSQL, $ROWS rows — $(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader | paste -sd',' || echo 'no GPU'), $(nproc) CPU cores, $(date +%F)"
	echo
	echo "\`ROWS=$ROWS RUNS=$RUNS CLIENTS=\"$CLIENTS\" SECONDS_EACH=$SECS PAIR_ROWS=$PAIR_ROWS bash bench/gpu_service.sh\`, build ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)},"
	echo "PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}'), one cluster with \`shared_preload_libraries = 'gpusort'\`, shared_buffers 2GB, otherwise"
	echo "default settings; service devices: $devices. native: gpusort.enabled off; per-backend: gpusort.service off"
	echo "(each backend opens the GPU); service: gpusort.service on."
	echo
	python3 - "$raw" <<'PY'
import sys, statistics, collections
fresh = collections.defaultdict(list)
warm = collections.defaultdict(list)
pair = collections.defaultdict(list)
bench = []
for line in open(sys.argv[1]):
    f = line.rstrip('\n').split('|')
    if f[0] == 'fresh':
        fresh[f[1]].append(int(f[2]))
    elif f[0] == 'warm':
        warm[f[1]].append(int(f[2]))
    elif f[0] == 'pair':
        pair[int(f[1])].append(int(f[2]))
    else:
        bench.append(f[1:])
modes = ['native', 'per-backend', 'service']
print("A new connection's `COPY (SELECT id, k FROM s ORDER BY k, id) TO '/dev/null'`, wall ms, median:")
print()
print("| native | per-backend | service | service × native | service × per-backend |")
print("|---:|---:|---:|---:|---:|")
m = {k: statistics.median(v) for k, v in fresh.items()}
print(f"| {m['native']:.0f} | {m['per-backend']:.0f} | {m['service']:.0f} | {m['native'] / m['service']:.2f} | {m['per-backend'] / m['service']:.2f} |")
if warm:
    w = {k: statistics.median(v) for k, v in warm.items()}
    print()
    print("The same in one session per setting, after a first untimed run (psql's `\\timing`), ms, median:")
    print()
    print("| native | per-backend | service | service × native | service × per-backend |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {w['native']:.0f} | {w['per-backend']:.0f} | {w['service']:.0f} | {w['native'] / w['service']:.2f} | {w['per-backend'] / w['service']:.2f} |")
if pair:
    print()
    print("Two sessions at once, each sorting the PAIR_ROWS-row table through the service, wall ms of the pair, median:")
    print()
    print("| GPUs the server sees | ms | × one GPU |")
    print("|---:|---:|---:|")
    one = statistics.median(pair[min(pair)])
    for n in sorted(pair):
        t = statistics.median(pair[n])
        print(f"| {n} | {t:.0f} | {one / t:.2f} |")
if bench:
    print()
    print("pgbench, each client one connection sorting every row and counting them:")
    print()
    print("| clients | setting | tps | failed | transactions | GPU MiB at most |")
    print("|---:|---|---:|---:|---:|---|")
for mode, c, tps, failed, done, mem in bench:
    print(f"| {c} | {mode} | {float(tps):.1f} | {failed} | {done} | {mem} |")
PY
	echo
	echo "gpusort_stat at the end:"
	echo
	echo '```'
	echo "$stat"
	echo '```'
	if [ -n "${pair_stat:-}" ]; then
		echo
		echo "gpusort_stat after the pairs on every GPU (the server was restarted for them):"
		echo
		echo '```'
		echo "$pair_stat"
		echo '```'
	fi
} | tee "$file"
echo "written: $file"
