#!/bin/bash
# bench/tpch.sh -- the 22 TPC-H queries with GpuSort on and off.
#
#   SF=1 RUNS=3 bash bench/tpch.sh
#
# Generates TPC-H data at scale factor SF with PyPI's tpchgen-cli (installed
# into a virtual environment, $VENV), loads it into the database psql
# reaches (PGHOST, PGPORT, PGUSER, PGDATABASE) with primary keys and the
# foreign-key indexes, then runs each query RUNS times with
# gpusort.enabled off and on, interleaved (the order alternates run by
# run). Each run is a fresh session that first warms the backend (one
# gpu_sort() of 40,000 keys: a GPU host opens its GPU there, a host without
# one learns that it has none), then times the query by EXPLAIN ANALYZE
# (TIMING OFF): the median Execution Time is reported. Each query's output
# is compared between the two: "same" (byte for byte), "ties" (the same
# rows in another order, where the query's ORDER BY leaves ties), or
# "DIFFERENT".
#
# Settings:
#   SF        scale factor (default 1)
#   RUNS      runs per query and setting (default 3)
#   QUERIES   which queries (default "1 2 ... 22")
#   SETTINGS  SQL run in every session before the query, e.g.
#             "SET gpusort.cost_model = off;" (default none)
#   DATA      where the CSV files go (default /tmp/tpch-sf$SF)
#   VENV      virtual environment for tpchgen-cli (default /tmp/tpch-venv)
#   RELOAD=1  reload the tables even if they hold scale factor SF already
#   PSQL      psql to use (default: psql on the PATH)
set -euo pipefail

SF=${SF:-1}
RUNS=${RUNS:-3}
QUERIES=${QUERIES:-$(seq -s ' ' 1 22)}
SETTINGS=${SETTINGS:-}
DATA=${DATA:-/tmp/tpch-sf$SF}
VENV=${VENV:-/tmp/tpch-venv}
PSQL=${PSQL:-psql}
HERE=$(cd "$(dirname "$0")" && pwd)
Q="$HERE/tpch"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

psql_c() { "$PSQL" -X -q -v ON_ERROR_STOP=1 "$@"; }

# Q11's fraction is 0.0001 / SF (TPC-H 2.4.11.3)
FRACTION=$(awk -v sf="$SF" 'BEGIN { printf "%.10f", 0.0001 / sf }')

loaded=$(psql_c -At -c "SELECT count(*) FROM pg_class WHERE relname = 'tpch_loaded'" 2>/dev/null || echo 0)
if [ "$loaded" = 1 ]; then
	loaded=$(psql_c -At -c "SELECT sf = '$SF' FROM tpch_loaded")
fi
if [ "${RELOAD:-0}" = 1 ] || [ "$loaded" != t ]; then
	if [ ! -f "$DATA/lineitem.csv" ]; then
		if [ ! -x "$VENV/bin/tpchgen-cli" ]; then
			python3 -m venv "$VENV"
			"$VENV/bin/pip" install -q tpchgen-cli
		fi
		mkdir -p "$DATA"
		echo "== generating SF $SF into $DATA"
		"$VENV/bin/tpchgen-cli" csv -s "$SF" --output-dir="$DATA"
	fi
	echo "== loading"
	psql_c -f "$Q/schema.sql"
	for t in region nation part supplier partsupp customer orders lineitem; do
		psql_c -c "\\copy $t FROM '$DATA/$t.csv' WITH (format csv, header true)"
	done
	psql_c -f "$Q/indexes.sql"
	psql_c -c "CREATE EXTENSION IF NOT EXISTS gpusort"
	psql_c -c "DROP TABLE IF EXISTS tpch_loaded; CREATE TABLE tpch_loaded AS SELECT '$SF'::text AS sf"
fi

# one session: warm-up, settings, then what follows on stdin
session() {
	local enabled=$1
	{
		echo "LOAD 'gpusort';"
		echo "SET gpusort.enabled = $enabled;"
		echo "SELECT count(*) FROM unnest(gpu_sort(ARRAY(SELECT (random() * 1e6)::int4 FROM generate_series(1, 40000))));"
		echo "$SETTINGS"
		echo "\\o"
		cat
	} | psql_c -At -v fraction="$FRACTION" -o /dev/null
}

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.1f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

printf '| query | native ms | GpuSort ms | native / GpuSort | GpuSort in plan | result |\n'
printf '|---:|---:|---:|---:|---|---|\n'
for n in $QUERIES; do
	f=$(printf '%s/q%02d.sql' "$Q" "$n")
	: > "$OUT/off.ms"
	: > "$OUT/on.ms"
	# the results (untimed; they also warm the cache)
	for mode in off on; do
		{ echo "\\o $OUT/result.$mode"; cat "$f"; } | session "$mode"
	done
	for run in $(seq 1 "$RUNS"); do
		if [ $((run % 2)) = 1 ]; then order="off on"; else order="on off"; fi
		for mode in $order; do
			{ echo "\\o $OUT/plan.$mode"; echo "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF)"; cat "$f"; } | session "$mode"
			sed -n 's/.*Execution Time: \([0-9.]*\) ms.*/\1/p' "$OUT/plan.$mode" >> "$OUT/$mode.ms"
		done
	done
	if cmp -s "$OUT/result.off" "$OUT/result.on"; then
		same=same
	elif [ "$(sort "$OUT/result.off" | md5sum)" = "$(sort "$OUT/result.on" | md5sum)" ]; then
		same=ties
	else
		same=DIFFERENT
	fi
	native=$(median < "$OUT/off.ms")
	gpu=$(median < "$OUT/on.ms")
	ratio=$(awk -v a="$native" -v b="$gpu" 'BEGIN { printf "%.2f", a / b }')
	gpusorts=$(grep -c 'Custom Scan (GpuSort)' "$OUT/plan.on" || true)
	printf '| Q%d | %s | %s | %s | %s | %s |\n' "$n" "$native" "$gpu" "$ratio" \
		"$([ "$gpusorts" -gt 0 ] && echo "yes ($gpusorts)" || echo no)" "$same"
	if [ -n "${PLANS:-}" ]; then
		mkdir -p "$PLANS"
		cp "$OUT/plan.on" "$PLANS/q$n.on.txt"
		cp "$OUT/plan.off" "$PLANS/q$n.off.txt"
	fi
done
