#!/usr/bin/env bash
# test/setup.sh -- make this machine ready to build and run gpusort, then
# build and install it.  Run as root or as a user with sudo.
#
# Installed software is detected by its files, not by package names, so a
# PostgreSQL unpacked from a tarball (see shared/gpu-host) is used as is.
# Missing pieces come from Debian's packages: postgresql-15 (server) and
# postgresql-server-dev-15 (headers, PGXS, PostgreSQL's TAP modules), gcc,
# make and perl's IPC::Run (libipc-run-perl, for the TAP tests).
# The CUDA toolkit is used when nvcc is found (NVCC, CUDA_HOME or PATH);
# without it a CPU-only library is built.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
source test/env.sh

pg_ready() {
	local pgc
	pgc=$(find_pg_config)
	[ -n "$pgc" ] || return 1
	[ -f "$("$pgc" --includedir-server)/postgres.h" ] || return 1
	[ -f "$("$pgc" --pgxs)" ] || return 1
	[ -x "$("$pgc" --bindir)/postgres" ] || return 1
	[ -x "$("$pgc" --bindir)/initdb" ] || return 1
}

missing=()
pg_ready || missing+=("postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR")
command -v gcc >/dev/null || missing+=(gcc)
command -v make >/dev/null || missing+=(make)
# the reliability suite (test/tap.sh): perl's IPC::Run and prove
perl -MIPC::Run -e1 2>/dev/null || missing+=(libipc-run-perl)
command -v prove >/dev/null || missing+=(perl)
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	pg_ready || { echo "setup: PostgreSQL $PG_MAJOR server or headers still missing" >&2; exit 1; }
fi

PG_CONFIG=$(find_pg_config); export PG_CONFIG
echo "setup: PostgreSQL $("$PG_CONFIG" --version) at $("$PG_CONFIG" --bindir)"
make -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG"
$SUDO make -s install PG_CONFIG="$PG_CONFIG"
echo "setup: gpusort built and installed into $("$PG_CONFIG" --pkglibdir)"
