/*
 * node_state.h -- the GpuSort node's executor state, shared by the files of
 * the node: gpusort_node.c (the executor callbacks and row emission),
 * node_intake.c (reading the input and sorting it), node_topk.c (the top-k
 * heap of a small LIMIT) and node_explain.c (EXPLAIN).
 */
#ifndef GPUSORT_NODE_STATE_H
#define GPUSORT_NODE_STATE_H

#include "postgres.h"

#include "nodes/execnodes.h"
#include "portability/instr_time.h"
#include "utils/tuplesort.h"

#include "column_store.h"
#include "node_spill.h"
#include "parallel_fill.h"
#include "pg_compat.h"
#include "sort_engine.h"
#include "sort_keys.h"
#include "tuple_store.h"

/* rows moved or checked between two interrupt checks */
#define ROWS_PER_INTERRUPT_CHECK 16384

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
	GpuSortKeyCode *codes;		/* how each key becomes GPU words (sort_keys.h) */
	int			finish_from;	/* first lossy key (gpusort_code_lossless); nkeys if none */
	SortSupportData *abbrev;	/* abbreviated sort support of ABBREV keys (others unset) */
	int64		bound;			/* -1: none */
	List	   *bound_exprs;	/* a bound known at run time: (count, offset) ExprStates */

	double		est_rows;		/* the planner's estimate of the input */
	TupleTableSlot *slot;		/* MinimalTuple slot (tuple store, heap, tuplesort) */
	TupleTableSlot *vslot;		/* virtual slot (column store) */
	MemoryContext sortcxt;		/* store, codes, permutation */

	bool		sorted;
	bool		columnar;		/* rows in cols (all columns of fixed length), not store */
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
	bool		rows_shared;	/* most tuples lie in the workers' chunks (shared memory) */

	Tuplesortstate *tuplesort;	/* fallback */

	/* past the budget: sorted runs in temporary files (node_spill.h) */
	SpillState *spill;
	bool		random_access;	/* may be read backward or marked (EXEC_FLAG_BACKWARD, _MARK) */
	struct KeyWords *kw;		/* the key word columns (node_intake.c), [nkeys] */

	/* parallel fill: GpuSort -> Gather -> GpuSortFill (parallel_fill.c) */
	bool		has_fill;
	FillArea   *fill;			/* the workers' chunks; NULL: none */
	Size		fill_rows;		/* rows the workers stored */

	/* top-k heap */
	TopKEntry  *heap;
	Size		heap_n;
	Size		heap_bytes;		/* the heap's memory, tuples included */

	Size		limit_bytes;	/* the node's memory budget (gpusort_memory_limit) */

	/* for EXPLAIN ANALYZE */
	GpuSortRun	run;
	Size		rows_in;
	Size		rows_finished;	/* rows in runs of tied words ordered on the CPU */
	int			refine_sorts;	/* sorts of tied rows by their next bytes */
	int			finish_threads; /* threads that sorted the tied rows (0: none) */
	int			finish_words;	/* words of the first key to finish the sort took; 0: not yet */
	double		finish_ms;
	Size		rows_checked;	/* LIBC keys: the sorted rows checked pair by pair (0: none) */
	double		check_ms;
	double		fill_ms;
	double		emit_ms;
	instr_time	emit_start;
	bool		emit_done;
	const char *fallback_reason;
} GpuSortState;

/* Milliseconds since start. */
static inline double
ms_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/* gpusort_node.c: evaluate a bound known only at run time into state->bound. */
extern void node_runtime_bound(GpuSortState *state);

/* node_intake.c: read the whole input and sort it (or hand it to the tuplesort). */
extern void node_sort_input(GpuSortState *state);

/* node_topk.c: the heap of the best `bound` rows. */
extern void node_topk_start(GpuSortState *state, TopKEntry *probe);
extern void node_topk_add(GpuSortState *state, TupleTableSlot *slot, TopKEntry *probe);
extern void node_topk_finish(GpuSortState *state);

/*
 * gpusort_node.c: the first of the n sorted positions out of order with
 * the one before (0: none; *key: the sort key that orders them), and
 * gpusort.verify_order's check of the rows handed up.
 */
extern Size node_first_disorder(GpuSortState *state, Size n, int *key);
extern void node_verify_order(GpuSortState *state);

/* node_explain.c */
extern void node_explain(CustomScanState *node, List *ancestors, ExplainState *es);

#endif
