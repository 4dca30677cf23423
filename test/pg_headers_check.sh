#!/usr/bin/env bash
# test/pg_headers_check.sh -- compiles gpusort's C sources (src/*.c) against
# the server headers of a PostgreSQL major version that cannot be built or
# run here, as a check of src/pg_compat.h: every function declared, every
# pointer of the right type.  Nothing is linked or run.
#
#   bash test/pg_headers_check.sh VERSION
#     VERSION  17 (Debian trixie's postgresql-server-dev-17) or 18 (sid's)
#
# The headers come from Debian's binary package postgresql-server-dev-VERSION
# (`apt-get download` in a private apt state directory; the system's apt
# sources and lists are left alone), unpacked into
# PG_BUILD_CACHE/headers-VERSION (default .cache at the repository root).
# Warnings that would be wrong code at run time are errors:
# implicit-function-declaration, incompatible-pointer-types, int-conversion.
#
# Why: Debian's mirror lists postgresql-17 17.12 as source in trixie but its
# files are missing there (404), so test/pg_build.sh cannot build 17; the
# binary packages download, but need trixie's glibc.
set -euo pipefail
cd "$(dirname "$0")/.."
source test/deb_src.sh
ROOT=$(pwd)
say() { echo "pg_headers_check: $*" >&2; }

MAJOR=${1:?usage: test/pg_headers_check.sh VERSION (17 or 18)}
case "$MAJOR" in
17) SUITE=trixie ;;
18) SUITE=sid ;;
*) say "unsupported version '$MAJOR' (17 or 18)"; exit 2 ;;
esac
PKG=postgresql-server-dev-$MAJOR
CACHE_DIR=${PG_BUILD_CACHE:-$ROOT/.cache}
DIR=$CACHE_DIR/headers-$MAJOR
INC=$DIR/usr/include/postgresql/$MAJOR/server

if [ ! -f "$INC/postgres.h" ]; then
	tmp=$(mktemp -d /tmp/gpusort-pgheaders.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	private_apt_state "$tmp"
	mkdir -p "$tmp/dl"
	write_suite_sources "$tmp/sources.list.d/$SUITE.sources" deb "$SUITE" \
		"${PG_BUILD_MIRROR:-http://deb.debian.org/debian}"
	say "fetching $PKG ($SUITE)"
	apt-get "${apt_opts[@]}" update >"$tmp/update.log" 2>&1 || { cat "$tmp/update.log" >&2; exit 1; }
	(cd "$tmp/dl" && apt-get "${apt_opts[@]}" download "$PKG" >"$tmp/download.log" 2>&1) ||
		{ cat "$tmp/download.log" >&2; exit 1; }
	deb=$(find "$tmp/dl" -name "${PKG}_*.deb" | head -1)
	[ -n "$deb" ] || { say "apt-get download left no .deb"; exit 1; }
	rm -rf "$DIR" && mkdir -p "$DIR"
	dpkg-deb -x "$deb" "$DIR"
	basename "$deb" >"$DIR/PACKAGE"
	[ -f "$INC/postgres.h" ] || { say "$(basename "$deb") holds no $INC/postgres.h"; exit 1; }
fi

# A newer glibc's headers declare strlcpy and the package's pg_config.h says
# so (HAVE_DECL_STRLCPY); this system's glibc may not: declare it here.
shim=$DIR/strlcpy-shim.h
printf '#include <stddef.h>\nextern size_t strlcpy(char *dst, const char *src, size_t siz);\n' >"$shim"

say "compiling src/*.c against $(cat "$DIR/PACKAGE" 2>/dev/null || echo "$PKG") headers"
fail=0 n=0
for f in src/*.c; do
	n=$((n + 1))
	gcc -std=gnu11 -fsyntax-only -include "$shim" -Wall -Wextra -Wno-unused-parameter \
		-Wno-missing-field-initializers -Wno-sign-compare -Werror=implicit-function-declaration \
		-Werror=incompatible-pointer-types -Werror=int-conversion -Werror \
		-I"$INC" -Isrc -Ikernels "$f" || { say "FAILED: $f"; fail=$((fail + 1)); }
done
[ $fail -eq 0 ] || { say "$fail of $n files failed against PostgreSQL $MAJOR's headers"; exit 1; }
say "all $n files compile without warnings against PostgreSQL $MAJOR's headers"
