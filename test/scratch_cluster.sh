# test/scratch_cluster.sh -- sourced by the test and demo scripts: a
# throwaway PostgreSQL cluster in a temporary directory, reachable only
# through a Unix socket there, owned by a non-root user.
#
#   cluster_start     initdb + start; exports PGHOST, PGPORT, PGUSER, PGDATABASE
#   cluster_stop      stop and remove (also run on exit)
# Needs PG_CONFIG.  As root, the cluster runs as user $GPUSORT_CLUSTER_USER
# (default gpusort), created if missing.

source "$(dirname "${BASH_SOURCE[0]}")/cluster_user.sh"

cluster_start() {
	local bindir
	bindir=$("$PG_CONFIG" --bindir)
	CLUSTER_DIR=$(mktemp -d /tmp/gpusort-cluster.XXXXXX)
	cluster_user_init
	CLUSTER_RUN=("${CLUSTER_USER_RUN[@]}")
	[ -z "$CLUSTER_USER" ] || chown "$CLUSTER_USER" "$CLUSTER_DIR"
	chmod 755 "$CLUSTER_DIR"
	trap cluster_stop EXIT
	"${CLUSTER_RUN[@]}" "$bindir/initdb" -D "$CLUSTER_DIR/data" -U postgres \
		--auth=trust --encoding=UTF8 --locale=C --no-sync >"$CLUSTER_DIR/initdb.log" 2>&1 ||
		{ cat "$CLUSTER_DIR/initdb.log"; return 1; }
	"${CLUSTER_RUN[@]}" "$bindir/pg_ctl" -D "$CLUSTER_DIR/data" -l "$CLUSTER_DIR/server.log" -w \
		-o "-c listen_addresses='' -c unix_socket_directories='$CLUSTER_DIR' -c port=5432 -c jit=off ${CLUSTER_OPTS:-}" \
		start >/dev/null || { cat "$CLUSTER_DIR/server.log"; return 1; }
	export PGHOST=$CLUSTER_DIR PGPORT=5432 PGUSER=postgres PGDATABASE=postgres
	echo "scratch cluster: $CLUSTER_DIR (socket only)"
}

cluster_stop() {
	[ -n "${CLUSTER_DIR:-}" ] && [ -d "$CLUSTER_DIR" ] || return 0
	"${CLUSTER_RUN[@]}" "$("$PG_CONFIG" --bindir)/pg_ctl" -D "$CLUSTER_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
	rm -rf "$CLUSTER_DIR"
	CLUSTER_DIR=
}
