#!/usr/bin/env bash
# test/valgrind.sh -- gpusort's CPU path under valgrind's memcheck: the unit
# test program (test/unit_test, --leak-check=full), then some of gpusort's
# pg_regress tests against a scratch cluster of an assert-enabled PostgreSQL
# built with USE_VALGRIND (test/pg_build.sh 15 --cassert) whose postmaster,
# and so every backend, runs under valgrind as PostgreSQL's wiki describes:
#   valgrind --quiet --trace-children=yes --track-origins=yes --read-var-info=yes
#     --suppressions=SOURCE/src/tools/valgrind.supp --error-limit=no
#     --log-file=OUTDIR/valgrind/%p.log postgres -D ...
# (also --leak-check=no, as there, and --error-markers, --fullpath-after= and
# --num-callers=40, so that each error can be told apart and its frames in
# gpusort's own source recognised).  Expect valgrind's slowdown of 20-50x.
#
# gpusort is built CPU-only (NVCC=) from a copy of this working tree (its
# tracked and untracked, not ignored files) in OUTDIR/tree, so the tree's own
# build outputs are left alone, and installed into that PostgreSQL's prefix
# (a cache under .cache/, never the system's PostgreSQL).
#
#   bash test/valgrind.sh [TEST...]
#     TEST...   gpusort's pg_regress tests to run (default: gpu_sort_basics
#               gpu_sort_special_values gpusort_plan_shapes gpusort_memory)
#   Environment:
#     VALGRIND_PG_CONFIG    a USE_VALGRIND (and assert-enabled) PostgreSQL's pg_config
#                           (default: bash test/pg_build.sh 15 --cassert, built if
#                           missing); PG_CONFIG is not used, and a server built
#                           without USE_VALGRIND (as the system's) is refused
#     VALGRIND_OUTDIR       logs and results here (default a new /tmp/gpusort-valgrind.XXXXXX)
#     VALGRIND_TIMEOUT      seconds the pg_regress run may take (default 7200)
#     GPUSORT_CLUSTER_USER  as root, the server runs as this user (default gpusort)
#
# Summary on stdout and in OUTDIR/summary.txt: the unit test's valgrind
# result, then the server's error reports over all process logs, split into
# those with a frame in gpusort (gpusort.so, or a source file of this tree),
# in the error's own stack or only in its origin/allocation stack, and the
# rest; each distinct gpusort error with its stack.  Exit status 0 only when
# the unit test is clean under valgrind, the regression tests pass and no
# error report has a gpusort frame.
set -euo pipefail
ORIG_PWD=$(pwd)
cd "$(dirname "$0")/.."
ROOT=$(pwd)
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$ORIG_PWD/$1" ;; esac; }
say() { echo "valgrind.sh: $*"; }

TESTS=("$@")
[ ${#TESTS[@]} -gt 0 ] || TESTS=(gpu_sort_basics gpu_sort_special_values gpusort_plan_shapes gpusort_memory)
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind missing (apt-get install valgrind)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "valgrind.sh: python3 missing" >&2; exit 2; }

# not PG_CONFIG, which the other scripts take to be the server to test (the
# system's, by test/env.sh): gpusort is installed into this one
if [ -n "${VALGRIND_PG_CONFIG:-}" ]; then
	PG_CONFIG=$VALGRIND_PG_CONFIG
else
	PG_CONFIG=$(bash test/pg_build.sh 15 --cassert | tail -1)
fi
export PG_CONFIG
PREFIX=$(cd "$("$PG_CONFIG" --bindir)/.." && pwd)
BINDIR=$("$PG_CONFIG" --bindir)
"$PG_CONFIG" --cppflags | grep -q -- -DUSE_VALGRIND || {
	echo "valgrind.sh: $PG_CONFIG was not built with USE_VALGRIND (palloc'd chunks would be" >&2
	echo "  invisible to valgrind); use test/pg_build.sh 15 --cassert" >&2
	exit 2
}
grep -q '^#define USE_ASSERT_CHECKING 1' "$("$PG_CONFIG" --includedir-server)/pg_config.h" ||
	say "warning: $PG_CONFIG is not an assert-enabled build"
SUPP=''
for f in "$PREFIX/source/src/tools/valgrind.supp" "$PREFIX/valgrind.supp"; do
	[ -f "$f" ] && { SUPP=$f; break; }
done
[ -n "$SUPP" ] || { echo "valgrind.sh: no valgrind.supp in $PREFIX/source/src/tools or $PREFIX" >&2; exit 2; }

START=$SECONDS
if [ -n "${VALGRIND_OUTDIR:-}" ]; then
	OUTDIR=$(abspath "$VALGRIND_OUTDIR"); mkdir -p "$OUTDIR"
else
	OUTDIR=$(mktemp -d /tmp/gpusort-valgrind.XXXXXX)
fi
chmod 755 "$OUTDIR"
SUMMARY=$OUTDIR/summary.txt
: >"$SUMMARY"
report() { echo "$*" | tee -a "$SUMMARY"; }
report "== valgrind: $(valgrind --version); server $("$PG_CONFIG" --version) ($PREFIX); output in $OUTDIR"

# ---- a clean copy of the working tree, built CPU-only and installed ---------

TREE=$OUTDIR/tree
rm -rf "$TREE" && mkdir -p "$TREE"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar -cf - --null -T - | tar -xf - -C "$TREE"
else
	tar -cf - --exclude=./.cache --exclude='*.o' --exclude='*.so' . | tar -xf - -C "$TREE"
fi
say "building gpusort CPU-only in $TREE and installing it into $PREFIX"
export NVCC=
make -s -C "$TREE" -j2 PG_CONFIG="$PG_CONFIG" >"$OUTDIR/build.log" 2>&1 || { cat "$OUTDIR/build.log"; exit 2; }
make -s -C "$TREE" install PG_CONFIG="$PG_CONFIG" >>"$OUTDIR/build.log" 2>&1 || { cat "$OUTDIR/build.log"; exit 2; }
make -s -C "$TREE" test/unit_test PG_CONFIG="$PG_CONFIG" >>"$OUTDIR/build.log" 2>&1 || { cat "$OUTDIR/build.log"; exit 2; }

# ---- 1. the unit test program ----------------------------------------------

t0=$SECONDS
unit_rc=0
say "unit test program under valgrind --leak-check=full"
(cd "$TREE" && valgrind --error-exitcode=1 --leak-check=full --log-file="$OUTDIR/unit_test.valgrind.log" \
	test/unit_test) >"$OUTDIR/unit_test.out" 2>&1 || unit_rc=$?
unit_errors=$(sed -nE 's/.*ERROR SUMMARY: ([0-9]+) errors.*/\1/p' "$OUTDIR/unit_test.valgrind.log" | tail -1)
unit_leak=$(grep -E 'definitely lost|indirectly lost|possibly lost|All heap blocks were freed' \
	"$OUTDIR/unit_test.valgrind.log" | sed -E 's/^==[0-9]+== +//' | paste -sd ';' | sed 's/;/; /g' || true)
report "unit test:   exit $unit_rc in $((SECONDS - t0)) s; $(tail -1 "$OUTDIR/unit_test.out");" \
	"valgrind errors: ${unit_errors:-?}; leaks: ${unit_leak:-none reported}"
[ "$unit_rc" -eq 0 ] || sed -n '1,80p' "$OUTDIR/unit_test.valgrind.log"

# ---- 2. a scratch cluster whose postmaster runs under valgrind -------------

source test/cluster_user.sh
cluster_user_init
RUN_USER=$CLUSTER_USER
RUN_AS=("${CLUSTER_USER_RUN[@]}")
CLUSTER=$OUTDIR/cluster
VGLOG=$OUTDIR/valgrind
mkdir -p "$CLUSTER" "$VGLOG"
[ ${#RUN_AS[@]} -eq 0 ] || chown "$RUN_USER" "$CLUSTER" "$VGLOG"
chmod 755 "$CLUSTER" "$VGLOG"
"${RUN_AS[@]}" "$BINDIR/initdb" -D "$CLUSTER/data" -U postgres --auth=trust --encoding=UTF8 --locale=C \
	--no-sync >"$OUTDIR/initdb.log" 2>&1 || { cat "$OUTDIR/initdb.log"; exit 2; }

PM_PID=''
stop_server() {
	[ -n "$PM_PID" ] || return 0
	"${RUN_AS[@]}" "$BINDIR/pg_ctl" -D "$CLUSTER/data" -m fast -w -t 900 stop >>"$OUTDIR/pg_ctl.log" 2>&1 ||
		kill "$PM_PID" 2>/dev/null || true
	wait "$PM_PID" 2>/dev/null || true
	PM_PID=''
}
trap stop_server EXIT

say "starting the postmaster under valgrind (logs: $VGLOG/%p.log)"
t0=$SECONDS
"${RUN_AS[@]}" valgrind --quiet --trace-children=yes --track-origins=yes --read-var-info=yes \
	--suppressions="$SUPP" --error-limit=no --leak-check=no --num-callers=40 --fullpath-after= \
	--error-markers=VALGRINDERROR-BEGIN,VALGRINDERROR-END --log-file="$VGLOG/%p.log" \
	"$BINDIR/postgres" -D "$CLUSTER/data" -c listen_addresses='' -c unix_socket_directories="$CLUSTER" \
	-c port=5432 -c jit=off \
	>"$OUTDIR/server.log" 2>&1 &
PM_PID=$!
export PGHOST=$CLUSTER PGPORT=5432 PGUSER=postgres PGDATABASE=postgres
for _ in $(seq 600); do
	"$BINDIR/pg_isready" -q && break
	kill -0 "$PM_PID" 2>/dev/null || { cat "$OUTDIR/server.log"; echo "valgrind.sh: the server did not start" >&2; exit 2; }
	sleep 1
done
"$BINDIR/pg_isready" -q || { cat "$OUTDIR/server.log"; echo "valgrind.sh: the server did not start in 600 s" >&2; exit 2; }
say "server up after $((SECONDS - t0)) s; pg_regress: ${TESTS[*]}"

t0=$SECONDS
regress_rc=0
(cd "$TREE" && rm -rf results regression.diffs regression.out &&
	timeout "${VALGRIND_TIMEOUT:-7200}" make -s installcheck PG_CONFIG="$PG_CONFIG" REGRESS="${TESTS[*]}") \
	>"$OUTDIR/pg_regress.out" 2>&1 || regress_rc=$?
REGRESS_S=$((SECONDS - t0))
grep -E '^(ok|not ok|test) |^ *[0-9]+ of|All [0-9]+ tests' "$OUTDIR/pg_regress.out" || tail -20 "$OUTDIR/pg_regress.out"
[ ! -f "$TREE/regression.diffs" ] || cp "$TREE/regression.diffs" "$OUTDIR/"
say "stopping the server"
t1=$SECONDS
stop_server
STOP_S=$((SECONDS - t1))
report "pg_regress: ${TESTS[*]}: exit $regress_rc in $REGRESS_S s (the server up $((t0 - START)) s into the run, stopped in $STOP_S s)" \
	"$(grep -E 'tests (passed|failed)' "$OUTDIR/pg_regress.out" | tr -s ' ' | sed 's/^ //')"
[ "$regress_rc" -eq 0 ] || { [ -f "$OUTDIR/regression.diffs" ] && head -100 "$OUTDIR/regression.diffs"; }
if grep -qE 'TRAP:|terminated by signal|PANIC' "$OUTDIR/server.log"; then
	report "server log: CRASH"; grep -E 'TRAP:|terminated by signal|PANIC' "$OUTDIR/server.log" | tee -a "$SUMMARY"
else
	report "server log: no TRAP, PANIC or backend killed by a signal"
fi

# ---- 3. the error reports ---------------------------------------------------

vg_rc=0
python3 - "$VGLOG" "$TREE" "$SUMMARY" <<'EOF' || vg_rc=$?
import collections, glob, os, re, sys

vgdir, tree, summary = sys.argv[1:4]
tree = os.path.realpath(tree) + "/"
frame_re = re.compile(r"^\s+(at|by) 0x[0-9A-Fa-f]+: (.*)$")

def is_gpusort(frame):
    return "gpusort.so" in frame or tree in frame

logs = sorted(glob.glob(os.path.join(vgdir, "*.log")))
errors = []  # (log, lines)
for log in logs:
    cur = None
    with open(log, errors="replace") as f:
        for line in f:
            body = re.sub(r"^==\d+== ?", "", line.rstrip("\n"))
            if body == "VALGRINDERROR-BEGIN":
                cur = []
            elif body == "VALGRINDERROR-END":
                if cur is not None:
                    errors.append((os.path.basename(log), cur))
                cur = None
            elif cur is not None:
                cur.append(body)

own, aux, rest = [], [], []
for log, lines in errors:
    # the error's own stack: the frames right after its first line
    main, i = [], 1
    while i < len(lines) and frame_re.match(lines[i]):
        main.append(frame_re.match(lines[i]).group(2)); i += 1
    allframes = [frame_re.match(l).group(2) for l in lines if frame_re.match(l)]
    if any(is_gpusort(f) for f in main):
        own.append((log, lines))
    elif any(is_gpusort(f) for f in allframes):
        aux.append((log, lines))
    else:
        rest.append((log, lines))

def key(lines):
    # a distinct error: its kind and its stacks' function names and lines
    return "\n".join([lines[0]] + [re.sub(r"0x[0-9A-Fa-f]+", "", l) for l in lines[1:] if frame_re.match(l)])

def short(lines):
    return "\n".join("    " + l.replace(tree, "") for l in lines if l.strip())

out = []
out.append("valgrind, server: %d process logs, %d error reports: %d with a gpusort frame in the error's stack, "
           "%d with one only in its origin/allocation stack, %d elsewhere"
           % (len(logs), len(errors), len(own), len(aux), len(rest)))
for title, group in (("gpusort's errors", own), ("errors whose origin/allocation stack has a gpusort frame", aux),
                     ("other errors", rest)):
    if not group:
        continue
    distinct = collections.OrderedDict()
    for log, lines in group:
        distinct.setdefault(key(lines), []).append((log, lines))
    out.append("%s: %d reports, %d distinct" % (title, len(group), len(distinct)))
    for n, (k, items) in enumerate(distinct.items(), 1):
        out.append("  [%d] %dx (%s): %s" % (n, len(items), ", ".join(sorted({l for l, _ in items}))[:200], items[0][1][0]))
        out.append(short(items[0][1][1:]))
text = "\n".join(out)
print(text)
with open(summary, "a") as f:
    f.write(text + "\n")
sys.exit(1 if own or aux else 0)
EOF

report "total time $((SECONDS - START)) s; output in $OUTDIR"
status=0
[ "$unit_rc" -eq 0 ] || { report "FAILED: the unit test under valgrind (exit $unit_rc)"; status=1; }
[ "$regress_rc" -eq 0 ] || { report "FAILED: pg_regress (exit $regress_rc)"; status=1; }
[ "$vg_rc" -eq 0 ] || { report "FAILED: valgrind errors with a gpusort frame"; status=1; }
[ $status -ne 0 ] || report "== valgrind: clean"
exit $status
