/*
 * gpusort_planner.c -- puts GpuSort in place of PostgreSQL's Sort.
 *
 * A planner_hook lets the standard planner finish, then walks the finished
 * plan (main tree and every subplan) and replaces each Sort whose keys are
 * all supported (src/sort_keys.c) with a CustomScan "GpuSort" over the
 * Sort's child.  That covers ORDER BY and the Sorts under merge joins,
 * sorted aggregation, DISTINCT and window functions alike.
 *
 * Cost: with gpusort.cost_model on, a Sort is replaced only where the
 * GpuSort's estimate (gpusort_cost.c) is below the cost of the native
 * nodes it replaces (doc/cost_model.md).
 *
 * Bounds: a Limit with constant LIMIT/OFFSET directly above the Sort (or
 * above a Gather Merge above it) gives the node its bound at plan time, as
 * ExecSetTupleBound does not reach custom scans.
 *
 * Parallel plans: Gather Merge -> Sort -> partial plan becomes
 * GpuSort -> Gather -> partial plan, so that workers scan in parallel and
 * only the leader sorts (workers opening the GPU would each pay its start-up
 * cost).  With a small bound the workers' Sorts are replaced instead, and
 * they use the CPU top-k path, which never opens the GPU.  With
 * gpusort.parallel_fill a GpuSortFill goes between the Gather and the
 * partial plan, so that the workers store their rows for the GpuSort
 * (parallel_fill.c).
 *
 * A serial Sort -> Seq Scan of a table large enough for parallel workers
 * becomes GpuSort -> Gather -> GpuSortFill -> Parallel Seq Scan where the
 * workers would store the rows (gpusort.parallel_fill).  The standard
 * planner leaves such a scan serial because it prices every row through the
 * Gather's tuple queue (parallel_tuple_cost) and the CPU sort in one
 * process; with the workers storing their rows, neither cost is paid.  Only
 * in the main plan tree outside any Gather (no nested Gathers, no workers
 * running a Gather), where the standard planner found the scan parallel
 * safe, and with as many workers as it gives such a scan.
 */
#include "postgres.h"

#include <math.h>

#include "access/table.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "storage/bufmgr.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "guc.h"
#include "gpusort_cost.h"
#include "gpusort_node.h"
#include "gpusort_plan.h"
#include "parallel_fill.h"
#include "pg_compat.h"
#include "plan_build.h"
#include "relabeled_keys.h"
#include "sort_engine.h"
#include "sort_keys.h"

static planner_hook_type prev_planner_hook = NULL;

/*
 * The statement being rewritten, and whether the node being rewritten may
 * get a Gather below it (main plan tree, outside every Gather).
 */
static PlannedStmt *current_stmt = NULL;
static bool gather_allowed = false;

/* Is the node being rewritten below a Gather (run by parallel workers)? */
static bool below_gather = false;

/*
 * The keys of a Sort or Gather Merge.  Their column numbers (sortColIdx)
 * number the target list of `keyed`: the Sort itself, or for a Gather
 * Merge its child Sort (Gather Merge compares the tuples its child hands
 * up, not its own projected output).
 */
typedef struct SortSpec
{
	Plan	   *keyed;			/* the Sort whose targetlist the keys index */
	int			numCols;
	AttrNumber *sortColIdx;
	Oid		   *sortOperators;
	Oid		   *collations;
	bool	   *nullsFirst;
} SortSpec;

/*
 * Is tlist a Sort's column list over child: each entry an OUTER_VAR Var
 * naming a column of child (of that column's type) or, for columns nobody
 * reads, a constant?
 */
static bool
is_column_list(List *tlist, Plan *child)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		Expr	   *expr = lfirst_node(TargetEntry, lc)->expr;
		Var		   *var = (Var *) expr;

		if (IsA(expr, Const))
			continue;
		if (!IsA(expr, Var) || var->varno != OUTER_VAR || var->varlevelsup != 0 ||
			var->varattno < 1 || var->varattno > list_length(child->targetlist) ||
			var->vartype != exprType((Node *) list_nth_node(TargetEntry, child->targetlist,
															 var->varattno - 1)->expr))
			return false;
	}
	return true;
}

/*
 * Context of to_scan_columns: the column list (a Sort's) whose entries the
 * OUTER_VAR Vars of the expression being mapped number.
 */
typedef struct ScanColumnsContext
{
	List	   *columns;
	bool		understood;
} ScanColumnsContext;

static Node *
to_scan_columns_mutator(Node *node, ScanColumnsContext *cxt)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;
		TargetEntry *col;
		Node	   *expr;

		if (var->varno != OUTER_VAR || var->varlevelsup != 0 ||
			var->varattno < 1 || var->varattno > list_length(cxt->columns))
		{
			cxt->understood = false;
			return node;
		}
		col = list_nth_node(TargetEntry, cxt->columns, var->varattno - 1);
		expr = (Node *) copyObject(col->expr);
		if (IsA(expr, Var))
		{
			Assert(((Var *) expr)->varno == OUTER_VAR);
			((Var *) expr)->varno = INDEX_VAR;
		}
		return expr;
	}
	return expression_tree_mutator(node, to_scan_columns_mutator, (void *) cxt);
}

/*
 * tlist, whose OUTER_VAR Vars number `columns` (a Sort's column list), as
 * the output of a GpuSort whose scan tuple is the Sort's child row
 * (INDEX_VAR Vars); NIL if tlist holds a Var of another kind.
 */
static List *
to_scan_columns(List *tlist, List *columns)
{
	ScanColumnsContext cxt = {columns, true};
	List	   *mapped;

	mapped = (List *) to_scan_columns_mutator((Node *) copyObject(tlist), &cxt);
	return cxt.understood ? mapped : NIL;
}

/*
 * The bytes of sorted runs the rows the planner expects would write past
 * gpusort's memory budget (gpusort_memory_limit; node_spill.h), 0 if they
 * fit, and in *runs how many.  In memory a row takes the stored tuple with
 * its header and pointer, up to three key words a key, and the permutation
 * and CPU sort scratch; in a run the tuple and its key words.  A small
 * bound keeps only that many rows (the top-k heap).
 */
static double
expected_run_bytes(Plan *child, double rows, const GpuSortKeySpec *keys,
				   const GpuSortKeyCode *codes, int nkeys, int64 bound, double *runs)
{
	double		tuple_bytes = MAXALIGN(child->plan_width + MINIMAL_TUPLE_DATA_OFFSET);
	double		key_bytes = 0;
	double		memory;

	for (int k = 0; k < nkeys; k++)
		key_bytes += (1 + gpusort_code_words(codes[k], keys[k].type)) * sizeof(uint32);
	if (bound >= 0 && bound <= GPUSORT_TOPK_MAX_BOUND)
		rows = Min(rows, (double) bound);
	memory = rows * (tuple_bytes + sizeof(void *) + 4 * sizeof(uint32) + key_bytes);
	*runs = ceil(memory / (double) gpusort_memory_limit());
	if (*runs <= 1)
		return 0;
	return rows * (tuple_bytes + key_bytes + sizeof(uint32));
}

/* The code of the first key that is not WHOLE (WHOLE if none). */
static GpuSortKeyCode
first_code_not_whole(const GpuSortKeyCode *codes, int nkeys)
{
	for (int k = 0; k < nkeys; k++)
		if (codes[k] != GPUSORT_CODE_WHOLE)
			return codes[k];
	return GPUSORT_CODE_WHOLE;
}

/*
 * Is a GpuSort of these keys over child expected to cost less than the
 * native nodes it replaces (native_cost: their own cost, less the cost of
 * the plan below them), with added_cost for what the rewrite puts below
 * it (a Gather in place of a Gather Merge)?  groups: the groups a sorted
 * aggregation or Unique above expects of these rows (0: unknown).  est:
 * the GpuSort's estimate.
 * Always true with gpusort.cost_model off.
 */
static bool
expected_to_win(Plan *top, const GpuSortKeySpec *keys, const GpuSortKeyCode *codes, int nkeys,
				int64 bound, double groups, Cost native_cost, Cost added_cost,
				double intake_processes, GpuSortCost *est)
{
	GpuSortCostInput in;

	memset(&in, 0, sizeof(in));
	in.rows = top->plan_rows;
	in.width = top->plan_width;
	in.prefix_code = first_code_not_whole(codes, nkeys);
	in.bound = bound;
	in.in_workers = below_gather;
	in.groups = groups;
	in.intake_processes = intake_processes;
	in.spill_bytes = expected_run_bytes(top, in.rows, keys, codes, nkeys, bound, &in.runs);
	for (int k = 0; k < nkeys; k++)
	{
		in.key_words += gpusort_code_words(codes[k], keys[k].type);
		if (!gpusort_code_lossless(codes[k], keys[k].type))
			in.ties_finished = true;
		if (gpusort_code_checked(codes[k]))
			in.checked = true;
	}
	gpusort_estimate(&in, est);
	if (!gpusort_cost_model)
		return true;
	elog(DEBUG1, "gpusort: %.0f rows: GpuSort %.1f (%s; intake %.1f in %.0f processes, sort %.1f, "
		 "finish %.1f, emit %.1f, runs %.1f, below %.1f) against native %.1f",
		 in.rows, est->total + added_cost, est->on_gpu ? "GPU" : "CPU", est->intake,
		 Max(intake_processes, 1.0), est->sort, est->finish, est->emit, est->runs, added_cost,
		 native_cost);
	return est->total + added_cost < native_cost;
}

/*
 * The GpuSort that replaces `top` (a Sort, or a Gather Merge over one) and
 * reads child: the keys of spec, and top's output (its targetlist, whose
 * Vars number spec->keyed's columns); native_parallel: top is a Gather
 * Merge (the native Sort runs in the parallel workers); groups,
 * native_cost, added_cost: for the cost model (expected_to_win).  NULL,
 * and the native node kept, if a key is unsupported, a list is not of a
 * shape understood here, or the native plan is expected to cost less.
 */
static Plan *
make_gpusort(const SortSpec *spec, Plan *top, Plan *child, int plan_node_id, int64 bound,
			 bool native_parallel, double groups, Cost native_cost, Cost added_cost,
			 double intake_processes)
{
	GpuSortCost est;
	CustomScan *cscan;
	List	   *columns = spec->keyed->targetlist;
	List	   *attnos = NIL,
			   *types = NIL,
			   *sortops = NIL,
			   *collations = NIL,
			   *nulls_first = NIL,
			   *descending = NIL,
			   *code_list = NIL;
	List	   *tlist;
	GpuSortKeySpec *keys;
	GpuSortKeyCode *codes;
	bool	   *desc;
	bool		whole;

	/* the keyed Sort passes its child's columns on, as a Sort does */
	if (!is_column_list(columns, child))
		return NULL;
	keys = palloc(spec->numCols * sizeof(GpuSortKeySpec));
	codes = palloc(spec->numCols * sizeof(GpuSortKeyCode));
	desc = palloc(spec->numCols * sizeof(bool));
	for (int i = 0; i < spec->numCols; i++)
	{
		AttrNumber	idx = spec->sortColIdx[i];
		Var		   *var;

		if (idx < 1 || idx > list_length(columns))
			return NULL;
		var = (Var *) list_nth_node(TargetEntry, columns, idx - 1)->expr;
		if (!IsA(var, Var))
			return NULL;
		/* a domain sorts as its base type */
		keys[i].type = getBaseType(var->vartype);
		keys[i].sortop = spec->sortOperators[i];
		keys[i].collation = spec->collations[i];
		keys[i].nulls_first = spec->nullsFirst[i];
		attnos = lappend_int(attnos, var->varattno);
	}
	/* the GPU must have words to sort by: a first key without any stays native */
	if (!gpusort_key_codes(keys, spec->numCols, codes, desc) ||
		codes[0] == GPUSORT_CODE_NONE)
		return NULL;
	whole = gpusort_keys_whole(codes, spec->numCols);
	/* under a small bound the native top-N heap sort compares fewer values than any sort */
	if (!whole && bound >= 0 && bound <= GPUSORT_TOPK_MAX_BOUND)
		return NULL;
	/*
	 * Without the GPU, a key sorted by its bytes (refined by further CPU
	 * radix passes, or 16-byte uuids) is slower in one process than in the
	 * native Sort's parallel workers (bench/results/key_types-*): the
	 * Gather Merge stays, and the workers sort in parallel.  "Without the
	 * GPU" as far as this backend knows: the planner opens no GPU.
	 */
	if (!whole && native_parallel && first_code_not_whole(codes, spec->numCols) == GPUSORT_CODE_BYTES &&
		gpusort_gpu_known_unusable())
		return NULL;
	for (int i = 0; i < spec->numCols; i++)
	{
		types = lappend_oid(types, keys[i].type);
		sortops = lappend_oid(sortops, keys[i].sortop);
		collations = lappend_oid(collations, keys[i].collation);
		nulls_first = lappend_int(nulls_first, keys[i].nulls_first);
		descending = lappend_int(descending, desc[i]);
		code_list = lappend_int(code_list, codes[i]);
	}

	/* gpusort.cost_model: only where GpuSort is expected to cost less */
	if (!expected_to_win(top, keys, codes, spec->numCols, bound, groups, native_cost, added_cost,
						 intake_processes, &est))
		return NULL;

	/* scan tuple = the child's row; output = top's targetlist over it */
	tlist = to_scan_columns(top->targetlist, columns);
	if (tlist == NIL && top->targetlist != NIL)
		return NULL;
	/* no column of the child's rows that only relabels another (ORDER BY t COLLATE "C") */
	gpusort_drop_relabeled_columns(child, attnos, &tlist);

	cscan = makeNode(CustomScan);
	cscan->scan.plan.startup_cost = top->startup_cost;
	cscan->scan.plan.total_cost = top->total_cost;
	if (gpusort_cost_model)
	{
		/* what the model expects: the child's cost and the GpuSort's own */
		cscan->scan.plan.startup_cost = child->total_cost + est.startup;
		cscan->scan.plan.total_cost = child->total_cost + est.total;
	}
	cscan->scan.plan.plan_rows = top->plan_rows;
	cscan->scan.plan.plan_width = top->plan_width;
	gpusort_copy_disabled_nodes(&cscan->scan.plan, top);
	cscan->scan.plan.parallel_aware = false;
	cscan->scan.plan.parallel_safe = top->parallel_safe;
	cscan->scan.plan.plan_node_id = plan_node_id;
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.initPlan = top->initPlan;
	cscan->scan.plan.extParam = bms_copy(top->extParam);
	cscan->scan.plan.allParam = bms_copy(top->allParam);
	cscan->scan.plan.lefttree = child;
	cscan->scan.scanrelid = 0;
	cscan->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN | CUSTOMPATH_SUPPORT_MARK_RESTORE;
	cscan->custom_scan_tlist = gpusort_column_vars(child->targetlist, OUTER_VAR);
	cscan->custom_private = gpusort_pack_private(attnos, types, sortops, collations,
												 nulls_first, descending,
												 bound >= 0 && bound <= PG_INT32_MAX ? (int) bound : -1,
												 code_list);
	cscan->methods = &gpusort_scan_methods;
	return (Plan *) cscan;
}

List *
gpusort_pack_private(List *attnos, List *types, List *sortops, List *collations,
					 List *nulls_first, List *descending, int bound, List *codes)
{
	List	   *private = NIL;

	/* in the order of enum GpuSortPrivateIndex */
	private = lappend(private, attnos);
	private = lappend(private, types);
	private = lappend(private, sortops);
	private = lappend(private, collations);
	private = lappend(private, nulls_first);
	private = lappend(private, descending);
	private = lappend(private, list_make1_int(bound));
	private = lappend(private, codes);
	Assert(list_length(private) == GPUSORT_PRIVATE_COUNT);
	return private;
}

/* LIMIT + OFFSET of a Limit node when both are constants, else -1. */
static int64
limit_bound(Limit *limit)
{
	Const	   *count = (Const *) limit->limitCount;
	Const	   *offset = (Const *) limit->limitOffset;
	int64		bound;

	if (limit->limitOption != LIMIT_OPTION_COUNT ||
		count == NULL || !IsA(count, Const) || count->constisnull)
		return -1;
	bound = DatumGetInt64(count->constvalue);
	if (offset != NULL)
	{
		if (!IsA(offset, Const))
			return -1;
		if (!offset->constisnull)
		{
			int64		off = DatumGetInt64(offset->constvalue);

			if (off < 0 || pg_add_s64_overflow(bound, off, &bound))
				return -1;
		}
	}
	return bound < 0 ? -1 : bound;
}

static bool
big_enough(Plan *plan)
{
	return plan->plan_rows >= (double) gpusort_min_rows;
}

static Plan *rewrite_plan(Plan *plan, int64 bound);

/*
 * The Limit whose child rewrite_plan is about to rewrite, where its count
 * or offset is known only at run time (runtime_limit_ok); NULL otherwise.
 */
static Limit *next_runtime_limit = NULL;

/*
 * The groups a sorted aggregation, Group or Unique expects of the rows of
 * the child rewrite_plan is about to rewrite (0: none such), for the cost
 * model's count of rows whose key prefixes tie.
 */
static double next_sort_groups = 0;

/* Is there a Param in the expression that is not a query parameter ($n)? */
static bool
has_other_params(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
		return ((Param *) node)->paramkind != PARAM_EXTERN;
	return expression_tree_walker(node, has_other_params, context);
}

/* Can the GpuSort below evaluate this LIMIT or OFFSET expression itself? */
static bool
runtime_expr_ok(Node *expr)
{
	return expr == NULL ||
		(!contain_var_clause(expr) && !contain_volatile_functions(expr) &&
		 !contain_subplans(expr) && !has_other_params(expr, NULL));
}

/*
 * A Limit of LIMIT/OFFSET expressions of query parameters (a generic plan's
 * $1), which limit_bound cannot fold: the GpuSort below gets them, to
 * evaluate before it reads its input as the Limit does.
 */
static bool
runtime_limit_ok(Limit *limit)
{
	return limit->limitOption == LIMIT_OPTION_COUNT && limit->limitCount != NULL &&
		runtime_expr_ok(limit->limitCount) && runtime_expr_ok(limit->limitOffset);
}

/* Give gpusort the bound of limit (runtime_limit_ok), evaluated at run time. */
static void
set_runtime_bound(Plan *gpusort, Limit *limit)
{
	CustomScan *cscan = (CustomScan *) gpusort;
	Node	   *offset = limit->limitOffset;

	if (offset == NULL)
		offset = (Node *) makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
									Int64GetDatum(0), false, FLOAT8PASSBYVAL);
	linitial_int(gpusort_private(cscan, GPUSORT_PRIVATE_BOUND)) = GPUSORT_BOUND_AT_RUN_TIME;
	cscan->custom_exprs = list_make2(copyObject(limit->limitCount), copyObject(offset));
}

static List *
rewrite_list(List *plans)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = rewrite_plan((Plan *) lfirst(lc), -1);
	return plans;
}

/*
 * Parallel workers the standard planner gives a parallel scan of the table
 * that scan reads (its parallel_workers storage parameter, or by size and
 * min_parallel_table_scan_size), up to max_parallel_workers_per_gather.
 */
static int
scan_workers(SeqScan *scan)
{
	RangeTblEntry *rte = rt_fetch(scan->scan.scanrelid, current_stmt->rtable);
	RelOptInfo	rel;
	Relation	r;
	BlockNumber pages;

	if (rte->rtekind != RTE_RELATION)
		return 0;
	/* the planner holds a lock on it */
	r = table_open(rte->relid, NoLock);
	pages = RelationGetNumberOfBlocks(r);
	memset(&rel, 0, sizeof(rel));
	rel.reloptkind = RELOPT_BASEREL;
	rel.rel_parallel_workers = RelationGetParallelWorkers(r, -1);
	table_close(r, NoLock);
	return compute_parallel_worker(&rel, (double) pages, -1, max_parallel_workers_per_gather);
}

/*
 * The parallel workers parallel_scan_under would put under a GpuSort over
 * child (bound: the GpuSort's), 0 if it would leave the scan serial.
 */
static int
scan_under_workers(Plan *child, int64 bound)
{
	if (!gather_allowed || !IsA(child, SeqScan) || child->parallel_aware ||
		!child->parallel_safe || child->initPlan != NIL ||
		!bms_is_empty(child->extParam) || !bms_is_empty(child->allParam) ||
		(bound >= 0 && bound <= GPUSORT_TOPK_MAX_BOUND) ||
		gpusort_parallel_fill == GPUSORT_PARALLEL_FILL_OFF)
		return 0;
	return scan_workers((SeqScan *) child);
}

/*
 * The processes that encode and store a GpuSort's rows side by side where
 * workers store them: a Gather's workers, and its leader where it runs
 * the plan too (gpusort.gather_leader_scans); 1 where there are none.
 */
static double
intake_processes(int workers)
{
	if (workers <= 0 || gpusort_parallel_fill == GPUSORT_PARALLEL_FILL_OFF)
		return 1;
	return workers + (gpusort_gather_leader_scans ? 1 : 0);
}

/*
 * Gather -> GpuSortFill -> Parallel Seq Scan in place of the serial Seq Scan
 * under gpusort (child), where the workers would store the rows (bound:
 * the GpuSort's); child itself otherwise.
 */
static Plan *
parallel_scan_under(Plan *gpusort, Plan *child, int64 bound)
{
	Gather	   *gather;
	Plan	   *fill;
	int			workers = scan_under_workers(child, bound);

	if (workers <= 0)
		return child;
	fill = gpusort_make_fill(child, ((CustomScan *) gpusort)->custom_private);
	if (fill == child)
		return child;			/* the workers would send every row up */

	child->parallel_aware = true;
	gather = makeNode(Gather);
	gather->plan.startup_cost = child->startup_cost + parallel_setup_cost;
	gather->plan.total_cost = child->total_cost + parallel_setup_cost;
	gather->plan.plan_rows = child->plan_rows;
	gather->plan.plan_width = child->plan_width;
	gpusort_copy_disabled_nodes(&gather->plan, child);
	gather->plan.parallel_aware = false;
	gather->plan.parallel_safe = false;
	gather->plan.plan_node_id = gpusort_new_plan_node_id();
	gather->plan.targetlist = gpusort_column_vars(child->targetlist, OUTER_VAR);
	gather->plan.lefttree = fill;
	gather->num_workers = workers;
	gather->rescan_param = -1;	/* nothing below depends on a parameter */
	gather->single_copy = !gpusort_gather_leader_scans;
	gather->invisible = false;
	current_stmt->parallelModeNeeded = true;
	return (Plan *) gather;
}

static Plan *
rewrite_sort(Sort *sort, int64 bound, Limit *runtime_limit, double groups)
{
	SortSpec	spec = {&sort->plan, sort->numCols, sort->sortColIdx,
	sort->sortOperators, sort->collations, sort->nullsFirst};
	Plan	   *gpusort;

	sort->plan.lefttree = rewrite_plan(sort->plan.lefttree, -1);
	if (!big_enough(&sort->plan) || sort->plan.qual != NIL)
		return (Plan *) sort;
	gpusort = make_gpusort(&spec, &sort->plan, sort->plan.lefttree,
						   sort->plan.plan_node_id, bound, false, groups,
						   sort->plan.total_cost - sort->plan.lefttree->total_cost +
						   gpusort_native_sort_extra(sort->plan.plan_rows, sort->plan.plan_width,
													 bound),
						   0, intake_processes(scan_under_workers(sort->plan.lefttree, bound)));
	if (gpusort == NULL)
		return (Plan *) sort;
	if (runtime_limit != NULL && bound < 0)
		set_runtime_bound(gpusort, runtime_limit);
	gpusort->lefttree = parallel_scan_under(gpusort, gpusort->lefttree, bound);
	return gpusort;
}

/* Gather Merge -> Sort -> partial plan  ==>  GpuSort -> Gather -> partial plan */
static Plan *
rewrite_gather_merge(GatherMerge *gm, int64 bound, Limit *runtime_limit, double groups)
{
	Sort	   *sort = (Sort *) gm->plan.lefttree;
	SortSpec	spec = {&sort->plan, gm->numCols, gm->sortColIdx,
	gm->sortOperators, gm->collations, gm->nullsFirst};
	Gather	   *gather;
	Plan	   *gpusort = NULL;
	bool		fill;

	/* a Sort's own initPlans or qual would have nowhere to go */
	if (!IsA(sort, Sort) || gm->plan.qual != NIL || sort->plan.qual != NIL ||
		sort->plan.initPlan != NIL || !big_enough(&gm->plan) ||
		(bound >= 0 && bound <= GPUSORT_TOPK_MAX_BOUND))
		goto keep;

	gather = makeNode(Gather);
	gather->plan.startup_cost = gm->plan.startup_cost;
	gather->plan.total_cost = gm->plan.total_cost;
	gather->plan.plan_rows = gm->plan.plan_rows;
	gather->plan.plan_width = gm->plan.plan_width;
	gpusort_copy_disabled_nodes(&gather->plan, sort->plan.lefttree);
	gather->plan.parallel_aware = false;
	gather->plan.parallel_safe = false;
	gather->plan.plan_node_id = gm->plan.plan_node_id;
	/* the Sort's child's columns (the Gather Merge's own output may be a projection) */
	gather->plan.targetlist = gpusort_column_vars(sort->plan.lefttree->targetlist, OUTER_VAR);
	gather->plan.qual = NIL;
	gather->plan.lefttree = sort->plan.lefttree;
	gather->plan.extParam = bms_copy(gm->plan.extParam);
	gather->plan.allParam = bms_copy(gm->plan.allParam);
	gather->num_workers = gm->num_workers;
	gather->rescan_param = gm->rescan_param;
	/* single copy: the workers run the plan, the leader only collects their rows */
	gather->single_copy = !gpusort_gather_leader_scans;
	gather->invisible = false;
	gather->initParam = bms_copy(gm->initParam);

	/* the workers store the rows (GpuSortFill below the Gather) */
	fill = gpusort_parallel_fill != GPUSORT_PARALLEL_FILL_OFF && sort->plan.lefttree->parallel_safe;
	if (gpusort_cost_model)
	{
		/*
		 * A Gather's cost (cost_gather): start-up, and each row through a
		 * tuple queue where the workers do not store the rows
		 */
		gather->plan.startup_cost = sort->plan.lefttree->startup_cost + parallel_setup_cost;
		gather->plan.total_cost = sort->plan.lefttree->total_cost + parallel_setup_cost +
			(fill ? 0 : parallel_tuple_cost * gm->plan.plan_rows);
	}

	/*
	 * The Gather Merge's initPlans move up to the GpuSort.  Cost model:
	 * native, the workers' Sorts and the Gather Merge; GpuSort, the Gather
	 * and itself.
	 */
	gpusort = make_gpusort(&spec, &gm->plan, (Plan *) gather, sort->plan.plan_node_id, bound,
						   true, groups, gm->plan.total_cost - sort->plan.lefttree->total_cost +
						   gpusort_native_sort_extra(sort->plan.plan_rows, sort->plan.plan_width,
													 bound),
						   gather->plan.total_cost - sort->plan.lefttree->total_cost,
						   intake_processes(fill ? gm->num_workers : 0));
	if (gpusort != NULL)
	{
		if (runtime_limit != NULL && bound < 0)
			set_runtime_bound(gpusort, runtime_limit);
		/* gpusort.parallel_fill: workers store their rows for the GpuSort */
		below_gather = true;
		gather->plan.lefttree = gpusort_make_fill(rewrite_plan(gather->plan.lefttree, -1),
												  ((CustomScan *) gpusort)->custom_private);
		below_gather = false;
		return gpusort;
	}

keep:
	/* the bound, and the groups expected above, reach the workers' Sorts */
	below_gather = true;
	next_sort_groups = groups;
	gm->plan.lefttree = rewrite_plan(gm->plan.lefttree, bound);
	below_gather = false;
	return (Plan *) gm;
}

static Plan *
rewrite_plan(Plan *plan, int64 bound)
{
	/* a run-time bound reaches only the Limit's direct child, as `bound` */
	Limit	   *runtime_limit = next_runtime_limit;
	double		groups = next_sort_groups;

	next_runtime_limit = NULL;
	next_sort_groups = 0;
	if (plan == NULL)
		return NULL;

	switch (nodeTag(plan))
	{
		case T_Gather:
		case T_GatherMerge:
			{
				/* below a Gather: no Gather of ours */
				bool		allowed = gather_allowed;

				gather_allowed = false;
				if (IsA(plan, GatherMerge))
					plan = rewrite_gather_merge((GatherMerge *) plan, bound, runtime_limit,
												groups);
				else
				{
					below_gather = true;
					plan->lefttree = rewrite_plan(plan->lefttree, -1);
					below_gather = false;
				}
				gather_allowed = allowed;
				return plan;
			}
		case T_Sort:
			return rewrite_sort((Sort *) plan, bound, runtime_limit, groups);
		case T_Limit:
			{
				int64		limit = limit_bound((Limit *) plan);

				if (limit < 0 && runtime_limit_ok((Limit *) plan))
					next_runtime_limit = (Limit *) plan;
				plan->lefttree = rewrite_plan(plan->lefttree, limit);
				return plan;
			}
		case T_Append:
			rewrite_list(((Append *) plan)->appendplans);
			break;
		case T_MergeAppend:
			rewrite_list(((MergeAppend *) plan)->mergeplans);
			break;
		case T_BitmapAnd:
			rewrite_list(((BitmapAnd *) plan)->bitmapplans);
			break;
		case T_BitmapOr:
			rewrite_list(((BitmapOr *) plan)->bitmapplans);
			break;
		case T_SubqueryScan:
			((SubqueryScan *) plan)->subplan = rewrite_plan(((SubqueryScan *) plan)->subplan, -1);
			break;
		case T_CustomScan:
			rewrite_list(((CustomScan *) plan)->custom_plans);
			break;
		case T_Agg:
			if (((Agg *) plan)->aggstrategy == AGG_SORTED)
				next_sort_groups = plan->plan_rows;
			break;
		case T_Group:
		case T_Unique:
			next_sort_groups = plan->plan_rows;
			break;
		default:
			break;
	}
	plan->lefttree = rewrite_plan(plan->lefttree, -1);
	plan->righttree = rewrite_plan(plan->righttree, -1);
	return plan;
}

static PlannedStmt *
gpusort_planner(Query *parse, const char *query_string, int cursorOptions,
				ParamListInfo boundParams)
{
	PlannedStmt *stmt;

	if (prev_planner_hook)
		stmt = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions, boundParams);

	if (gpusort_enabled)
	{
		gpusort_plan_ids_start(stmt);
		current_stmt = stmt;
		gather_allowed = true;
		below_gather = false;
		stmt->planTree = rewrite_plan(stmt->planTree, -1);
		gather_allowed = false;
		rewrite_list(stmt->subplans);
		current_stmt = NULL;
	}
	return stmt;
}

void
gpusort_install_planner_hook(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = gpusort_planner;
}
