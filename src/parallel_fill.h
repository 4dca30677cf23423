/*
 * parallel_fill.h -- the parallel workers' share of a GpuSort's fill.
 *
 * In GpuSort -> Gather -> GpuSortFill -> partial plan, each worker's
 * GpuSortFill encodes the sort keys of the rows it reads and copies the
 * rows into chunks of a shared memory area that the GpuSort owns, instead
 * of sending them one by one through the Gather's tuple queue.  The
 * GpuSort takes the chunks' key words and rows as if it had read them
 * itself, as they come between the rows it reads itself, and the rest when
 * the Gather is done.  A row that does not fit (larger than a chunk, the
 * area full, gpusort.max_memory reached) goes up through the Gather as
 * usual, so nothing is lost.  In the leader, and without a parallel context
 * (workers not launched, no shared area), GpuSortFill passes its rows
 * through.
 */
#ifndef GPUSORT_PARALLEL_FILL_H
#define GPUSORT_PARALLEL_FILL_H

#include "postgres.h"

#include "nodes/extensible.h"
#include "access/tupdesc.h"
#include "nodes/plannodes.h"
#include "port/atomics.h"

extern CustomScanMethods gpusort_fill_scan_methods;

extern void gpusort_register_fill_node(void);

/*
 * The GpuSortFill over child for the keys of a GpuSort (its custom_private,
 * gpusort_node.h: key columns are columns of child's targetlist), or child
 * itself where the parallel fill is off or, under auto, would not pay
 * (gpusort.parallel_fill).
 */
extern Plan *gpusort_make_fill(Plan *child, List *gpusort_private);

/* Is plan the GpuSortFill under a Gather under a GpuSort? */
extern bool gpusort_is_fill(Plan *plan);

/* A GpuSort's side of the parallel fill: its shared area and chunk list. */
typedef struct FillArea FillArea;

/*
 * Open an area for the workers of the fill that is about to run (nw[k]:
 * words of key k's code as the GpuSort encodes it, rows of desc; columnar:
 * rows of fixed-length columns, as columns at their widths instead of
 * tuples; limit_bytes: the GpuSort's budget, for the chunks and its own
 * memory together; bound: the GpuSort's LIMIT + OFFSET as it evaluated
 * it, -1 if none, under which each process drops the rows that cannot be
 * in the result, fill_bound.h).  The next Gather to
 * start its workers in this backend hands it to them.
 * NULL if there is no room for one (the workers then pass their rows up).
 */
extern FillArea *fill_area_open(MemoryContext cxt, int nkeys, const int *nw,
								TupleDesc desc, bool columnar, Size limit_bytes,
								int64 bound);

/* The workers are done: no Gather started from now on gets this area. */
extern void fill_area_stop_offering(FillArea *area);

/* One chunk of rows the workers filled, as the GpuSort reads it. */
typedef struct FillChunkView
{
	Size		nrows;
	Size		bytes;			/* shared memory the chunk takes */
	bool		columnar;
	const bool *key_has_null;	/* [nkeys] */
	const bool **nulls;			/* [nkeys][nrows]: the key is NULL (NULL: a key without words) */
	const uint32 **words;		/* [nkeys * GPUSORT_MAX_KEY_WORDS + w][nrows]: word w of the code */
	const char **values;		/* columnar: [natts][nrows * type.width], as ColumnStore */
	const bool **isnull;		/* columnar: [natts][nrows] */
	const uint32 *tuple_off;	/* tuples: offset of row i's MinimalTuple */
	const char *data;			/* tuples: chunk data they are in */
	Size		data_used;		/* tuples: bytes of data they take */
} FillChunkView;

/*
 * The rows in the chunks pushed and not yet taken (and *bytes, the shared
 * memory those chunks take): all that are left once the workers are done.
 */
extern Size fill_area_rows_left(FillArea *area, Size *bytes);

/* Are there chunks pushed and not yet taken (a hint while the workers run)? */
extern bool fill_area_has_chunks(FillArea *area);

/*
 * Take the next chunk pushed (in no particular order) into *view; false
 * when there is none now.  The GpuSort copies what it needs and then
 * releases the chunk (fill_area_release_chunk) before it takes another.
 */
extern bool fill_area_next_chunk(FillArea *area, FillChunkView *view);

/* Free the chunk last taken: the workers' next chunks reuse its memory. */
extern void fill_area_release_chunk(FillArea *area);

/*
 * Keep the chunk last taken (of tuples) instead of freeing it, so that
 * the GpuSort reads its rows where they lie until it closes the area: no
 * second copy.  False, nothing changed, for columns, or where the kept
 * chunks would take more than three quarters of the area's limit (the
 * workers need room for the chunks they fill): then copy and release.
 */
extern bool fill_area_keep_chunk(FillArea *area);

/*
 * Free every chunk kept: the GpuSort wrote their rows out (a run,
 * node_spill.h) and reads on.
 */
extern void fill_area_release_kept(FillArea *area);

/* The shared memory of the chunks kept, counted in the area's limit. */
extern Size fill_area_kept_bytes(FillArea *area);

/*
 * The memory the GpuSort holds now: the workers' chunks and it share one
 * limit, so that the two together keep to the GpuSort's budget.
 */
extern void fill_area_set_leader_bytes(FillArea *area, Size bytes);

/*
 * The cut the workers of a bounded sort share (fill_bound.h), so that the
 * GpuSort drops the rows it reads itself by it too.
 */
extern pg_atomic_uint64 *fill_area_cut(FillArea *area);

/* Detach; the rows in chunks not taken, and in chunks kept, are gone. */
extern void fill_area_close(FillArea *area);

#endif
