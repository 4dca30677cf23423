#!/usr/bin/env bash
# test/citus_build.sh -- Citus built from its source release and installed
# into the PostgreSQL that PG_CONFIG names (PostgreSQL 16 to 18: in the
# tests, the prefix test/pg_build.sh 18 builds into .cache/), for the Citus
# tests (test/citus_test.sh).  Citus is in neither Debian nor PyPI; its
# source release is read from CITUS_TARBALL (default
# ../shared/vendor/citus-14.0.1.tar.gz beside the repository).  Missing build
# dependencies (libcurl4-openssl-dev, liblz4-dev, libzstd-dev, libkrb5-dev)
# are installed with apt-get.  About 4 minutes on 2 cores; a later call
# finds PREFIX/CITUS-BUILD-INFO and does nothing.
#
#   PG_CONFIG=.cache/pg-18/bin/pg_config bash test/citus_build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "citus_build: $*" >&2; }
die() { say "$*"; exit 1; }

[ -n "${PG_CONFIG:-}" ] || die "PG_CONFIG is not set"
tarball=${CITUS_TARBALL:-$(pwd)/../shared/vendor/citus-14.0.1.tar.gz}
prefix=$("$PG_CONFIG" --bindir)/..
stamp=$prefix/CITUS-BUILD-INFO
major=$("$PG_CONFIG" --version | sed -nE 's/^PostgreSQL ([0-9]+).*/\1/p')
[ "$major" -ge 16 ] || die "Citus 14 needs PostgreSQL 16 to 18, not $major"
# built before from the same release: nothing to do
if [ -f "$stamp" ] && [ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ] &&
	grep -q "from $(basename "$tarball")," "$stamp"; then
	exit 0
fi
[ -f "$tarball" ] || die "no Citus source release at $tarball (set CITUS_TARBALL)"

need=()
for p in libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev; do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	say "installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q "${need[@]}" >/dev/null ||
		{ apt-get update -q >/dev/null && apt-get install -y -q "${need[@]}" >/dev/null; }
fi

work=$(mktemp -d /tmp/citus-build.XXXXXX)
trap 'rm -rf "$work"' EXIT
tar xzf "$tarball" -C "$work"
src=$(echo "$work"/citus-*)
log=$prefix/build-logs
mkdir -p "$log"
say "building $(basename "$src") against PostgreSQL $major (logs: $log/citus-*.log)"
start=$(date +%s)
(cd "$src" && ./configure PG_CONFIG="$PG_CONFIG" >"$log/citus-configure.log" 2>&1) ||
	{ tail -20 "$log/citus-configure.log"; die "configure failed"; }
make -C "$src" -j"${PG_BUILD_JOBS:-2}" >"$log/citus-make.log" 2>&1 ||
	{ tail -20 "$log/citus-make.log"; die "make failed"; }
make -C "$src" install >"$log/citus-install.log" 2>&1 ||
	{ tail -20 "$log/citus-install.log"; die "make install failed"; }
echo "$(basename "$src") from $(basename "$tarball"), built $(date -u +%F) in $(( $(date +%s) - start )) s" >"$stamp"
say "done: $(cat "$stamp")"
