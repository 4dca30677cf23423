#!/usr/bin/env bash
# test/run_all.sh -- every test: set-up (test/setup.sh), the unit tests, the
# kernel test program (prints "skipped: no GPU" without one), pg_regress
# (make installcheck) on a scratch cluster, the reliability suite (TAP tests
# in test/t/, test/tap.sh), PostgreSQL's own regression suite with every
# eligible Sort replaced (test/pg_core_regress.sh; a second time with every
# sort sent through the GPU service's emulated devices) and, on PostgreSQL 16 to
# 18, gpusort in a Citus cluster (test/citus_test.sh; Citus is built from
# ../shared/vendor the first time).  Exit status 0 when all passed.
#
#   bash test/run_all.sh [PART...]    PART: unit kernel regress tap core citus
#                                     (default: all, in that order)
#   PG_VERSION=18 bash test/run_all.sh   the same on PostgreSQL 18
#
#   PG_VERSION          the PostgreSQL major version: 15 (default, Debian's
#                       package), 17 or 18 (built from Debian's source package
#                       by test/pg_build.sh into .cache/pg-VERSION the first
#                       time, about 11 minutes on 2 cores)
#   PG_CONFIG, PG_PREFIX  an installed PostgreSQL to use instead of the above
#                       (no build; see test/env.sh)
#   KERNEL_TEST_MAX_N   largest size the kernel test program sorts (default 2^24)
set -euo pipefail
cd "$(dirname "$0")/.."
parts=" ${*:-unit kernel regress tap core citus} "
want() { [[ "$parts" == *" $1 "* ]]; }
bash test/setup.sh
source test/env.sh
source test/scratch_cluster.sh
echo "== PostgreSQL $("$PG_CONFIG" --version | sed 's/^PostgreSQL //') ($PG_CONFIG)"

if want unit; then
echo "== unit tests"
make -s unit-test PG_CONFIG="$PG_CONFIG"
fi

if want kernel; then
echo "== kernel test program"
make -s test/kernel_test PG_CONFIG="$PG_CONFIG"
test/kernel_test "${KERNEL_TEST_MAX_N:-16777216}"
echo "== kernel test program, the compact kernels of devices with less shared memory (the radix"
echo "   sort's compact policies, quicksort's short scatter steps and smaller leaf networks)"
echo "   and the first read's summary copied, not written to mapped host memory, and the"
echo "   bitonic network a kernel per stride (as where its blocks cannot all be resident), and"
echo "   every copy to and from the device page-locked (as copies of 4 MB and more are)"
test/kernel_test --block-smem=49152 --first-read-copy --bitonic-stride-kernels --lock-copies 1048576
echo "== kernel test program as on a device of 99 KB of shared memory a block (sm_86/sm_89):"
echo "   the radix sort's compact policies, quicksort's middle scatter steps"
test/kernel_test --block-smem=101376 1048576
echo "== kernel test program as on a device of 163 KB of shared memory a block (sm_80), 32-bit"
echo "   keys: the radix sort's mid policies (the 10-bit passes' tile of 1024 x 16 keys)"
test/kernel_test --block-smem=166912 1048576 0 1

echo "== kernel test program, 32-bit keys with their pairs kept apart between the radix passes"
echo "   whatever the data (as where the buffers do not allow packing them), then packed"
echo "   whatever the data"
test/kernel_test --pairs=apart 1048576 0 1
test/kernel_test --pairs=packed 1048576 0 1
echo "== kernel test program, 32-bit keys from 2^22 with the records between two radix passes"
echo "   over key - min turned off (the packed pairs they replace there)"
test/kernel_test --records=off "${KERNEL_TEST_MAX_N:-16777216}" 4194304 1
echo "== kernel test program, 32-bit keys, records taken at every size (the key ranges of 17-20"
echo "   bits from 3,073 keys), on the project's, the compact and the mid policies"
test/kernel_test --records=always 1048576 0 1
test/kernel_test --records=always --block-smem=49152 1048576 0 1
test/kernel_test --records=always --block-smem=166912 1048576 0 1
echo "== kernel test program, quicksort without its split rounds (the paper's two-way phase one)"
test/kernel_test --quicksort-no-split 1048576
fi

if want regress; then
echo "== pg_regress (make installcheck)"
# autovacuum off: the tests ANALYZE their tables themselves, and a later
# automatic ANALYZE with another sample could change a plan they show
CLUSTER_OPTS="${CLUSTER_OPTS:-} -c autovacuum=off" cluster_start
rm -rf results regression.diffs regression.out
if ! make -s installcheck PG_CONFIG="$PG_CONFIG"; then
	[ -f regression.diffs ] && cat regression.diffs
	exit 1
fi
cluster_stop
fi

if want tap; then
echo "== reliability suite (TAP tests in test/t/)"
bash test/tap.sh
fi

if want core; then
echo "== PostgreSQL's own regression suite, natively and with every eligible Sort replaced"
bash test/pg_core_regress.sh
echo "== the same, every GpuSort's sort through the GPU service (two emulated devices)"
bash test/pg_core_regress.sh --service
fi
if want citus; then
if [ "$PG_VERSION" -ge 16 ] && [ "$PG_VERSION" -le 18 ]; then
echo "== gpusort in a Citus cluster: a coordinator and two workers (test/citus_test.sh)"
bash test/citus_test.sh
else
# Citus 14 takes 16 to 18; 13.2.2, the last for 15, does not compile
# against Debian's 15.20 headers (its have_createdb_privilege)
echo "== gpusort in a Citus cluster: not on PostgreSQL $PG_VERSION (Citus 14 needs 16 to 18)"
fi
fi
echo "== all tests passed on PostgreSQL $PG_VERSION:$parts"
