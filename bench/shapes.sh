#!/usr/bin/env bash
# bench/shapes.sh -- the 24 query shapes of bench/shapes.sql at ROWS rows
# (default 1M), median of RUNS rounds (default 3): native Sort and GpuSort,
# each at default settings and tuned (work_mem 1GB, 8 workers per Gather).
# SHAPES=1,2,13 runs some of them.  MAX_MEMORY raises gpusort.max_memory
# (e.g. 16GB at 50M rows).  COMMIT names the commit measured where the
# checkout's git does not know it (a copy on a GPU host).  Writes markdown
# to bench/results/ (or $OUT).
#   ROWS=10000000 RUNS=1 bash bench/shapes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash test/setup.sh >/dev/null
source test/env.sh
source test/scratch_cluster.sh
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-3}
opts="-c shared_preload_libraries=gpusort -c max_wal_size=8GB -c max_worker_processes=24"
opts+=" -c max_parallel_workers=16 -c shared_buffers=4GB"
[ -n "${MAX_MEMORY:-}" ] && opts+=" -c gpusort.max_memory=$MAX_MEMORY"
CLUSTER_OPTS="$opts" cluster_start
psql=("$("$PG_CONFIG" --bindir)/psql" -X)
device=$("${psql[@]}" -At -c "CREATE EXTENSION IF NOT EXISTS gpusort" -c "SELECT coalesce((SELECT name FROM gpusort_devices() LIMIT 1), 'no GPU')" | tail -1)
out=${OUT:-bench/results}
mkdir -p "$out"
file="$out/shapes-${ROWS}.md"
{
	echo "# 24 query shapes, $ROWS rows — $device, $(nproc) CPU cores, $(date +%F), commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
	echo
	echo "\`ROWS=$ROWS RUNS=$RUNS bash bench/shapes.sh\`; PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}'),"
	echo "shared_buffers 4GB${MAX_MEMORY:+, gpusort.max_memory $MAX_MEMORY}. Execution time of EXPLAIN ANALYZE (TIMING OFF) for queries, wall time for COPY and CREATE TABLE AS; median of $RUNS rounds."
	echo "native / GpuSort: default settings (work_mem 4MB, 2 workers per Gather); tuned: work_mem 1GB, 8 workers per Gather."
	echo "x_native = native / GpuSort; x_tuned = native tuned / GpuSort tuned."
	echo
	"${psql[@]}" -v rows="$ROWS" -v runs="$RUNS" -v shapes="${SHAPES:-all}" --pset=format=aligned -f bench/shapes.sql
} 2>&1 | tee "$file"
echo "written: $file"
