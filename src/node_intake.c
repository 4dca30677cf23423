/*
 * node_intake.c -- the GpuSort node's input: on the first fetch it pulls
 * every row of its child (and takes the rows parallel workers stored,
 * parallel_fill.c) into an in-memory row store, encodes each row's sort
 * keys into 32-bit word columns as it arrives (NULL flags as an extra
 * word for keys that hold NULLs), and has the sort engine (GPU or CPU
 * radix) compute the sorting permutation.  A small constant bound keeps
 * only the best rows in the top-k heap (node_topk.c) instead.  Memory is
 * counted against the node's budget (gpusort.work_mem /
 * gpusort.max_memory); past it the rows held are sorted and written out
 * as a run, and the runs are merged at the end (node_spill.c).  Where
 * even that cannot go on (a single row over the budget, a run that memory
 * cannot sort), the rows move to PostgreSQL's tuplesort.
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "big_alloc.h"
#include "cpu_radix.h"
#include "fill_bound.h"
#include "gpusort_plan.h"
#include "guc.h"
#include "key_encoding.h"
#include "key_finish.h"
#include "phase_hook.h"
#include "node_spill.h"
#include "node_state.h"
#include "sort_keys.h"

/* how many rows the node reads between looks for chunks the workers filled */
#define TAKE_CHECK_ROWS 4096

/* why a node hands its rows to the tuplesort (EXPLAIN's "Device Reason") */
#define ROWS_OVER_BUDGET "rows exceed gpusort.work_mem / gpusort.max_memory"
#define TOO_MANY_ROWS "more rows than 32-bit row positions hold"

static void
init_stores(GpuSortState *state)
{
	TupleDesc	desc = state->slot->tts_tupleDescriptor;

	tuple_store_init(&state->store, state->sortcxt);
	/* a chunk is a small share of the budget: a run is cut by its rows, not by a chunk */
	if (state->limit_bytes > 0)
		tuple_store_limit_chunks(&state->store, state->limit_bytes / 16);
	if (state->columnar)
		column_store_init(&state->cols, state->sortcxt, desc);
}

/* The workers' chunks the tuple store points into (fill_area_keep_chunk). */
static Size
kept_bytes(GpuSortState *state)
{
	return state->fill ? fill_area_kept_bytes(state->fill) : 0;
}

/* Memory the stored rows take. */
static Size
stored_bytes(GpuSortState *state)
{
	return (state->columnar ? state->cols.bytes : state->store.bytes) + kept_bytes(state);
}

/* Memory the row store takes a row, beyond what its data may take elsewhere. */
static Size
store_row_bytes(GpuSortState *state)
{
	return state->columnar ? column_row_bytes(state->cols.type, state->cols.natts) :
		sizeof(MinimalTuple);
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
 * Memory the finish of n rows may need if they all tie (with their tie
 * bits), for a sort that finishes ties.
 */
static Size
finish_reserve(GpuSortState *state, Size n)
{
	if (state->finish_from == state->nkeys)
		return 0;
	return n * gpusort_finish_row_bytes(state->nkeys - state->finish_from) +
		GPUSORT_TIE_BITS_BYTES(n);
}

/*
 * Memory the node holds (or will, to sort n rows and finish their ties)
 * with key word columns of cap rows: what the budget (state->limit_bytes)
 * is checked against.
 */
static Size
used_bytes(GpuSortState *state, Size n, Size cap, Size key_bytes)
{
	return stored_bytes(state) + cap * key_bytes + sort_bytes(n) + finish_reserve(state, n);
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
	/* the runs written so far, then the rows held */
	if (state->spill)
		spill_to_tuplesort(state, state->tuplesort);
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
struct KeyWords
{
	uint32	   *nulls;			/* NULL until the key's first NULL */
	int			nw;				/* words of the code (gpusort_code_words) */
	uint32	   *w[GPUSORT_MAX_KEY_WORDS];	/* the code, most significant word first */
};
typedef struct KeyWords KeyWords;

/* Bytes the key words of one row take before any key has NULL words. */
static Size
key_row_bytes(GpuSortState *state)
{
	Size		bytes = 0;

	for (int k = 0; k < state->nkeys; k++)
		bytes += sizeof(uint32) * gpusort_code_words(state->codes[k], state->types[k]);
	return bytes;
}

/*
 * Grow one word column to cap rows (make it if it does not exist yet and
 * every row needs it); false if out of memory.
 */
static bool
grow_words(GpuSortState *state, uint32 **words, Size old, Size cap, bool needed)
{
	uint32	   *grown;

	if (*words == NULL && !needed)
		return true;
	grown = *words ? gpusort_realloc_big(*words, old * sizeof(uint32), cap * sizeof(uint32)) :
		gpusort_alloc_big_lazy(state->sortcxt, cap * sizeof(uint32));
	if (grown == NULL)
		return false;
	*words = grown;
	return true;
}

/* Grow the key word columns to hold cap rows; false if out of memory. */
static bool
grow_key_words(GpuSortState *state, KeyWords *kw, Size old, Size cap)
{
	for (int k = 0; k < state->nkeys; k++)
	{
		for (int w = 0; w < kw[k].nw; w++)
			if (!grow_words(state, &kw[k].w[w], old, cap, true))
				return false;
		if (!grow_words(state, &kw[k].nulls, old, cap, false))
			return false;
	}
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

	kw[k].nulls = gpusort_alloc_big_lazy(state->sortcxt, cap * sizeof(uint32));
	if (kw[k].nulls == NULL)
		return false;
	for (Size i = 0; i < n; i++)
	{
		if (i % ROWS_PER_INTERRUPT_CHECK == 0)
			CHECK_FOR_INTERRUPTS();
		kw[k].nulls[i] = not_null;
	}
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
	r->describe = fill_reorder;
	r->arg = state;
	r->cxt = state->sortcxt;
	return r;
}

/* The columns of a reorder (their sorted copies are allocated by the sort engine). */
static bool
fill_reorder(GpuSortReorder *r)
{
	GpuSortState *state = (GpuSortState *) r->arg;
	ColumnStore *cols = &state->cols;
	int			c;

	r->fixed_in = palloc(2 * cols->natts * sizeof(void *));
	r->fixed_out = palloc0(2 * cols->natts * sizeof(void *));
	r->fixed_size = palloc(2 * cols->natts * sizeof(size_t));
	for (c = 0; c < cols->natts; c++)
	{
		r->fixed_in[r->nfixed] = cols->values[c];
		r->fixed_size[r->nfixed++] = cols->type[c].width;
		if (cols->isnull[c])
		{
			r->fixed_in[r->nfixed] = cols->isnull[c];
			r->fixed_size[r->nfixed++] = sizeof(bool);
		}
	}
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
		Datum		d;
		uint32		code[GPUSORT_MAX_KEY_WORDS];

		/* no words at all, not even NULL ones: the finish orders by the key */
		if (state->codes[k] == GPUSORT_CODE_NONE)
			continue;
		d = slot_getattr(slot, state->attnos[k], &null);
		if (null && kw[k].nulls == NULL)
		{
			if (!start_null_words(state, kw, k, n, cap))
				return false;
			*key_bytes += sizeof(uint32);
		}
		if (kw[k].nulls)
			kw[k].nulls[n] = gpusort_null_word(null, state->nulls_first[k]);
		if (kw[k].nw == 0)
			continue;
		if (null)
			gpusort_null_code_words(state->codes[k], state->descending[k], kw[k].nw, code);
		else
			gpusort_encode_words(state->codes[k], state->types[k], &state->abbrev[k], d,
								 state->descending[k], kw[k].nw, code);
		for (int w = 0; w < kw[k].nw; w++)
			kw[k].w[w][n] = code[w];
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
 * doubling, never past what the budget leaves; exactly need rows where
 * need is the last row count or the planner's estimate (exact).  False if
 * out of memory.
 */
static bool
grow_rows(GpuSortState *state, KeyWords *kw, Size n, Size need, bool exact, Size *cap,
		  Size *key_bytes)
{
	Size		newcap;

	if (need <= *cap)
		return true;
	if (*cap == 0)
		*key_bytes = key_row_bytes(state);
	newcap = *cap ? *cap * 2 :
		(Size) Max(1024, Min(state->est_rows * 1.05, (double) FIRST_KEY_ROWS));
	/* the row store starts at the same size: both count */
	if (exact || used_bytes(state, need, newcap, *key_bytes) +
		(*cap == 0 ? newcap * store_row_bytes(state) : 0) > state->limit_bytes)
		newcap = exact ? need : need + need / 8;	/* the budget decides soon */
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

static void write_run(GpuSortState *state, KeyWords *kw, Size *n, Size *cap, Size *key_bytes);

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
		vslot->tts_values[c] = column_value_get(v->values[c], &state->cols.type[c], i);
		vslot->tts_isnull[c] = v->isnull[c][i];
	}
	return ExecStoreVirtualTuple(vslot);
}

/*
 * Index the tuples of a chunk the workers filled, where they lie if the
 * area lets this node keep the chunk (*kept), else copied in one piece;
 * false if memory ran out (nothing added, nothing kept).
 */
static bool
store_chunk_tuples(GpuSortState *state, const FillChunkView *v, bool *kept)
{
	if (!tuple_store_room(&state->store, v->nrows))
		return false;
	*kept = fill_area_keep_chunk(state->fill);
	if (!*kept)
		return tuple_store_add_copies(&state->store, v->data, v->data_used, v->tuple_off,
									  v->nrows);
	tuple_store_add_refs(&state->store, v->data, v->tuple_off, v->nrows);
	return true;
}

/*
 * Store the m rows of a chunk the workers filled after the n rows held:
 * key words made room for, tuples indexed (or kept) or columns copied.
 * NULL, or why not (nothing stored): the budget, or memory.
 */
static const char *
store_chunk(GpuSortState *state, KeyWords *kw, Size n, const FillChunkView *v, Size *cap,
			Size *key_bytes, bool *kept)
{
	Size		m = v->nrows;

	*kept = false;
	/* a chunk takes more memory than its rows' copies (freed below) */
	if (used_bytes(state, n + m, Max(*cap, n + m),
				   *key_bytes ? *key_bytes : key_row_bytes(state)) +
		v->bytes > state->limit_bytes)
		return ROWS_OVER_BUDGET;
	if (n + m > (Size) PG_UINT32_MAX)
		return TOO_MANY_ROWS;
	if (!grow_rows(state, kw, n, n + m, false, cap, key_bytes))
		return "out of memory for sort keys";
	for (int k = 0; k < state->nkeys; k++)
	{
		if (!v->key_has_null[k] || kw[k].nulls != NULL)
			continue;
		if (!start_null_words(state, kw, k, n, *cap))
			return "out of memory for sort keys";
		*key_bytes += sizeof(uint32);
	}
	if (!(v->columnar ?
		  column_store_append(&state->cols, v->values, v->isnull, m) :
		  store_chunk_tuples(state, v, kept)))
		return "out of memory for rows";
	return NULL;
}

/*
 * Tell the workers the memory this node holds (key word columns of cap
 * rows): their chunks and this node keep to one budget.
 */
static void
publish_leader_bytes(GpuSortState *state, Size cap, Size key_bytes)
{
	/* the chunks kept count in the area's own memory already */
	fill_area_set_leader_bytes(state->fill, state->tuplesort ? 0 :
							   stored_bytes(state) - kept_bytes(state) + cap * key_bytes);
}

/*
 * Take the rows of the chunks the parallel workers have pushed so far
 * (parallel_fill.c) after the n rows stored, as if they had been read here:
 * key words, tuples or columns copied, and each chunk freed, so that the
 * workers' next chunks reuse its memory.  The reading loop calls this while
 * the workers still fill (their chunks are copied in the time the parallel
 * scan shares out), and once more when they are done (last).  Falls back to
 * the tuplesort like the reading loop.  Returns the new row count.
 */
static Size
take_filled_rows(GpuSortState *state, KeyWords *kw, Size n, Size *cap, Size *key_bytes,
				 bool last)
{
	FillChunkView v;
	double		expected = Min(state->est_rows * 1.05, (double) PG_UINT32_MAX);

	if (!state->tuplesort && (last || *cap < (Size) expected))
	{
		Size		chunk_bytes;
		Size		left = fill_area_rows_left(state->fill, &chunk_bytes);
		/*
		 * Last, the rows there are; while the workers fill, the rows the
		 * planner expects, in no more than half the budget (an estimate too
		 * high must not crowd out the rows).
		 */
		Size		want = last ? n + left : (Size) expected;
		Size		limit = last ? state->limit_bytes : state->limit_bytes / 2;

		/*
		 * Room for all those rows at once where the budget allows it (else
		 * the chunks meet it one by one below): arrays made once, not grown
		 * by doubling.  A failure here is no failure yet.
		 */
		if (want > *cap && want >= n + left && want <= (Size) PG_UINT32_MAX &&
			used_bytes(state, want, want, *key_bytes ? *key_bytes : key_row_bytes(state)) +
			chunk_bytes + (want - n) * store_row_bytes(state) <= limit &&
			grow_rows(state, kw, n, want, true, cap, key_bytes))
			(void) (state->columnar ? column_store_reserve(&state->cols, *cap) :
					tuple_store_reserve(&state->store, *cap));
		publish_leader_bytes(state, *cap, *key_bytes);
	}

	while (fill_area_next_chunk(state->fill, &v))
	{
		Size		m = v.nrows;
		const char *reason = NULL;
		bool		kept = false;

		CHECK_FOR_INTERRUPTS();
		state->fill_rows += m;
		if (v.columnar != state->columnar)
			elog(ERROR, "GpuSortFill stored rows in another form than GpuSort reads");
		if (!state->tuplesort)
		{
			reason = store_chunk(state, kw, n, &v, cap, key_bytes, &kept);
			/* past the budget: the rows held become a run, and the chunk starts the next */
			if (reason != NULL && n > 0)
			{
				write_run(state, kw, &n, cap, key_bytes);
				if (!state->tuplesort)
					reason = store_chunk(state, kw, n, &v, cap, key_bytes, &kept);
			}
		}
		if (state->tuplesort || reason)
		{
			/* every row of the chunk to the tuplesort (start_tuplesort uses our slots) */
			if (!state->tuplesort)
				start_tuplesort(state, reason, NULL);
			for (Size i = 0; i < m; i++)
				tuplesort_puttupleslot(state->tuplesort, chunk_row_slot(state, &v, i));
			/* the slots point into the chunk */
			ExecClearTuple(state->slot);
			if (state->vslot)
				ExecClearTuple(state->vslot);
			fill_area_release_chunk(state->fill);
			continue;
		}
		for (int k = 0; k < state->nkeys; k++)
		{
			if (kw[k].nulls)
				for (Size i = 0; i < m; i++)
					kw[k].nulls[n + i] = gpusort_null_word(v.key_has_null[k] && v.nulls[k][i],
														   state->nulls_first[k]);
			/* the workers encoded the same words (the chunk layout says so) */
			for (int w = 0; w < kw[k].nw; w++)
				memcpy(kw[k].w[w] + n, v.words[k * GPUSORT_MAX_KEY_WORDS + w],
					   m * sizeof(uint32));
		}
		if (!kept)
			fill_area_release_chunk(state->fill);
		n += m;
		publish_leader_bytes(state, *cap, *key_bytes);
	}
	publish_leader_bytes(state, *cap, *key_bytes);
	return n;
}

/* KeyFinish.fetch: the finished keys' values of a stored row. */
static void
fetch_finish_values(void *arg, uint32 row, Datum *values, bool *isnull)
{
	GpuSortState *state = (GpuSortState *) arg;
	TupleTableSlot *slot;

	if (state->columnar)
	{
		column_store_get(&state->cols, row, state->vslot);
		slot = state->vslot;
	}
	else
		slot = ExecStoreMinimalTuple(state->store.tuples[row], state->slot, false);
	for (int k = state->finish_from; k < state->nkeys; k++)
		values[k - state->finish_from] = slot_getattr(slot, state->attnos[k],
													  &isnull[k - state->finish_from]);
}

/*
 * Start kf for ordering the runs of rows whose words tie by the keys from
 * finish_from on (key_finish.c), with what the budget leaves it.
 */
static void
finish_begin(GpuSortState *state, KeyFinish *kf, Size n)
{
	int			first = state->finish_from;
	int			nk = state->nkeys - first;
	GpuSortKeySpec *keys = palloc(nk * sizeof(GpuSortKeySpec));

	for (int k = first; k < state->nkeys; k++)
	{
		keys[k - first].type = state->types[k];
		keys[k - first].sortop = state->sortops[k];
		keys[k - first].collation = state->collations[k];
		keys[k - first].nulls_first = state->nulls_first[k];
	}
	gpusort_finish_setup(kf, keys, nk, state->codes[first], state->descending[first]);
	kf->fetch = fetch_finish_values;
	kf->arg = state;
	kf->threads = gpusort_threads_allowed();
	/* what the budget leaves (the key words, permutation and tie bits are held meanwhile) */
	kf->max_bytes = state->limit_bytes - Min(state->limit_bytes,
											 used_bytes(state, n, n, key_row_bytes(state)) -
											 finish_reserve(state, n) +
											 GPUSORT_TIE_BITS_BYTES(n));
}

/*
 * Order the runs of rows whose words (the first nwords) tie, in
 * state->perm (the GPU's or the CPU radix sort's order).  False if out of
 * memory, or (*over_budget) past the node's budget.
 */
static bool
finish_ties(GpuSortState *state, KeyFinish *kf, const uint32 **words, int nwords, Size n,
			bool *over_budget)
{
	bool		ok;

	ok = gpusort_finish_ties(kf, (const uint32 *const *) words, nwords, n, state->perm,
							 state->nresult);
	if (state->columnar)
		ExecClearTuple(state->vslot);
	else
		ExecClearTuple(state->slot);
	*over_budget = kf->over_budget;
	/* summed over the runs of a sort that spills */
	state->rows_finished += kf->rows_finished;
	state->refine_sorts += kf->refine_sorts;
	state->finish_threads = Max(state->finish_threads, kf->finish_threads);
	state->finish_ms += kf->ms;
	return ok;
}

/*
 * Sort the n stored rows whose key words kw holds (GPU or CPU), or, where
 * memory for the sort itself runs out, hand them to the tuplesort.  The
 * rows of a run (for_run) keep their key words, for the run's file, and
 * their columns where they are.
 */
static void
sort_stored_rows(GpuSortState *state, KeyWords *kw, Size n, bool for_run)
{
	MemoryContext oldcxt;
	int			nwords = 0,
				nsorted;		/* the words the sort takes */
	const uint32 **words;
	GpuSortReorder *reorder;
	GpuSortRun	before = state->run;
	KeyFinish	kf;
	uint32	   *tie_bits = NULL;
	bool		finish = state->finish_from < state->nkeys;
	bool		sorted;
	bool		over_budget = false;

	/* every stored row has its key words; positions are 32-bit */
	Assert(n == (state->columnar ? state->cols.nrows : state->store.ntuples));
	Assert(n <= (Size) PG_UINT32_MAX);

	/* the permutation, the GPU job's guard and the reorder live in sortcxt */
	oldcxt = MemoryContextSwitchTo(state->sortcxt);
	words = palloc(((1 + GPUSORT_MAX_KEY_WORDS) * state->nkeys) * sizeof(uint32 *));
	for (int k = 0; k < state->nkeys; k++)
	{
		if (kw[k].nulls)
			words[nwords++] = kw[k].nulls;
		for (int w = 0; w < kw[k].nw; w++)
			words[nwords++] = kw[k].w[w];
	}
	CHECK_FOR_INTERRUPTS();

	state->nresult = state->bound >= 0 ? Min(n, (Size) state->bound) : n;
	/* most rows in the workers' chunks: emission reads further ahead (gpusort_node.c) */
	state->rows_shared = !state->columnar && kept_bytes(state) > 0 && state->fill_rows > n / 2;
	state->perm = gpusort_alloc_big(state->sortcxt, Max(n, 1) * sizeof(uint32));
	/* the columns follow the GPU's order only where that order is final */
	reorder = state->perm && !finish && !for_run ? prepare_reorder(state, n) : NULL;
	nsorted = nwords;
	if (finish)
	{
		/* how much of the first key to finish the sort takes; the GPU marks the ties */
		finish_begin(state, &kf, n);
		nsorted = gpusort_finish_first_words(&kf, words, nwords, n);
		state->finish_words = kf.first_words;
		tie_bits = gpusort_tie_bits_for(state->sortcxt, n);
	}
	sorted = state->perm &&
		gpusort_sort_rows(words, nsorted, n, state->perm, &state->run, reorder, tie_bits);
	/* the times of a sort's runs add up */
	state->run.to_device_ms += before.to_device_ms;
	state->run.sort_ms += before.sort_ms;
	state->run.from_device_ms += before.from_device_ms;
	state->run.pieces = Max(state->run.pieces, before.pieces);
	if (sorted && finish)
	{
		kf.tie_bits = state->run.tie_bits_done ? tie_bits : NULL;
		sorted = finish_ties(state, &kf, words, nsorted, n, &over_budget);
	}
	if (tie_bits)
		pfree(tie_bits);
	MemoryContextSwitchTo(oldcxt);
	if (!sorted)
	{
		/* the rows are still in the stores: the tuplesort takes them */
		state->perm = NULL;
		start_tuplesort(state, over_budget ? ROWS_OVER_BUDGET : "out of memory for the sort", NULL);
		return;
	}
	if (for_run)
	{
		pfree(words);
		return;
	}
	for (int w = 0; w < nwords; w++)
		if (words[w])
			pfree((void *) words[w]);
	pfree(words);
	if (reorder)
		finish_reorder(state, reorder);
}

/* Is the sort by a strxfrm prefix (LIBC), whose order is checked pair by pair? */
static bool
order_is_checked(GpuSortState *state)
{
	return state->finish_from < state->nkeys &&
		gpusort_code_checked(state->codes[state->finish_from]);
}

/*
 * A sort by strxfrm keys (LIBC): check every adjacent pair of the n sorted
 * rows with the full comparators; the first pair out of order sends the
 * stored rows to the tuplesort (collation_keys.h).
 */
static void
check_collation_order(GpuSortState *state, Size n)
{
	instr_time	start;
	int			key;

	INSTR_TIME_SET_CURRENT(start);
	gpusort_phase_begin("check");
	if (unlikely(gpusort_check_hook != NULL) && state->perm != NULL)
		gpusort_check_hook(state->perm, n);
	state->rows_checked += n;
	if (node_first_disorder(state, n, &key) > 0)
	{
		/* the permutation and the batch go with sortcxt; the stores keep the rows */
		state->perm = NULL;
		state->batch_tuples = NULL;
		start_tuplesort(state, "strxfrm ordered a pair of rows unlike strcoll", NULL);
	}
	state->check_ms += ms_since(start);
}

/*
 * The keys whose words the merge of runs compares (node_spill.h): every
 * key up to and including the first lossy one, whose words order rows
 * whose values differ as its values do -- except a strxfrm prefix
 * (LIBC), which the order check does not trust; the comparators decide
 * from there on.
 */
static int
merge_keys(GpuSortState *state)
{
	int			f = state->finish_from;

	if (f == state->nkeys || gpusort_code_checked(state->codes[f]))
		return f;
	return f + 1;
}

/* The node holds no rows: the next ones start a new run. */
static void
next_run(GpuSortState *state, KeyWords *kw, Size *n, Size *cap, Size *key_bytes)
{
	state->perm = NULL;
	state->batch_tuples = NULL;
	state->batch_start = 0;
	state->batch_n = 0;
	state->nresult = 0;
	MemoryContextReset(state->sortcxt);
	init_stores(state);
	for (int k = 0; k < state->nkeys; k++)
	{
		kw[k].nulls = NULL;
		memset(kw[k].w, 0, sizeof(kw[k].w));
	}
	*n = 0;
	*cap = 0;
	*key_bytes = 0;
	/* the tuple store pointed into the chunks kept; it is empty now */
	if (state->fill)
		fill_area_release_kept(state->fill);
}

/*
 * Sort the n rows held and write them out as a run (node_spill.c); then
 * the node holds none and reads on.  Where the run cannot be sorted, or
 * strxfrm misordered its rows, the tuplesort takes every row instead
 * (state->tuplesort set).
 */
static void
write_run(GpuSortState *state, KeyWords *kw, Size *n, Size *cap, Size *key_bytes)
{
	int			nk = merge_keys(state);
	const uint32 **cols;
	uint32	   *consts;
	int			ncols = 0;

	gpusort_phase_begin("run");
	sort_stored_rows(state, kw, *n, true);
	if (!state->tuplesort && order_is_checked(state))
		check_collation_order(state, *n);
	if (state->tuplesort)
		return;
	if (gpusort_verify_order)
		node_verify_order(state);
	cols = palloc(nk * (1 + GPUSORT_MAX_KEY_WORDS) * sizeof(uint32 *));
	consts = palloc(nk * (1 + GPUSORT_MAX_KEY_WORDS) * sizeof(uint32));
	/* per key: the NULL-order word (constant before its first NULL), the code */
	for (int k = 0; k < nk; k++)
	{
		if (state->codes[k] == GPUSORT_CODE_NONE)
			continue;
		cols[ncols] = kw[k].nulls;
		consts[ncols++] = gpusort_null_word(false, state->nulls_first[k]);
		for (int w = 0; w < kw[k].nw; w++)
		{
			cols[ncols] = kw[k].w[w];
			consts[ncols++] = 0;
		}
	}
	spill_write_run(state, ncols, cols, consts);
	pfree(cols);
	pfree(consts);
	next_run(state, kw, n, cap, key_bytes);
}

/*
 * Encode the keys of the row in slot and store it after the n rows held
 * (*n then counts it); NULL, or why it could not be (nothing stored): the
 * budget, memory, the row count.  Under a bound, filter (if not NULL) may
 * drop the row instead (*dropped).
 */
static const char *
store_row(GpuSortState *state, KeyWords *kw, TupleTableSlot *slot, Size *n, Size *cap,
		  Size *key_bytes, FillBound *filter, bool *dropped)
{
	*dropped = false;
	/* the sort's row positions are 32-bit */
	if (*n == (Size) PG_UINT32_MAX)
		return TOO_MANY_ROWS;
	if (*n == *cap && !grow_rows(state, kw, *n, *n + 1, false, cap, key_bytes))
		return "out of memory for sort keys";
	if (!encode_row_keys(state, kw, slot, *n, *cap, key_bytes))
		return "out of memory for sort keys";
	if (filter != NULL)
	{
		bool		null;
		uint32		code[2] = {kw[0].w[0][*n], kw[0].nw > 1 ? kw[0].w[1][*n] : 0};

		(void) slot_getattr(slot, state->attnos[0], &null);
		/* not in the result: its key words at n are overwritten by the next row's */
		if (!fill_bound_admit(filter, fill_bound_rank(null, state->nulls_first[0], code,
													  kw[0].nw)))
		{
			*dropped = true;
			return NULL;
		}
	}
	if (used_bytes(state, *n + 1, *cap, *key_bytes) > state->limit_bytes)
		return ROWS_OVER_BUDGET;
	if (!(state->columnar ?
		  column_store_add_slot(&state->cols, slot) :
		  tuple_store_add_slot(&state->store, slot)))
		return "out of memory for rows";
	(*n)++;
	return NULL;
}

/* Open the shared area the workers store rows in, words per key as kw has them. */
static void
open_fill_area(GpuSortState *state, const KeyWords *kw)
{
	int		   *nw = palloc(state->nkeys * sizeof(int));

	for (int k = 0; k < state->nkeys; k++)
		nw[k] = kw[k].nw;
	state->fill = fill_area_open(state->css.ss.ps.state->es_query_cxt, state->nkeys, nw,
								 state->slot->tts_tupleDescriptor, state->columnar,
								 state->limit_bytes, state->bound);
	pfree(nw);
}

/*
 * Read every row of the child (and the rows the parallel workers stored),
 * then sort them: the top-k heap, the sort engine, or the tuplesort.
 */
void
node_sort_input(GpuSortState *state)
{
	PlanState  *outer = outerPlanState(state);
	bool		topk;
	KeyWords   *kw = NULL;
	Size		key_bytes = 0;	/* bytes of key words per row */
	Size		cap = 0,
				n = 0,			/* rows in the store */
				rows = 0;		/* rows read */
	instr_time	start;
	TopKEntry	probe;
	FillBound  *filter = NULL;

	gpusort_phase_begin("fill");
	INSTR_TIME_SET_CURRENT(start);
	node_runtime_bound(state);
	/*
	 * The heap compares 64-bit codes only: other keys take the sort.  Over
	 * workers that store rows (a bound known only now) the workers' cut
	 * passes on few rows, and the sort takes them.
	 */
	topk = state->bound >= 0 && state->bound <= GPUSORT_TOPK_MAX_BOUND &&
		gpusort_keys_whole(state->codes, state->nkeys) && !state->has_fill;
	state->limit_bytes = gpusort_memory_limit();
	state->rows_finished = 0;
	state->refine_sorts = 0;
	state->finish_threads = 0;
	state->finish_words = 0;
	state->finish_ms = 0;
	state->rows_checked = 0;
	state->check_ms = 0;
	memset(&state->run, 0, sizeof(state->run));
	init_stores(state);
	if (topk)
		node_topk_start(state, &probe);
	else
	{
		/* not in sortcxt, which each run resets */
		if (state->kw == NULL)
			state->kw = MemoryContextAlloc(state->css.ss.ps.state->es_query_cxt,
										   state->nkeys * sizeof(KeyWords));
		kw = state->kw;
		memset(kw, 0, state->nkeys * sizeof(KeyWords));
		for (int k = 0; k < state->nkeys; k++)
			kw[k].nw = gpusort_code_words(state->codes[k], state->types[k]);
	}

	/* the area the Gather's workers store their rows in (parallel_fill.c) */
	if (state->has_fill && !topk)
		open_fill_area(state, kw);
	/*
	 * Under a bound too large for the heap, the rows this node reads itself
	 * are dropped past the cut as the workers drop theirs (fill_bound.h),
	 * by the workers' shared cut where there are workers.
	 */
	if (!topk && state->bound > 0 && kw[0].nw > 0)
	{
		/* not in sortcxt, which the tuplesort fallback resets */
		MemoryContext old = MemoryContextSwitchTo(state->css.ss.ps.state->es_query_cxt);

		filter = fill_bound_create(state->bound,
								   state->fill ? fill_area_cut(state->fill) : NULL);
		MemoryContextSwitchTo(old);
	}

	for (;;)
	{
		TupleTableSlot *slot;

		/* the rows the workers have stored so far, taken while they store more */
		if (state->fill && rows % TAKE_CHECK_ROWS == 0)
		{
			if (fill_area_has_chunks(state->fill))
			{
				n = take_filled_rows(state, kw, n, &cap, &key_bytes, false);
				gpusort_gpu_prepare(n);
			}
			else
				publish_leader_bytes(state, cap, key_bytes);
		}
		slot = ExecProcNode(outer);
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
			node_topk_add(state, slot, &probe);
			MemoryContextSwitchTo(old);
			if (state->heap_bytes > state->limit_bytes)
				start_tuplesort(state, ROWS_OVER_BUDGET, NULL);
			continue;
		}
		{
			bool		dropped;
			const char *reason = store_row(state, kw, slot, &n, &cap, &key_bytes, filter,
										   &dropped);

			/* past the budget: the rows held become a run, and this row starts the next */
			if (reason != NULL && n > 0)
			{
				write_run(state, kw, &n, &cap, &key_bytes);
				if (!state->tuplesort)
					reason = store_row(state, kw, slot, &n, &cap, &key_bytes, NULL, &dropped);
			}
			if (state->tuplesort)
			{
				tuplesort_puttupleslot(state->tuplesort, slot);
				continue;
			}
			if (reason != NULL)
			{
				/* a row alone past the budget */
				start_tuplesort(state, reason, slot);
				continue;
			}
			if (dropped)
			{
				rows--;			/* read, but not sorted */
				continue;
			}
		}
		/* the GPU opened beside the rest of the fill, once the rows would use it */
		if (n % ROWS_PER_INTERRUPT_CHECK == 0)
			gpusort_gpu_prepare(n);
	}
	if (state->fill)
	{
		fill_area_stop_offering(state->fill);
		n = take_filled_rows(state, kw, n, &cap, &key_bytes, true);
		rows += state->fill_rows;
		/* every row is in this node's memory now, or in chunks it kept */
		if (kept_bytes(state) == 0)
		{
			fill_area_close(state->fill);
			state->fill = NULL;
		}
	}
	fill_bound_free(filter);
	state->rows_in = rows;
	state->fill_ms = ms_since(start);

	if (state->heap)
		node_topk_finish(state);
	else if (!state->tuplesort && state->spill)
	{
		/* the rows held are the last run; the merge hands the rows up */
		if (n > 0)
			write_run(state, kw, &n, &cap, &key_bytes);
		if (!state->tuplesort)
			spill_finish_input(state);
	}
	else if (!state->tuplesort)
	{
		sort_stored_rows(state, kw, n, false);
		if (!state->tuplesort && order_is_checked(state))
			check_collation_order(state, n);
	}

	if (state->tuplesort)
	{
		tuplesort_performsort(state->tuplesort);
		state->run.algorithm = "tuplesort";
		state->run.device_name = "CPU";
		state->run.on_gpu = false;
		state->run.device_reason = state->fallback_reason;
	}
	state->sorted = true;
	if (gpusort_verify_order && !state->tuplesort && !state->spill)
		node_verify_order(state);
	state->cur = -1;
	state->emit_done = false;
	INSTR_TIME_SET_CURRENT(state->emit_start);
}

