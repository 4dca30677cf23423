/*
 * parallel_fill.c -- GpuSortFill, the parallel workers' share of a GpuSort's
 * fill (see parallel_fill.h).
 *
 * The GpuSort opens a DSA area of its own before it pulls from the Gather
 * and offers it (a backend-local pointer) to the Gather that starts next;
 * the leader's GpuSortFill writes the area's handle into the parallel
 * context, and each worker's GpuSortFill attaches to it.  A worker fills
 * chunks -- the rows' encoded key words, and the rows themselves as
 * MinimalTuples (or, for rows of fixed-length columns, as columns at their
 * own widths, the column store's form) -- and
 * pushes each full chunk onto a list in the area.  The GpuSort takes the
 * chunks as they come, between the rows it reads itself, copies their rows
 * into its own stores and frees them, so that the workers' next chunks
 * reuse their memory (shared memory pages cost a fault each the first time
 * they are written), and takes the last ones when the workers are done.
 * The area belongs to the GpuSort: its segments outlive the workers and
 * the Gather's parallel context, and go when the GpuSort detaches (end,
 * rescan, error).
 *
 * The chunks' memory counts against one limit for all workers (no more
 * than half the free room of /dev/shm where shared memory lives there),
 * and together with the memory the GpuSort holds against its budget
 * (gpusort.max_memory).  A worker that meets either passes rows up
 * through the Gather a while (PASS_ROWS_BEFORE_RETRY), then asks again:
 * the GpuSort frees memory as it takes the chunks or writes a run.  One
 * whose allocation fails, or that holds a bounded sort's chunks, passes
 * the rest of its rows up.
 */
#include "postgres.h"

#include <sys/statvfs.h>

#include "access/parallel.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/dsm.h"
#include "storage/dsm_impl.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/dsa.h"

#include "column_store.h"
#include "fill_bound.h"
#include "gpusort_plan.h"
#include "guc.h"
#include "parallel_fill.h"
#include "pg_compat.h"
#include "plan_build.h"
#include "sort_keys.h"
#include "tuple_store.h"

/*
 * Rows per chunk, and the most bytes of tuple data a chunk has room for
 * (tuples).  After its first chunk a worker sizes the data of the next by
 * the rows it has stored (a tenth more than CHUNK_ROWS of their mean size,
 * at least CHUNK_DATA_MIN), so that narrow rows do not leave most of each
 * chunk empty: the chunks count against gpusort.max_memory until the
 * GpuSort has taken them.
 */
#define CHUNK_ROWS 16384
#define CHUNK_DATA ((Size) 2 * 1024 * 1024)
#define CHUNK_DATA_MIN ((Size) 64 * 1024)

/*
 * A worker refused a chunk by the budget passes this many rows up through
 * the Gather before it asks again.
 */
#define PASS_ROWS_BEFORE_RETRY 4096

/* The part of the area every participant sees. */
typedef struct FillShared
{
	slock_t		mutex;
	dsa_pointer head;			/* chunks pushed and not yet taken */
	pg_atomic_uint64 used;		/* bytes of chunks allocated and not yet freed */
	pg_atomic_uint64 leader_bytes;	/* memory the GpuSort holds */
	pg_atomic_uint64 cut;		/* a bounded sort's: rows ranked above it are dropped (fill_bound.h) */
	int64		bound;			/* the GpuSort's LIMIT + OFFSET, -1: none */
	uint64		limit;			/* most bytes of chunks (shared memory's room) */
	uint64		budget;			/* most bytes of chunks and GpuSort together */
	int			nkeys;			/* what the GpuSort expects */
	int			natts;
	bool		columnar;
	Size		chunk_bytes;	/* of its chunk layout */
} FillShared;

/* In the Gather's parallel context: where the workers find the area. */
typedef struct FillCoordinate
{
	bool		valid;			/* false: no area, rows pass through */
	dsa_handle	handle;
	dsa_pointer shared;
} FillCoordinate;

typedef struct FillChunk
{
	dsa_pointer next;
	Size		bytes;			/* of the allocation */
	uint32		nrows;
	uint32		cap;
	Size		data_used;
	Size		data_cap;
	bool		columnar;
	/* then the arrays, at the offsets of ChunkLayout */
} FillChunk;

/* Offsets of a chunk's arrays from its start. */
typedef struct ChunkLayout
{
	Size		has_null;		/* bool[nkeys] */
	Size	   *nulls;			/* bool[cap] per key with words: the key is NULL */
	Size	   *words;			/* uint32[cap] per word w of key k, at [k * MAX_KEY_WORDS + w] */
	Size	   *values;			/* columnar: char[cap * type.width] per column */
	ColumnType *type;			/* columnar: how column c's values lie */
	Size	   *isnull;			/* columnar: bool[cap] per column */
	Size		tuple_off;		/* tuples: uint32[cap] */
	Size		data;			/* tuples: char[data_cap] */
	Size		total;
} ChunkLayout;

/* nw[k]: the words of key k (gpusort_code_words; 0 for a NONE key, which has no NULL flags either) */
static void
layout_chunk(ChunkLayout *l, int nkeys, const int *nw, TupleDesc desc, bool columnar)
{
	Size		off = MAXALIGN(sizeof(FillChunk));
	int			natts = desc->natts;

	l->nulls = palloc0(nkeys * sizeof(Size));
	l->words = palloc0(nkeys * GPUSORT_MAX_KEY_WORDS * sizeof(Size));
	l->values = palloc(Max(natts, 1) * sizeof(Size));
	l->isnull = palloc(Max(natts, 1) * sizeof(Size));
	l->type = palloc(Max(natts, 1) * sizeof(ColumnType));
	l->has_null = off;
	off = MAXALIGN(off + nkeys * sizeof(bool));
	for (int k = 0; k < nkeys; k++)
	{
		if (nw[k] == 0)
			continue;
		l->nulls[k] = off;
		off += MAXALIGN(CHUNK_ROWS * sizeof(bool));
		for (int w = 0; w < nw[k]; w++)
		{
			l->words[k * GPUSORT_MAX_KEY_WORDS + w] = off;
			off += CHUNK_ROWS * sizeof(uint32);
		}
	}
	l->tuple_off = l->data = 0;
	if (columnar)
	{
		for (int c = 0; c < natts; c++)
		{
			column_type_init(&l->type[c], TupleDescAttr(desc, c));
			l->values[c] = off;
			off += MAXALIGN(CHUNK_ROWS * l->type[c].width);
		}
		for (int c = 0; c < natts; c++)
		{
			l->isnull[c] = off;
			off += MAXALIGN(CHUNK_ROWS * sizeof(bool));
		}
	}
	else
	{
		l->tuple_off = off;
		off += CHUNK_ROWS * sizeof(uint32);
		l->data = off;
		off += CHUNK_DATA;
	}
	l->total = off;
}

/* ---- the GpuSort's side --------------------------------------------------- */

struct FillArea
{
	dsa_area   *area;
	dsa_pointer shared_ptr;
	FillShared *shared;
	int			nkeys;
	int			natts;
	ChunkLayout layout;
	dsa_pointer pending;		/* chunks moved off the shared list, not yet taken */
	dsa_pointer current;		/* the chunk last taken (InvalidDsaPointer: none) */
	Size		kept_bytes;		/* chunks the GpuSort keeps (fill_area_keep_chunk) */
	dsa_pointer *kept;			/* those chunks */
	int			nkept;
	int			kept_cap;
	/* the view's arrays */
	const bool **nulls;
	const uint32 **words;
	const char **values;
	const bool **isnull;
};

/* The area the next Gather to start in this backend hands to its workers. */
static FillArea *offered_area = NULL;

static int	fill_tranche_id = 0;

/* Room in /dev/shm where DSM segments live there; no limit elsewhere. */
static Size
shm_room(void)
{
	struct statvfs st;

	if (dynamic_shared_memory_type != DSM_IMPL_POSIX)
		return SIZE_MAX;
	if (statvfs("/dev/shm", &st) != 0)
		return 0;
	return (Size) st.f_bavail * (Size) st.f_frsize;
}

/*
 * Are there, right now, shared memory segment slots for every segment an
 * area of up to bytes may create?  dsa_create, and a worker's allocation
 * that needs a new segment, raise an error when every slot is taken; this
 * probe, which holds that many slots at once and lets them go, returns
 * false instead, and the rows then go through the Gather.  It cannot
 * reserve them: another backend may take slots between the probe and a
 * worker's allocation (as with PostgreSQL's own parallel hash joins, that
 * worker then fails with "too many dynamic shared memory segments"); slots
 * are many (64 plus a few per connection) and an area takes a few dozen at
 * most.
 */
static bool
segment_slots_free(Size bytes)
{
	/* DSA's growth: 1 MB segments, two of each size, each size twice the last */
	Size		seg = (Size) 1024 * 1024,
				total = 0;
	int			need = 1,		/* the area's control segment */
				got = 0;
	dsm_segment *probes[64];
	bool		ok = true;

	for (int i = 0; total < bytes && need < lengthof(probes); i++)
	{
		total += seg;
		need++;
		if (i % 2 == 1)
			seg *= 2;
	}
	while (got < need)
	{
		probes[got] = dsm_create(64, DSM_CREATE_NULL_IF_MAXSEGMENTS);
		if (probes[got] == NULL)
		{
			ok = false;
			break;
		}
		got++;
	}
	while (got > 0)
		dsm_detach(probes[--got]);
	return ok;
}

FillArea *
fill_area_open(MemoryContext cxt, int nkeys, const int *nw, TupleDesc desc, bool columnar,
			   Size limit_bytes, int64 bound)
{
	int			natts = desc->natts;
	MemoryContext old;
	FillArea   *fa;
	Size		room = shm_room();
	Size		limit = Min(limit_bytes, room / 2);

	offered_area = NULL;
	if (limit < 4 * CHUNK_DATA)
		return NULL;

	if (!segment_slots_free(limit + limit / 4 + 4 * CHUNK_DATA))
		return NULL;
	old = MemoryContextSwitchTo(cxt);
	if (fill_tranche_id == 0)
		fill_tranche_id = LWLockNewTrancheId();
	LWLockRegisterTranche(fill_tranche_id, "gpusort_fill");
	fa = palloc0(sizeof(FillArea));
	fa->area = dsa_create(fill_tranche_id);
	/* beyond this, allocations fail (NULL) instead of creating segments */
	dsa_set_size_limit(fa->area, room == SIZE_MAX ? limit + limit / 4 + 4 * CHUNK_DATA :
					   Min(limit + limit / 4 + 4 * CHUNK_DATA, room - room / 4));
	fa->shared_ptr = dsa_allocate(fa->area, sizeof(FillShared));
	fa->shared = dsa_get_address(fa->area, fa->shared_ptr);
	SpinLockInit(&fa->shared->mutex);
	fa->shared->head = InvalidDsaPointer;
	pg_atomic_init_u64(&fa->shared->used, 0);
	pg_atomic_init_u64(&fa->shared->leader_bytes, 0);
	pg_atomic_init_u64(&fa->shared->cut, FILL_BOUND_NO_CUT);
	fa->shared->bound = bound;
	fa->shared->limit = limit;
	fa->shared->budget = limit_bytes;
	fa->shared->nkeys = nkeys;
	fa->shared->natts = natts;
	fa->shared->columnar = columnar;
	fa->nkeys = nkeys;
	fa->natts = natts;
	fa->pending = InvalidDsaPointer;
	fa->current = InvalidDsaPointer;
	layout_chunk(&fa->layout, nkeys, nw, desc, columnar);
	fa->shared->chunk_bytes = fa->layout.total;
	fa->nulls = palloc0(nkeys * sizeof(bool *));
	fa->words = palloc0(nkeys * GPUSORT_MAX_KEY_WORDS * sizeof(uint32 *));
	fa->values = palloc0(Max(natts, 1) * sizeof(char *));
	fa->isnull = palloc0(Max(natts, 1) * sizeof(bool *));
	MemoryContextSwitchTo(old);
	offered_area = fa;
	return fa;
}

void
fill_area_stop_offering(FillArea *area)
{
	if (offered_area == area)
		offered_area = NULL;
}

/*
 * Move the chunks pushed so far onto the GpuSort's own list.  The spinlock
 * is held only to take the list's head: reading a chunk may map a segment
 * (dsa_get_address), which must not happen under a spinlock.
 */
static void
move_pushed_chunks(FillArea *fa)
{
	dsa_pointer p;

	SpinLockAcquire(&fa->shared->mutex);
	p = fa->shared->head;
	fa->shared->head = InvalidDsaPointer;
	SpinLockRelease(&fa->shared->mutex);
	while (DsaPointerIsValid(p))
	{
		FillChunk  *chunk = dsa_get_address(fa->area, p);
		dsa_pointer next = chunk->next;

		/* the worker that pushed it no longer touches it */
		chunk->next = fa->pending;
		fa->pending = p;
		p = next;
	}
}

Size
fill_area_rows_left(FillArea *fa, Size *bytes)
{
	Size		rows = 0;

	move_pushed_chunks(fa);
	*bytes = 0;
	for (dsa_pointer p = fa->pending; DsaPointerIsValid(p);)
	{
		FillChunk  *chunk = dsa_get_address(fa->area, p);

		rows += chunk->nrows;
		*bytes += chunk->bytes;
		p = chunk->next;
	}
	return rows;
}

bool
fill_area_has_chunks(FillArea *fa)
{
	bool		any;

	if (DsaPointerIsValid(fa->pending))
		return true;
	SpinLockAcquire(&fa->shared->mutex);
	any = DsaPointerIsValid(fa->shared->head);
	SpinLockRelease(&fa->shared->mutex);
	return any;
}

void
fill_area_set_leader_bytes(FillArea *fa, Size bytes)
{
	pg_atomic_write_u64(&fa->shared->leader_bytes, bytes);
}

bool
fill_area_next_chunk(FillArea *fa, FillChunkView *view)
{
	FillChunk  *chunk;
	char	   *base;
	ChunkLayout *l = &fa->layout;
	dsa_pointer p;

	Assert(!DsaPointerIsValid(fa->current));
	if (!DsaPointerIsValid(fa->pending))
		move_pushed_chunks(fa);
	p = fa->pending;
	if (!DsaPointerIsValid(p))
		return false;
	chunk = dsa_get_address(fa->area, p);
	fa->pending = chunk->next;
	fa->current = p;
	base = (char *) chunk;

	view->nrows = chunk->nrows;
	view->bytes = chunk->bytes;
	view->columnar = chunk->columnar;
	view->key_has_null = (const bool *) (base + l->has_null);
	for (int k = 0; k < fa->nkeys; k++)
	{
		fa->nulls[k] = l->nulls[k] ? (const bool *) (base + l->nulls[k]) : NULL;
		for (int w = 0; w < GPUSORT_MAX_KEY_WORDS; w++)
		{
			Size		off = l->words[k * GPUSORT_MAX_KEY_WORDS + w];

			fa->words[k * GPUSORT_MAX_KEY_WORDS + w] = off ? (const uint32 *) (base + off) : NULL;
		}
	}
	view->nulls = fa->nulls;
	view->words = fa->words;
	view->values = NULL;
	view->isnull = NULL;
	view->tuple_off = NULL;
	view->data = NULL;
	view->data_used = 0;
	if (chunk->columnar)
	{
		for (int c = 0; c < fa->natts; c++)
		{
			fa->values[c] = base + l->values[c];
			fa->isnull[c] = (const bool *) (base + l->isnull[c]);
		}
		view->values = fa->values;
		view->isnull = fa->isnull;
	}
	else
	{
		view->tuple_off = (const uint32 *) (base + l->tuple_off);
		view->data = base + l->data;
		view->data_used = chunk->data_used;
	}
	return true;
}

void
fill_area_release_chunk(FillArea *fa)
{
	FillChunk  *chunk = dsa_get_address(fa->area, fa->current);

	pg_atomic_fetch_sub_u64(&fa->shared->used, chunk->bytes);
	dsa_free(fa->area, fa->current);
	fa->current = InvalidDsaPointer;
}

bool
fill_area_keep_chunk(FillArea *fa)
{
	FillChunk  *chunk = dsa_get_address(fa->area, fa->current);

	/* room for the workers' chunks in flight stays free */
	if (chunk->columnar || fa->kept_bytes + chunk->bytes > fa->shared->limit / 4 * 3)
		return false;
	/* it stays in shared->used, which the workers' limit counts */
	if (fa->nkept == fa->kept_cap)
	{
		MemoryContext cxt = GetMemoryChunkContext(fa);

		fa->kept_cap = Max(64, 2 * fa->kept_cap);
		fa->kept = fa->kept ? repalloc(fa->kept, fa->kept_cap * sizeof(dsa_pointer)) :
			MemoryContextAlloc(cxt, fa->kept_cap * sizeof(dsa_pointer));
	}
	fa->kept[fa->nkept++] = fa->current;
	fa->kept_bytes += chunk->bytes;
	fa->current = InvalidDsaPointer;
	return true;
}

void
fill_area_release_kept(FillArea *fa)
{
	for (int i = 0; i < fa->nkept; i++)
	{
		FillChunk  *chunk = dsa_get_address(fa->area, fa->kept[i]);

		pg_atomic_fetch_sub_u64(&fa->shared->used, chunk->bytes);
		dsa_free(fa->area, fa->kept[i]);
	}
	fa->nkept = 0;
	fa->kept_bytes = 0;
}

Size
fill_area_kept_bytes(FillArea *fa)
{
	return fa->kept_bytes;
}

pg_atomic_uint64 *
fill_area_cut(FillArea *fa)
{
	return &fa->shared->cut;
}

void
fill_area_close(FillArea *fa)
{
	if (fa == NULL)
		return;
	fill_area_stop_offering(fa);
	dsa_detach(fa->area);
}

/* ---- the GpuSortFill node ---------------------------------------------------- */

typedef struct FillState
{
	CustomScanState css;
	int			nkeys;
	AttrNumber *attnos;
	GpuSortKeySpec *keys;
	bool	   *descending;
	GpuSortKeyCode *codes;
	int		   *nw;				/* words of each key's code */
	SortSupportData *abbrev;	/* abbreviated sort support of ABBREV keys */
	int			natts;
	bool		columnar;
	int64		bound;			/* the GpuSort's (LIMIT + OFFSET) as it evaluated it, -1: none */

	/* the row in hand's key words, encoded before it is stored or dropped */
	bool	   *row_null;		/* [nkeys] */
	uint32	   *row_code;		/* [nkeys * GPUSORT_MAX_KEY_WORDS] */

	/* under a bound, in a worker or the leader: drops rows that cannot be in the result */
	FillBound  *filter;
	bool		keys_settled;	/* abbrev and nw set */

	/*
	 * Under a bound, a process holds its chunks until its scan ends, and
	 * each time they hold compact_at rows drops from them the rows the cut
	 * now leaves out, so that it passes on about the bound's rows, as a
	 * bounded heap would, whatever the order the rows come in.  The chunk
	 * in hand is held[hand]; after a compaction the next rows fill the
	 * room left in the held chunks before new ones are taken.
	 */
	bool		holding;
	bool		attached;		/* a worker: the area is attached here, detach it */
	dsa_pointer *held;
	int			nheld;
	int			held_cap;
	int			hand;
	uint64		held_rows;
	uint64		compact_at;

	/* a worker's fill; area NULL: rows pass through */
	dsa_area   *area;
	FillShared *shared;
	bool		storing;
	bool		refused;		/* the last chunk asked for was over the limit or the budget */
	uint32		pass_left;		/* rows to pass up through the Gather before asking again */
	ChunkLayout layout;
	dsa_pointer chunk_ptr;
	FillChunk  *chunk;
	uint64		rows_stored;	/* tuples: rows and tuple bytes in published chunks */
	uint64		data_stored;
} FillState;

static Node *fill_create_state(CustomScan *cscan);
static void fill_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *fill_exec(CustomScanState *node);
static void fill_end(CustomScanState *node);
static void fill_rescan(CustomScanState *node);
static Size fill_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void fill_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void fill_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate);

CustomScanMethods gpusort_fill_scan_methods = {
	"GpuSortFill",
	fill_create_state
};

static CustomExecMethods fill_exec_methods = {
	.CustomName = "GpuSortFill",
	.BeginCustomScan = fill_begin,
	.ExecCustomScan = fill_exec,
	.EndCustomScan = fill_end,
	.ReScanCustomScan = fill_rescan,
	.EstimateDSMCustomScan = fill_estimate_dsm,
	.InitializeDSMCustomScan = fill_initialize_dsm,
	.ReInitializeDSMCustomScan = fill_initialize_dsm,	/* a rescan offers the area anew */
	.InitializeWorkerCustomScan = fill_initialize_worker,
};

/*
 * An error between fill_area_open and fill_area_stop_offering leaves the
 * offer pointing at freed memory: forget it when a (sub)transaction ends.
 */
static void
forget_offer_at_xact_end(XactEvent event, void *arg)
{
	offered_area = NULL;
}

static void
forget_offer_at_subxact_end(SubXactEvent event, SubTransactionId mySubid,
							SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		offered_area = NULL;
}

void
gpusort_register_fill_node(void)
{
	RegisterCustomScanMethods(&gpusort_fill_scan_methods);
	RegisterXactCallback(forget_offer_at_xact_end, NULL);
	RegisterSubXactCallback(forget_offer_at_subxact_end, NULL);
}

bool
gpusort_is_fill(Plan *plan)
{
	return plan != NULL && IsA(plan, CustomScan) &&
		((CustomScan *) plan)->methods == &gpusort_fill_scan_methods;
}

Plan *
gpusort_make_fill(Plan *child, List *gpusort_private)
{
	CustomScan *cscan;

	/*
	 * auto and on alike: rows of every shape, since a worker that stores
	 * its rows spares the leader the Gather's queue, the copy out of it and
	 * the key encoding, and the leader keeps the workers' tuples where they
	 * lie (fill_area_keep_chunk)
	 */
	if (gpusort_parallel_fill == GPUSORT_PARALLEL_FILL_OFF || child == NULL ||
		!child->parallel_safe)
		return child;
	cscan = makeNode(CustomScan);
	cscan->scan.plan.startup_cost = child->startup_cost;
	cscan->scan.plan.total_cost = child->total_cost;
	cscan->scan.plan.plan_rows = child->plan_rows;
	cscan->scan.plan.plan_width = child->plan_width;
	gpusort_copy_disabled_nodes(&cscan->scan.plan, child);
	cscan->scan.plan.parallel_aware = true;
	cscan->scan.plan.parallel_safe = true;
	cscan->scan.plan.plan_node_id = gpusort_new_plan_node_id();
	cscan->scan.plan.targetlist = gpusort_column_vars(child->targetlist, INDEX_VAR);
	cscan->scan.plan.extParam = bms_copy(child->extParam);
	cscan->scan.plan.allParam = bms_copy(child->allParam);
	cscan->scan.plan.lefttree = child;
	cscan->scan.scanrelid = 0;
	cscan->flags = 0;
	cscan->custom_scan_tlist = gpusort_column_vars(child->targetlist, OUTER_VAR);
	/* the keys as the GpuSort has them, packed the same way */
	cscan->custom_private = copyObject(gpusort_private);
	cscan->methods = &gpusort_fill_scan_methods;
	return (Plan *) cscan;
}

static Node *
fill_create_state(CustomScan *cscan)
{
	FillState  *fs = palloc0(sizeof(FillState));
	List	   *attnos = gpusort_private(cscan, GPUSORT_PRIVATE_ATTNOS);
	int			n = list_length(attnos);

	NodeSetTag(fs, T_CustomScanState);
	fs->css.methods = &fill_exec_methods;
	fs->css.flags = cscan->flags;
	fs->nkeys = n;
	fs->attnos = palloc(n * sizeof(AttrNumber));
	fs->keys = palloc(n * sizeof(GpuSortKeySpec));
	fs->descending = palloc(n * sizeof(bool));
	fs->codes = palloc(n * sizeof(GpuSortKeyCode));
	fs->nw = palloc0(n * sizeof(int));
	for (int i = 0; i < n; i++)
	{
		fs->attnos[i] = (AttrNumber) list_nth_int(attnos, i);
		fs->keys[i].type = list_nth_oid(gpusort_private(cscan, GPUSORT_PRIVATE_TYPES), i);
		fs->keys[i].sortop = list_nth_oid(gpusort_private(cscan, GPUSORT_PRIVATE_SORTOPS), i);
		fs->keys[i].collation = list_nth_oid(gpusort_private(cscan, GPUSORT_PRIVATE_COLLATIONS), i);
		fs->keys[i].nulls_first = list_nth_int(gpusort_private(cscan, GPUSORT_PRIVATE_NULLS_FIRST), i) != 0;
		fs->descending[i] = list_nth_int(gpusort_private(cscan, GPUSORT_PRIVATE_DESCENDING), i) != 0;
		fs->codes[i] = (GpuSortKeyCode) list_nth_int(gpusort_private(cscan, GPUSORT_PRIVATE_CODES), i);
	}
	fs->bound = -1;				/* the area's, once attached */
	fs->row_null = palloc0(n * sizeof(bool));
	fs->row_code = palloc0(n * GPUSORT_MAX_KEY_WORDS * sizeof(uint32));
	fs->chunk_ptr = InvalidDsaPointer;
	return (Node *) fs;
}

static void
fill_begin(CustomScanState *node, EState *estate, int eflags)
{
	FillState  *fs = (FillState *) node;
	TupleDesc	desc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;

	outerPlanState(node) = ExecInitNode(outerPlan(node->ss.ps.plan), estate, eflags);
	fs->natts = desc->natts;
	fs->columnar = column_store_fits(desc);
	/* rows passing through come in the child's slots, of any type */
	node->ss.ps.resultopsset = true;
	node->ss.ps.resultopsfixed = false;
}

/* Push the chunk in hand onto the shared list (or free it if empty). */
static void
publish_chunk(FillState *fs)
{
	if (fs->chunk == NULL)
		return;
	if (fs->holding)
	{
		/* held[hand] stays held */
		fs->chunk = NULL;
		fs->chunk_ptr = InvalidDsaPointer;
		return;
	}
	if (fs->chunk->nrows == 0)
	{
		pg_atomic_fetch_sub_u64(&fs->shared->used, fs->chunk->bytes);
		dsa_free(fs->area, fs->chunk_ptr);
	}
	else
	{
		fs->rows_stored += fs->chunk->nrows;
		fs->data_stored += fs->chunk->data_used;
		SpinLockAcquire(&fs->shared->mutex);
		fs->chunk->next = fs->shared->head;
		fs->shared->head = fs->chunk_ptr;
		SpinLockRelease(&fs->shared->mutex);
	}
	fs->chunk = NULL;
	fs->chunk_ptr = InvalidDsaPointer;
}

/* A new empty chunk in hand; false (none) if the limit or the area says no. */
static bool
new_chunk(FillState *fs)
{
	Size		data_cap = CHUNK_DATA;
	Size		bytes;
	uint64		used;

	publish_chunk(fs);
	if (fs->columnar)
		data_cap = 0;
	else if (fs->rows_stored > 0)
		data_cap = Min(CHUNK_DATA,
					   Max(CHUNK_DATA_MIN,
						   MAXALIGN(fs->data_stored / fs->rows_stored * CHUNK_ROWS * 11 / 10)));
	/* the tuple data is the chunk's last array */
	bytes = fs->layout.total - (fs->columnar ? 0 : CHUNK_DATA) + data_cap;
	used = pg_atomic_fetch_add_u64(&fs->shared->used, bytes) + bytes;
	if (used > fs->shared->limit ||
		used + pg_atomic_read_u64(&fs->shared->leader_bytes) > fs->shared->budget)
	{
		pg_atomic_fetch_sub_u64(&fs->shared->used, bytes);
		/* worth asking again only if the chunk alone fits */
		fs->refused = bytes <= fs->shared->limit && bytes <= fs->shared->budget;
		return false;
	}
	fs->refused = false;
	fs->chunk_ptr = dsa_allocate_extended(fs->area, bytes, DSA_ALLOC_NO_OOM);
	if (!DsaPointerIsValid(fs->chunk_ptr))
	{
		pg_atomic_fetch_sub_u64(&fs->shared->used, bytes);
		return false;
	}
	fs->chunk = dsa_get_address(fs->area, fs->chunk_ptr);
	fs->chunk->next = InvalidDsaPointer;
	fs->chunk->bytes = bytes;
	fs->chunk->nrows = 0;
	fs->chunk->cap = CHUNK_ROWS;
	fs->chunk->data_used = 0;
	fs->chunk->data_cap = data_cap;
	fs->chunk->columnar = fs->columnar;
	memset((char *) fs->chunk + fs->layout.has_null, 0, fs->nkeys * sizeof(bool));
	if (fs->holding)
	{
		if (fs->nheld == fs->held_cap)
		{
			fs->held_cap = Max(16, fs->held_cap * 2);
			fs->held = fs->held == NULL ?
				MemoryContextAlloc(fs->css.ss.ps.state->es_query_cxt,
								   fs->held_cap * sizeof(dsa_pointer)) :
				repalloc(fs->held, fs->held_cap * sizeof(dsa_pointer));
		}
		fs->hand = fs->nheld;
		fs->held[fs->nheld++] = fs->chunk_ptr;
	}
	return true;
}

/*
 * The next chunk to store into: where the process holds its chunks, the
 * next held one with room left, else a new one; false if none.
 */
static bool
next_chunk(FillState *fs)
{
	if (fs->holding)
	{
		publish_chunk(fs);
		while (fs->hand + 1 < fs->nheld)
		{
			FillChunk  *chunk;

			fs->hand++;
			chunk = dsa_get_address(fs->area, fs->held[fs->hand]);
			if (chunk->nrows < chunk->cap &&
				(chunk->columnar || chunk->data_cap - chunk->data_used >= CHUNK_DATA_MIN / 16))
			{
				fs->chunk = chunk;
				fs->chunk_ptr = fs->held[fs->hand];
				return true;
			}
		}
	}
	return new_chunk(fs);
}

/*
 * Drop from a held chunk, in place, the rows ranked above cut (moving the
 * rest down, tuples in the order they lie); the rows it keeps.
 */
static uint32
compact_chunk(FillState *fs, FillChunk *chunk, uint64 cut)
{
	char	   *base = (char *) chunk;
	ChunkLayout *l = &fs->layout;
	const bool *nulls0 = (const bool *) (base + l->nulls[0]);
	const uint32 *w0 = (const uint32 *) (base + l->words[0]);
	const uint32 *w1 = fs->nw[0] > 1 ? (const uint32 *) (base + l->words[1]) : NULL;
	uint32	   *tuple_off = chunk->columnar ? NULL : (uint32 *) (base + l->tuple_off);
	char	   *data = chunk->columnar ? NULL : base + l->data;
	Size		data_used = 0;
	uint32		kept = 0;

	for (uint32 i = 0; i < chunk->nrows; i++)
	{
		uint32		code[2] = {w0[i], w1 ? w1[i] : 0};

		if (fill_bound_rank(nulls0[i], fs->keys[0].nulls_first, code, fs->nw[0]) > cut)
			continue;
		if (kept != i)
		{
			for (int k = 0; k < fs->nkeys; k++)
			{
				if (fs->nw[k] == 0)
					continue;
				((bool *) (base + l->nulls[k]))[kept] = ((bool *) (base + l->nulls[k]))[i];
				for (int w = 0; w < fs->nw[k]; w++)
				{
					uint32	   *words = (uint32 *) (base + l->words[k * GPUSORT_MAX_KEY_WORDS + w]);

					words[kept] = words[i];
				}
			}
			if (chunk->columnar)
			{
				for (int c = 0; c < fs->natts; c++)
				{
					Size		width = l->type[c].width;

					memcpy(base + l->values[c] + kept * width, base + l->values[c] + i * width,
						   width);
					((bool *) (base + l->isnull[c]))[kept] = ((bool *) (base + l->isnull[c]))[i];
				}
			}
		}
		if (!chunk->columnar)
		{
			/* a tuple's room runs to the next one's (reserve_in_chunk) */
			Size		off = tuple_off[i];
			Size		len = (i + 1 < chunk->nrows ? tuple_off[i + 1] : chunk->data_used) - off;

			if (data_used != off)
				memmove(data + data_used, data + off, len);
			tuple_off[kept] = (uint32) data_used;
			data_used += len;
		}
		kept++;
	}
	chunk->nrows = kept;
	if (!chunk->columnar)
		chunk->data_used = data_used;
	return kept;
}

/* Drop from the held chunks the rows the cut now leaves out. */
static void
compact_held(FillState *fs)
{
	uint64		cut = fill_bound_cut(fs->filter);
	uint64		kept = 0;

	if (cut == FILL_BOUND_NO_CUT)
	{
		/* no cut yet: the filter takes one at twice the bound's rows let through */
		fs->compact_at = fs->held_rows + fs->bound;
		return;
	}
	publish_chunk(fs);
	for (int i = 0; i < fs->nheld; i++)
	{
		CHECK_FOR_INTERRUPTS();
		kept += compact_chunk(fs, dsa_get_address(fs->area, fs->held[i]), cut);
	}
	fs->held_rows = kept;
	/* rows tied at the cut may keep more than the bound: compact again only as they double */
	fs->compact_at = Max(2 * (uint64) fs->bound, 2 * kept);
	fs->hand = -1;
}

/* The scan is over: hand the held chunks to the GpuSort (free those left empty). */
static void
publish_held(FillState *fs)
{
	dsa_pointer first = InvalidDsaPointer,
				last = InvalidDsaPointer;
	FillChunk  *last_chunk;

	publish_chunk(fs);
	for (int i = 0; i < fs->nheld; i++)
	{
		FillChunk  *chunk = dsa_get_address(fs->area, fs->held[i]);

		if (chunk->nrows == 0)
		{
			pg_atomic_fetch_sub_u64(&fs->shared->used, chunk->bytes);
			dsa_free(fs->area, fs->held[i]);
			continue;
		}
		chunk->next = first;
		if (!DsaPointerIsValid(first))
			last = fs->held[i];
		first = fs->held[i];
	}
	fs->nheld = 0;
	fs->hand = -1;
	fs->held_rows = 0;
	if (!DsaPointerIsValid(first))
		return;
	/* no segment may be mapped under the spinlock (move_pushed_chunks) */
	last_chunk = dsa_get_address(fs->area, last);
	SpinLockAcquire(&fs->shared->mutex);
	last_chunk->next = fs->shared->head;
	fs->shared->head = first;
	SpinLockRelease(&fs->shared->mutex);
}

/* tuple_copy_slot's reserve: room in the chunk in hand for the next row */
static char *
reserve_in_chunk(void *arg, Size len)
{
	FillState  *fs = (FillState *) arg;
	FillChunk  *chunk = fs->chunk;
	char	   *dest;

	len = MAXALIGN(len);
	if (len > chunk->data_cap - chunk->data_used)
		return NULL;
	dest = (char *) chunk + fs->layout.data + chunk->data_used;
	((uint32 *) ((char *) chunk + fs->layout.tuple_off))[chunk->nrows] = (uint32) chunk->data_used;
	chunk->data_used += len;
	return dest;
}

/* Put the slot's row into the chunk in hand: false if it does not fit. */
static bool
store_row(FillState *fs, TupleTableSlot *slot)
{
	FillChunk  *chunk = fs->chunk;
	char	   *base = (char *) chunk;
	uint32		row = chunk->nrows;

	if (fs->columnar)
	{
		slot_getallattrs(slot);
		for (int c = 0; c < fs->natts; c++)
		{
			column_value_put(base + fs->layout.values[c], &fs->layout.type[c], row,
							 slot->tts_values[c], slot->tts_isnull[c]);
			((bool *) (base + fs->layout.isnull[c]))[row] = slot->tts_isnull[c];
		}
	}
	else if (!tuple_copy_slot(slot, reserve_in_chunk, fs))
		return false;

	for (int k = 0; k < fs->nkeys; k++)
	{
		const uint32 *code = &fs->row_code[k * GPUSORT_MAX_KEY_WORDS];

		if (fs->nw[k] == 0)
			continue;
		if (fs->row_null[k])
			((bool *) (base + fs->layout.has_null))[k] = true;
		((bool *) (base + fs->layout.nulls[k]))[row] = fs->row_null[k];
		for (int w = 0; w < fs->nw[k]; w++)
			((uint32 *) (base + fs->layout.words[k * GPUSORT_MAX_KEY_WORDS + w]))[row] = code[w];
	}
	chunk->nrows++;
	return true;
}

/*
 * Encode the key words of the slot's row into row_code and row_null, as
 * the GpuSort's own reading loop does (keys from .. upto-1).
 */
static void
encode_row(FillState *fs, TupleTableSlot *slot, int from, int upto)
{
	for (int k = from; k < upto; k++)
	{
		bool		null;
		Datum		d;
		uint32	   *code = &fs->row_code[k * GPUSORT_MAX_KEY_WORDS];

		/* NONE: no words, not even NULL flags (as the GpuSort's own reading loop) */
		if (fs->nw[k] == 0)
			continue;
		d = slot_getattr(slot, fs->attnos[k], &null);
		fs->row_null[k] = null;
		if (null)
			gpusort_null_code_words(fs->codes[k], fs->descending[k], fs->nw[k], code);
		else
			gpusort_encode_words(fs->codes[k], fs->keys[k].type, &fs->abbrev[k], d,
								 fs->descending[k], fs->nw[k], code);
	}
}

/* Under a bound: can the row, its keys encoded, still be in the result? */
static bool
row_admitted(FillState *fs)
{
	return fill_bound_admit(fs->filter,
							fill_bound_rank(fs->row_null[0], fs->keys[0].nulls_first,
											fs->row_code, fs->nw[0]));
}

/*
 * The keys' codes as the GpuSort's begin_scan settles them (an ABBREV key
 * without abbreviation now becomes NONE, as there), and their words.
 */
static void
settle_keys(FillState *fs)
{
	if (fs->keys_settled)
		return;
	fs->abbrev = palloc0(fs->nkeys * sizeof(SortSupportData));
	for (int k = 0; k < fs->nkeys; k++)
	{
		gpusort_settle_abbrev(&fs->keys[k], &fs->codes[k], &fs->abbrev[k]);
		fs->nw[k] = gpusort_code_words(fs->codes[k], fs->keys[k].type);
	}
	fs->keys_settled = true;
}

/*
 * A filter for the bound, sharing the cut in the area's shared part; none
 * without a bound, or where the first key has no words.
 */
static void
start_filter(FillState *fs, FillShared *shared)
{
	MemoryContext old = MemoryContextSwitchTo(fs->css.ss.ps.state->es_query_cxt);

	fill_bound_free(fs->filter);
	fs->filter = NULL;
	if (fs->bound > 0)
	{
		settle_keys(fs);
		if (fs->nw[0] > 0)
			fs->filter = fill_bound_create(fs->bound, &shared->cut);
	}
	fs->nheld = 0;
	fs->hand = -1;
	fs->held_rows = 0;
	fs->holding = fs->storing && fs->filter != NULL;
	fs->compact_at = 2 * (uint64) Max(fs->bound, 1);
	MemoryContextSwitchTo(old);
}

/*
 * Store the row, its keys encoded, in the chunk in hand or the next one;
 * false if it goes up through the Gather instead: too large for an empty
 * chunk, or no chunk to be had (the limit: then so do the rows after it).
 */
static bool
store_somewhere(FillState *fs, TupleTableSlot *slot)
{
	for (;;)
	{
		if (fs->chunk != NULL && fs->chunk->nrows < fs->chunk->cap)
		{
			if (store_row(fs, slot))
				return true;
			if (fs->chunk->nrows == 0 && fs->chunk->data_used == 0)
				return false;
		}
		if (!next_chunk(fs))
		{
			/*
			 * Over the budget: the GpuSort frees memory as it takes the
			 * chunks, or writes a run (node_spill.h), so ask again after
			 * some rows have gone up through the Gather -- they also wake
			 * the GpuSort to take the chunks.  A failed allocation, or a
			 * bounded sort's held chunks: no more chunks.
			 */
			if (fs->refused && !fs->holding)
				fs->pass_left = PASS_ROWS_BEFORE_RETRY;
			else
				fs->storing = false;
			return false;
		}
	}
}

static TupleTableSlot *
fill_exec(CustomScanState *node)
{
	FillState  *fs = (FillState *) node;
	PlanState  *outer = outerPlanState(node);

	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(outer);

		if (TupIsNull(slot))
		{
			if (fs->holding)
			{
				/* pass on no more than the bound's rows (and those tied at the cut) */
				fill_bound_finish(fs->filter);
				if (fs->held_rows > (uint64) fs->bound)
					compact_held(fs);
				publish_held(fs);
			}
			else if (fs->storing)
				publish_chunk(fs);
			return slot;
		}
		if (unlikely(fs->pass_left > 0))
		{
			/* refused a chunk a while ago (store_somewhere): this row goes up */
			fs->pass_left--;
			return slot;
		}
		if (fs->filter != NULL)
		{
			/* the first key's words decide; the others only for a row kept */
			encode_row(fs, slot, 0, 1);
			if (!row_admitted(fs))
			{
				CHECK_FOR_INTERRUPTS();
				continue;
			}
			if (fs->storing)
				encode_row(fs, slot, 1, fs->nkeys);
		}
		else if (fs->storing)
			encode_row(fs, slot, 0, fs->nkeys);
		if (!fs->storing || !store_somewhere(fs, slot))
			return slot;
		if (fs->holding && ++fs->held_rows >= fs->compact_at)
			compact_held(fs);
	}
}

static void
fill_end(CustomScanState *node)
{
	FillState  *fs = (FillState *) node;

	if (fs->attached)
	{
		if (fs->holding)
			publish_held(fs);
		else
			publish_chunk(fs);
		dsa_detach(fs->area);
	}
	/* the leader: the area is the GpuSort's, which may have closed it already */
	fs->area = NULL;
	fs->storing = false;
	fs->holding = false;
	fs->chunk = NULL;
	ExecEndNode(outerPlanState(node));
}

static void
fill_rescan(CustomScanState *node)
{
	PlanState  *outer = outerPlanState(node);

	/* only the leader rescans; it passes rows through */
	if (outer->chgParam == NULL)
		ExecReScan(outer);
}

static Size
fill_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return sizeof(FillCoordinate);
}

static void
fill_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	FillState  *fs = (FillState *) node;
	FillCoordinate *coord = (FillCoordinate *) coordinate;

	coord->valid = false;
	coord->shared = InvalidDsaPointer;
	/* a rescan: an area the leader stored into before is gone */
	fill_bound_free(fs->filter);
	fs->filter = NULL;
	fs->area = NULL;
	fs->shared = NULL;
	fs->storing = false;
	fs->holding = false;
	fs->chunk = NULL;
	fs->chunk_ptr = InvalidDsaPointer;
	if (offered_area != NULL)
	{
		coord->valid = true;
		coord->handle = dsa_get_handle(offered_area->area);
		coord->shared = offered_area->shared_ptr;
		/*
		 * Under a bound the leader's share of the scan is stored and
		 * compacted as the workers' shares are, by the same cut.
		 */
		fs->bound = offered_area->shared->bound;
		if (fs->bound > 0)
		{
			settle_keys(fs);
			layout_chunk(&fs->layout, fs->nkeys, fs->nw,
						 node->ss.ss_ScanTupleSlot->tts_tupleDescriptor, fs->columnar);
			if (fs->layout.total == offered_area->shared->chunk_bytes)
			{
				fs->area = offered_area->area;
				fs->shared = offered_area->shared;
				fs->storing = true;
				fs->refused = false;
				fs->pass_left = 0;
			}
			start_filter(fs, offered_area->shared);
		}
	}
}

static void
fill_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	FillState  *fs = (FillState *) node;
	FillCoordinate *coord = (FillCoordinate *) coordinate;
	FillShared *shared;

	if (!coord->valid)
		return;
	fs->area = dsa_attach(coord->handle);
	shared = dsa_get_address(fs->area, coord->shared);
	settle_keys(fs);
	layout_chunk(&fs->layout, fs->nkeys, fs->nw,
				 node->ss.ss_ScanTupleSlot->tts_tupleDescriptor, fs->columnar);
	if (shared->nkeys != fs->nkeys || shared->natts != fs->natts ||
		shared->columnar != fs->columnar || shared->chunk_bytes != fs->layout.total)
	{
		/* not the layout the GpuSort reads: pass rows through */
		dsa_detach(fs->area);
		fs->area = NULL;
		return;
	}
	fs->shared = shared;
	fs->storing = true;
	fs->attached = true;
	fs->bound = shared->bound;
	start_filter(fs, shared);
}
