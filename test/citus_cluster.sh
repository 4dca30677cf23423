#!/usr/bin/env bash
# test/citus_cluster.sh -- a Citus cluster on one machine for the tests: a
# coordinator and two workers, each its own postmaster, reachable only
# through Unix sockets in one directory (ports 5432, 5433, 5434), all with
# shared_preload_libraries = 'citus,gpusort' (Citus must come first).  The
# workers are added to the coordinator by that directory as their host.
# Needs PG_CONFIG (PostgreSQL 16-18) with Citus (test/citus_build.sh) and
# gpusort installed.  As root, the nodes run as user $GPUSORT_CLUSTER_USER
# (default gpusort), created if missing.
#
#   bash test/citus_cluster.sh start DIR [SETTING=VALUE ...]   DIR must not exist
#   bash test/citus_cluster.sh stop DIR                         stops and removes DIR
#   bash test/citus_cluster.sh set DIR NAME VALUE               on every node (ALTER SYSTEM)
#
# `set` returns once every node's postmaster has the new value, so that
# every session started after it (the workers' sessions for a query's
# tasks included) has it too.
# After start: psql -h DIR -p 5432 -U postgres postgres is the coordinator,
# -p 5433 and -p 5434 the workers.  SETTING=VALUE pairs go to every node's
# postgresql.conf (e.g. gpusort.cost_model=off).  CITUS_NODE_GPUS="C W1 W2"
# sets CUDA_VISIBLE_DEVICES of the coordinator's and each worker's
# postmaster (e.g. "0 0 1": a GPU per worker, the coordinator sharing the
# first); unset, every node sees every GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
source test/env.sh

PORTS=(5432 5433 5434)
NAMES=(coordinator worker1 worker2)
bindir=$("$PG_CONFIG" --bindir)
source test/cluster_user.sh
cluster_user_init
user=$CLUSTER_USER
run=("${CLUSTER_USER_RUN[@]}")

node_psql() {
	local dir=$1 port=$2
	shift 2
	"$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres "$@"
}

start() {
	local dir=$1
	shift
	[ ! -e "$dir" ] || { echo "citus_cluster: $dir exists" >&2; exit 1; }
	mkdir -p "$dir"
	[ ${#run[@]} -eq 0 ] || chown "$user" "$dir"
	chmod 755 "$dir"
	for i in 0 1 2; do
		local data=$dir/${NAMES[$i]}
		"${run[@]}" "$bindir/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 \
			--locale=C --no-sync >"$dir/${NAMES[$i]}-initdb.log" 2>&1 ||
			{ cat "$dir/${NAMES[$i]}-initdb.log"; exit 1; }
		{
			echo "shared_preload_libraries = 'citus,gpusort'"
			echo "listen_addresses = ''"
			echo "unix_socket_directories = '$dir'"
			echo "port = ${PORTS[$i]}"
			echo "jit = off"
			echo "max_connections = 200"
			echo "max_worker_processes = 24"
			# no usage reports to Citus's servers from a test cluster
			echo "citus.enable_statistics_collection = off"
			for s in "$@"; do echo "${s%%=*} = '${s#*=}'"; done
		} | "${run[@]}" tee -a "$data/postgresql.conf" >/dev/null
		local gpus=()
		[ -z "${CITUS_NODE_GPUS:-}" ] || read -r -a gpus <<<"$CITUS_NODE_GPUS"
		[ ${#gpus[@]} -eq 0 ] || [ ${#gpus[@]} -eq 3 ] ||
			{ echo "citus_cluster: CITUS_NODE_GPUS needs 3 entries" >&2; exit 1; }
		env ${gpus[$i]:+CUDA_VISIBLE_DEVICES=${gpus[$i]}} \
			"${run[@]}" "$bindir/pg_ctl" -D "$data" -l "$dir/${NAMES[$i]}.log" -w start >/dev/null ||
			{ cat "$dir/${NAMES[$i]}.log"; exit 1; }
		node_psql "$dir" "${PORTS[$i]}" -c "CREATE EXTENSION citus" -c "CREATE EXTENSION gpusort"
	done
	node_psql "$dir" 5432 -c "SELECT citus_set_coordinator_host('$dir', 5432)" \
		-c "SELECT citus_add_node('$dir', 5433)" -c "SELECT citus_add_node('$dir', 5434)" >/dev/null
	echo "citus cluster: $dir (coordinator 5432, workers 5433 and 5434; sockets only)"
}

stop() {
	local dir=$1
	[ -d "$dir" ] || return 0
	for i in 2 1 0; do
		[ -d "$dir/${NAMES[$i]}" ] || continue
		"${run[@]}" "$bindir/pg_ctl" -D "$dir/${NAMES[$i]}" -m fast -w stop >/dev/null 2>&1 ||
			"${run[@]}" "$bindir/pg_ctl" -D "$dir/${NAMES[$i]}" -m immediate -w stop >/dev/null 2>&1 || true
	done
	rm -rf "$dir"
}

set_all() {
	local dir=$1 name=$2 value=$3
	for port in "${PORTS[@]}"; do
		node_psql "$dir" "$port" -c "ALTER SYSTEM SET $name = '$value'" -c "SELECT pg_reload_conf()" >/dev/null
	done
	# a new session has what its postmaster has read: wait for every postmaster
	for port in "${PORTS[@]}"; do
		for _ in $(seq 1 600); do
			[ "$(node_psql "$dir" "$port" -At -c "SHOW $name")" = "$value" ] && continue 2
			sleep 0.05
		done
		echo "citus_cluster: node on port $port did not take $name = $value" >&2
		exit 1
	done
}

case "${1:-}" in
	start) [ $# -ge 2 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2; }; shift; start "$@" ;;
	stop) [ $# -eq 2 ] || exit 2; stop "$2" ;;
	set) [ $# -eq 4 ] || exit 2; set_all "$2" "$3" "$4" ;;
	*) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
