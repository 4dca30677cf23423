#!/usr/bin/env python3
"""test/regress_diff_classify.py -- compares two pg_regress runs of the same
suite, a native one and one with gpusort loaded (test/pg_core_regress.sh),
and says whether gpusort changed anything but plans and tie order.

  regress_diff_classify.py --native DIR --gpusort DIR [--report FILE]
                           [--suite TEXT] [--server TEXT] [--strict]
                           [--show plan|tie-order|tie-dependent|unexplained]

Each DIR is a pg_regress --outputdir: results/*.out, pg_regress.out (its
stdout), log/postmaster.log (the temporary instance's log), and optionally
seconds and pg_regress.rc written by pg_core_regress.sh.

Fails (exit status 1) on
  - a crash in either server's log (terminated by signal, PANIC, TRAP:),
  - an ERROR line in a gpusort output that the native output of the same
    test has fewer times (the ERROR: lines are compared as multisets),
  - a test whose results file is in one run only,
  - a differing hunk of the outputs that is "unexplained".
Each differing hunk (difflib's opcodes over the two .out files, widened to
the result tables it touches: column header, ---- separator, rows, "(N
rows)" footer, and merged with the hunks that then overlap) is one of
  plan            inside EXPLAIN output: every changed line lies in a table
                  whose column is QUERY PLAN or whose statement mentions
                  EXPLAIN (explain_filter() and such helpers included), or
                  that reads the native Sort's tuplesort memory contexts
                  from pg_backend_memory_contexts, the row-count footer
                  included;
  tie-order       every table of the hunk has the same header, separator and
                  footer and the same multiset of row lines in both runs, the
                  rest of the hunk the same lines in the same order (or, a
                  hunk outside any table, the same multiset of lines): the
                  rows came in another order.  gpusort.verify_order makes
                  every GpuSort check its order with PostgreSQL's comparators,
                  so this is an order among equal keys (or of an unordered
                  query whose plan changed);
  tie-dependent   a table whose statement's values depend on the order of
                  peers (a window function, DISTINCT ON, LIMIT/OFFSET/FETCH,
                  an ordered aggregate): same header, separator and footer,
                  and the rows projected onto the columns not computed by a
                  function the statement calls (psql names such a column
                  after the function, or the alias after OVER ...) are the
                  same multiset; where no column is computed (DISTINCT ON,
                  LIMIT), or where a filter on row_number() over unordered
                  peers kept other peers, the rows projected onto the
                  columns whose value multisets agree (at least one).  The
                  other columns were
                  computed over another valid order of the peers.  Not a
                  failure unless --strict; listed in full in the report;
  unexplained     anything else: the run fails and the hunk is printed.

Writes the summary (runs, crash check, new ERRORs, GpuSort nodes in EXPLAIN
outputs, each differing test with every hunk's first native line and class,
the unexplained hunks in full) to stdout, and the same with the
tie-dependent hunks (and those of --show) in full to --report.
"""
import argparse
import collections
import difflib
import os
import re
import sys

SEP_RE = re.compile(r"^-+(\+-+)*$")
FOOTER_RE = re.compile(r"^\(\d+ rows?\)$")
# psql's messages and error position lines (the end of an earlier output)
MESSAGE_RE = re.compile(r"^(ERROR|WARNING|NOTICE|INFO|DETAIL|HINT|CONTEXT|QUERY|LINE \d+):|^\s*\^\s*$")
CRASH_RE = re.compile(r"terminated by signal|PANIC:|TRAP:")
RESULT_RE = re.compile(r"^(?:test\s+|\s+)(\S+)\s+\.\.\.\s+(ok|FAILED|failed \(ignored\))\b")
# pg_regress of PostgreSQL 16 and later prints TAP: "not ok 42    + geometry  571 ms"
TAP_RESULT_RE = re.compile(r"^(not )?ok\s+\d+\s+[-+]\s+(\S+)\s+\d+ ms")
EXPLAIN_RE = re.compile(r"explain", re.I)
# statements whose values (not just their row order) depend on the order of peers
TIE_DEPENDENT_RE = re.compile(
    r"\bover\s*\(|\bover\s+\w+|\bwindow\s+\w+\s+as\b|\bdistinct\s+on\b|\blimit\b|\boffset\b|"
    r"\bfetch\s+(first|next)\b|\b(array_agg|string_agg|json_agg|jsonb_agg|xmlagg|"
    r"json_object_agg|jsonb_object_agg)\s*\(", re.I)
SORT_NODE_RE = re.compile(r"^\s*(->\s+)?Sort( \(.*\))?\s*$")
ROWS_AMONG_PEERS_RE = re.compile(r"\bdistinct\s+on\b|\blimit\b|\boffset\b|\bfetch\s+(first|next)\b", re.I)
# a look at the native Sort's own memory (its tuplesort's contexts), which a
# GpuSort in its place does not have: the plan's internals, like EXPLAIN
SORT_INTERNALS_RE = re.compile(r"pg_backend_memory_contexts[\s\S]*'(Caller tuples|TupleSort[^']*)'")
# row_number() over a window without ORDER BY: which peer gets which number
# is the order of the rows, so a filter on it keeps any of the peers
PEER_PICK_RE = re.compile(r"\brow_number\(\)\s+over\s*\((?:(?!order\s+by)[^)])*\)", re.I)
# lines of a text-format EXPLAIN that a GpuSort changes, for hunks outside
# any recognisable table
PLAN_LINE_RE = re.compile(
    r"^\s*(->\s+)?(Custom Scan \(GpuSort\)|Sort\b|Incremental Sort\b|Gather( Merge)?\b)|"
    r"^\s+(Sort Key|Presorted Key|Sort Method|Sort Bound|Full-sort Groups|Pre-sorted Groups|"
    r"Device|Device Reason|Algorithm Reason|GPU Key Prefix|Workers Planned|Workers Launched):|^\(\d+ rows?\)$")


def read_lines(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


class Block:
    """One aligned result table: header line h, separator s, footer f (or
    None when psql printed none), end (exclusive)."""
    __slots__ = ("h", "s", "f", "end")

    def __init__(self, h, s, f, end):
        self.h, self.s, self.f, self.end = h, s, f, end

    def rows(self):
        return (self.s + 1, self.f if self.f is not None else self.end)


def is_header_of(header, sep):
    if not header.strip() or header.startswith("--") or SEP_RE.match(header):
        return False
    if len(header.rstrip()) > len(sep) + 1:
        return False
    return all(p < len(header) and header[p] == "|" for p, c in enumerate(sep) if c == "+")


def find_blocks(lines):
    blocks = []
    k, n = 1, len(lines)
    while k < n:
        line = lines[k]
        if len(line) >= 3 and SEP_RE.match(line) and is_header_of(lines[k - 1], line):
            s = k
            f = None
            end = n
            j = s + 1
            while j < n:
                if FOOTER_RE.match(lines[j]):
                    f, end = j, j + 1
                    break
                if lines[j] == "":
                    end = j
                    break
                j += 1
            blocks.append(Block(s - 1, s, f, end))
            k = end
        else:
            k += 1
    return blocks


def statement_of(lines, h):
    """The echoed statement text right above line h (a table's header): the
    lines back to the previous line ending in ';', a blank line, a footer, a
    message (ERROR: ..., its ^ line) or a psql meta-command, comment lines
    dropped."""
    out = []
    k = h - 1
    while k >= 0:
        line = lines[k]
        if line == "" or FOOTER_RE.match(line) or MESSAGE_RE.match(line):
            break
        if k < h - 1 and line.rstrip().endswith(";"):
            break
        out.append(line)
        if line.startswith("\\"):
            break
        k -= 1
    out.reverse()
    return "\n".join(l for l in out if not l.lstrip().startswith("--"))


class Side:
    def __init__(self, lines):
        self.lines = lines
        self.blocks = find_blocks(lines)
        self._stmt = {}

    def blocks_in(self, lo, hi):
        """Blocks that region [lo, hi) touches (for an empty region, blocks
        that the insertion point lies strictly inside)."""
        res = []
        for b in self.blocks:
            if lo < hi:
                if lo < b.end and hi > b.h:
                    res.append(b)
            elif b.h < lo < b.end:
                res.append(b)
        return res

    def block_at(self, k):
        for b in self.blocks:
            if b.h <= k < b.end:
                return b
        return None

    def statement(self, b):
        if b.h not in self._stmt:
            self._stmt[b.h] = statement_of(self.lines, b.h)
        return self._stmt[b.h]

    def is_plan_block(self, b):
        return (self.lines[b.h].strip() == "QUERY PLAN" or bool(EXPLAIN_RE.search(self.statement(b)))
                or bool(SORT_INTERNALS_RE.search(self.statement(b))))


def map_pos(opcodes, pos, hi, from_a):
    """Position pos of one file mapped to the other through the opcodes; in
    a changed segment, to its start (hi false) or end (hi true)."""
    for tag, i1, i2, j1, j2 in opcodes:
        a1, a2, b1, b2 = (i1, i2, j1, j2) if from_a else (j1, j2, i1, i2)
        if a1 <= pos <= a2:
            if tag == "equal":
                return b1 + (pos - a1)
            if pos == a1:
                return b1
            if pos == a2:
                return b2
            return b2 if hi else b1
    return None


def regions_of(A, B, opcodes):
    """Changed opcodes widened to whole tables on both sides and merged."""
    regs = [[i1, i2, j1, j2] for tag, i1, i2, j1, j2 in opcodes if tag != "equal"]
    changed = True
    while changed:
        changed = False
        for r in regs:
            old = list(r)
            for b in A.blocks_in(r[0], r[1]):
                r[0], r[1] = min(r[0], b.h), max(r[1], b.end)
            for b in B.blocks_in(r[2], r[3]):
                r[2], r[3] = min(r[2], b.h), max(r[3], b.end)
            r[2] = min(r[2], map_pos(opcodes, r[0], False, True))
            r[3] = max(r[3], map_pos(opcodes, r[1], True, True))
            r[0] = min(r[0], map_pos(opcodes, r[2], False, False))
            r[1] = max(r[1], map_pos(opcodes, r[3], True, False))
            if r != old:
                changed = True
        regs.sort()
        merged = []
        for r in regs:
            if merged and (r[0] < merged[-1][1] or r[2] < merged[-1][3]):
                m = merged[-1]
                m[0], m[1] = min(m[0], r[0]), max(m[1], r[1])
                m[2], m[3] = min(m[2], r[2]), max(m[3], r[3])
                changed = True
            else:
                merged.append(r)
        regs = merged
    return regs


def segments(side, lo, hi):
    """Region [lo, hi) of one side as a list of ('block', Block) and
    ('text', [lines])."""
    segs = []
    k = lo
    while k < hi:
        b = side.block_at(k)
        if b is not None and b.h == k and b.end <= hi:
            segs.append(("block", b))
            k = b.end
        else:
            if segs and segs[-1][0] == "text":
                segs[-1][1].append(side.lines[k])
            else:
                segs.append(("text", [side.lines[k]]))
            k += 1
    return segs


def columns(sep):
    """(start, end) character spans of the columns of an aligned table."""
    spans, start = [], 0
    for p, c in enumerate(sep):
        if c == "+":
            spans.append((start, p))
            start = p + 1
    spans.append((start, None))
    return spans


def cells(line, spans):
    return tuple(line[a:b].strip() if b is not None else line[a:].strip() for a, b in spans)


FUNC_COL = r'(?:\b{0}\s*\(|\bover\s*(?:\w+|\(.*?\))\s*(?:as\s+)?"?{0}\b)'


def computed_columns(stmt, headers):
    """Columns whose header names a function called in the statement (a
    window function or aggregate: psql's header is the function's name), or
    the alias of an OVER (...) expression."""
    res = set()
    for c, h in enumerate(headers):
        if h and re.search(FUNC_COL.format(re.escape(h)), stmt, re.I | re.S):
            res.add(c)
    return res


def tie_dependent_block(A, ba, B, bb):
    la, lb = A.lines, B.lines
    if la[ba.h] != lb[bb.h] or la[ba.s] != lb[bb.s]:
        return False
    if (ba.f is None) != (bb.f is None) or (ba.f is not None and la[ba.f] != lb[bb.f]):
        return False
    ra = la[slice(*ba.rows())]
    rb = lb[slice(*bb.rows())]
    if len(ra) != len(rb):
        return False
    stmt = A.statement(ba)
    if not TIE_DEPENDENT_RE.search(stmt):
        return False
    spans = columns(la[ba.s])
    ca = [cells(l, spans) for l in ra]
    cb = [cells(l, spans) for l in rb]
    proj = lambda rows, keep: collections.Counter(tuple(r[c] for c in keep) for r in rows)
    # the columns not computed by a window function or aggregate must hold
    # the same rows
    computed = computed_columns(stmt, cells(la[ba.h], spans))
    keep = [c for c in range(len(spans)) if c not in computed]
    if computed:
        if keep and proj(ca, keep) == proj(cb, keep):
            return True
        # a filter on row_number() over unordered peers kept other peers
        if not PEER_PICK_RE.search(stmt):
            return False
    # none computed: DISTINCT ON, LIMIT/OFFSET/FETCH took other rows among
    # peers; the columns whose values agree must hold the same rows
    elif not ROWS_AMONG_PEERS_RE.search(stmt):
        return False
    keep = [c for c in range(len(spans))
            if collections.Counter(r[c] for r in ca) == collections.Counter(r[c] for r in cb)]
    return bool(keep) and proj(ca, keep) == proj(cb, keep)


def classify(A, B, opcodes, reg):
    a0, a1, b0, b1 = reg
    hunks = [op for op in opcodes if op[0] != "equal" and a0 <= op[1] and op[2] <= a1
             and b0 <= op[3] and op[4] <= b1]
    # plan: every changed line inside a plan table, on both sides
    def in_plan(side, k):
        b = side.block_at(k)
        return b is not None and side.is_plan_block(b)
    changed_a = [k for _, i1, i2, _, _ in hunks for k in range(i1, i2)]
    changed_b = [k for _, _, _, j1, j2 in hunks for k in range(j1, j2)]
    if all(in_plan(A, k) for k in changed_a) and all(in_plan(B, k) for k in changed_b):
        # an insertion/deletion-only hunk still needs its point inside a plan table
        pts_ok = True
        for _, i1, i2, j1, j2 in hunks:
            if i1 == i2 and not any(A.is_plan_block(b) for b in A.blocks_in(i1, i1)):
                pts_ok = False
            if j1 == j2 and not any(B.is_plan_block(b) for b in B.blocks_in(j1, j1)):
                pts_ok = False
        if pts_ok:
            return "plan"
    # tie-order / tie-dependent: same structure, tables compared as multisets
    sa, sb = segments(A, a0, a1), segments(B, b0, b1)
    if [s[0] for s in sa] == [s[0] for s in sb]:
        verdict = "tie-order"
        for (ka, xa), (kb, xb) in zip(sa, sb):
            if ka == "text":
                if xa != xb:
                    if len(sa) == 1 and collections.Counter(xa) == collections.Counter(xb):
                        continue
                    verdict = None
                    break
                continue
            la, lb = A.lines, B.lines
            same = (la[xa.h] == lb[xb.h] and la[xa.s] == lb[xb.s] and
                    ((xa.f is None and xb.f is None) or
                     (xa.f is not None and xb.f is not None and la[xa.f] == lb[xb.f])) and
                    collections.Counter(la[slice(*xa.rows())]) == collections.Counter(lb[slice(*xb.rows())]))
            if same:
                continue
            if A.is_plan_block(xa) and B.is_plan_block(xb):
                continue
            if tie_dependent_block(A, xa, B, xb):
                verdict = "tie-dependent"
                continue
            verdict = None
            break
        if verdict:
            return verdict
    if all(PLAN_LINE_RE.search(A.lines[k]) for k in changed_a) and \
            all(PLAN_LINE_RE.search(B.lines[k]) for k in changed_b):
        return "plan"
    return "unexplained"


def hunk_text(A, B, reg, context=3):
    """The region as a unified diff (line numbers of the whole files), after
    the statement of the first table it touches."""
    a0, a1, b0, b1 = reg
    a0c, b0c = max(0, a0 - context), max(0, b0 - context)
    a1c, b1c = min(len(A.lines), a1 + context), min(len(B.lines), b1 + context)
    out = []
    blocks = A.blocks_in(a0, a1)
    if blocks:
        stmt = A.statement(blocks[0]).strip("\n")
        if stmt:
            out.append("statement:")
            out.extend("    " + l for l in stmt.split("\n"))

    def shift(m):
        return "@@ -%d,%s +%d,%s @@" % (int(m.group(1)) + a0c, m.group(2) or "1",
                                        int(m.group(3)) + b0c, m.group(4) or "1")
    for line in list(difflib.unified_diff(A.lines[a0c:a1c], B.lines[b0c:b1c],
                                          lineterm="", n=context))[2:]:
        if line.startswith("@@"):
            line = re.sub(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", shift, line)
        out.append(line)
    return out


def parse_pg_regress(path):
    res = collections.OrderedDict()
    if not os.path.exists(path):
        return res
    for line in read_lines(path):
        m = RESULT_RE.match(line)
        if m:
            res[m.group(1)] = m.group(2)
            continue
        m = TAP_RESULT_RE.match(line)
        if m:
            res[m.group(2)] = "FAILED" if m.group(1) else "ok"
    return res


def read_small(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--native", required=True)
    ap.add_argument("--gpusort", required=True)
    ap.add_argument("--report")
    ap.add_argument("--suite", default="")
    ap.add_argument("--server", default="")
    ap.add_argument("--strict", action="store_true",
                    help="tie-dependent hunks fail the run too")
    ap.add_argument("--show", action="append", default=[], metavar="CLASS",
                    choices=["plan", "tie-order", "tie-dependent", "unexplained"],
                    help="also print the hunks of this class on stdout (unexplained ones always are; "
                    "tie-dependent ones, and all with no --report, go to the report)")
    args = ap.parse_args()

    out = []      # (line, where: "both", "report" or "stdout")

    def say(line, where="both"):
        out.append((line, where))
    failures = []

    say("== gpusort vs native: PostgreSQL core regression suite")
    if args.suite:
        say("suite:  " + args.suite)
    if args.server:
        say("server: " + args.server)

    runs = {}
    for mode, d in (("native", args.native), ("gpusort", args.gpusort)):
        res = parse_pg_regress(os.path.join(d, "pg_regress.out"))
        runs[mode] = res
        nfail = sum(1 for v in res.values() if v != "ok")
        secs = read_small(os.path.join(d, "seconds"))
        rc = read_small(os.path.join(d, "pg_regress.rc"))
        say("%-8s %d tests run: %d match expected/, %d differ from expected/%s%s" % (
            mode + ":", len(res), len(res) - nfail, nfail,
            (" (pg_regress exit %s" % rc if rc else " (") + (", %s s)" % secs if secs else ")"), ""))
        if not res:
            failures.append("%s: pg_regress ran no tests" % mode)
    nat_fail = [t for t, v in runs["native"].items() if v != "ok"]
    gpu_only = [t for t, v in runs["gpusort"].items() if v != "ok" and runs["native"].get(t) == "ok"]
    say("  differ from expected/ natively: %s" % (" ".join(nat_fail) or "none"))
    say("  differ from expected/ with gpusort only (compared with native below): %s" % (" ".join(gpu_only) or "none"))

    # crashes
    for mode, d in (("native", args.native), ("gpusort", args.gpusort)):
        log = os.path.join(d, "log", "postmaster.log")
        if not os.path.exists(log):
            failures.append("%s: no server log %s" % (mode, log))
            say("crash check (%s): NO LOG at %s" % (mode, log))
            continue
        hits = [l for l in read_lines(log) if CRASH_RE.search(l)]
        say("crash check (%s server log): %s" % (mode, "%d lines" % len(hits) if hits else "clean"))
        for l in hits[:20]:
            say("    " + l)
        if hits:
            failures.append("%s: crash lines in the server log" % mode)

    # verify_order known to the server?
    glog = os.path.join(args.gpusort, "log", "postmaster.log")
    vo_unknown = os.path.exists(glog) and any(
        "gpusort.verify_order" in l and ("invalid configuration parameter" in l or "unrecognized" in l)
        for l in read_lines(glog))
    say("gpusort.verify_order: %s" % (
        "NOT KNOWN to the installed gpusort: GpuSort output order is NOT checked, so a "
        "tie-order hunk does not prove the order valid" if vo_unknown else
        "on (accepted by the server; an order violation would be an ERROR below)"))

    rdir_n = os.path.join(args.native, "results")
    rdir_g = os.path.join(args.gpusort, "results")
    names_n = {f for f in os.listdir(rdir_n) if f.endswith(".out")} if os.path.isdir(rdir_n) else set()
    names_g = {f for f in os.listdir(rdir_g) if f.endswith(".out")} if os.path.isdir(rdir_g) else set()
    for f in sorted(names_n ^ names_g):
        failures.append("%s: results only in the %s run" % (f, "native" if f in names_n else "gpusort"))

    new_errors = []
    per_test = []
    classes = collections.Counter()
    shown = ["plan", "tie-order", "tie-dependent", "unexplained"]
    shown = [c for c in shown if c in args.show or c in ("tie-dependent", "unexplained")]
    details = {c: [] for c in shown}
    gpusort_nodes = sort_nodes_g = sort_nodes_n = 0
    gpusort_tests = 0
    sorts_left = collections.OrderedDict()
    for f in sorted(names_n & names_g):
        a = read_lines(os.path.join(rdir_n, f))
        b = read_lines(os.path.join(rdir_g, f))
        ng = sum(1 for l in b if "Custom Scan (GpuSort)" in l)
        gpusort_nodes += ng
        gpusort_tests += 1 if ng else 0
        left = sum(1 for l in b if SORT_NODE_RE.match(l))
        sort_nodes_g += left
        if left:
            sorts_left[f[:-4]] = left
        sort_nodes_n += sum(1 for l in a if SORT_NODE_RE.match(l))
        ea = collections.Counter(l for l in a if l.startswith("ERROR:"))
        eb = collections.Counter(l for l in b if l.startswith("ERROR:"))
        extra = eb - ea
        for l, c in sorted(extra.items()):
            new_errors.append((f, l, c))
        if a == b:
            continue
        sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
        opcodes = sm.get_opcodes()
        A, B = Side(a), Side(b)
        regs = regions_of(A, B, opcodes)
        items = []
        for reg in regs:
            cls = classify(A, B, opcodes, reg)
            classes[cls] += 1
            items.append((reg, cls))
            if cls in details:
                details[cls].append((f, reg, hunk_text(A, B, reg)))
        per_test.append((f, items))

    say("GpuSort nodes in the gpusort run's EXPLAIN outputs: %d (in %d tests); Sort nodes: "
        "%d natively, %d left with gpusort" % (gpusort_nodes, gpusort_tests, sort_nodes_n, sort_nodes_g))
    if sorts_left:
        say("  Sort nodes left with gpusort, by test: " +
            " ".join("%s:%d" % kv for kv in sorts_left.items()))

    if new_errors:
        failures.append("%d new ERROR lines with gpusort" % sum(c for _, _, c in new_errors))
        say("new ERRORs with gpusort (not in the native output of the test):")
        for f, l, c in new_errors:
            say("  %s: %s%s" % (f, l, " (x%d)" % c if c > 1 else ""))
    else:
        say("new ERRORs with gpusort: none")

    say("outputs that differ from native: %d of %d tests; hunks: %s" % (
        len(per_test), len(names_n & names_g),
        ", ".join("%s %d" % (c, classes[c]) for c in ("plan", "tie-order", "tie-dependent", "unexplained"))))
    for f, items in per_test:
        cnt = collections.Counter(c for _, c in items)
        say("  %-28s %s" % (f, ", ".join("%s %d" % (c, n) for c, n in sorted(cnt.items()))))
        entries = ["%d:%s" % (reg[0] + 1, c) for reg, c in items]
        line = "      native line:class"
        for e in entries:
            if len(line) + len(e) + 1 > 100:
                say(line)
                line = "     "
            line += " " + e
        say(line)

    notes = {"tie-dependent": " (values computed over another order of peers; review)"}
    for cls in shown:
        if details[cls]:
            # unexplained hunks and those asked for with --show on stdout,
            # all of them in the report
            full = cls == "unexplained" or cls in args.show or not args.report
            say("")
            head = "== %s hunks (--- native, +++ gpusort)%s" % (cls, notes.get(cls, ""))
            if full:
                say(head)
            else:
                say(head, "report")
                say(head + ": in full in " + args.report, "stdout")
            for f, reg, text in details[cls]:
                where = "both" if full else "report"
                say("-- %s native lines %d-%d, gpusort lines %d-%d" % (
                    f, reg[0] + 1, reg[1], reg[2] + 1, reg[3]), where)
                for t in text:
                    say(t, where)
    if classes["unexplained"]:
        failures.append("%d unexplained hunks" % classes["unexplained"])
    if args.strict and classes["tie-dependent"]:
        failures.append("%d tie-dependent hunks (--strict)" % classes["tie-dependent"])

    say("")
    if failures:
        say("RESULT: FAIL")
        for x in failures:
            say("  " + x)
    else:
        say("RESULT: PASS (gpusort changed only plans, the order of equal rows%s)" % (
            " and values computed over it" if classes["tie-dependent"] else ""))
    sys.stdout.write("".join(l + "\n" for l, w in out if w != "report"))
    if args.report:
        with open(args.report, "w") as fo:
            fo.write("".join(l + "\n" for l, w in out if w != "stdout"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
