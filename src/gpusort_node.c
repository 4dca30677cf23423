/*
 * gpusort_node.c -- the GpuSort custom scan node: its executor callbacks
 * and the emission of the sorted rows.
 *
 * On the first fetch the node reads and sorts its whole input
 * (node_intake.c, node_topk.c); then it hands rows up in the sorted order.
 * Backward fetches, mark/restore and rescans move a cursor over the
 * permutation (or over the merged runs of a sort past its budget,
 * node_spill.c, or over the tuplesort that took the rows).  EXPLAIN:
 * node_explain.c.
 */
#include "postgres.h"

#include "common/int.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "utils/memutils.h"
#include "utils/sortsupport.h"

#include "gpusort_node.h"
#include "gpusort_plan.h"
#include "node_state.h"
#include "phase_hook.h"

/*
 * Rows in permutation order are scattered over the store, so the memory of
 * the row EMIT_PREFETCH positions ahead of the reader is prefetched.  A
 * tuple store's rows are also handed up in batches: the tuple pointers of
 * the next EMIT_BATCH positions are looked up in one tight loop (many cache
 * misses in flight at once).  A tuple's first cache line is prefetched
 * 2 * EMIT_PREFETCH positions ahead, and the rest of it, up to
 * EMIT_PREFETCH_BYTES by the length that line holds, EMIT_PREFETCH ahead:
 * a node above that reads every column (a projection, the junk filter of
 * a resjunk sort column, a client) finds the whole row in cache.  Tuples
 * in the workers' chunks lie in shared memory of 4 kB pages (the node's
 * own large stores are in huge pages), where each row also costs a page
 * walk: where most of the rows lie there, the reader prefetches
 * EMIT_PREFETCH_SHARED rows ahead.
 * (Locally, 2M 180-byte rows mostly in the workers' chunks: emission took
 * 307-379 ms prefetching 16 rows ahead, 203-257 ms at 24 or 32, 220-361
 * ms at 48 or 64; from the node's own memory 16 was the best.)
 */
#define EMIT_BATCH 512
#define EMIT_PREFETCH 16
#define EMIT_PREFETCH_SHARED 32
#define EMIT_PREFETCH_BYTES 1024

/* How far ahead of the reader a tuple store's rows are prefetched. */
static inline int
emit_distance(const GpuSortState *state)
{
	return state->rows_shared ? EMIT_PREFETCH_SHARED : EMIT_PREFETCH;
}

static Node *create_state(CustomScan *cscan);
static void begin_scan(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_scan(CustomScanState *node);
static void end_scan(CustomScanState *node);
static void rescan(CustomScanState *node);
static void mark_pos(CustomScanState *node);
static void restr_pos(CustomScanState *node);

CustomScanMethods gpusort_scan_methods = {
	"GpuSort",
	create_state
};

static CustomExecMethods gpusort_exec_methods = {
	.CustomName = "GpuSort",
	.BeginCustomScan = begin_scan,
	.ExecCustomScan = exec_scan,
	.EndCustomScan = end_scan,
	.ReScanCustomScan = rescan,
	.MarkPosCustomScan = mark_pos,
	.RestrPosCustomScan = restr_pos,
	.ExplainCustomScan = node_explain,
};

void
gpusort_register_node(void)
{
	RegisterCustomScanMethods(&gpusort_scan_methods);
}

/*
 * The rows the node's input is expected to hand up (the stores are sized
 * for them).  A Gather's own estimate counts only its workers' share of
 * the partial plan below it; where the leader runs that plan too, its share
 * is added back, as the planner's parallel divisor counts it (costsize.c):
 * without it a 10M-row input is expected at 8.3M rows and its stores are
 * copied into larger ones at the end.
 */
static double
input_rows_estimate(Plan *outer)
{
	double		rows;

	if (outer == NULL)
		return 0;
	rows = outer->plan_rows;
	if (IsA(outer, Gather) && outerPlan(outer) != NULL)
	{
		Gather	   *gather = (Gather *) outer;
		double		processes = gather->num_workers;

		if (parallel_leader_participation && !gather->single_copy)
			processes += Max(1.0 - 0.3 * gather->num_workers, 0.0);
		rows = Max(rows, outerPlan(outer)->plan_rows * processes);
	}
	return rows;
}

static Node *
create_state(CustomScan *cscan)
{
	GpuSortState *state = palloc0(sizeof(GpuSortState));
	List	   *attnos = gpusort_private(cscan, GPUSORT_PRIVATE_ATTNOS);
	List	   *types = gpusort_private(cscan, GPUSORT_PRIVATE_TYPES);
	List	   *sortops = gpusort_private(cscan, GPUSORT_PRIVATE_SORTOPS);
	List	   *collations = gpusort_private(cscan, GPUSORT_PRIVATE_COLLATIONS);
	List	   *nulls_first = gpusort_private(cscan, GPUSORT_PRIVATE_NULLS_FIRST);
	List	   *descending = gpusort_private(cscan, GPUSORT_PRIVATE_DESCENDING);
	List	   *codes = gpusort_private(cscan, GPUSORT_PRIVATE_CODES);
	int			n = list_length(attnos);

	Assert(list_length(cscan->custom_private) == GPUSORT_PRIVATE_COUNT);

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &gpusort_exec_methods;
	state->css.flags = cscan->flags;
	state->nkeys = n;
	state->attnos = palloc(n * sizeof(AttrNumber));
	state->types = palloc(n * sizeof(Oid));
	state->sortops = palloc(n * sizeof(Oid));
	state->collations = palloc(n * sizeof(Oid));
	state->nulls_first = palloc(n * sizeof(bool));
	state->descending = palloc(n * sizeof(bool));
	state->codes = palloc(n * sizeof(GpuSortKeyCode));
	state->finish_from = n;
	for (int i = 0; i < n; i++)
	{
		state->attnos[i] = (AttrNumber) list_nth_int(attnos, i);
		state->types[i] = list_nth_oid(types, i);
		state->sortops[i] = list_nth_oid(sortops, i);
		state->collations[i] = list_nth_oid(collations, i);
		state->nulls_first[i] = list_nth_int(nulls_first, i) != 0;
		state->descending[i] = list_nth_int(descending, i) != 0;
		state->codes[i] = (GpuSortKeyCode) list_nth_int(codes, i);
		if (!gpusort_code_lossless(state->codes[i], state->types[i]) && state->finish_from == n)
			state->finish_from = i;
	}
	state->bound = linitial_int(gpusort_private(cscan, GPUSORT_PRIVATE_BOUND));
	if (state->bound == GPUSORT_BOUND_AT_RUN_TIME)
		state->bound = -1;		/* until node_runtime_bound */
	state->est_rows = input_rows_estimate(outerPlan(&cscan->scan.plan));
	return (Node *) state;
}

static void
begin_scan(CustomScanState *node, EState *estate, int eflags)
{
	GpuSortState *state = (GpuSortState *) node;
	TupleDesc	desc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;

	/* the node reads its whole input once and replays it: no backward/mark below */
	outerPlanState(node) = ExecInitNode(outerPlan(node->ss.ps.plan), estate,
										eflags & ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK));
	state->slot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsMinimalTuple);

	/*
	 * Rows whose columns all have a fixed length are kept column-wise and
	 * handed up in a virtual slot; the top-k heap and the tuplesort fallback
	 * still use the MinimalTuple slot, so the slot type is not fixed then.
	 */
	state->columnar = column_store_fits(desc);
	if (state->columnar)
		state->vslot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual);

	/*
	 * Rows come from our slots, not the virtual scan slot the core made: say
	 * so, and rebuild the projection (if any) for those slot types.
	 */
	node->ss.ss_ScanTupleSlot = state->slot;
	node->ss.ps.scanops = &TTSOpsMinimalTuple;
	node->ss.ps.scanopsfixed = !state->columnar;
	node->ss.ps.scanopsset = true;
	if (node->ss.ps.ps_ProjInfo != NULL)
		ExecAssignScanProjectionInfoWithVarno(&node->ss, INDEX_VAR);
	if (node->ss.ps.ps_ProjInfo == NULL)
	{
		/* rows are handed up in our slots */
		node->ss.ps.resultops = &TTSOpsMinimalTuple;
		node->ss.ps.resultopsfixed = !state->columnar;
		node->ss.ps.resultopsset = true;
	}
	state->sortcxt = AllocSetContextCreate(estate->es_query_cxt, "GpuSort",
										   ALLOCSET_DEFAULT_SIZES);
	/* LIMIT and OFFSET of query parameters, evaluated before each sort */
	state->bound_exprs = ExecInitExprList(((CustomScan *) node->ss.ps.plan)->custom_exprs,
										  &node->ss.ps);
	/* abbreviated keys' sort support lives as long as the node */
	state->abbrev = palloc0(state->nkeys * sizeof(SortSupportData));
	for (int k = 0; k < state->nkeys; k++)
	{
		GpuSortKeySpec key = {state->types[k], state->sortops[k], state->collations[k],
		state->nulls_first[k]};

		gpusort_settle_abbrev(&key, &state->codes[k], &state->abbrev[k]);
	}
	state->cur = -1;
	/* runs past the budget are merged into one file where this may be needed */
	state->random_access = (eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)) != 0;
	{
		Plan	   *outer = outerPlan(node->ss.ps.plan);

		state->has_fill = outer != NULL && IsA(outer, Gather) &&
			gpusort_is_fill(outerPlan(outer));
	}
}

/*
 * Look up the tuples of the batch of sorted positions that holds position i
 * (starting at i going forward, ending at i going backward).  The lookups of
 * the loop are independent, so their cache misses overlap.
 */
static void
load_batch(GpuSortState *state, int64 i, bool forward)
{
	int64		n = (int64) state->nresult;
	int64		first = forward ? i : Max(i - EMIT_BATCH + 1, 0);
	int			count = (int) Min(EMIT_BATCH, n - first);
	MinimalTuple *tuples = state->store.tuples;

	if (state->batch_tuples == NULL)
		state->batch_tuples = MemoryContextAlloc(state->sortcxt,
												 EMIT_BATCH * sizeof(MinimalTuple));
	for (int j = 0; j < count; j++)
		state->batch_tuples[j] = tuples[state->perm[first + j]];
	state->batch_start = first;
	state->batch_n = count;
	/* the first rows read from it, which fetch_row's look-ahead did not reach */
	{
		int			dist = emit_distance(state);
		int			from = forward ? i - first : (int) (i - first) - 2 * dist + 1;

		for (int j = Max(from, 0); j < Min(from + 2 * dist, count); j++)
			__builtin_prefetch(state->batch_tuples[j]);
	}
}

/* Put the row of sorted position i into its slot; returns the slot. */
static TupleTableSlot *
fetch_row(GpuSortState *state, int64 i, bool forward)
{
	int			j,
				dist = emit_distance(state);

	Assert(i >= 0 && i < (int64) state->nresult);
	if (state->heap)
		return ExecStoreMinimalTuple(state->heap[i].tuple, state->slot, false);
	if (state->perm == NULL)
	{
		/* a column store the GPU put in sorted order: sequential reads */
		Assert(state->columnar);
		column_store_get(&state->cols, i, state->vslot);
		return state->vslot;
	}
	if (state->columnar)
	{
		int64		ahead = forward ? i + EMIT_PREFETCH : i - EMIT_PREFETCH;

		if (ahead >= 0 && ahead < (int64) state->nresult)
			for (int c = 0; c < state->cols.natts; c++)
				__builtin_prefetch(column_store_at(&state->cols, c, state->perm[ahead]));
		column_store_get(&state->cols, state->perm[i], state->vslot);
		return state->vslot;
	}
	if (i < state->batch_start || i >= state->batch_start + state->batch_n)
		load_batch(state, i, forward);
	j = (int) (i - state->batch_start);
	if (forward ? j + 2 * dist < state->batch_n : j >= 2 * dist)
		__builtin_prefetch(state->batch_tuples[forward ? j + 2 * dist : j - 2 * dist]);
	if (forward ? j + dist < state->batch_n : j >= dist)
	{
		MinimalTuple ahead = state->batch_tuples[forward ? j + dist : j - dist];
		Size		len = Min(ahead->t_len, EMIT_PREFETCH_BYTES);

		/* the line holding t_len was prefetched dist rows ago */
		for (Size off = 64; off < len + ((uintptr_t) ahead & 63); off += 64)
			__builtin_prefetch((char *) ahead + off);
	}
	return ExecStoreMinimalTuple(state->batch_tuples[j], state->slot, false);
}

/*
 * The bound of a LIMIT whose count and offset are query parameters, as the
 * Limit above evaluates them (nodeLimit.c's recompute_limits): a NULL count
 * is no limit, a NULL offset none; a negative one is the Limit's ERROR to
 * raise, so no bound here.
 */
void
node_runtime_bound(GpuSortState *state)
{
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	int64		count,
				offset = 0;
	bool		isnull;
	Datum		d;

	if (state->bound_exprs == NIL)
		return;
	state->bound = -1;
	d = ExecEvalExprSwitchContext((ExprState *) linitial(state->bound_exprs), econtext, &isnull);
	if (isnull)
		return;
	count = DatumGetInt64(d);
	d = ExecEvalExprSwitchContext((ExprState *) lsecond(state->bound_exprs), econtext, &isnull);
	if (!isnull)
		offset = DatumGetInt64(d);
	if (count < 0 || offset < 0 || pg_add_s64_overflow(count, offset, &count) ||
		count > PG_INT32_MAX)
		return;
	state->bound = count;
}

/*
 * The first sorted position of the n sorted rows whose row is out of
 * order with the one before it, by PostgreSQL's own comparators (those the
 * native Sort would use), and in *key the sort key (from 1) that orders
 * them; 0 if every pair is in order.
 */
Size
node_first_disorder(GpuSortState *state, Size n, int *key)
{
	SortSupport ssup = palloc0(state->nkeys * sizeof(SortSupportData));
	TupleTableSlot *prev = MakeSingleTupleTableSlot(state->slot->tts_tupleDescriptor,
													&TTSOpsMinimalTuple);
	Size		nresult = state->nresult;
	Size		bad = 0;

	for (int k = 0; k < state->nkeys; k++)
	{
		ssup[k].ssup_cxt = CurrentMemoryContext;
		ssup[k].ssup_collation = state->collations[k];
		ssup[k].ssup_nulls_first = state->nulls_first[k];
		ssup[k].ssup_attno = state->attnos[k];
		PrepareSortSupportFromOrderingOp(state->sortops[k], &ssup[k]);
	}
	/* past a bound too: the rows beyond it must sort after those within */
	state->nresult = n;
	for (Size i = 0; i < n && bad == 0; i++)
	{
		TupleTableSlot *slot = fetch_row(state, i, true);

		if (i % ROWS_PER_INTERRUPT_CHECK == 0)
			CHECK_FOR_INTERRUPTS();
		for (int k = 0; i > 0 && k < state->nkeys; k++)
		{
			bool		null1,
						null2;
			Datum		d1 = slot_getattr(prev, ssup[k].ssup_attno, &null1);
			Datum		d2 = slot_getattr(slot, ssup[k].ssup_attno, &null2);
			int			cmp = ApplySortComparator(d1, null1, d2, null2, &ssup[k]);

			if (cmp < 0)
				break;
			if (cmp > 0)
			{
				bad = i;
				*key = k + 1;
				break;
			}
		}
		ExecCopySlot(prev, slot);
	}
	state->nresult = nresult;
	state->batch_n = 0;			/* the batch may hold positions past nresult */
	state->batch_start = 0;
	ExecDropSingleTupleTableSlot(prev);
	pfree(ssup);
	return bad;
}

/*
 * gpusort.verify_order: check the order the node hands its rows up in; an
 * ERROR on the first pair of rows out of order.
 */
void
node_verify_order(GpuSortState *state)
{
	int			key = 0;
	Size		i = node_first_disorder(state, state->nresult, &key);

	if (i > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("gpusort: GpuSort handed up rows out of order"),
				 errdetail("Sorted rows %zu and %zu are out of order on sort key %d (%s path, %s).",
						   i - 1, i, key, state->run.device_name, state->run.algorithm)));
}

static TupleTableSlot *
exec_scan(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;
	bool		forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);
	TupleTableSlot *slot = state->slot;

	if (!state->sorted)
	{
		node_sort_input(state);
		gpusort_phase_begin("emit");
	}

	if (state->tuplesort)
	{
		if (!tuplesort_gettupleslot(state->tuplesort, forward, false, slot, NULL))
			ExecClearTuple(slot);
	}
	else if (state->spill)
		slot = spill_fetch(state, forward);
	else
	{
		int64		n = (int64) state->nresult;

		if (forward)
			state->cur = Min(state->cur + 1, n);
		else
			state->cur = Max(state->cur - 1, -1);
		/* (the tuplesort and the nodes above check for themselves) */
		if (state->cur % ROWS_PER_INTERRUPT_CHECK == 0)
			CHECK_FOR_INTERRUPTS();
		if (state->cur >= 0 && state->cur < n)
			slot = fetch_row(state, state->cur, forward);
		else
		{
			ExecClearTuple(slot);
			if (state->vslot)
				ExecClearTuple(state->vslot);
		}
	}

	if (TupIsNull(slot))
	{
		if (!state->emit_done)
		{
			state->emit_ms = ms_since(state->emit_start);
			state->emit_done = true;
		}
		return slot;
	}
	if (node->ss.ps.ps_ProjInfo)
	{
		node->ss.ps.ps_ExprContext->ecxt_scantuple = slot;
		return ExecProject(node->ss.ps.ps_ProjInfo);
	}
	return slot;
}

static void
forget_sort(GpuSortState *state)
{
	if (state->sorted)
		gpusort_phase_begin("free");
	if (state->tuplesort)
		tuplesort_end(state->tuplesort);
	state->tuplesort = NULL;
	spill_close(state);
	state->heap = NULL;
	state->heap_n = 0;
	state->heap_bytes = 0;
	state->perm = NULL;
	state->nresult = 0;
	state->batch_tuples = NULL;
	state->batch_start = 0;
	state->batch_n = 0;
	state->sorted = false;
	MemoryContextReset(state->sortcxt);
	/* an area a fill left open (a rescan before all rows were read) */
	fill_area_close(state->fill);
	state->fill = NULL;
	state->fill_rows = 0;
}

static void
end_scan(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;

	forget_sort(state);
	MemoryContextDelete(state->sortcxt);
	ExecEndNode(outerPlanState(node));
}

static void
rescan(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;
	PlanState  *outer = outerPlanState(node);

	if (!state->sorted)
		return;
	if (outer->chgParam != NULL)
	{
		/* the input changes: sort again (the child rescans on its next fetch) */
		forget_sort(state);
		return;
	}
	/* same input: replay it */
	state->cur = -1;
	if (state->tuplesort)
		tuplesort_rescan(state->tuplesort);
	else if (state->spill)
		spill_rescan(state);
}

static void
mark_pos(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;

	if (state->tuplesort)
		tuplesort_markpos(state->tuplesort);
	else if (state->spill)
		spill_mark(state);
	else
		state->mark = state->cur;
}

static void
restr_pos(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;

	if (state->tuplesort)
		tuplesort_restorepos(state->tuplesort);
	else if (state->spill)
		spill_restore(state);
	else
		state->cur = state->mark;
}

