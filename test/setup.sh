#!/usr/bin/env bash
# test/setup.sh -- make this machine ready to build and run gpusort, then
# build and install it.  Run as root or as a user with sudo.
#
# Installed software is detected by its files, not by package names, so a
# PostgreSQL unpacked from a tarball (see shared/gpu-host) is used as is.
# The PostgreSQL is chosen by PG_VERSION, PG_CONFIG or PG_PREFIX (test/env.sh).
# Missing pieces come from Debian's packages: postgresql-15 (server) and
# postgresql-server-dev-15 (headers, PGXS, PostgreSQL's TAP modules), gcc,
# make and perl's IPC::Run (libipc-run-perl, for the TAP tests); another
# major version (PG_VERSION=17 or 18) is built from Debian's source package
# into a cache by test/pg_build.sh (about 11 minutes on 2 cores, once).
# The CUDA toolkit is used when nvcc is found (NVCC, CUDA_HOME or PATH);
# without it a CPU-only library is built.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
# a PostgreSQL the caller named is used as is; one test/env.sh finds (a
# server package without its headers, say) is completed from Debian's packages
given_pg="${PG_CONFIG:-}${PG_PREFIX:-}"
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

if [ -n "$(find_pg_config)" ] && [ "$(pg_major "$(find_pg_config)")" != "$PG_VERSION" ]; then
	echo "setup: $(find_pg_config) is PostgreSQL $(pg_major "$(find_pg_config)"), not PG_VERSION=$PG_VERSION" >&2
	exit 1
fi
missing=()
if ! pg_ready; then
	if [ -n "$given_pg" ]; then
		echo "setup: no complete PostgreSQL (server, headers, PGXS) at $(find_pg_config)" >&2
		exit 1
	elif [ "$PG_VERSION" = 15 ]; then
		missing+=("postgresql-$PG_VERSION" "postgresql-server-dev-$PG_VERSION")
	else
		# no package of this version for this system: built from source, cached
		PG_CONFIG=$(bash test/pg_build.sh "$PG_VERSION" | tail -1)
		export PG_CONFIG
		pg_ready || { echo "setup: test/pg_build.sh $PG_VERSION left no complete PostgreSQL" >&2; exit 1; }
	fi
fi
command -v gcc >/dev/null || missing+=(gcc)
command -v make >/dev/null || missing+=(make)
# the reliability suite (test/tap.sh): perl's IPC::Run and prove
perl -MIPC::Run -e1 2>/dev/null || missing+=(libipc-run-perl)
command -v prove >/dev/null || missing+=(perl)
# the collation tests (sql/gpusort_key_types.sql): the en_US.UTF-8 locale,
# compiled from the locales package's sources unless present (or found
# through LOCPATH)
has_en_us() { locale -a 2>/dev/null | grep -qix "en_US.utf8" || [ -d "${LOCPATH:-/nonexistent}/en_US.UTF-8" ]; }
has_en_us || [ -d /usr/share/i18n/locales ] || missing+=(locales)
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	pg_ready || { echo "setup: PostgreSQL $PG_VERSION server or headers still missing" >&2; exit 1; }
fi

if ! has_en_us; then
	echo "setup: compiling the en_US.UTF-8 locale"
	$SUDO localedef -i en_US -f UTF-8 en_US.UTF-8
fi

PG_CONFIG=$(find_pg_config); export PG_CONFIG
echo "setup: $("$PG_CONFIG" --version) at $("$PG_CONFIG" --bindir)"
# Without a GPU only the CPU path can run: the kernels are compiled to PTX
# alone (35 s instead of 7 minutes on 2 cores); a GPU_ARCHS given wins.
make_args=(PG_CONFIG="$PG_CONFIG")
if [ -z "${GPU_ARCHS+set}" ] && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
	make_args+=(GPU_ARCHS=)
	echo "setup: no GPU found: kernels compiled to PTX only (set GPU_ARCHS for SASS)"
fi
make -s -j"$(nproc)" "${make_args[@]}"
$SUDO make -s install PG_CONFIG="$PG_CONFIG"
echo "setup: gpusort built and installed into $("$PG_CONFIG" --pkglibdir)"
