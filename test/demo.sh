#!/usr/bin/env bash
# test/demo.sh -- the main job: set up (test/setup.sh), start a scratch
# cluster, run test/demo.sql (gpu_sort() on the GPU vs the CPU path vs native
# ORDER BY), stop the cluster.  DEMO_ROWS sets the array size (default 5M).
set -euo pipefail
cd "$(dirname "$0")/.."
bash test/setup.sh
source test/env.sh
source test/scratch_cluster.sh
cluster_start
"$("$PG_CONFIG" --bindir)/psql" -X -v rows="${DEMO_ROWS:-5000000}" -f test/demo.sql
