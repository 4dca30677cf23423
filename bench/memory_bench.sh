#!/usr/bin/env bash
# bench/memory_bench.sh -- peak memory of GpuSort against the native Sort.
# Each query runs in a fresh session, natively (gpusort.enabled = off) and
# with GpuSort at default settings (gpusort.max_memory 2 GB): the backend's
# peak RSS (VmHWM, read by the backend itself), the peak of /dev/shm while it
# ran (parallel workers' shared memory; sampled every 20 ms), its execution
# time and how it sorted (EXPLAIN ANALYZE with TIMING OFF).
# ROWS rows (default 20M) of about 95 bytes.  Writes markdown to
# bench/results/memory-ROWS.md (or $OUT).
#   ROWS=20000000 bash bench/memory_bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash test/setup.sh >/dev/null
source test/env.sh
source test/scratch_cluster.sh
ROWS=${ROWS:-20000000}
CLUSTER_OPTS="-c shared_preload_libraries=gpusort -c max_wal_size=8GB" cluster_start
psql=("$("$PG_CONFIG" --bindir)/psql" -X -q -At)
"${psql[@]}" -c "CREATE EXTENSION gpusort" -c "
CREATE TABLE t AS
SELECT i AS id, hashint4(i) % 100000 AS k,
       timestamptz '2020-01-01' + (hashint4(i + 1) % 10000000) * interval '1 second' AS ts,
       md5(i::text) || md5((i + 1)::text) AS pad
FROM generate_series(1, $ROWS) i" -c "
CREATE TABLE u AS SELECT id, k FROM t WHERE id % 2 = 0" -c "
CREATE TABLE t100k AS SELECT i AS id, hashint4(i) % 1000 AS k FROM generate_series(1, 100000) i" -c "
CREATE FUNCTION ten() RETURNS SETOF int ROWS 1e9 LANGUAGE sql AS 'SELECT generate_series(1, 10)'" -c "
VACUUM ANALYZE"
device=$("${psql[@]}" -c "SELECT coalesce((SELECT name FROM gpusort_devices() LIMIT 1), 'no GPU')")

serial="SET max_parallel_workers_per_gather = 0;"
mergejoin="SET enable_hashjoin = off; SET enable_nestloop = off; $serial"
queries=(
	"F1: top-k of wide rows, LIMIT 65536|SELECT id, k, repeat('x', 75000) FROM t100k ORDER BY k, id LIMIT 65536|"
	"F2: $ROWS rows, serial|SELECT * FROM t ORDER BY k, id|$serial"
	"F4's query: $ROWS rows, ts DESC, id (parallel plan)|SELECT * FROM t ORDER BY ts DESC, id|"
	"F3: merge join of $ROWS and $((ROWS / 2)) rows, serial|SELECT t.id, u.id FROM t JOIN u ON t.k = u.k AND t.id = u.id|$mergejoin"
	"F3: a function declared ROWS 1e9 that returns 10|SELECT * FROM ten() ORDER BY 1|"
	"parallel fill, by-value columns|SELECT id, k FROM t ORDER BY k, id|")

shm_kb() { du -sk /dev/shm 2>/dev/null | cut -f1; }

measure() {		# settings query -> "rss_mb|shm_mb|seconds|how it sorted"
	local log base out rss how
	log=$(mktemp)
	base=$(shm_kb)
	(while :; do shm_kb; sleep 0.02; done) >"$log" &
	local sampler=$!
	out=$("${psql[@]}" -c "$1" -c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF, FORMAT JSON) $2" \
		-c "SELECT substring(pg_read_file('/proc/self/status') from 'VmHWM:\s*(\d+)')")
	kill $sampler; wait $sampler 2>/dev/null || true
	rss=$(tail -1 <<<"$out")
	how=$(grep -m1 -oP '"(Algorithm|Sort Method)": "\K[^"]+' <<<"$out" || echo "-")
	if grep -q '"Device Reason"' <<<"$out"; then how="$how ($(grep -m1 -oP '"Device Reason": "\K[^"]+' <<<"$out"))"; fi
	awk -v base="$base" -v rss="$rss" -v ms="$(grep -oP '"Execution Time": \K[0-9.]+' <<<"$out")" -v how="$how" \
		'{ if ($1 > m) m = $1 } END { printf "%.1f|%.1f|%.2f|%s", rss / 1024, (m > base ? m - base : 0) / 1024, ms / 1000, how }' "$log"
	rm -f "$log"
}

out=${OUT:-bench/results}
mkdir -p "$out"
file="$out/memory-$ROWS.md"
{
	echo "# Peak memory, GpuSort against the native Sort — $device, $(nproc) CPU cores, $(date +%F)"
	echo
	echo "\`ROWS=$ROWS bash bench/memory_bench.sh\` on ${COMMIT:-$(git rev-parse --short HEAD)}; PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}'),"
	echo "default settings (work_mem 4 MB, gpusort.max_memory 2 GB). Backend peak RSS (VmHWM of the leader),"
	echo "peak growth of /dev/shm while the query ran, execution time and how it sorted (EXPLAIN ANALYZE,"
	echo "TIMING OFF; one run each, fresh session)."
	echo
	echo "| query | native RSS MB | GpuSort RSS MB | native /dev/shm MB | GpuSort /dev/shm MB | native s | GpuSort s | native sort | GpuSort sort |"
	echo "|---|---:|---:|---:|---:|---:|---:|---|---|"
	for q in "${queries[@]}"; do
		IFS='|' read -r name query settings <<<"$q"
		IFS='|' read -r n_rss n_shm n_s n_how <<<"$(measure "$settings SET gpusort.enabled = off;" "$query")"
		IFS='|' read -r g_rss g_shm g_s g_how <<<"$(measure "$settings" "$query")"
		echo "| $name | $n_rss | $g_rss | $n_shm | $g_shm | $n_s | $g_s | $n_how | $g_how |"
	done
	echo
	echo "100 sorts of 100,000 rows in one session, backend memory contexts (bytes) after the 10th and the 100th:"
	"${psql[@]}" -c "
CREATE TEMP TABLE mem (round int, bytes bigint);
DO \$\$ BEGIN FOR r IN 1..100 LOOP
  PERFORM count(*) FROM (SELECT * FROM t WHERE id <= 100000 ORDER BY k, id) s;
  IF r IN (10, 100) THEN INSERT INTO mem SELECT r, sum(total_bytes) FROM pg_backend_memory_contexts; END IF;
END LOOP; END \$\$;" -c "SELECT string_agg(round || ': ' || bytes, ', ' ORDER BY round) FROM mem"
} 2>&1 | tee "$file"
echo "written: $file"
