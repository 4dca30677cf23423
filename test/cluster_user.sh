# test/cluster_user.sh -- sourced by the scripts that start PostgreSQL
# servers: PostgreSQL refuses to run as root, so as root they run the
# servers as user $GPUSORT_CLUSTER_USER (default gpusort, created if
# missing).
#
#   cluster_user_init   sets CLUSTER_USER (empty when not root) and
#                       CLUSTER_USER_RUN, the command prefix that runs a
#                       program as that user (an empty array when not root)

cluster_user_init() {
	CLUSTER_USER=
	CLUSTER_USER_RUN=()
	if [ "$(id -u)" = 0 ]; then
		CLUSTER_USER=${GPUSORT_CLUSTER_USER:-gpusort}
		id -u "$CLUSTER_USER" >/dev/null 2>&1 ||
			useradd --system --no-create-home --shell /bin/sh "$CLUSTER_USER"
		CLUSTER_USER_RUN=(runuser -u "$CLUSTER_USER" --)
	fi
}
