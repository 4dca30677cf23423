#!/usr/bin/env bash
# test/citus_test.sh -- gpusort in a Citus cluster (PostgreSQL 16 to 18):
# Citus is built if missing (test/citus_build.sh), a coordinator and two
# workers are started (test/citus_cluster.sh) with GpuSort taking every Sort
# it can (gpusort.cost_model = off, gpusort.min_rows = 0), and then:
#   - every query of test/citus_queries.sql gives byte for byte the same
#     output with gpusort.enabled on and off on every node;
#   - EXPLAIN shows a GpuSort on the coordinator above Citus's custom scan,
#     and in the workers' plans of pushed-down sorts;
#   - pg_dump and pg_restore of the coordinator's database (both extensions,
#     the distributed tables' rows) work.
# Exit status 0 when all passed.  Needs PG_CONFIG (test/env.sh) and gpusort
# installed (test/setup.sh).
#
#   PG_VERSION=18 bash test/citus_test.sh
#   ROWS=200000 (default): rows of the distributed table
set -euo pipefail
cd "$(dirname "$0")/.."
source test/env.sh
bash test/citus_build.sh

ROWS=${ROWS:-200000}
bindir=$("$PG_CONFIG" --bindir)
dir=$(mktemp -u /tmp/gpusort-citus.XXXXXX)
work=$(mktemp -d /tmp/gpusort-citus-out.XXXXXX)
cleanup() {
	local rc=$?
	if [ "$rc" -ne 0 ] && [ -d "$dir" ]; then
		for f in "$dir"/*.log; do echo "== $f"; tail -n 30 "$f"; done
	fi
	bash test/citus_cluster.sh stop "$dir" || true
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
bash test/citus_cluster.sh start "$dir" gpusort.cost_model=off gpusort.min_rows=0
psql() { "$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -U postgres -d "${DB:-postgres}" "$@"; }

failures=0
# check NAME COMMAND...: "ok" if the command succeeds
check() {
	local name=$1
	shift
	if "$@"; then
		echo "ok - $name"
	else
		echo "not ok - $name"
		failures=$((failures + 1))
	fi
}
# task_has TEXT PATTERN: a task's plan (below "Task Count") holds PATTERN
task_has() { printf '%s\n' "$1" | sed -n '/Task Count/,$p' | grep -q -- "$2"; }
# top_is TEXT PATTERN: the plan's top node (its first line) is PATTERN
top_is() { printf '%s\n' "$1" | sed -n '3p' | grep -q -- "$2"; }

# every node: gpusort on or off, in every session started after it
set_gpusort() { bash test/citus_cluster.sh set "$dir" gpusort.enabled "$1" </dev/null; }

psql -p 5432 <<SQL
CREATE TABLE events (id bigint, tenant int, i int4, f float4, amount numeric(12,2), t text, name text);
SELECT create_distributed_table('events', 'tenant');
INSERT INTO events
SELECT g, g % 97, (hashint8(g) % 100000)::int4,
       CASE WHEN g % 50 = 0 THEN NULL ELSE (hashint8(g + 1) % 1000000)::float4 / 7 END,
       ((hashint8(g + 2) % 10000000)::numeric / 100)::numeric(12,2),
       'customer_' || lpad((hashint8(g + 3) % 40000)::text, 9, '0') || md5(g::text),
       (ARRAY['Anders', 'Andersen', 'Müller', 'Mueller', 'Möller', 'van Dijk', 'Van Dyke'])[1 + g % 7]
         || ' ' || (g % 1000)::text
FROM generate_series(1, $ROWS) g;
CREATE TABLE tenants (tenant int, label text);
SELECT create_distributed_table('tenants', 'tenant', colocate_with => 'events');
INSERT INTO tenants SELECT t, 'tenant ' || t FROM generate_series(0, 96) t;
ANALYZE events;
ANALYZE tenants;
SQL

echo "== results with gpusort on and off on every node (test/citus_queries.sql)"
n=0
while IFS= read -r q; do
	case "$q" in '' | --*) continue ;; esac
	n=$((n + 1))
	set_gpusort on
	rc_on=0 rc_off=0
	psql -p 5432 -At -c "$q" </dev/null >"$work/on-$n.out" 2>&1 || rc_on=$?
	gpusort_plans=$(psql -p 5432 -c "EXPLAIN (COSTS OFF) $q" </dev/null | grep -c 'Custom Scan (GpuSort)' || true)
	set_gpusort off
	psql -p 5432 -At -c "$q" </dev/null >"$work/off-$n.out" 2>&1 || rc_off=$?
	rows=$(wc -l <"$work/off-$n.out")
	same() {
		[ "$rc_on" = 0 ] && [ "$rc_off" = 0 ] && [ -s "$work/off-$n.out" ] &&
			cmp -s "$work/on-$n.out" "$work/off-$n.out"
	}
	check "query $n ($rows rows, $gpusort_plans GpuSorts in the coordinator's and a task's plan): $q" same
	same || diff "$work/off-$n.out" "$work/on-$n.out" | head -10 || true
	case "$q" in
		*'-- native:'*) [ "$gpusort_plans" -eq 0 ] ||
			{ echo "not ok - query $n is marked native but has a GpuSort"; failures=$((failures + 1)); } ;;
		*) [ "$gpusort_plans" -gt 0 ] ||
			{ echo "not ok - query $n has no GpuSort with gpusort on"; failures=$((failures + 1)); } ;;
	esac
done <test/citus_queries.sql
set_gpusort on

echo "== where GpuSort runs"
plan() { psql -p 5432 -c "SET citus.explain_all_tasks = off" -c "EXPLAIN (COSTS OFF) $1"; }
# the coordinator's Sort above Citus's custom scan
out=$(plan "SELECT * FROM events ORDER BY i, id")
printf '%s\n' "$out" | sed 's/^/    /'
# above PATTERN: the plan node under the GpuSort is PATTERN's
above() {
	printf '%s\n' "$out" | sed -n '/Custom Scan (GpuSort)/,/->/p' | sed 1d | grep -- '->' | head -1 | grep -q -- "$1"
}
check "coordinator: GpuSort directly above Citus Adaptive (ORDER BY without LIMIT)" \
	above 'Custom Scan (Citus Adaptive)'
# ORDER BY an aggregate, and a window function not pushed down, on the coordinator
out=$(plan "SELECT i % 1000 AS g, count(*) FROM events GROUP BY 1 ORDER BY 2 DESC, 1")
printf '%s\n' "$out" | sed 's/^/    /'
check "coordinator: ORDER BY an aggregate is a GpuSort (the plan's top node)" top_is "$out" 'Custom Scan (GpuSort)'
out=$(plan "SELECT id, rank() OVER (ORDER BY i) FROM events")
printf '%s\n' "$out" | sed 's/^/    /'
check "coordinator: the sort of a window function not pushed down is a GpuSort" \
	above 'Custom Scan (Citus Adaptive)'
# a pushed-down ORDER BY ... LIMIT: the workers' sorts, and the coordinator's merge
out=$(plan "SELECT id, i FROM events ORDER BY i DESC, id LIMIT 100000")
printf '%s\n' "$out" | sed 's/^/    /'
check "workers: the pushed-down ORDER BY ... LIMIT is a GpuSort in the task's plan" \
	task_has "$out" 'Custom Scan (GpuSort)'
check "coordinator: the merge of the workers' LIMIT rows is a GpuSort over Citus Adaptive" \
	above 'Custom Scan (Citus Adaptive)'
# a window partitioned by the distribution column runs on the workers
out=$(plan "SELECT tenant, id, row_number() OVER (PARTITION BY tenant ORDER BY i, id) FROM events")
printf '%s\n' "$out" | sed 's/^/    /'
check "workers: a window partitioned by the distribution column sorts with GpuSort" \
	task_has "$out" 'Custom Scan (GpuSort)'

echo "== pg_dump and pg_restore of a database with both extensions"
# the coordinator's database with the distributed tables: pg_dump reads
# their rows through the coordinator, and they come back as local tables
# (create_distributed_table distributes them again)
psql -p 5432 -c "CREATE DATABASE restored" >/dev/null 2>&1
check "pg_dump of the coordinator's database (citus, gpusort, distributed tables)" \
	"$bindir/pg_dump" -h "$dir" -p 5432 -U postgres -Fc -f "$work/dumped.dump" postgres
check "pg_restore of it into a new database, without an error" \
	"$bindir/pg_restore" -h "$dir" -p 5432 -U postgres -d restored "$work/dumped.dump"
sorted_md5='SELECT md5(string_agg(id::text || t, $$,$$ ORDER BY t COLLATE "C", id)) FROM (SELECT id, t FROM events ORDER BY t COLLATE "C", id) s'
restored() {
	local want got
	want=$(psql -p 5432 -At -c "$sorted_md5") || return 1
	[[ "$want" =~ ^[0-9a-f]{32}$ ]] || return 1
	got=$(DB=restored psql -p 5432 -At \
		-c "SELECT string_agg(extname, ',' ORDER BY extname) FROM pg_extension WHERE extname IN ('citus', 'gpusort')" \
		-c "SELECT count(*) FROM events" -c "$sorted_md5") || return 1
	[ "$got" = "$(printf 'citus,gpusort\n%s\n%s' "$ROWS" "$want")" ]
}
check "restored: both extensions, every row, the same rows in sorted order" restored

if [ "$failures" -gt 0 ]; then
	echo "citus_test: $failures failed"
	exit 1
fi
echo "citus_test: all passed"
