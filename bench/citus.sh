#!/usr/bin/env bash
# bench/citus.sh -- a distributed table in a Citus cluster on one host (a
# coordinator and two workers, test/citus_cluster.sh), with gpusort and
# without (gpusort.enabled off on every node), in one run.  On a host with
# two GPUs, CITUS_NODE_GPUS="0 0 1" gives each worker its own GPU (the
# coordinator shares the first); nvidia-smi's memory per GPU is sampled
# during each query to show which GPUs worked.
#
#   PG_VERSION=18 ROWS=20000000 RUNS=3 CITUS_NODE_GPUS="0 0 1" bash bench/citus.sh
#
# Queries: ORDER BY without LIMIT (the coordinator sorts every row), ORDER BY
# ... LIMIT 1000 (the workers sort their shards, the coordinator merges), a
# window function partitioned by the distribution column (on the workers),
# a sorted GROUP BY of another column.  Rows go to the client as COPY TO
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
trap 'kill $(jobs -p) 2>/dev/null; bash test/citus_cluster.sh stop "$dir"; rm -f "$samples"' EXIT
bash test/citus_cluster.sh start "$dir" shared_buffers=4GB max_parallel_workers=16 \
	gpusort.max_memory=16GB citus.max_adaptive_executor_pool_size=32 >/dev/null
psql() { "$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -U postgres -d postgres "$@"; }

# the table, filled in 8 slices side by side
psql -p 5432 -c "CREATE UNLOGGED TABLE events (id bigint, tenant int, i int4, f float4, pad text)" \
	-c "SELECT create_distributed_table('events', 'tenant')" >/dev/null
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

queries=("SELECT id, i FROM events ORDER BY i, id"
	"SELECT id, i, f, pad FROM events ORDER BY f, id LIMIT 1000"
	"SELECT tenant, id, row_number() OVER (PARTITION BY tenant ORDER BY i, id) FROM events"
	"SELECT i % 100000 AS g, count(*), sum(f) FROM events GROUP BY 1 ORDER BY 1")

set_gpusort() { bash test/citus_cluster.sh set "$dir" gpusort.enabled "$1" </dev/null; }

# device memory per GPU (MiB, ';'-separated) at its highest while the command runs
smi_peak() {
	command -v nvidia-smi >/dev/null || { "$@"; echo "-" >"$samples.peak"; return; }
	: >"$samples"
	(while :; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | paste -sd';' >>"$samples"; sleep 0.1; done) &
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
}

run_one() {
	# COPY of the query's rows to /dev/null on the coordinator: wall ms
	local q=$1 t0 t1
	t0=$(date +%s%N)
	psql -p 5432 -c "COPY ($q) TO '/dev/null'" </dev/null >/dev/null
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

raw=$(mktemp)
idle=$(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | paste -sd';' || echo -)
for r in $(seq 1 "$RUNS"); do
	for qi in "${!queries[@]}"; do
		for mode in on off; do
			set_gpusort "$mode"
			smi_peak run_one "${queries[$qi]}" >"$samples.ms"
			echo "$qi|$mode|$(cat "$samples.ms")|$(cat "$samples.peak")" >>"$raw"
		done
	done
done
set_gpusort on
plans=$(for q in "${queries[@]}"; do
	echo "-- $q"
	psql -p 5432 -c "EXPLAIN (COSTS OFF) $q" | grep -E 'GpuSort|Sort|Citus Adaptive|WindowAgg|Aggregate|Limit' || true
done)

out=${OUT:-bench/results}
mkdir -p "$out"
file="$out/citus-$ROWS.md"
{
	echo "# gpusort in a Citus cluster, $ROWS rows ($size) — $(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader | paste -sd',' || echo 'no GPU'), $(nproc) CPU cores, $(date +%F)"
	echo
	echo "\`PG_VERSION=$PG_VERSION ROWS=$ROWS RUNS=$RUNS CITUS_NODE_GPUS=\"${CITUS_NODE_GPUS:-}\" bash bench/citus.sh\`, build ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)};"
	echo "PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}'), $(cat "$("$PG_CONFIG" --bindir)/../CITUS-BUILD-INFO" | cut -d' ' -f1); a coordinator and two workers on one host,"
	echo "32 shards; default settings but shared_buffers 4GB, gpusort.max_memory 16GB on every node. Wall time of COPY (query) TO '/dev/null'"
	echo "on the coordinator, median of $RUNS; with gpusort and without (gpusort.enabled off on every node), interleaved."
	echo "GPU memory: the highest MiB per GPU sampled during the query (idle: $idle)."
	echo
	python3 - "$raw" "${queries[@]}" <<'PY'
import sys, statistics, collections
raw, queries = sys.argv[1], sys.argv[2:]
ms = collections.defaultdict(list)
mem = {}
for line in open(raw):
    qi, mode, t, peak = line.rstrip('\n').split('|')
    ms[(int(qi), mode)].append(int(t))
    mem[(int(qi), mode)] = peak
print("| query | Citus | Citus + gpusort | × | GPU MiB without | GPU MiB with |")
print("|---|---:|---:|---:|---|---|")
for qi, q in enumerate(queries):
    off = statistics.median(ms[(qi, 'off')])
    on = statistics.median(ms[(qi, 'on')])
    print(f"| `{q}` | {off:.0f} | {on:.0f} | {off / on:.2f} | {mem[(qi, 'off')]} | {mem[(qi, 'on')]} |")
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
