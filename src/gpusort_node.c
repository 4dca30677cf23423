/*
 * gpusort_node.c -- execution and EXPLAIN of the GpuSort custom scan.
 *
 * On the first fetch the node pulls every row of its child into an
 * in-memory store, encodes the sort keys of each row into 32-bit words
 * (NULL flags as an extra word for keys that hold NULLs), has the sort
 * engine (GPU or CPU radix) compute the sorting permutation, and then hands
 * rows up in that order.  Backward fetches, mark/restore and rescans move a
 * cursor over the permutation.
 *
 * A small constant bound (LIMIT) keeps only the best rows in a CPU heap
 * instead.  If the store would outgrow gpusort.max_memory, or memory runs
 * out, the rows move to PostgreSQL's tuplesort, which spills to disk.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/sortsupport.h"
#include "utils/tuplesort.h"

#include "gpusort.h"
#include "gpusort_node.h"
#include "../kernels/gpusort_kernels.h"
#include "big_alloc.h"
#include "column_store.h"
#include "cpu_radix.h"
#include "parallel_fill.h"
#include "sort_keys.h"
#include "tuple_store.h"

/*
 * Rows in permutation order are scattered over the store, so the memory of
 * the row EMIT_PREFETCH positions ahead of the reader is prefetched.  A
 * tuple store's rows are also handed up in batches: the tuple pointers of
 * the next EMIT_BATCH positions are looked up in one tight loop (many cache
 * misses in flight at once).
 */
#define EMIT_BATCH 512
#define EMIT_PREFETCH 16

/* why a node hands its rows to the tuplesort (EXPLAIN's "Why") */
#define ROWS_OVER_BUDGET "rows exceed gpusort.work_mem / gpusort.max_memory"

/* rows moved or checked between two interrupt checks */
#define ROWS_PER_INTERRUPT_CHECK 16384

/* words per key in the top-k heap: NULL flag, high word, low word */
#define TOPK_WORDS_PER_KEY 3

typedef struct TopKEntry
{
	MinimalTuple tuple;
	uint64		seq;			/* arrival order, the last tie-breaker */
	uint32	   *words;
} TopKEntry;

typedef struct GpuSortState
{
	CustomScanState css;

	/* plan data */
	int			nkeys;
	AttrNumber *attnos;			/* scan columns of the keys */
	Oid		   *types;
	Oid		   *sortops;
	Oid		   *collations;
	bool	   *nulls_first;
	bool	   *descending;
	int64		bound;			/* -1: none */

	double		est_rows;		/* the planner's estimate of the input */
	TupleTableSlot *slot;		/* MinimalTuple slot (tuple store, heap, tuplesort) */
	TupleTableSlot *vslot;		/* virtual slot (column store) */
	MemoryContext sortcxt;		/* store, codes, permutation */

	bool		sorted;
	bool		columnar;		/* rows in cols (all columns by value), not store */
	TupleStore	store;
	ColumnStore cols;
	uint32	   *perm;			/* NULL: the column store is in sorted order */
	Size		nresult;		/* rows to hand up */
	int64		cur;			/* last row handed up: -1 before, nresult after */
	int64		mark;

	/* the rows of sorted positions [batch_start, batch_start + batch_n) */
	int64		batch_start;
	int			batch_n;
	MinimalTuple *batch_tuples; /* tuple store */

	Tuplesortstate *tuplesort;	/* fallback */

	/* parallel fill: GpuSort -> Gather -> GpuSortFill (parallel_fill.c) */
	bool		has_fill;
	FillArea   *fill;			/* the workers' chunks; NULL: none */
	Size		fill_bytes;		/* workers' chunks taken (freed only with the area) */
	Size		fill_rows;		/* rows the workers stored */

	/* top-k heap */
	TopKEntry  *heap;
	Size		heap_n;
	Size		heap_bytes;		/* the heap's memory, tuples included */

	Size		limit_bytes;	/* the node's memory budget (gpusort_memory_limit) */

	/* for EXPLAIN ANALYZE */
	GpuSortRun	run;
	Size		rows_in;
	double		fill_ms;
	double		emit_ms;
	instr_time	emit_start;
	bool		emit_done;
	const char *fallback_reason;
} GpuSortState;

static Node *create_state(CustomScan *cscan);
static void begin_scan(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_scan(CustomScanState *node);
static void end_scan(CustomScanState *node);
static void rescan(CustomScanState *node);
static void mark_pos(CustomScanState *node);
static void restr_pos(CustomScanState *node);
static void explain_scan(CustomScanState *node, List *ancestors, ExplainState *es);
static void verify_order(GpuSortState *state);

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
	.ExplainCustomScan = explain_scan,
};

void
gpusort_register_node(void)
{
	RegisterCustomScanMethods(&gpusort_scan_methods);
}

static double
ms_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
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
	for (int i = 0; i < n; i++)
	{
		state->attnos[i] = (AttrNumber) list_nth_int(attnos, i);
		state->types[i] = list_nth_oid(types, i);
		state->sortops[i] = list_nth_oid(sortops, i);
		state->collations[i] = list_nth_oid(collations, i);
		state->nulls_first[i] = list_nth_int(nulls_first, i) != 0;
		state->descending[i] = list_nth_int(descending, i) != 0;
	}
	state->bound = linitial_int(gpusort_private(cscan, GPUSORT_PRIVATE_BOUND));
	state->est_rows = outerPlan(&cscan->scan.plan) ?
		outerPlan(&cscan->scan.plan)->plan_rows : 0;
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
	 * Rows whose columns are all passed by value are kept column-wise and
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
	state->cur = -1;
	{
		Plan	   *outer = outerPlan(node->ss.ps.plan);

		state->has_fill = outer != NULL && IsA(outer, Gather) &&
			gpusort_is_fill(outerPlan(outer));
	}
}

/* ---- top-k ------------------------------------------------------------- */

static void
topk_words(GpuSortState *state, TupleTableSlot *slot, uint32 *words)
{
	for (int k = 0; k < state->nkeys; k++)
	{
		bool		isnull;
		Datum		d = slot_getattr(slot, state->attnos[k], &isnull);
		uint64		code = gpusort_key_code(state->types[k], d, isnull, state->descending[k]);
		uint32	   *w = words + k * TOPK_WORDS_PER_KEY;

		w[0] = gpusort_null_word(isnull, state->nulls_first[k]);
		w[1] = (uint32) (code >> 32);
		w[2] = (uint32) code;
	}
}

static int
topk_cmp(const TopKEntry *a, const TopKEntry *b, int nwords)
{
	for (int i = 0; i < nwords; i++)
		if (a->words[i] != b->words[i])
			return a->words[i] < b->words[i] ? -1 : 1;
	return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

static int	topk_qsort_nwords;

static int
topk_qsort_cmp(const void *a, const void *b)
{
	return topk_cmp((const TopKEntry *) a, (const TopKEntry *) b, topk_qsort_nwords);
}

/* Max-heap of the best `bound` rows seen so far. */
static void
topk_add(GpuSortState *state, TupleTableSlot *slot, TopKEntry *probe)
{
	int			nwords = state->nkeys * TOPK_WORDS_PER_KEY;
	Size		k = (Size) state->bound;
	TopKEntry  *heap = state->heap;
	Size		i;

	if (k == 0)
		return;
	topk_words(state, slot, probe->words);
	if (state->heap_n == k)
	{
		if (topk_cmp(probe, &heap[0], nwords) >= 0)
			return;				/* not among the best */
		/* drop the root, sift the probe down from the top */
		state->heap_bytes -= GetMemoryChunkSpace(heap[0].tuple);
		pfree(heap[0].tuple);
		{
			uint32	   *spare = heap[0].words;

			i = 0;
			for (;;)
			{
				Size		l = 2 * i + 1,
							r = l + 1,
							big = i;
				const TopKEntry *bigger = probe;

				if (l < k && topk_cmp(&heap[l], bigger, nwords) > 0)
					big = l, bigger = &heap[l];
				if (r < k && topk_cmp(&heap[r], bigger, nwords) > 0)
					big = r;
				if (big == i)
					break;
				heap[i] = heap[big];
				i = big;
			}
			heap[i].words = spare;
		}
	}
	else
	{
		i = state->heap_n++;
		while (i > 0 && topk_cmp(&heap[(i - 1) / 2], probe, nwords) < 0)
		{
			uint32	   *spare = heap[i].words;

			heap[i] = heap[(i - 1) / 2];
			heap[(i - 1) / 2].words = spare;
			i = (i - 1) / 2;
		}
	}
	memcpy(heap[i].words, probe->words, nwords * sizeof(uint32));
	heap[i].seq = probe->seq;
	heap[i].tuple = ExecCopySlotMinimalTuple(slot);
	state->heap_bytes += GetMemoryChunkSpace(heap[i].tuple);
}

/* ---- tuplesort fallback ---------------------------------------------------- */

static void
init_stores(GpuSortState *state)
{
	TupleDesc	desc = state->slot->tts_tupleDescriptor;

	tuple_store_init(&state->store, state->sortcxt);
	if (state->columnar)
		column_store_init(&state->cols, state->sortcxt, desc);
}

/* Memory the stored rows take. */
static Size
stored_bytes(GpuSortState *state)
{
	return (state->columnar ? state->cols.bytes : state->store.bytes) + state->fill_bytes;
}

/*
 * Memory a sort of n rows needs besides their keys: the permutation, and
 * the CPU radix sort's scratch where the CPU sorts them.
 */
static Size
sort_bytes(Size n)
{
	return (n + cpu_radix_scratch_words(n)) * sizeof(uint32);
}

/*
 * Memory the node holds (or will, to sort n rows) with key word columns of
 * cap rows: what the budget (state->limit_bytes) is checked against.
 */
static Size
used_bytes(GpuSortState *state, Size n, Size cap, Size key_bytes)
{
	return stored_bytes(state) + cap * key_bytes + sort_bytes(n);
}

/*
 * Move the stored rows (or the top-k heap's) and the row in hand (slot, if
 * any) into a tuplesort, which keeps to work_mem and spills to disk.
 */
static void
start_tuplesort(GpuSortState *state, const char *reason, TupleTableSlot *slot)
{
	TupleDesc	desc = state->slot->tts_tupleDescriptor;
	int			sortopt = TUPLESORT_RANDOMACCESS;

	if (state->bound >= 0)
		sortopt |= TUPLESORT_ALLOWBOUNDED;
	state->fallback_reason = reason;
	state->tuplesort = tuplesort_begin_heap(desc, state->nkeys, state->attnos,
											state->sortops, state->collations,
											state->nulls_first, work_mem, NULL,
											sortopt);
	/* before the first row, as tuplesort wants it */
	if (state->bound >= 0)
		tuplesort_set_bound(state->tuplesort, state->bound);
	if (state->heap)
	{
		for (Size i = 0; i < state->heap_n; i++)
		{
			if (i % ROWS_PER_INTERRUPT_CHECK == 0)
				CHECK_FOR_INTERRUPTS();
			ExecStoreMinimalTuple(state->heap[i].tuple, state->slot, false);
			tuplesort_puttupleslot(state->tuplesort, state->slot);
		}
		ExecClearTuple(state->slot);
		state->heap = NULL;
		state->heap_n = 0;
		state->heap_bytes = 0;
	}
	else if (state->columnar)
	{
		for (Size i = 0; i < state->cols.nrows; i++)
		{
			if (i % ROWS_PER_INTERRUPT_CHECK == 0)
				CHECK_FOR_INTERRUPTS();
			column_store_get(&state->cols, i, state->vslot);
			tuplesort_puttupleslot(state->tuplesort, state->vslot);
		}
		ExecClearTuple(state->vslot);
	}
	else
	{
		for (Size i = 0; i < state->store.ntuples; i++)
		{
			if (i % ROWS_PER_INTERRUPT_CHECK == 0)
				CHECK_FOR_INTERRUPTS();
			ExecStoreMinimalTuple(state->store.tuples[i], state->slot, false);
			tuplesort_puttupleslot(state->tuplesort, state->slot);
		}
		ExecClearTuple(state->slot);
	}
	MemoryContextReset(state->sortcxt);
	init_stores(state);
	state->fill_bytes = 0;		/* the tuplesort has copies of the workers' rows */
	if (slot != NULL)
		tuplesort_puttupleslot(state->tuplesort, slot);
}

/* ---- the sort --------------------------------------------------------------- */

/*
 * The encoded keys of the rows read so far, written straight into the
 * 32-bit word columns the sort takes (word-major, most significant first):
 * per key an optional NULL-order word, the high word of a two-word code,
 * and the low (or only) word.
 */
typedef struct KeyWords
{
	uint32	   *nulls;			/* NULL until the key's first NULL */
	uint32	   *hi;				/* two-word codes only */
	uint32	   *lo;
} KeyWords;

/* Bytes the key words of one row take before any key has NULL words. */
static Size
key_row_bytes(GpuSortState *state)
{
	Size		bytes = 0;

	for (int k = 0; k < state->nkeys; k++)
		bytes += sizeof(uint32) * gpusort_key_words(state->types[k]);
	return bytes;
}

/*
 * Move one word column to a new array of cap rows (make it if it does not
 * exist yet and every row needs it); false if out of memory.
 */
static bool
grow_words(GpuSortState *state, uint32 **words, Size old, Size cap, bool needed)
{
	uint32	   *grown;

	if (*words == NULL && !needed)
		return true;
	grown = gpusort_alloc_big(state->sortcxt, cap * sizeof(uint32));
	if (grown == NULL)
		return false;
	if (*words != NULL)
	{
		memcpy(grown, *words, old * sizeof(uint32));
		pfree(*words);
	}
	*words = grown;
	return true;
}

/* Grow the key word columns to hold cap rows; false if out of memory. */
static bool
grow_key_words(GpuSortState *state, KeyWords *kw, Size old, Size cap)
{
	for (int k = 0; k < state->nkeys; k++)
		if (!grow_words(state, &kw[k].lo, old, cap, true) ||
			!grow_words(state, &kw[k].hi, old, cap,
						gpusort_key_words(state->types[k]) == 2) ||
			!grow_words(state, &kw[k].nulls, old, cap, false))
			return false;
	return true;
}

/*
 * The first NULL of key k, at row n: from now on the key has a NULL-order
 * word; the rows before were not NULL.  False if out of memory.
 */
static bool
start_null_words(GpuSortState *state, KeyWords *kw, int k, Size n, Size cap)
{
	uint32		not_null = gpusort_null_word(false, state->nulls_first[k]);

	kw[k].nulls = gpusort_alloc_big(state->sortcxt, cap * sizeof(uint32));
	if (kw[k].nulls == NULL)
		return false;
	for (Size i = 0; i < n; i++)
		kw[k].nulls[i] = not_null;
	return true;
}

static bool fill_reorder(GpuSortReorder *r);

/*
 * Ask the GPU sort to also put a column store into sorted order (its
 * columns go up with the keys and come back gathered: a few bytes per row
 * each way instead of a random read per row and column when the rows are
 * handed up), when there are enough rows for that to pay
 * (gpusort.gpu_reorder_min_rows: below it the columns mostly fit in the
 * CPU caches) and memory allows a sorted copy; NULL if not.  Rows of a
 * tuple store stay where they are: moving them through the device costs
 * more than their random reads save (bench/results).
 */
static GpuSortReorder *
prepare_reorder(GpuSortState *state, Size n)
{
	GpuSortReorder *r;
	Size		m = state->nresult;

	if (!state->columnar || n < (Size) gpusort_gpu_reorder_min_rows || m == 0 ||
		used_bytes(state, n, n, key_row_bytes(state)) + stored_bytes(state) > state->limit_bytes)
		return NULL;
	r = palloc0(sizeof(GpuSortReorder));
	r->m = m;
	r->prepare = fill_reorder;
	r->arg = state;
	return r;
}

/* The arrays of a reorder, made only once the GPU has sorted. */
static bool
fill_reorder(GpuSortReorder *r)
{
	GpuSortState *state = (GpuSortState *) r->arg;
	ColumnStore *cols = &state->cols;
	Size		m = r->m;
	int			c;

	r->fixed_in = palloc(2 * cols->natts * sizeof(void *));
	r->fixed_out = palloc0(2 * cols->natts * sizeof(void *));
	r->fixed_size = palloc(2 * cols->natts * sizeof(size_t));
	for (c = 0; c < cols->natts; c++)
	{
		r->fixed_in[r->nfixed] = cols->values[c];
		r->fixed_size[r->nfixed] = cols->width[c];
		r->fixed_out[r->nfixed++] = gpusort_alloc_big(state->sortcxt, m * cols->width[c]);
		if (cols->isnull[c])
		{
			r->fixed_in[r->nfixed] = cols->isnull[c];
			r->fixed_size[r->nfixed] = sizeof(bool);
			r->fixed_out[r->nfixed++] = gpusort_alloc_big(state->sortcxt, m * sizeof(bool));
		}
	}
	for (c = 0; c < r->nfixed; c++)
		if (r->fixed_out[c] == NULL)
			return false;
	return true;
}

/* Take the columns the GPU put in order (if it did), and free what is left over. */
static void
finish_reorder(GpuSortState *state, GpuSortReorder *r)
{
	ColumnStore *cols = &state->cols;

	if (r->done)
	{
		int			f = 0;

		for (int c = 0; c < cols->natts; c++)
		{
			pfree(cols->values[c]);
			cols->values[c] = r->fixed_out[f++];
			if (cols->isnull[c])
			{
				pfree(cols->isnull[c]);
				cols->isnull[c] = r->fixed_out[f++];
			}
		}
		cols->nrows = r->m;
		pfree(state->perm);
		state->perm = NULL;		/* rows are in sorted order now */
	}
	else
	{
		for (int c = 0; c < r->nfixed; c++)
			if (r->fixed_out[c])
				pfree(r->fixed_out[c]);
	}
}

/*
 * Encode the keys of the row in slot into row n of the key word columns
 * (capacity cap); *key_bytes grows when a key gets its NULL words.  False
 * if out of memory.
 */
static bool
encode_row_keys(GpuSortState *state, KeyWords *kw, TupleTableSlot *slot,
				Size n, Size cap, Size *key_bytes)
{
	Assert(n < cap);
	for (int k = 0; k < state->nkeys; k++)
	{
		bool		null;
		Datum		d = slot_getattr(slot, state->attnos[k], &null);
		uint64		code = gpusort_key_code(state->types[k], d, null, state->descending[k]);

		if (null && kw[k].nulls == NULL)
		{
			if (!start_null_words(state, kw, k, n, cap))
				return false;
			*key_bytes += sizeof(uint32);
		}
		if (kw[k].nulls)
			kw[k].nulls[n] = gpusort_null_word(null, state->nulls_first[k]);
		if (kw[k].hi)
			kw[k].hi[n] = (uint32) (code >> 32);
		kw[k].lo[n] = (uint32) code;
	}
	return true;
}

/*
 * Rows the key word columns start with: the planner's estimate, but no
 * more than this, so that memory follows the rows that arrive (a wrong
 * estimate costs a few doublings, not a reservation).
 */
#define FIRST_KEY_ROWS 65536

/*
 * Room for at least need rows (n rows so far) in the key word columns and
 * the row store: first the planner's estimate (up to FIRST_KEY_ROWS), then
 * doubling, never past what the budget leaves.  False if out of memory.
 */
static bool
grow_rows(GpuSortState *state, KeyWords *kw, Size n, Size need, Size *cap,
		  Size *key_bytes)
{
	Size		newcap;

	if (need <= *cap)
		return true;
	if (*cap == 0)
		*key_bytes = key_row_bytes(state);
	newcap = *cap ? *cap * 2 :
		(Size) Max(1024, Min(state->est_rows * 1.05, (double) FIRST_KEY_ROWS));
	if (used_bytes(state, need, newcap, *key_bytes) > state->limit_bytes)
		newcap = need + need / 8;	/* the budget decides soon */
	newcap = Max(newcap, need);
	if (!grow_key_words(state, kw, n, newcap))
		return false;
	/* the row store starts at the same size (it grows by itself if this fails) */
	if (*cap == 0)
		(void) (state->columnar ? column_store_reserve(&state->cols, newcap) :
				tuple_store_reserve(&state->store, newcap));
	*cap = newcap;
	return true;
}

/* Row i of a chunk the workers filled, in one of our slots. */
static TupleTableSlot *
chunk_row_slot(GpuSortState *state, const FillChunkView *v, Size i)
{
	TupleTableSlot *vslot = state->vslot;

	if (!v->columnar)
		return ExecStoreMinimalTuple((MinimalTuple) (v->data + v->tuple_off[i]),
									 state->slot, false);
	ExecClearTuple(vslot);
	for (int c = 0; c < vslot->tts_tupleDescriptor->natts; c++)
	{
		vslot->tts_values[c] = column_value_get(v->values[c], state->cols.width[c], i);
		vslot->tts_isnull[c] = v->isnull[c][i];
	}
	return ExecStoreVirtualTuple(vslot);
}

/*
 * Take the rows the parallel workers stored (parallel_fill.c) after the n
 * rows read so far, as if they had been read here: key words copied,
 * tuples pointed at where they lie (column rows copied).  Falls back to the
 * tuplesort like the reading loop.  Returns the new row count.
 */
static Size
take_filled_rows(GpuSortState *state, KeyWords *kw, Size n, Size *cap, Size *key_bytes)
{
	FillChunkView v;

	while (fill_area_next_chunk(state->fill, &v))
	{
		Size		m = v.nrows;
		const char *reason = NULL;

		CHECK_FOR_INTERRUPTS();
		state->fill_rows += m;
		if (v.columnar != state->columnar)
			elog(ERROR, "GpuSortFill stored rows in another form than GpuSort reads");
		if (!state->tuplesort)
		{
			/* the chunk stays in shared memory until the area closes */
			if (used_bytes(state, n + m, Max(*cap, n + m),
						   *key_bytes ? *key_bytes : key_row_bytes(state)) +
				v.bytes > state->limit_bytes)
				reason = ROWS_OVER_BUDGET;
			else if (n + m > (Size) PG_UINT32_MAX)
				reason = "more rows than 32-bit row positions hold";
			else if (!grow_rows(state, kw, n, n + m, cap, key_bytes))
				reason = "out of memory for sort keys";
			else if (!v.columnar && !tuple_store_reserve(&state->store, n + m))
				reason = "out of memory for rows";
			else
			{
				for (int k = 0; k < state->nkeys && !reason; k++)
				{
					if (!v.key_has_null[k] || kw[k].nulls != NULL)
						continue;
					if (!start_null_words(state, kw, k, n, *cap))
						reason = "out of memory for sort keys";
					else
						*key_bytes += sizeof(uint32);
				}
				if (!reason && v.columnar &&
					!column_store_append(&state->cols, v.values, v.isnull, m))
					reason = "out of memory for rows";
			}
		}
		if (state->tuplesort || reason)
		{
			/* every row of the chunk to the tuplesort (start_tuplesort uses our slots) */
			if (!state->tuplesort)
				start_tuplesort(state, reason, NULL);
			for (Size i = 0; i < m; i++)
				tuplesort_puttupleslot(state->tuplesort, chunk_row_slot(state, &v, i));
			continue;
		}
		for (int k = 0; k < state->nkeys; k++)
		{
			if (kw[k].nulls)
				for (Size i = 0; i < m; i++)
					kw[k].nulls[n + i] = gpusort_null_word(v.key_has_null[k] && v.nulls[k][i],
														   state->nulls_first[k]);
			if (kw[k].hi)
				memcpy(kw[k].hi + n, v.hi[k], m * sizeof(uint32));
			memcpy(kw[k].lo + n, v.lo[k], m * sizeof(uint32));
		}
		if (!v.columnar)
			for (Size i = 0; i < m; i++)
				(void) tuple_store_add_external(&state->store,
												(MinimalTuple) (v.data + v.tuple_off[i]));
		/* columns were copied out, but the chunk is only freed with the area */
		state->fill_bytes += v.bytes;
		n += m;
	}
	return n;
}

/* Start the top-k heap: room for bound rows. */
static void
topk_start(GpuSortState *state, TopKEntry *probe)
{
	int			nwords = state->nkeys * TOPK_WORDS_PER_KEY;
	MemoryContext old = MemoryContextSwitchTo(state->sortcxt);

	state->heap = palloc((state->bound + 1) * sizeof(TopKEntry));
	for (int64 i = 0; i < state->bound; i++)
		state->heap[i].words = palloc(nwords * sizeof(uint32));
	probe->words = palloc(nwords * sizeof(uint32));
	state->heap_bytes = (state->bound + 1) * (sizeof(TopKEntry) + nwords * sizeof(uint32));
	MemoryContextSwitchTo(old);
}

/*
 * Sort the n stored rows whose key words kw holds (GPU or CPU), or, where
 * memory for the sort itself runs out, hand them to the tuplesort.
 */
static void
sort_stored_rows(GpuSortState *state, KeyWords *kw, Size n)
{
	MemoryContext oldcxt;
	int			nwords = 0;
	const uint32 **words;
	GpuSortReorder *reorder;
	bool		sorted;

	/* every stored row has its key words; positions are 32-bit */
	Assert(n == (state->columnar ? state->cols.nrows : state->store.ntuples));
	Assert(n <= (Size) PG_UINT32_MAX);

	/* the permutation, the GPU job's guard and the reorder live in sortcxt */
	oldcxt = MemoryContextSwitchTo(state->sortcxt);
	words = palloc((3 * state->nkeys) * sizeof(uint32 *));
	for (int k = 0; k < state->nkeys; k++)
	{
		if (kw[k].nulls)
			words[nwords++] = kw[k].nulls;
		if (kw[k].hi)
			words[nwords++] = kw[k].hi;
		words[nwords++] = kw[k].lo;
	}
	CHECK_FOR_INTERRUPTS();

	state->nresult = state->bound >= 0 ? Min(n, (Size) state->bound) : n;
	state->perm = gpusort_alloc_big(state->sortcxt, Max(n, 1) * sizeof(uint32));
	reorder = state->perm ? prepare_reorder(state, n) : NULL;
	sorted = state->perm &&
		gpusort_sort_rows(words, nwords, n, state->perm, &state->run, reorder);
	MemoryContextSwitchTo(oldcxt);
	if (!sorted)
	{
		/* the rows are still in the stores: the tuplesort takes them */
		state->perm = NULL;
		start_tuplesort(state, "out of memory for the sort", NULL);
		return;
	}
	for (int w = 0; w < nwords; w++)
		if (words[w])
			pfree((void *) words[w]);
	pfree(words);
	if (reorder)
		finish_reorder(state, reorder);
}

static void
sort_input(GpuSortState *state)
{
	PlanState  *outer = outerPlanState(state);
	bool		topk = state->bound >= 0 && state->bound <= GPUSORT_TOPK_MAX_BOUND;
	KeyWords   *kw = NULL;
	Size		key_bytes = 0;	/* bytes of key words per row */
	Size		cap = 0,
				n = 0,			/* rows in the store */
				rows = 0;		/* rows read */
	instr_time	start;
	TopKEntry	probe;

	INSTR_TIME_SET_CURRENT(start);
	state->limit_bytes = gpusort_memory_limit();
	init_stores(state);
	if (topk)
		topk_start(state, &probe);
	else
		kw = MemoryContextAllocZero(state->sortcxt, state->nkeys * sizeof(KeyWords));

	/* the area the Gather's workers store their rows in (parallel_fill.c) */
	if (state->has_fill)
		state->fill = fill_area_open(state->css.ss.ps.state->es_query_cxt, state->nkeys,
									 state->types, state->slot->tts_tupleDescriptor,
									 state->columnar, topk ? 0 : state->limit_bytes);

	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(outer);

		if (TupIsNull(slot))
			break;
		rows++;
		if (state->tuplesort)
		{
			tuplesort_puttupleslot(state->tuplesort, slot);
			continue;
		}
		if (topk)
		{
			MemoryContext old = MemoryContextSwitchTo(state->sortcxt);

			probe.seq = rows;
			topk_add(state, slot, &probe);
			MemoryContextSwitchTo(old);
			if (state->heap_bytes > state->limit_bytes)
				start_tuplesort(state, ROWS_OVER_BUDGET, NULL);
			continue;
		}
		if (n == (Size) PG_UINT32_MAX)
		{
			/* the sort's row positions are 32-bit */
			start_tuplesort(state, "more rows than 32-bit row positions hold", slot);
			continue;
		}
		if (n == cap && !grow_rows(state, kw, n, n + 1, &cap, &key_bytes))
		{
			start_tuplesort(state, "out of memory for sort keys", slot);
			continue;
		}
		if (!encode_row_keys(state, kw, slot, n, cap, &key_bytes))
		{
			start_tuplesort(state, "out of memory for sort keys", slot);
			continue;
		}
		{
			bool		over = used_bytes(state, n + 1, cap, key_bytes) > state->limit_bytes;

			if (over || !(state->columnar ?
						  column_store_add_slot(&state->cols, slot) :
						  tuple_store_add_slot(&state->store, slot)))
			{
				start_tuplesort(state, over ? ROWS_OVER_BUDGET : "out of memory for rows", slot);
				continue;
			}
		}
		n++;
	}
	if (state->fill)
	{
		fill_area_stop_offering(state->fill);
		n = take_filled_rows(state, kw, n, &cap, &key_bytes);
		rows += state->fill_rows;
	}
	state->rows_in = rows;
	state->fill_ms = ms_since(start);

	if (state->heap)
	{
		topk_qsort_nwords = state->nkeys * TOPK_WORDS_PER_KEY;
		qsort(state->heap, state->heap_n, sizeof(TopKEntry), topk_qsort_cmp);
		state->nresult = state->heap_n;
		state->run.algorithm = "top-k heap";
		state->run.device_name = "CPU";
		state->run.reason = "small LIMIT";
	}
	else if (!state->tuplesort)
		sort_stored_rows(state, kw, n);

	if (state->tuplesort)
	{
		tuplesort_performsort(state->tuplesort);
		state->run.algorithm = "tuplesort";
		state->run.device_name = "CPU";
		state->run.on_gpu = false;
		state->run.reason = state->fallback_reason;
	}
	state->sorted = true;
	if (gpusort_verify_order && !state->tuplesort)
		verify_order(state);
	state->cur = -1;
	state->emit_done = false;
	INSTR_TIME_SET_CURRENT(state->emit_start);
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
}

/* Put the row of sorted position i into its slot; returns the slot. */
static TupleTableSlot *
fetch_row(GpuSortState *state, int64 i, bool forward)
{
	int			j;

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
	if (forward ? j + EMIT_PREFETCH < state->batch_n : j >= EMIT_PREFETCH)
	{
		char	   *ahead = (char *) state->batch_tuples[forward ? j + EMIT_PREFETCH :
														 j - EMIT_PREFETCH];

		__builtin_prefetch(ahead);
		__builtin_prefetch(ahead + 64);
	}
	return ExecStoreMinimalTuple(state->batch_tuples[j], state->slot, false);
}

/*
 * gpusort.verify_order: check the order the node hands its rows up in with
 * PostgreSQL's own comparators (those the native Sort would use); an
 * ERROR on the first pair of rows out of order.
 */
static void
verify_order(GpuSortState *state)
{
	SortSupport ssup = palloc0(state->nkeys * sizeof(SortSupportData));
	TupleTableSlot *prev = MakeSingleTupleTableSlot(state->slot->tts_tupleDescriptor,
													&TTSOpsMinimalTuple);

	for (int k = 0; k < state->nkeys; k++)
	{
		ssup[k].ssup_cxt = CurrentMemoryContext;
		ssup[k].ssup_collation = state->collations[k];
		ssup[k].ssup_nulls_first = state->nulls_first[k];
		ssup[k].ssup_attno = state->attnos[k];
		PrepareSortSupportFromOrderingOp(state->sortops[k], &ssup[k]);
	}
	for (Size i = 0; i < state->nresult; i++)
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
				ereport(ERROR,
						(errcode(ERRCODE_INTERNAL_ERROR),
						 errmsg("gpusort: GpuSort handed up rows out of order"),
						 errdetail("Sorted rows %zu and %zu are out of order on sort key %d (%s path, %s).",
								   i - 1, i, k + 1, state->run.device_name,
								   state->run.algorithm)));
		}
		ExecCopySlot(prev, slot);
	}
	ExecDropSingleTupleTableSlot(prev);
	pfree(ssup);
	state->batch_n = 0;			/* emission starts from a fresh batch */
}

static TupleTableSlot *
exec_scan(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;
	bool		forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);
	TupleTableSlot *slot = state->slot;

	if (!state->sorted)
		sort_input(state);

	if (state->tuplesort)
	{
		if (!tuplesort_gettupleslot(state->tuplesort, forward, false, slot, NULL))
			ExecClearTuple(slot);
	}
	else
	{
		int64		n = (int64) state->nresult;

		if (forward)
			state->cur = Min(state->cur + 1, n);
		else
			state->cur = Max(state->cur - 1, -1);
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
	if (state->tuplesort)
		tuplesort_end(state->tuplesort);
	state->tuplesort = NULL;
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
	/* after the store that may point into it */
	fill_area_close(state->fill);
	state->fill = NULL;
	state->fill_bytes = 0;
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
}

static void
mark_pos(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;

	if (state->tuplesort)
		tuplesort_markpos(state->tuplesort);
	else
		state->mark = state->cur;
}

static void
restr_pos(CustomScanState *node)
{
	GpuSortState *state = (GpuSortState *) node;

	if (state->tuplesort)
		tuplesort_restorepos(state->tuplesort);
	else
		state->cur = state->mark;
}

/* ---- EXPLAIN ------------------------------------------------------------------ */

static void
explain_scan(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuSortState *state = (GpuSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
	List	   *keys = NIL;
	bool		useprefix = list_length(es->rtable) > 1 || es->verbose;
	bool		show_times;

	context = set_deparse_context_plan(es->deparse_cxt, (Plan *) cscan, ancestors);
	for (int k = 0; k < state->nkeys; k++)
	{
		TargetEntry *tle = list_nth_node(TargetEntry, cscan->custom_scan_tlist,
										 state->attnos[k] - 1);
		Var		   *var = makeVar(INDEX_VAR, state->attnos[k], exprType((Node *) tle->expr),
								  exprTypmod((Node *) tle->expr),
								  exprCollation((Node *) tle->expr), 0);
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfoString(&buf, deparse_expression((Node *) var, context, useprefix, true));
		/* as PostgreSQL's Sort prints them */
		if (state->descending[k])
			appendStringInfoString(&buf, " DESC");
		if (state->nulls_first[k] && !state->descending[k])
			appendStringInfoString(&buf, " NULLS FIRST");
		else if (!state->nulls_first[k] && state->descending[k])
			appendStringInfoString(&buf, " NULLS LAST");
		keys = lappend(keys, buf.data);
	}
	ExplainPropertyList("Sort Key", keys, es);
	if (state->bound >= 0)
		ExplainPropertyInteger("Sort Bound", NULL, state->bound, es);

	if (!es->analyze || !state->sorted)
		return;

	/*
	 * The phase times are the node's own clock readings (a few per sort, not
	 * per row), so they are shown with TIMING OFF too -- then they are not
	 * inflated by per-row timing of the plan below -- unless SUMMARY OFF asks
	 * for output without run-to-run variation.
	 */
	show_times = es->timing || es->summary;
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		ExplainPropertyText(state->run.on_gpu ? "GPU" : "Device",
							psprintf("%s, algorithm: %s, rows: %zu",
									 state->run.device_name, state->run.algorithm,
									 state->rows_in), es);
		ExplainPropertyText("Why", state->run.reason, es);
		if (state->has_fill)
			ExplainPropertyInteger("Rows Stored by Workers", NULL, (int64) state->fill_rows, es);
		if (state->run.algorithm_why[0])
			ExplainPropertyText("Algorithm Why", state->run.algorithm_why, es);
		if (show_times)
			ExplainPropertyText("Time",
								psprintf("fill %.3f ms, to device %.3f ms, sort %.3f ms, from device %.3f ms, emit %.3f ms",
										 state->fill_ms, state->run.to_device_ms,
										 state->run.sort_ms, state->run.from_device_ms,
										 state->emit_ms), es);
	}
	else
	{
		ExplainPropertyText("Device", state->run.device_name, es);
		ExplainPropertyBool("On GPU", state->run.on_gpu, es);
		ExplainPropertyText("Algorithm", state->run.algorithm, es);
		ExplainPropertyText("Why", state->run.reason, es);
		ExplainPropertyText("Algorithm Why", state->run.algorithm_why, es);
		ExplainPropertyInteger("Rows Sorted", NULL, (int64) state->rows_in, es);
		if (state->has_fill)
			ExplainPropertyInteger("Rows Stored by Workers", NULL, (int64) state->fill_rows, es);
		if (show_times)
		{
			ExplainPropertyFloat("Fill Time", "ms", state->fill_ms, 3, es);
			ExplainPropertyFloat("To Device Time", "ms", state->run.to_device_ms, 3, es);
			ExplainPropertyFloat("Sort Time", "ms", state->run.sort_ms, 3, es);
			ExplainPropertyFloat("From Device Time", "ms", state->run.from_device_ms, 3, es);
			ExplainPropertyFloat("Emit Time", "ms", state->emit_ms, 3, es);
		}
	}
}
