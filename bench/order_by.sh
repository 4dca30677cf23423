#!/usr/bin/env bash
# bench/order_by.sh -- GpuSort vs PostgreSQL's Sort on a scratch cluster:
# the ORDER BY queries of bench/order_by.sql at ROWS rows (default 10M),
# median of RUNS runs (default 3), and the small-input sweep of
# bench/min_rows.sql (MIN_ROWS_SWEEP=0 skips it).  EXTRA_CONFIGS=0 skips
# the GpuSort runs over a serial scan and without the column reorder.
# Writes markdown to bench/results/ (or $OUT).
#   ROWS=50000000 RUNS=1 EXTRA_CONFIGS=0 MIN_ROWS_SWEEP=0 bash bench/order_by.sh
# SQL=bench/gather_configs.sql runs that file instead (GpuSort over Gather
# in each configuration of its leader and workers, interleaved);
# SQL=bench/key_types.sql the text, numeric and uuid keys (QUERIES=1,2,...
# picks some of its queries).
set -euo pipefail
cd "$(dirname "$0")/.."
bash test/setup.sh >/dev/null
source test/env.sh
source test/scratch_cluster.sh
ROWS=${ROWS:-10000000}
RUNS=${RUNS:-3}
CLUSTER_OPTS="-c shared_preload_libraries=gpusort -c max_wal_size=8GB" cluster_start
psql=("$("$PG_CONFIG" --bindir)/psql" -X)
device=$("${psql[@]}" -At -c "CREATE EXTENSION IF NOT EXISTS gpusort" -c "SELECT coalesce((SELECT name FROM gpusort_devices() LIMIT 1), 'no GPU')" | tail -1)
out=${OUT:-bench/results}
mkdir -p "$out"
sql=${SQL:-bench/order_by.sql}
file="$out/$(basename "$sql" .sql)-${ROWS}.md"
{
	if [ "$sql" = bench/order_by.sql ]; then title="GpuSort vs native Sort"; else title="$sql"; fi
	echo "# $title, $ROWS rows — $device, $(nproc) CPU cores, $(date +%F)"
	echo
	echo "\`ROWS=$ROWS RUNS=$RUNS SQL=$sql bash bench/order_by.sh\`; PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}'), default settings"
	echo "(2 parallel workers, work_mem 4MB) unless stated; median of $RUNS EXPLAIN ANALYZE (TIMING OFF) runs."
	echo
	"${psql[@]}" -v rows="$ROWS" -v runs="$RUNS" -v extra="${EXTRA_CONFIGS:-1}" \
		-v queries="${QUERIES:-all}" --pset=format=aligned -f "$sql"
	if [ "${MIN_ROWS_SWEEP:-1}" = 1 ]; then
		echo
		"${psql[@]}" --pset=format=aligned -f bench/min_rows.sql
	fi
} 2>&1 | tee "$file"
echo "written: $file"
