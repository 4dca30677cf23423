#!/usr/bin/env bash
# test/pg_build.sh -- a PostgreSQL of the given major version built from
# Debian's source package and installed into a cached prefix, for testing
# gpusort against another major version or against an assert-enabled server.
# The last line of stdout is the prefix's pg_config; progress goes to stderr,
# the build's output to PREFIX/build-logs/.
#
#   bash test/pg_build.sh VERSION [--cassert]
#     VERSION     15 (the system's suite, bookworm), 17 (trixie) or 18 (sid);
#                 no suite has a source of 16.  17: on 2026-11-26 trixie and
#                 trixie-security list only 17.12-0+deb13u1, whose .dsc,
#                 .orig.tar.bz2 and .debian.tar.xz are 404 on the mirror;
#                 test/pg_headers_check.sh 17 compiles against 17's headers
#     --cassert   --enable-cassert --enable-debug, CFLAGS="-O1 -g" and
#                 -DUSE_VALGRIND (valgrind then sees palloc's chunks; harmless
#                 outside valgrind: test/valgrind.sh)
#   e.g.  PG_CONFIG=$(bash test/pg_build.sh 15 --cassert | tail -1)
#
# The source is the upstream tarball of the package (Debian's patches are not
# applied: the build is upstream's, its sockets in /tmp), fetched with
# `apt-get source --download-only` from deb-src entries in a private apt state
# directory (the system's apt sources and lists are left alone): for 15 deb-src
# copies of the system's sources, for 17 and 18 a sources file of that suite.
# The newest listed version is tried first, then older ones, as a version's
# files may be missing from the mirror (15.20's 404; 15.18 downloads).
#
# Configured with --without-llvm --with-icu --enable-tap-tests
# --without-readline; `make install` also puts what PGXS builds and TAP tests
# need into the prefix (PGXSDIR/src/test/regress/pg_regress and
# PGXSDIR/src/test/perl, checked).  Missing build dependencies (gcc, make,
# bison, flex, pkg-config, libicu-dev, zlib1g-dev, libipc-run-perl, bzip2)
# are installed with apt-get.
#
# Cache, at the repository root: .cache/pg-VERSION[-cassert]/ is the prefix
# (bin/, lib/, include/, share/), with
#   source/       the unpacked source, configured and `make clean`ed after the
#                 install (kept for gdb's listings and src/tools/valgrind.supp)
#   valgrind.supp a copy of the source's src/tools/valgrind.supp
#   build-logs/   configure, make and make install output
#   BUILD-INFO    package version, configure options, build time
# A later call finds the prefix complete and only prints its pg_config; an
# incomplete one (an interrupted build) is built again.  Concurrent calls for
# the same prefix wait for each other (flock).
#
#   Environment:
#     PG_BUILD_CACHE   the cache directory (default .cache at the repository root)
#     PG_BUILD_JOBS    make's -j (default 2)
#     PG_BUILD_MIRROR  the Debian mirror for 17 and 18 (default http://deb.debian.org/debian)
set -euo pipefail
cd "$(dirname "$0")/.."
source test/deb_src.sh
ROOT=$(pwd)

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
say() { echo "pg_build: $*" >&2; }
die() { say "$*"; exit 1; }

MAJOR='' CASSERT=''
while [ $# -gt 0 ]; do
	case "$1" in
	--cassert) CASSERT=1; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) say "unknown option $1"; usage >&2; exit 2 ;;
	*) [ -z "$MAJOR" ] || { usage >&2; exit 2; }; MAJOR=$1; shift ;;
	esac
done
[ -n "$MAJOR" ] || { usage >&2; exit 2; }

MIRROR=${PG_BUILD_MIRROR:-http://deb.debian.org/debian}
case "$MAJOR" in
15) SUITE='' ;;        # the system's own suites (bookworm, bookworm-security)
16) die "no source package of postgresql-16 in bookworm, trixie or sid; use 15, 17 or 18" ;;
17) SUITE=trixie ;;
18) SUITE=sid ;;
*) die "unsupported version '$MAJOR' (15, 17 or 18)" ;;
esac
PKG=postgresql-$MAJOR

CACHE_DIR=${PG_BUILD_CACHE:-$ROOT/.cache}
mkdir -p "$CACHE_DIR"
CACHE_DIR=$(cd "$CACHE_DIR" && pwd)
NAME=pg-$MAJOR${CASSERT:+-cassert}
PREFIX=$CACHE_DIR/$NAME
JOBS=${PG_BUILD_JOBS:-2}

complete() { [ -f "$PREFIX/BUILD-INFO" ] && [ -x "$PREFIX/bin/pg_config" ]; }

# one build of a prefix at a time; a second caller waits, then finds it built
if command -v flock >/dev/null; then
	exec 9>"$CACHE_DIR/$NAME.lock"
	flock -n 9 || { say "waiting for another build of $NAME"; flock 9; }
fi
if complete; then
	echo "$PREFIX/bin/pg_config"
	exit 0
fi

# ---- build dependencies, found by their files -----------------------------

if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
missing=()
command -v gcc >/dev/null || missing+=(gcc)
command -v make >/dev/null || missing+=(make)
command -v bison >/dev/null || missing+=(bison)
command -v flex >/dev/null || missing+=(flex)
command -v bzip2 >/dev/null || missing+=(bzip2)
command -v xz >/dev/null || missing+=(xz-utils)
command -v pkg-config >/dev/null || missing+=(pkg-config)
{ command -v pkg-config >/dev/null && pkg-config --exists icu-uc icu-i18n; } || missing+=(libicu-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
perl -MIPC::Run -e1 2>/dev/null || missing+=(libipc-run-perl)
command -v prove >/dev/null || missing+=(perl)
command -v apt-get >/dev/null || die "no apt-get: cannot fetch $PKG's source"
if [ ${#missing[@]} -gt 0 ]; then
	say "installing ${missing[*]}"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---- the source: apt-get source --download-only, private apt state ---------

T0=$SECONDS
tmp=$(mktemp -d /tmp/gpusort-pgbuild.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
private_apt_state "$tmp"
mkdir -p "$tmp/dl"
if [ -z "$SUITE" ]; then
	write_deb_src_sources "$tmp/sources.list.d"
else
	write_suite_sources "$tmp/sources.list.d/$SUITE-src.sources" deb-src "$SUITE" "$MIRROR"
fi
if [ -n "$SUITE" ]; then from="deb-src of $SUITE"; else from="deb-src copies of the system's apt sources"; fi
say "fetching $PKG's source ($from)"
apt-get "${apt_opts[@]}" update >"$tmp/update.log" 2>&1 || { cat "$tmp/update.log" >&2; exit 1; }
mapfile -t versions < <(apt-cache "${apt_opts[@]}" madison "$PKG" 2>/dev/null |
	awk -F'|' '$3 ~ /Sources/ {gsub(/ /, "", $2); print $2}' | sort -u -rV)
[ ${#versions[@]} -gt 0 ] || die "apt lists no source of $PKG${SUITE:+ in $SUITE}"
DEB_VERSION=''
for v in "${versions[@]}"; do
	rm -rf "$tmp/dl" && mkdir "$tmp/dl"
	say "  trying $PKG=$v"
	if (cd "$tmp/dl" && apt-get "${apt_opts[@]}" source --download-only "$PKG=$v" >"$tmp/source.log" 2>&1); then
		DEB_VERSION=$v
		break
	fi
	grep -E '^(E|W):' "$tmp/source.log" | head -3 | sed 's/^/    /' >&2
done
if [ -z "$DEB_VERSION" ]; then
	[ "$MAJOR" != 17 ] || say "(test/pg_headers_check.sh 17 checks the code against 17's headers without a build)"
	die "could not download any version of $PKG's source (${versions[*]})${SUITE:+ from $SUITE}"
fi
tarball=$(find "$tmp/dl" -maxdepth 1 -name "${PKG}_*.orig.tar.*" ! -name '*.asc' | head -1)
[ -n "$tarball" ] || die "no upstream tarball among $(ls "$tmp/dl")"

rm -rf "$PREFIX"
mkdir -p "$PREFIX/source" "$PREFIX/build-logs"
tar -xf "$tarball" -C "$PREFIX/source" --strip-components=1
SRC=$PREFIX/source
[ -x "$SRC/configure" ] || die "$(basename "$tarball") holds no configure"
say "  unpacked $(basename "$tarball") into $SRC ($((SECONDS - T0)) s)"

# ---- configure, build, install --------------------------------------------

conf=(--prefix="$PREFIX" --without-llvm --with-icu --enable-tap-tests --without-readline)
[ -z "$CASSERT" ] || conf+=(--enable-cassert --enable-debug CPPFLAGS=-DUSE_VALGRIND "CFLAGS=-O1 -g")
LOGS=$PREFIX/build-logs
step() {  # step NAME COMMAND...: its output in build-logs/NAME.log, the log's tail on failure
	local name=$1 t=$SECONDS
	shift
	say "  $name"
	if ! (cd "$SRC" && "$@") >"$LOGS/$name.log" 2>&1; then
		tail -40 "$LOGS/$name.log" >&2
		die "$name failed (log: $LOGS/$name.log); the prefix is left incomplete and is rebuilt next time"
	fi
	say "    $((SECONDS - t)) s"
}
T1=$SECONDS
step configure ./configure "${conf[@]}"
step make make -j"$JOBS"
step install make install
BUILD_S=$((SECONDS - T1))

PG_CONFIG=$PREFIX/bin/pg_config
pgxsdir=$(dirname "$("$PG_CONFIG" --pgxs)")/../..
for f in "$pgxsdir/src/test/regress/pg_regress" "$pgxsdir/src/test/perl/PostgreSQL/Test/Cluster.pm" \
	"$pgxsdir/src/test/perl/PostgreSQL/Test/Utils.pm" "$pgxsdir/src/makefiles/pgxs.mk" \
	"$("$PG_CONFIG" --includedir-server)/postgres.h" "$PREFIX/bin/postgres" "$PREFIX/bin/initdb"; do
	[ -e "$f" ] || die "make install left no $f"
done
[ -z "$CASSERT" ] || grep -q '^#define USE_ASSERT_CHECKING 1' "$("$PG_CONFIG" --includedir-server)/pg_config.h" ||
	die "the cassert build has no USE_ASSERT_CHECKING"
cp "$SRC/src/tools/valgrind.supp" "$PREFIX/valgrind.supp"
# the objects are not needed any more; the source stays for gdb and valgrind.supp
(cd "$SRC" && make -s clean) >"$LOGS/clean.log" 2>&1 || true

{
	echo "package:   $PKG=$DEB_VERSION (${SUITE:-system suites}), upstream tarball $(basename "$tarball")"
	echo "version:   $("$PG_CONFIG" --version)"
	echo "configure: ${conf[*]}"
	echo "built:     $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(nproc) cores, make -j$JOBS: configure+make+install $BUILD_S s, all $((SECONDS - T0)) s"
} >"$PREFIX/BUILD-INFO"
say "$("$PG_CONFIG" --version) installed in $PREFIX: configure+make+install $BUILD_S s, all $((SECONDS - T0)) s"
echo "$PG_CONFIG"
