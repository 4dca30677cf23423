#!/usr/bin/env bash
# bench/external_sort.sh -- GpuSort past its memory budget (sorted runs in
# temporary files, merged: src/node_spill.c) against the native Sort, to
# choose gpusort.max_memory's default.  A table of ROWS rows (default 40M;
# bench/order_by_table.sql's columns, filled by 8 sessions side by side),
# then each query natively (default settings, and work_mem 1GB with 8
# workers) and with GpuSort at each budget of BUDGETS, RUNS times
# (default 1), round by round.  Median EXPLAIN ANALYZE (TIMING OFF)
# execution times; runs and kB written from EXPLAIN.  Markdown to
# bench/results/external_sort-ROWS.md (or $OUT).
#   ROWS=40000000 BUDGETS="128MB 512MB 2GB 64GB" bash bench/external_sort.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash test/setup.sh >/dev/null
source test/env.sh
source test/scratch_cluster.sh
ROWS=${ROWS:-40000000}
RUNS=${RUNS:-1}
BUDGETS=${BUDGETS:-"128MB 256MB 512MB 1GB 2GB 64GB"}
CLUSTER_OPTS="-c shared_preload_libraries=gpusort -c max_wal_size=8GB -c temp_file_limit=-1" cluster_start
psql=("$("$PG_CONFIG" --bindir)/psql" -X -v ON_ERROR_STOP=1)
"${psql[@]}" -q -c "CREATE EXTENSION IF NOT EXISTS gpusort" \
	-c "DROP TABLE IF EXISTS t" \
	-c "CREATE UNLOGGED TABLE t (i int4, f float4, s int4, id int8, pad text)"
per=$(( (ROWS + 7) / 8 ))
for p in 0 1 2 3 4 5 6 7; do
	lo=$(( p * per + 1 )); hi=$(( (p + 1) * per )); [ $hi -gt "$ROWS" ] && hi=$ROWS
	"${psql[@]}" -q -c "INSERT INTO t SELECT (random() * 4294967295 - 2147483648)::int8::int4,
		(random() * 2e6 - 1e6)::float4, (random() * 1000)::int4, g, md5(g::text)
		FROM generate_series($lo, $hi) g" &
done
wait
"${psql[@]}" -q -c "VACUUM ANALYZE t"
device=$("${psql[@]}" -At -c "SELECT coalesce((SELECT name FROM gpusort_devices() LIMIT 1), 'no GPU')")
size=$("${psql[@]}" -At -c "SELECT pg_size_pretty(pg_relation_size('t'))")
"${psql[@]}" -q -f bench/bench_run.sql
queries=("SELECT i FROM t ORDER BY i" "SELECT * FROM t ORDER BY f")
configs=("native|SET gpusort.enabled = off"
	"native tuned|SET gpusort.enabled = off; SET work_mem = '1GB'; SET max_parallel_workers_per_gather = 8")
for b in $BUDGETS; do
	configs+=("GpuSort $b|SET gpusort.max_memory = '$b'; SET gpusort.cost_model = off")
done
raw=$(mktemp)
for r in $(seq 1 "$RUNS"); do
	for qi in "${!queries[@]}"; do
		for c in "${configs[@]}"; do
			name=${c%%|*}; set=${c#*|}
			res=$("${psql[@]}" -At -c "SELECT bench_run(\$q\$${queries[$qi]}\$q\$, \$s\$$set\$s\$)")
			echo "$qi|$name|$res" >>"$raw"
		done
	done
done
out=${OUT:-bench/results}
mkdir -p "$out"
file="$out/external_sort-${ROWS}.md"
{
	echo "# GpuSort past its memory budget, $ROWS rows ($size) — $device, $(nproc) CPU cores, $(date +%F)"
	echo
	echo "\`ROWS=$ROWS RUNS=$RUNS bash bench/external_sort.sh\`, build ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)};"
	echo "PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}'); native at default settings (work_mem 4MB, 2 workers) and tuned"
	echo "(work_mem 1GB, 8 workers per Gather); GpuSort at default settings with \`gpusort.max_memory\` as named and the cost model off (GpuSort in every run)."
	echo "Median of $RUNS EXPLAIN ANALYZE (TIMING OFF) execution times; runs and kB written from EXPLAIN."
	echo
	python3 - "$raw" "${queries[@]}" <<'PY'
import sys, statistics, collections
raw, queries = sys.argv[1], sys.argv[2:]
rows = collections.OrderedDict()
for line in open(raw):
    qi, name, ms, alg, runs, kb, fill, write, emit = line.rstrip('\n').split('|')
    rows.setdefault((int(qi), name), []).append((float(ms), runs, kb, fill, emit, alg, write))
for qi, q in enumerate(queries):
    print(f"## `{q}`\n")
    print("| run | ms | × native | × tuned | runs | MB written | write ms | fill ms | emit ms | algorithm |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    med = {name: statistics.median(r[0] for r in v) for (i, name), v in rows.items() if i == qi}
    for (i, name), v in rows.items():
        if i != qi:
            continue
        m = med[name]
        last = v[-1]
        mb = '-' if last[2] == '-' else f"{int(last[2]) / 1024:.0f}"
        f = lambda x: '-' if x in ('-', '') else f"{float(x):.0f}"
        print(f"| {name} | {m:.0f} | {med['native'] / m:.2f} | {med['native tuned'] / m:.2f} | {last[1]} | {mb} | {f(last[6])} | {f(last[3])} | {f(last[4])} | {last[5]} |")
    print()
PY
} 2>&1 | tee "$file"
rm -f "$raw"
echo "written: $file"
