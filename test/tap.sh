#!/usr/bin/env bash
# test/tap.sh -- the reliability suite: the TAP tests in test/t/ (or those
# named as arguments), run with PostgreSQL's own TAP modules
# (PostgreSQL::Test::Cluster) against the installed server and gpusort.
# Each test makes its own scratch clusters.  As root, the tests run as user
# $GPUSORT_CLUSTER_USER (default gpusort), since PostgreSQL refuses root.
#
#   bash test/tap.sh [test/t/NNN_name.pl ...]
#
# Needs PG_CONFIG (test/env.sh finds it), gpusort installed (test/setup.sh),
# perl's IPC::Run (Debian: libipc-run-perl) and prove.
set -euo pipefail
cd "$(dirname "$0")/.."
source test/env.sh

pgxs_dir=$(dirname "$("$PG_CONFIG" --pgxs)")/../..
bindir=$("$PG_CONFIG" --bindir)
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(test/t/*.pl)

source test/cluster_user.sh
cluster_user_init
run=("${CLUSTER_USER_RUN[@]}")
testdir=$(mktemp -d /tmp/gpusort-tap.XXXXXX)
[ -z "$CLUSTER_USER" ] || chown "$CLUSTER_USER" "$testdir"
chmod 755 "$testdir"
cp -r test/t "$testdir/t"
# the test-only modules: fault injection (005_faults.pl, and the order
# check's disorder in 006_collation_check.pl), phase waits (002_cancel.pl,
# 007_shared_memory.pl)
# (002_cancel.pl); cleaned first: they may have been built against another
# PostgreSQL
make -s -C test/test_modules clean PG_CONFIG="$PG_CONFIG"
make -s -C test/test_modules PG_CONFIG="$PG_CONFIG"
cp test/test_modules/gpusort_fault_injection.so test/test_modules/gpusort_phase_wait.so \
	test/test_modules/gpusort_service_emulation.so "$testdir/"
chmod -R a+rX "$testdir"
keep=${GPUSORT_TAP_KEEP:-}
status=0
(cd "$testdir" && "${run[@]}" env PATH="$bindir:$PATH" TESTDIR="$testdir" \
	GPUSORT_FAULT_LIB="$testdir/gpusort_fault_injection.so" \
	GPUSORT_PHASE_LIB="$testdir/gpusort_phase_wait.so" \
	GPUSORT_SERVICE_LIB="$testdir/gpusort_service_emulation.so" \
	PG_REGRESS="$pgxs_dir/src/test/regress/pg_regress" \
	prove -I "$pgxs_dir/src/test/perl" -I t --timer ${PROVE_FLAGS:-} "${tests[@]/#test\//}") || status=$?
if [ $status -ne 0 ] || [ -n "$keep" ]; then
	echo "tap: logs in $testdir/tmp_check/log"
else
	rm -rf "$testdir"
fi
exit $status
