#!/usr/bin/env bash
# test/pg_core_regress.sh -- PostgreSQL's own core regression suite
# (src/test/regress, parallel_schedule) run twice, each on a fresh scratch
# instance of the installed server: natively, and with gpusort loaded into
# every session (session_preload_libraries, gpusort.min_rows = 0 and
# gpusort.cost_model = off, so every Sort gpusort can take becomes a
# GpuSort, and gpusort.verify_order = on, so every GpuSort checks its
# output order with PostgreSQL's comparators).  The
# gpusort run's results/*.out are compared with the native run's (not with
# expected/) by test/regress_diff_classify.py.  Exit status 0 only when
#   - neither server log shows a crash (terminated by signal, PANIC, TRAP:),
#   - no test's output holds an ERROR line the native output does not, and
#   - every differing hunk is plan text (inside EXPLAIN output), tie order
#     (the statement's result holds the same multiset of lines in both runs;
#     verify_order proves each GpuSort's order valid, so that is an order of
#     equal keys) or tie-dependent (values that depend on the order of peers:
#     window functions, DISTINCT ON, LIMIT; the columns not computed from
#     that order hold the same rows; listed in full for review; --strict
#     fails on them too).  See test/regress_diff_classify.py.
# The summary goes to stdout and to OUTDIR/report.txt (with every hunk's
# class and the tie-dependent hunks in full).
#
# The suite is that of the server's own source where it was built by
# test/pg_build.sh (PREFIX/source; --fetch and --pack copy it from there);
# otherwise it comes from Debian's source package of the installed server's
# major version (apt-get source postgresql-NN with a deb-src copy of the
# system's apt sources, in a private apt state directory; the newest listed
# version first, then older ones, as a version's files may be missing from
# the mirror) and is cached in .cache/pg-regress-NN/ at the repository root
# (src/test/regress and contrib/spi), so later runs need no network.
#
#   bash test/pg_core_regress.sh [options] [TEST...]
#     --outdir DIR      results, logs and report here (default: a new
#                       /tmp/gpusort-core-regress.XXXXXX); kept on failure;
#                       on success only the scratch data directories and
#                       the copy of the suite are removed.  Printed at the
#                       end.
#     --dlpath DIR      build the suite's helper libraries (regress.so,
#                       autoinc.so, refint.so) here (default OUTDIR/lib)
#     --strict          tie-dependent hunks fail the run too
#     --service         the gpusort run preloads gpusort with the test module
#                       that gives its GPU service two emulated devices
#                       (test/test_modules/gpusort_service_emulation.c), and
#                       sends every sort to them (gpusort.gpu_min_elements
#                       = 0, gpusort.gpu_reorder_min_rows = 0): the
#                       service's queue under the whole suite, no GPU needed
#     --fetch           only fetch the suite into the cache, then exit
#     --pack FILE       pack the cached suite (fetched first if missing) into
#                       FILE (.tar.xz), then exit; carry it to a host without
#                       apt and unpack it there with --unpack FILE (or
#                       tar -xJf FILE -C .cache, or point PG_REGRESS_SRC at
#                       its src/test/regress)
#     --unpack FILE     unpack a --pack tarball into the cache, then exit
#     TEST...           run these tests instead of parallel_schedule (most
#                       need test_setup first, e.g. "test_setup create_index")
#   Environment:
#     PG_CONFIG            pg_config of the server to test (default: test/env.sh)
#     PG_REGRESS_SRC       an unpacked src/test/regress to use instead of the
#                          cache (contrib/spi is taken from ../../../contrib/spi)
#     PG_REGRESS_CACHE     the cache directory (default .cache/pg-regress-NN)
#     GPUSORT_EXTRA_CONF   more lines for the gpusort run's configuration, e.g.
#                          "gpusort.gpu_min_elements = 0" (every GpuSort on the
#                          GPU, where there is one)
#     GPUSORT_CLUSTER_USER as root, the servers and pg_regress run as this user
#                          (default gpusort, created if missing), as in
#                          test/scratch_cluster.sh
set -euo pipefail
ORIG_PWD=$(pwd)
cd "$(dirname "$0")/.."
ROOT=$(pwd)
source test/env.sh
source test/deb_src.sh

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

# paths given relative to where the script was started
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$ORIG_PWD/$1" ;; esac; }

OUTDIR='' DLPATH='' ACTION=run PACK_FILE='' TESTS=() CLASSIFY_OPTS=() SERVICE=
while [ $# -gt 0 ]; do
	case "$1" in
	--outdir) OUTDIR=$(abspath "$2"); shift 2 ;;
	--outdir=*) OUTDIR=$(abspath "${1#*=}"); shift ;;
	--dlpath) DLPATH=$(abspath "$2"); shift 2 ;;
	--dlpath=*) DLPATH=$(abspath "${1#*=}"); shift ;;
	--strict) CLASSIFY_OPTS+=(--strict); shift ;;
	--service) SERVICE=1; shift ;;
	--fetch) ACTION=fetch; shift ;;
	--pack) ACTION=pack; PACK_FILE=$(abspath "$2"); shift 2 ;;
	--unpack) ACTION=unpack; PACK_FILE=$(abspath "$2"); shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "pg_core_regress: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) TESTS+=("$1"); shift ;;
	esac
done

[ -n "$PG_CONFIG" ] || { echo "pg_core_regress: no pg_config found (set PG_CONFIG)" >&2; exit 2; }
if ! command -v python3 >/dev/null; then
	# the comparison (and unpacking without dpkg-source) is Python, as setup.sh installs the rest
	if command -v apt-get >/dev/null; then
		if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
		echo "pg_core_regress: installing python3"
		$SUDO apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3 >/dev/null
	fi
	command -v python3 >/dev/null || { echo "pg_core_regress: python3 missing" >&2; exit 2; }
fi
PG_VERSION_STR=$("$PG_CONFIG" --version)              # PostgreSQL 15.20 (Debian 15.20-0+deb12u1)
SERVER_MAJOR=$(echo "$PG_VERSION_STR" | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
BINDIR=$("$PG_CONFIG" --bindir)
PG_REGRESS=$(dirname "$("$PG_CONFIG" --pgxs)")/../test/regress/pg_regress
CACHE=$(abspath "${PG_REGRESS_CACHE:-$ROOT/.cache/pg-regress-$SERVER_MAJOR}")
# a test/pg_build.sh prefix holds its server's own source: that suite
PREFIX_SUITE=$(dirname "$BINDIR")/source/src/test/regress

# ---- the suite: fetch, cache, pack -------------------------------------

cache_ok() {
	[ -f "$CACHE/src/test/regress/parallel_schedule" ] && [ -f "$CACHE/src/test/regress/regress.c" ] &&
		[ -f "$CACHE/contrib/spi/autoinc.c" ] && [ -f "$CACHE/contrib/spi/refint.c" ]
}

# fetch_suite: apt-get source postgresql-NN into a temporary directory, with
# its own apt state (lists, cache) so that the system's is left alone and no
# root is needed; copies src/test/regress and contrib/spi into the cache.
fetch_suite() {
	if [ -f "$PREFIX_SUITE/parallel_schedule" ] && [ -f "$PREFIX_SUITE/../../../contrib/spi/refint.c" ]; then
		rm -rf "$CACHE.tmp" && mkdir -p "$CACHE.tmp/src/test" "$CACHE.tmp/contrib"
		cp -a "$PREFIX_SUITE" "$CACHE.tmp/src/test/"
		cp -a "$PREFIX_SUITE/../../../contrib/spi" "$CACHE.tmp/contrib/"
		echo "$PG_VERSION_STR source of $(dirname "$BINDIR")" >"$CACHE.tmp/VERSION"
		rm -rf "$CACHE" && mkdir -p "$(dirname "$CACHE")" && mv "$CACHE.tmp" "$CACHE"
		echo "   cached $(cat "$CACHE/VERSION") in $CACHE"
		return 0
	fi
	command -v apt-get >/dev/null || {
		echo "pg_core_regress: no cached suite in $CACHE and no apt-get to fetch it;" >&2
		echo "  set PG_REGRESS_SRC or carry a --pack tarball here (--unpack FILE)" >&2
		return 1
	}
	local tmp pkg src f v ok=
	tmp=$(mktemp -d /tmp/gpusort-pgsrc.XXXXXX)
	pkg=postgresql-$SERVER_MAJOR
	local apt_opts
	private_apt_state "$tmp"
	mkdir -p "$tmp/src"
	write_deb_src_sources "$tmp/sources.list.d"
	echo "== fetching $pkg's source (deb-src of the system's apt sources)"
	apt-get "${apt_opts[@]}" update >"$tmp/update.log" 2>&1 || { cat "$tmp/update.log" >&2; rm -rf "$tmp"; return 1; }
	# the installed server's own version first, then the rest newest first
	local installed versions=()
	installed=$(echo "$PG_VERSION_STR" | sed -nE 's/.*\(Debian ([^)]*)\).*/\1/p')
	mapfile -t versions < <(apt-cache "${apt_opts[@]}" madison "$pkg" 2>/dev/null |
		awk -F'|' '$3 ~ /Sources/ {gsub(/ /, "", $2); print $2}' | sort -u -rV |
		awk -v i="$installed" '$0 == i {print; next} {rest[++n] = $0} END {for (k = 1; k <= n; k++) print rest[k]}')
	[ ${#versions[@]} -gt 0 ] || { echo "pg_core_regress: apt lists no source of $pkg" >&2; rm -rf "$tmp"; return 1; }
	for v in "${versions[@]}"; do
		rm -rf "$tmp/src" && mkdir "$tmp/src"
		echo "   trying $pkg=$v"
		if command -v dpkg-source >/dev/null; then
			(cd "$tmp/src" && apt-get "${apt_opts[@]}" source "$pkg=$v" >"$tmp/source.log" 2>&1) || {
				grep -E '^(E|W):' "$tmp/source.log" | head -3 | sed 's/^/   /'; continue; }
			src=$(find "$tmp/src" -mindepth 1 -maxdepth 1 -type d -name "$pkg-*" | head -1)
		else
			# no dpkg-dev: the upstream tarball alone (Debian's patches leave the suite alone)
			(cd "$tmp/src" && apt-get "${apt_opts[@]}" source --download-only "$pkg=$v" >"$tmp/source.log" 2>&1) || {
				grep -E '^(E|W):' "$tmp/source.log" | head -3 | sed 's/^/   /'; continue; }
			python3 - "$tmp/src" <<-'EOF' || continue
				import glob, os, sys, tarfile
				d = sys.argv[1]
				tb = glob.glob(os.path.join(d, "*.orig.tar.*"))[0]
				with tarfile.open(tb) as t:
				    m = [x for x in t.getmembers() if "/src/test/regress/" in x.name or "/contrib/spi/" in x.name]
				    kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
				    t.extractall(os.path.join(d, "x"), members=m, **kw)
			EOF
			src=$(find "$tmp/src/x" -mindepth 1 -maxdepth 1 -type d | head -1)
		fi
		if [ -z "$src" ] || [ ! -f "$src/src/test/regress/parallel_schedule" ]; then continue; fi
		rm -rf "$CACHE.tmp" && mkdir -p "$CACHE.tmp/src/test" "$CACHE.tmp/contrib"
		cp -a "$src/src/test/regress" "$CACHE.tmp/src/test/"
		cp -a "$src/contrib/spi" "$CACHE.tmp/contrib/"
		echo "$pkg=$v" >"$CACHE.tmp/VERSION"
		rm -rf "$CACHE" && mkdir -p "$(dirname "$CACHE")" && mv "$CACHE.tmp" "$CACHE"
		ok=1
		break
	done
	rm -rf "$tmp"
	[ -n "$ok" ] || { echo "pg_core_regress: could not download any version of $pkg's source" >&2; return 1; }
	echo "   cached $(cat "$CACHE/VERSION") in $CACHE"
}

case "$ACTION" in
unpack)
	rm -rf "$CACHE.tmp" && mkdir -p "$CACHE.tmp" && tar -xJf "$PACK_FILE" -C "$CACHE.tmp"
	top=$(find "$CACHE.tmp" -mindepth 1 -maxdepth 1 -type d | head -1)
	[ -n "$top" ] || { echo "pg_core_regress: $PACK_FILE is empty" >&2; rm -rf "$CACHE.tmp"; exit 1; }
	rm -rf "$CACHE" && mv "$top" "$CACHE" && rm -rf "$CACHE.tmp"
	cache_ok || { echo "pg_core_regress: $PACK_FILE holds no usable suite" >&2; exit 1; }
	echo "unpacked $(cat "$CACHE/VERSION" 2>/dev/null) into $CACHE"
	exit 0 ;;
fetch | pack)
	cache_ok || fetch_suite
	if [ "$ACTION" = pack ]; then
		tar -cJf "$PACK_FILE" -C "$(dirname "$CACHE")" "$(basename "$CACHE")"
		echo "packed $(cat "$CACHE/VERSION") into $PACK_FILE ($(du -h "$PACK_FILE" | cut -f1))"
	fi
	exit 0 ;;
esac

if [ -z "${PG_REGRESS_SRC:-}" ] && [ -f "$PREFIX_SUITE/parallel_schedule" ]; then
	PG_REGRESS_SRC=$PREFIX_SUITE
fi
if [ -n "${PG_REGRESS_SRC:-}" ]; then
	SUITE_SRC=$(cd "$(abspath "$PG_REGRESS_SRC")" && pwd)
	SPI_SRC=$SUITE_SRC/../../../contrib/spi
	SUITE_VERSION="$SUITE_SRC (PG_REGRESS_SRC)"
else
	cache_ok || fetch_suite
	SUITE_SRC=$CACHE/src/test/regress
	SPI_SRC=$CACHE/contrib/spi
	SUITE_VERSION="$(cat "$CACHE/VERSION" 2>/dev/null || echo unknown) from $CACHE"
fi
for f in "$SUITE_SRC/parallel_schedule" "$SUITE_SRC/regress.c" "$SPI_SRC/autoinc.c" "$SPI_SRC/refint.c"; do
	[ -f "$f" ] || { echo "pg_core_regress: $f missing" >&2; exit 2; }
done
[ -x "$PG_REGRESS" ] || { echo "pg_core_regress: no pg_regress at $PG_REGRESS" >&2; exit 2; }
[ -f "$("$PG_CONFIG" --pkglibdir)/gpusort.so" ] ||
	{ echo "pg_core_regress: gpusort.so not installed in $("$PG_CONFIG" --pkglibdir)" >&2; exit 2; }

# ---- output directory, user, helper libraries ----------------------------

START=$SECONDS
if [ -n "$OUTDIR" ]; then
	mkdir -p "$OUTDIR"
	OUTDIR=$(cd "$OUTDIR" && pwd)
else
	OUTDIR=$(mktemp -d /tmp/gpusort-core-regress.XXXXXX)
fi
DLPATH=${DLPATH:-$OUTDIR/lib}
mkdir -p "$DLPATH"
DLPATH=$(cd "$DLPATH" && pwd)
source test/cluster_user.sh
cluster_user_init
RUN_USER=$CLUSTER_USER
RUN_AS=("${CLUSTER_USER_RUN[@]}")
# shellcheck disable=SC2317  # run by the EXIT trap
finish() {
	local rc=$?
	[ "$rc" -eq 0 ] || echo "pg_core_regress: FAILED (exit $rc); everything kept in $OUTDIR"
}
trap finish EXIT

echo "== PostgreSQL core regression suite: $SUITE_VERSION"
echo "   server: $PG_VERSION_STR ($BINDIR); output: $OUTDIR"

# The suite's input copied into OUTDIR, so that the servers and pg_regress,
# which run as the cluster user, can read it (the server reads data/*.data).
SUITE=$OUTDIR/suite
rm -rf "$SUITE" && mkdir -p "$SUITE"
for f in parallel_schedule serial_schedule resultmap sql expected data input output; do
	[ -e "$SUITE_SRC/$f" ] && cp -a "$SUITE_SRC/$f" "$SUITE/"
done

echo "== building regress.so, autoinc.so, refint.so into $DLPATH"
cp "$SUITE_SRC/regress.c" "$SPI_SRC/autoinc.c" "$SPI_SRC/refint.c" "$DLPATH/"
cat >"$DLPATH/Makefile" <<'EOF'
# the helper libraries of PostgreSQL's core regression suite (test/pg_core_regress.sh)
MODULES = regress autoinc refint
PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
EOF
make -s -C "$DLPATH" -j2 PG_CONFIG="$PG_CONFIG" with_llvm=no >"$DLPATH/build.log" 2>&1 ||
	{ cat "$DLPATH/build.log"; exit 2; }
preload="''"
if [ -n "$SERVICE" ]; then
	echo "== building the GPU service's emulated devices (test/test_modules) into $DLPATH"
	make -s -C test/test_modules clean PG_CONFIG="$PG_CONFIG" >/dev/null
	make -s -C test/test_modules PG_CONFIG="$PG_CONFIG" >"$DLPATH/test_modules.log" 2>&1 ||
		{ cat "$DLPATH/test_modules.log"; exit 2; }
	cp test/test_modules/gpusort_service_emulation.so "$DLPATH/"
	preload="'gpusort,$DLPATH/gpusort_service_emulation.so'"
fi

[ ${#RUN_AS[@]} -eq 0 ] || chown -R "$RUN_USER" "$OUTDIR" "$DLPATH"

# ---- the two runs --------------------------------------------------------

# run_mode MODE CONFIG-LINES: pg_regress with its own temporary instance
# (initdb --no-locale, databases in UTF8) into OUTDIR/MODE; its stdout in
# OUTDIR/MODE/pg_regress.out, the server log in OUTDIR/MODE/log/postmaster.log.
run_mode() {
	local mode=$1 conf=$2 dir=$OUTDIR/$1 t0=$SECONDS rc=0
	local sched=(--schedule="$SUITE/parallel_schedule")
	[ ${#TESTS[@]} -eq 0 ] || sched=("${TESTS[@]}")
	rm -rf "$dir" && mkdir -p "$dir"
	printf '%s\n' "$conf" >"$dir/extra.conf"
	[ ${#RUN_AS[@]} -eq 0 ] || chown -R "$RUN_USER" "$dir"
	echo "== $mode run: $(grep -v '^#' "$dir/extra.conf" | paste -sd ';' | sed 's/;/; /g')"
	(cd "$dir" && "${RUN_AS[@]}" "$PG_REGRESS" --temp-instance="$dir/tmp_check" --bindir="$BINDIR" \
		--inputdir="$SUITE" --outputdir="$dir" --dlpath="$DLPATH" --no-locale --encoding=UTF8 \
		--temp-config="$dir/extra.conf" --max-concurrent-tests=20 "${sched[@]}") \
		>"$dir/pg_regress.out" 2>&1 || rc=$?
	echo "$rc" >"$dir/pg_regress.rc"
	echo "$((SECONDS - t0))" >"$dir/seconds"
	echo "   pg_regress exit $rc in $((SECONDS - t0)) s: $(grep -E 'tests (passed|failed)|failed \(ignored\)' "$dir/pg_regress.out" | tr -s ' ' | paste -sd ' ')"
	if [ "$rc" -ge 2 ] || [ ! -d "$dir/results" ]; then
		tail -30 "$dir/pg_regress.out"
		[ -f "$dir/log/postmaster.log" ] && tail -30 "$dir/log/postmaster.log"
	fi
}

run_mode native "$(printf '%s\n' "# native: no gpusort" "jit = off" "shared_preload_libraries = ''")"
run_mode gpusort "$(printf '%s\n' "# gpusort: every Sort it can take is a GpuSort, each checked" "jit = off" \
	"shared_preload_libraries = $preload" "session_preload_libraries = 'gpusort'" "gpusort.min_rows = 0" "gpusort.cost_model = off" \
	"gpusort.verify_order = on" ${SERVICE:+"gpusort.gpu_min_elements = 0"} ${SERVICE:+"gpusort.gpu_reorder_min_rows = 0"} \
	${GPUSORT_EXTRA_CONF:+"$GPUSORT_EXTRA_CONF"})"

# ---- the comparison ------------------------------------------------------

echo "== comparing the gpusort run's results with the native run's"
rc=0
python3 test/regress_diff_classify.py --native "$OUTDIR/native" --gpusort "$OUTDIR/gpusort" \
	--report "$OUTDIR/report.txt" --suite "$SUITE_VERSION" --server "$PG_VERSION_STR" \
	"${CLASSIFY_OPTS[@]}" || rc=$?
echo "== total time $((SECONDS - START)) s; output in $OUTDIR (report: $OUTDIR/report.txt)"
if [ $rc -eq 0 ]; then
	rm -rf "$OUTDIR/native/tmp_check" "$OUTDIR/gpusort/tmp_check" "$OUTDIR/suite"
	echo "== core regression suite: gpusort matches native"
fi
exit $rc
