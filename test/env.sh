# test/env.sh -- sourced by the scripts in test/ and bench/: finds
# PostgreSQL's pg_config and the CUDA toolkit by their files.
#
#   PG_VERSION   the PostgreSQL major version to test (default: that of
#                PG_CONFIG or PG_PREFIX if given, else 15, the system's:
#                Debian's postgresql-15, which test/setup.sh installs; 17 and
#                18 are built from source by test/pg_build.sh, which
#                test/setup.sh runs when no build is found)
#   PG_CONFIG    a pg_config to use as is (its major version must be
#                PG_VERSION's when both are given)
#   PG_PREFIX    a PostgreSQL installed under this prefix (PG_PREFIX/bin/
#                pg_config), e.g. a test/pg_build.sh prefix carried to
#                another machine
# Without PG_CONFIG and PG_PREFIX, pg_config is looked for in
# /usr/lib/postgresql/PG_VERSION/bin, then in test/pg_build.sh's cache
# (PG_BUILD_CACHE, default .cache: pg-PG_VERSION/bin), then on PATH (if it is
# of that major version).
# pg_major PG_CONFIG: the major version of that PostgreSQL (15, 18, ...)
pg_major() {
	"$1" --version 2>/dev/null | sed -nE 's/^PostgreSQL ([0-9]+).*/\1/p'
}

# PG_VERSION not given: that of PG_CONFIG or PG_PREFIX where one is, else 15
if [ -z "${PG_VERSION:-}" ]; then
	if [ -n "${PG_CONFIG:-}" ] || [ -n "${PG_PREFIX:-}" ]; then
		PG_VERSION=$(pg_major "${PG_CONFIG:-$PG_PREFIX/bin/pg_config}")
	fi
	PG_VERSION=${PG_VERSION:-15}
fi
PG_MAJOR=$PG_VERSION
export PG_VERSION

find_pg_config() {
	if [ -n "${PG_CONFIG:-}" ]; then echo "$PG_CONFIG"; return; fi
	if [ -n "${PG_PREFIX:-}" ]; then echo "$PG_PREFIX/bin/pg_config"; return; fi
	local c cache
	cache=${PG_BUILD_CACHE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.cache}
	for c in "/usr/lib/postgresql/$PG_VERSION/bin/pg_config" "$cache/pg-$PG_VERSION/bin/pg_config"; do
		# a test/pg_build.sh prefix counts once complete (BUILD-INFO written)
		case "$c" in "$cache"/*) [ -f "$cache/pg-$PG_VERSION/BUILD-INFO" ] || continue ;; esac
		if [ -x "$c" ]; then echo "$c"; return; fi
	done
	c=$(command -v pg_config || true)
	if [ -n "$c" ] && [ "$(pg_major "$c")" = "$PG_VERSION" ]; then echo "$c"; fi
}

if [ -z "${NVCC:-}" ] && [ -z "${CUDA_HOME:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
	export CUDA_HOME=/usr/local/cuda
fi
PG_CONFIG=$(find_pg_config)
export PG_CONFIG
