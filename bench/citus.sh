#!/usr/bin/env bash
# bench/citus.sh -- a distributed table in a Citus cluster on one host (a
# coordinator and two workers, test/citus_cluster.sh), with gpusort and
# without (gpusort.enabled off on every node), in one run.  On a host with
# two GPUs, CITUS_NODE_GPUS="0 0 1" gives each worker its own GPU (the
# coordinator shares the first); nvidia-smi's memory per GPU is sampled
# during each query to show which GPUs worked, and each GPU process is traced
# to the node whose postmaster started it.
#
#   PG_VERSION=18 ROWS=20000000 RUNS=3 CITUS_NODE_GPUS="0 0 1" bash bench/citus.sh
#
# QUERIES="0 1" runs only those queries (0-based, in the order below).
# Worker connections are not cached (citus.max_cached_conns_per_worker 0),
# so that a backend's GPU memory is gone before the next run, and each run
# waits until every GPU is back at its idle memory.
#
# Queries: ORDER BY without LIMIT (the coordinator sorts every row), ORDER BY
# ... LIMIT 1000 (the workers sort their shards, the coordinator merges), a
# window function partitioned by the distribution column (on the workers),
# a GROUP BY of another column with its groups in order, and the first
# query's rows without ORDER BY (no sort anywhere: what fetching the rows to
# the coordinator and sending them on costs).  Rows go to the client as COPY TO
# /dev/null on the coordinator (ORDER BY ... of every row: no SPI
# buffering); wall time, median of RUNS (default 3), the two settings
# interleaved round by round.  Writes bench/results/citus-ROWS.md (or $OUT).
set -euo pipefail
cd "$(dirname "$0")/.."
PG_VERSION=${PG_VERSION:-18}
export PG_VERSION
bash test/setup.sh >/dev/null
source test/env.sh
bash test/citus_build.sh

ROWS=${ROWS:-20000000}
RUNS=${RUNS:-3}
bindir=$("$PG_CONFIG" --bindir)
dir=$(mktemp -u /tmp/gpusort-citus-bench.XXXXXX)
samples=$(mktemp /tmp/gpusort-citus-smi.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; bash test/citus_cluster.sh stop "$dir"; rm -f "$samples" "$samples".*' EXIT
bash test/citus_cluster.sh start "$dir" shared_buffers=4GB max_parallel_workers=16 \
	gpusort.max_memory=16GB citus.max_adaptive_executor_pool_size=32 \
	citus.max_cached_conns_per_worker=0 >/dev/null
psql() { "$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -U postgres -d postgres "$@"; }

# the table, filled in 8 slices side by side
psql -p 5432 -c "CREATE UNLOGGED TABLE events (id bigint, tenant int, i int4, f float4, pad text)" \
	-c "SELECT create_distributed_table('events', 'tenant')" >/dev/null
load_start=$(date +%s)
per=$(((ROWS + 7) / 8))
pids=()
for p in 0 1 2 3 4 5 6 7; do
	lo=$((p * per + 1)) hi=$(((p + 1) * per))
	[ "$hi" -le "$ROWS" ] || hi=$ROWS
	psql -p 5432 -c "INSERT INTO events SELECT g, (hashint8(g) % 1000)::int,
		(hashint8(g + 1) % 1000000000)::int4, (hashint8(g + 2) % 1000000)::float4 / 7,
		md5(g::text) FROM generate_series($lo, $hi) g" &
	pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
psql -p 5432 -c "VACUUM ANALYZE events" >/dev/null
size=$(psql -p 5432 -At -c "SELECT pg_size_pretty(citus_table_size('events'))")
echo "citus bench: $ROWS rows ($size) loaded in $(($(date +%s) - load_start)) s" >&2

queries=("SELECT id, i FROM events ORDER BY i, id"
	"SELECT id, i, f, pad FROM events ORDER BY f, id LIMIT 1000"
	"SELECT tenant, id, row_number() OVER (PARTITION BY tenant ORDER BY i, id) FROM events"
	"SELECT i % 100000 AS g, count(*), sum(f) FROM events GROUP BY 1 ORDER BY 1"
	"SELECT id, i FROM events")

selected=${QUERIES:-${!queries[*]}}

set_gpusort() { bash test/citus_cluster.sh set "$dir" gpusort.enabled "$1" </dev/null; }

# the GPU processes' postmasters: pid -> node name
node_of() {
	local pid=$1 ppid n
	ppid=$(awk '/^PPid:/ {print $2}' "/proc/$pid/status" 2>/dev/null) || return 0
	for n in coordinator worker1 worker2; do
		[ "$(head -1 "$dir/$n/postmaster.pid" 2>/dev/null)" = "$ppid" ] && { echo "$n"; return; }
	done
}

# device memory per GPU (MiB, ';'-separated) at its highest while the command
# runs into $samples.peak; the nodes whose backends held memory on each GPU
# into $samples.nodes ("coordinator:0 worker2:1"; "-" if nvidia-smi shows
# no processes, as in some containers)
smi_peak() {
	command -v nvidia-smi >/dev/null || { "$@"; echo "-" >"$samples.peak"; echo "-" >"$samples.nodes"; return; }
	: >"$samples"
	: >"$samples.apps"
	(while :; do
		nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | paste -sd';' >>"$samples"
		nvidia-smi --query-compute-apps=gpu_bus_id,pid --format=csv,noheader >>"$samples.apps" 2>/dev/null
		sleep 0.1
	done) &
	local sampler=$!
	"$@"
	kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
	python3 -c "
rows = []
for l in open('$samples'):
    cells = l.strip().split(';')
    if cells and all(c.strip().isdigit() for c in cells):
        rows.append([int(c) for c in cells])
print(';'.join(str(max(c)) for c in zip(*rows)) if rows else '-')" >"$samples.peak"
	local bus pid n pairs=()
	while IFS=', ' read -r bus pid; do
		[[ "$pid" =~ ^[0-9]+$ ]] || continue
		n=$(node_of "$pid")
		[ -n "$n" ] && pairs+=("$n:${gpu_index[${bus,,}]:-?}")
	done < <(sort -u "$samples.apps")
	if [ ${#pairs[@]} -gt 0 ]; then printf '%s\n' "${pairs[@]}" | sort -u | paste -sd' ' >"$samples.nodes"
	elif [ -s "$samples.apps" ]; then echo "?" >"$samples.nodes"
	else echo "-" >"$samples.nodes"; fi
}

# wait (at most 30 s) until every GPU is back at its idle memory
settle() {
	command -v nvidia-smi >/dev/null || return 0
	local i now
	for i in $(seq 1 300); do
		now=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | paste -sd';')
		python3 -c "
import sys
now, idle = [list(map(int, a.split(';'))) for a in sys.argv[1:]]
sys.exit(0 if all(n <= i + 64 for n, i in zip(now, idle)) else 1)" "$now" "$idle" && return 0
		sleep 0.1
	done
}

run_one() {
	# COPY of the query's rows to /dev/null on the coordinator: wall ms
	local q=$1 t0 t1
	t0=$(date +%s%N)
	psql -p 5432 -c "COPY ($q) TO '/dev/null'" </dev/null >/dev/null
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

out=${OUT:-bench/results}
mkdir -p "$out"
# the runs' figures, kept until the table is written (a cut-off run leaves them)
raw=$out/.citus-$ROWS.raw
: >"$raw"
idle=$(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | paste -sd';' || echo -)
declare -A gpu_index=()
if command -v nvidia-smi >/dev/null; then
	while IFS=', ' read -r idx bus; do gpu_index[${bus,,}]=$idx; done \
		< <(nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader)
fi
for r in $(seq 1 "$RUNS"); do
	for qi in $selected; do
		for mode in on off; do
			set_gpusort "$mode"
			sync
			settle
			smi_peak run_one "${queries[$qi]}" >"$samples.ms"
			echo "$qi|$mode|$(cat "$samples.ms")|$(cat "$samples.peak")|$(cat "$samples.nodes")" >>"$raw"
		done
	done
done
set_gpusort on
plans=$(for qi in $selected; do
	q=${queries[$qi]}
	echo "-- $q"
	psql -p 5432 -c "EXPLAIN (COSTS OFF) $q" | grep -E 'GpuSort|Sort|Citus Adaptive|WindowAgg|Aggregate|Limit' || true
done)

file="$out/citus-$ROWS.md"
{
	echo "# gpusort in a Citus cluster, $ROWS rows ($size) — $(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader | paste -sd',' || echo 'no GPU'), $(nproc) CPU cores, $(date +%F)"
	echo
	echo "\`PG_VERSION=$PG_VERSION ROWS=$ROWS RUNS=$RUNS CITUS_NODE_GPUS=\"${CITUS_NODE_GPUS:-}\"${QUERIES:+ QUERIES=\"$QUERIES\"} bash bench/citus.sh\`, build ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)};"
	echo "PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}'), $(cat "$("$PG_CONFIG" --bindir)/../CITUS-BUILD-INFO" | cut -d' ' -f1); a coordinator and two workers on one host,"
	echo "32 shards; default settings but shared_buffers 4GB, gpusort.max_memory 16GB, no cached worker connections on every node. Wall time of COPY (query) TO '/dev/null'"
	echo "on the coordinator, median of $RUNS; with gpusort and without (gpusort.enabled off on every node), interleaved."
	echo "GPU memory: the highest MiB per GPU sampled during the query (idle: $idle); nodes: the nodes whose backends held GPU memory, as node:GPU."
	echo
	python3 - "$raw" "${queries[@]}" <<'PY'
import sys, statistics, collections
raw, queries = sys.argv[1], sys.argv[2:]
ms = collections.defaultdict(list)
mem = {}
used = {}
for line in open(raw):
    qi, mode, t, peak, nodes = line.rstrip('\n').split('|')
    ms[(int(qi), mode)].append(int(t))
    mem[(int(qi), mode)] = peak
    used[(int(qi), mode)] = nodes
print("| query | Citus | Citus + gpusort | × | GPU MiB without | GPU MiB with | nodes on GPUs with |")
print("|---|---:|---:|---:|---|---|---|")
for qi, q in enumerate(queries):
    if (qi, 'on') not in ms:
        continue
    off = statistics.median(ms[(qi, 'off')])
    on = statistics.median(ms[(qi, 'on')])
    print(f"| `{q}` | {off:.0f} | {on:.0f} | {off / on:.2f} | {mem[(qi, 'off')]} | {mem[(qi, 'on')]} | {used[(qi, 'on')]} |")
PY
	echo
	echo "Plans with gpusort (coordinator, then one task's):"
	echo
	echo '```'
	echo "$plans"
	echo '```'
} | tee "$file"
rm -f "$raw" "$samples.ms" "$samples.peak"
echo "written: $file"
