/*
 * node_spill.c -- a GpuSort past its memory budget: sorted runs written to
 * temporary files, and their merge (see node_spill.h).
 *
 * A run's record: the tuple's length (uint32), the merge words, the
 * MinimalTuple; rows of a column store (every column of fixed length) are
 * written in their column form instead, as fixed-size records: the merge
 * words, each value at its alignment, a NULL flag a column, so that no
 * tuple is formed going out and none deformed coming back (the merge
 * reads them in place).  A run is a temporary File (fd.c, as a BufFile's
 * segments are: temp_tablespaces, temp_file_limit, log_temp_files, removal at
 * close or transaction end), written and read sequentially through
 * buffers of up to a megabyte: BufFile's 8 kB blocks made the writes cost
 * a system call every 8 kB, several seconds a run on the GPU host's VM.
 * The merged file of a node read with random access is a BufFile whose
 * records hold each tuple between two copies of its length, so that it
 * can be read backward as well as forward.
 */
#include "postgres.h"

#include "commands/tablespace.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "storage/fd.h"
#include "utils/wait_event.h"
#include "utils/memutils.h"
#include "utils/sortsupport.h"

#include "node_spill.h"
#include "node_state.h"
#include "phase_hook.h"
#include "run_threads.h"
#include "sort_engine.h"

/* the most a run's write or read buffer takes */
#define RUN_BUFFER_MAX ((Size) 1024 * 1024)
#define RUN_BUFFER_MIN ((Size) 64 * 1024)
/* the most bytes of records all threads gather at a time (write_rows) */
#define GATHER_BYTES_MAX ((Size) 16 * 1024 * 1024)

typedef struct SpillRun
{
	File		file;			/* -1: closed */
	off_t		size;			/* bytes written */
	Size		rows;			/* rows written */
	Size		read;			/* rows read so far */
	char	   *rbuf;			/* read buffer: rlen bytes from file offset roff - rlen */
	Size		rbuf_size;
	Size		rlen;
	Size		rpos;
	off_t		roff;
	char	   *buf;			/* the row read last: its words, then its tuple or values */
	char	   *own;			/* buf where it is not in rbuf: bytes of own_size */
	Size		own_size;
	MinimalTuple tuple;			/* in buf */
	TupleTableSlot *slot;		/* the tuple, for the comparators (ncmp > 0) */
	bool		exhausted;		/* merging: every row handed up, buf holds none */
	uint64		head;			/* the row's first two merge words as one, compared first */
} SpillRun;

struct SpillState
{
	MemoryContext cxt;			/* everything below, files included */
	int			nwords;			/* merge words of a row */
	Size		tuple_off;		/* where a row's tuple lies in a run's buf */
	uint32	   *wordbuf;		/* [nwords], for writing */
	/* rows of a column store: fixed-size records (columnar) */
	bool		columnar;
	int			natts;
	const ColumnType *types;	/* [natts], the column store's */
	Size	   *val_off;		/* [natts]: where column c's value lies in a record */
	Size		nulls_off;		/* the NULL flags */
	Size		rec_bytes;
	char	   *gbuf;			/* the threads' gather buffers (write_rows) */
	Size		gbuf_size;
	char	   *wbuf;			/* the run being written: bytes not yet in its file */
	Size		wbuf_size;
	Size		wused;
	Size		limit_bytes;	/* the node's budget, for the buffers */
	SpillRun   *runs;
	int			nruns;
	int			runs_cap;

	/* the keys from state->finish_from on, which the words do not decide */
	int			ncmp;
	SortSupport cmp;

	/*
	 * The merge: a tournament (loser) tree of run numbers over nruns
	 * leaves, tree[0] the run whose row comes next, tree[1 .. nruns - 1]
	 * the loser of each match; a row handed up costs log2(nruns)
	 * comparisons, replayed from its run's leaf to the root.
	 */
	int		   *tree;
	int			last;			/* the run whose row was handed up last (-1: none) */
	Size		emitted;
	bool		merging;
	int			tree_cap;
	int			passes;			/* merge passes that turned groups of runs into one */
	uint64		fetches;		/* spill_fetch calls, for the interrupt checks */

	/* random access: the runs merged into one file */
	BufFile    *merged;
	int64		merged_rows;
	int64		cur;			/* the row read last: -1 before, merged_rows after */
	char	   *rec;
	Size		rec_size;
	int64		mark_cur;
	int			mark_fileno;
	off_t		mark_offset;

	/* EXPLAIN ANALYZE */
	int			runs_written;	/* runs made from the input (merge passes make fewer, longer ones) */
	Size		rows_written;
	uint64		bytes_written;
	double		write_ms;
	double		merge_ms;
};

/* ---- files ------------------------------------------------------------------ */

static void
read_exact(BufFile *file, void *ptr, size_t len)
{
	size_t		got = BufFileRead(file, ptr, len);

	if (got != len)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("gpusort: could not read from a temporary file: read only %zu of %zu bytes",
						got, len)));
}

static void
seek_to(BufFile *file, int fileno, off_t offset, int whence)
{
	if (BufFileSeek(file, fileno, offset, whence) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("gpusort: could not seek in a temporary file")));
}

static BufFile *
create_file(SpillState *sp)
{
	MemoryContext old = MemoryContextSwitchTo(sp->cxt);
	BufFile    *file;

	/* temp_tablespaces, as the tuplesort takes them */
	PrepareTempTablespaces();
	file = BufFileCreateTemp(false);
	MemoryContextSwitchTo(old);
	return file;
}

/* A run's file: a temporary file of this transaction, temp_file_limit counted. */
static File
create_run_file(void)
{
	PrepareTempTablespaces();
	return OpenTemporaryFile(false);
}

/* len bytes at the end of run's file. */
static void
file_append(SpillRun *run, const char *buf, Size len)
{
	int			rc;

	Assert(len <= MaxAllocSize);
	errno = 0;
	if (unlikely(gpusort_write_hook != NULL) && (errno = gpusort_write_hook()) != 0)
		rc = -1;
	else
		/* FileWrite raises temp_file_limit's error itself */
		rc = FileWrite(run->file, unconstify(char *, buf), (int) len, run->size, WAIT_EVENT_BUFFILE_WRITE);
	if (rc != (int) len)
	{
		if (rc >= 0 && errno == 0)
			errno = ENOSPC;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("gpusort: could not write to a temporary file: %m")));
	}
	run->size += len;
}

/* The bytes buffered for the run being written, into its file. */
static void
run_flush(SpillState *sp, SpillRun *run)
{
	if (sp->wused == 0)
		return;
	file_append(run, sp->wbuf, sp->wused);
	sp->wused = 0;
}

/* len bytes from buf after those written or buffered so far. */
static void
run_write_out(SpillState *sp, SpillRun *run, const char *buf, Size len)
{
	run_flush(sp, run);
	if (len > 0)
		file_append(run, buf, len);
}

static void
run_write(SpillState *sp, SpillRun *run, const void *ptr, Size len)
{
	const char *p = ptr;

	while (len > 0)
	{
		Size		n = Min(len, sp->wbuf_size - sp->wused);

		memcpy(sp->wbuf + sp->wused, p, n);
		sp->wused += n;
		p += n;
		len -= n;
		if (sp->wused == sp->wbuf_size)
			run_flush(sp, run);
	}
}

/* Read run from its start again. */
static void
run_rewind(SpillRun *run)
{
	run->roff = 0;
	run->rlen = 0;
	run->rpos = 0;
	run->read = 0;
}

/* The next bytes of run's file into its read buffer, which has been read to its end. */
static void
run_fill(SpillRun *run)
{
	int			want = (int) Min((off_t) run->rbuf_size, run->size - run->roff);
	int			rc;

	if (want <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("gpusort: unexpected end of a temporary file")));
	errno = 0;
	rc = FileRead(run->file, run->rbuf, want, run->roff, WAIT_EVENT_BUFFILE_READ);
	if (rc != want)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("gpusort: could not read from a temporary file: read %d of %d bytes: %m",
						rc, want)));
	run->roff += want;
	run->rlen = want;
	run->rpos = 0;
}

static void
run_read(SpillRun *run, void *ptr, Size len)
{
	char	   *p = ptr;

	while (len > 0)
	{
		Size		n;

		if (run->rpos == run->rlen)
			run_fill(run);
		n = Min(len, run->rlen - run->rpos);
		memcpy(p, run->rbuf + run->rpos, n);
		run->rpos += n;
		p += n;
		len -= n;
	}
}

/* buf of at least need bytes */
static char *
grow_buffer(SpillState *sp, char *buf, Size *size, Size need)
{
	if (need <= *size)
		return buf;
	*size = Max(need, Max(2 * *size, 1024));
	if (buf)
		pfree(buf);
	return MemoryContextAllocHuge(sp->cxt, *size);
}

/* rows ahead of the one written whose memory is prefetched */
#define RUN_PREFETCH 16
/*
 * Tuple rows are written in batches: the tuple pointers of RUN_BATCH
 * sorted positions looked up in one tight loop (their cache misses
 * overlap), the tuples prefetched as they are found.
 */
#define RUN_BATCH 256

/* ---- writing runs ------------------------------------------------------------ */

static SpillState *
spill_begin(GpuSortState *state, int nwords)
{
	MemoryContext cxt = AllocSetContextCreate(state->css.ss.ps.state->es_query_cxt,
											  "GpuSort runs", ALLOCSET_DEFAULT_SIZES);
	SpillState *sp = MemoryContextAllocZero(cxt, sizeof(SpillState));

	sp->cxt = cxt;
	sp->nwords = nwords;
	sp->tuple_off = MAXALIGN(nwords * sizeof(uint32));
	sp->wordbuf = MemoryContextAlloc(cxt, Max(nwords, 1) * sizeof(uint32));
	sp->runs_cap = 8;
	sp->runs = MemoryContextAllocZero(cxt, sp->runs_cap * sizeof(SpillRun));
	sp->limit_bytes = state->limit_bytes;
	/* the write buffers, outside the budget: about a thirtieth of it (64 kB each at least) */
	sp->wbuf_size = Max(Min(RUN_BUFFER_MAX, state->limit_bytes / 256), RUN_BUFFER_MIN);
	sp->wbuf = MemoryContextAlloc(cxt, sp->wbuf_size);
	sp->last = -1;
	sp->columnar = state->columnar;
	if (sp->columnar)
	{
		Size		off;
		Size		rec_align;
		ColumnType *types;

		sp->natts = state->cols.natts;
		/* a copy: the store's own goes with sortcxt at every run */
		types = MemoryContextAlloc(cxt, Max(sp->natts, 1) * sizeof(ColumnType));
		memcpy(types, state->cols.type, sp->natts * sizeof(ColumnType));
		sp->types = types;
		sp->val_off = MemoryContextAlloc(cxt, Max(sp->natts, 1) * sizeof(Size));
		/*
		 * The words, each value aligned as its type needs (by value at its
		 * length, else MAXALIGN), the NULL flags; the record padded to its
		 * strictest alignment, so that records laid end to end stay aligned
		 */
		off = nwords * sizeof(uint32);
		rec_align = sizeof(uint32);
		for (int c = 0; c < sp->natts; c++)
		{
			Size		align = types[c].byval ? (Size) types[c].len : MAXIMUM_ALIGNOF;

			off = TYPEALIGN(align, off);
			rec_align = Max(rec_align, align);
			sp->val_off[c] = off;
			off += types[c].width;
		}
		sp->nulls_off = off;
		off += sp->natts;
		sp->rec_bytes = TYPEALIGN(rec_align, off);
	}
	sp->gbuf_size = Max(Min(Min(GATHER_BYTES_MAX, RUN_BUFFER_MAX * gpusort_threads_allowed()),
							state->limit_bytes / 32), RUN_BUFFER_MIN);
	sp->gbuf_size = MAXALIGN(Max(sp->gbuf_size, sp->rec_bytes));
	/* zeroed: a column record's padding is never written, and goes to the files as zeros */
	sp->gbuf = MemoryContextAllocZero(cxt, sp->gbuf_size);
	sp->ncmp = state->nkeys - state->finish_from;
	if (sp->ncmp > 0)
	{
		sp->cmp = MemoryContextAllocZero(cxt, sp->ncmp * sizeof(SortSupportData));
		for (int i = 0; i < sp->ncmp; i++)
		{
			int			k = state->finish_from + i;
			SortSupport ssup = &sp->cmp[i];

			ssup->ssup_cxt = cxt;
			ssup->ssup_collation = state->collations[k];
			ssup->ssup_nulls_first = state->nulls_first[k];
			ssup->ssup_attno = state->attnos[k];
			PrepareSortSupportFromOrderingOp(state->sortops[k], ssup);
		}
	}
	state->spill = sp;
	return sp;
}

/*
 * Row row's merge words into out: words[j][row], or consts[j] where
 * words[j] is NULL.  out need not be aligned (in a tuple row's record the
 * words follow a tuple of any length).
 */
static inline void
row_words(const SpillState *sp, const uint32 *const *words, const uint32 *consts, Size row,
		  void *out)
{
	for (int j = 0; j < sp->nwords; j++)
	{
		uint32		v = words[j] ? words[j][row] : consts[j];

		memcpy((char *) out + j * sizeof(uint32), &v, sizeof(v));
	}
}

/* Start loading row row's merge words, which lie anywhere in their arrays. */
static inline void
prefetch_row_words(const SpillState *sp, const uint32 *const *words, Size row)
{
	for (int j = 0; j < sp->nwords; j++)
		if (words[j])
			__builtin_prefetch(&words[j][row]);
}

/*
 * Writing a run: the sorted rows are gathered into records by threads
 * (run_threads.h), each a slice of consecutive sorted positions into a
 * buffer of its own, and the buffers are written in order.  The rows lie
 * anywhere in the stores (and in the workers' shared memory), so that a
 * record costs a cache and TLB miss or two: threads overlap them.  The
 * threads call no PostgreSQL function; the interrupt check comes between
 * slices.
 */
typedef struct GatherPart
{
	const GpuSortState *state;
	const SpillState *sp;
	const uint32 *const *words;
	const uint32 *consts;
	Size		first;			/* sorted positions first .. end - 1 */
	Size		end;
	char	   *buf;			/* records of first .. first + done - 1 */
	Size		cap;
	Size		used;
	Size		done;
} GatherPart;

/* Records of part's positions from part->first, as many as its buffer holds. */
static void
gather_part(void *arg)
{
	GatherPart *part = (GatherPart *) arg;
	const GpuSortState *state = part->state;
	const SpillState *sp = part->sp;
	const uint32 *perm = state->perm;
	Size		i = part->first;

	part->used = 0;
	part->done = 0;
	if (sp->columnar)
	{
		const ColumnStore *cols = &state->cols;

		for (; i < part->end && part->used + sp->rec_bytes <= part->cap; i++)
		{
			Size		row = perm ? perm[i] : i;
			char	   *rec = part->buf + part->used;

			/* rows in sorted order lie anywhere in the store: read ahead */
			if (perm && i + RUN_PREFETCH < part->end)
			{
				Size		ahead = perm[i + RUN_PREFETCH];

				for (int c = 0; c < cols->natts; c++)
				{
					__builtin_prefetch(column_store_at(cols, c, ahead));
					if (cols->isnull[c])
						__builtin_prefetch(&cols->isnull[c][ahead]);
				}
				prefetch_row_words(sp, part->words, ahead);
			}
			row_words(sp, part->words, part->consts, row, rec);
			for (int c = 0; c < sp->natts; c++)
			{
				rec[sp->nulls_off + c] = cols->isnull[c] ? cols->isnull[c][row] : false;
				memcpy(rec + sp->val_off[c], column_store_at(cols, c, row), sp->types[c].width);
			}
			part->used += sp->rec_bytes;
		}
	}
	else
	{
		MinimalTuple *tuples = state->store.tuples;
		Size		words_bytes = sp->nwords * sizeof(uint32);

		while (i < part->end)
		{
			MinimalTuple batch[RUN_BATCH];
			int			count = (int) Min((Size) RUN_BATCH, part->end - i);
			int			j;

			/* the tuple pointers of a batch looked up at once: their misses overlap */
			for (j = 0; j < count; j++)
			{
				Size		row = perm ? perm[i + j] : i + j;

				batch[j] = tuples[row];
				__builtin_prefetch(batch[j]);
				prefetch_row_words(sp, part->words, row);
			}
			for (j = 0; j < count; j++)
			{
				Size		row = perm ? perm[i + j] : i + j;
				MinimalTuple tuple = batch[j];
				uint32		len = tuple->t_len;
				Size		rec = sizeof(len) + words_bytes + len;
				char	   *out = part->buf + part->used;

				if (part->used + rec > part->cap)
					break;
				/* the rest of a tuple a few rows ahead (its first line is in cache) */
				if (j + 4 < count)
				{
					MinimalTuple ahead = batch[j + 4];

					for (Size off = 64; off < Min(ahead->t_len, 1024); off += 64)
						__builtin_prefetch((char *) ahead + off);
				}
				memcpy(out, &len, sizeof(len));
				row_words(sp, part->words, part->consts, row, out + sizeof(len));
				memcpy(out + sizeof(len) + words_bytes, tuple, len);
				part->used += rec;
			}
			i += j;
			if (j < count)
				break;
		}
	}
	part->done = i - part->first;
}

/* One record of a tuple row larger than a gather buffer, through the write buffer. */
static uint64
write_one_tuple_row(GpuSortState *state, SpillState *sp, SpillRun *run, Size pos,
					const uint32 *const *words, const uint32 *consts)
{
	Size		row = state->perm ? state->perm[pos] : pos;
	MinimalTuple tuple = state->store.tuples[row];
	uint32		len = tuple->t_len;

	row_words(sp, words, consts, row, sp->wordbuf);
	run_write(sp, run, &len, sizeof(len));
	run_write(sp, run, sp->wordbuf, sp->nwords * sizeof(uint32));
	run_write(sp, run, tuple, len);
	run_flush(sp, run);
	return sizeof(len) + sp->nwords * sizeof(uint32) + len;
}

/* The store's rows of the sort, in order, as records; the bytes written. */
static uint64
write_rows(GpuSortState *state, SpillState *sp, SpillRun *run,
		   const uint32 *const *words, const uint32 *consts)
{
	GatherPart	parts[RUN_THREADS_MAX];
	int			nthreads = Max(1, Min(gpusort_threads_allowed(), RUN_THREADS_MAX));
	/*
	 * A megabyte a thread at most (the records are still in its cache when
	 * written), MAXALIGNed so that every part's records are aligned, and
	 * room for a column store's record (gbuf holds one): fewer threads
	 * where the buffer is small
	 */
	Size		part_cap = TYPEALIGN_DOWN(MAXIMUM_ALIGNOF,
										  Min(sp->gbuf_size / nthreads, RUN_BUFFER_MAX));
	uint64		bytes = 0;
	Size		pos = 0;
	/* bytes a record takes, to share the positions out: exact for columns, a mean for tuples */
	double		rec_mean = sp->columnar ? (double) sp->rec_bytes :
		sizeof(uint32) + sp->nwords * sizeof(uint32) +
		(state->store.ntuples > 0 ? (double) state->store.bytes / state->store.ntuples : 64.0);

	Assert(sp->gbuf != NULL);
	if (sp->columnar && part_cap < sp->rec_bytes)
	{
		part_cap = MAXALIGN(sp->rec_bytes);
		nthreads = (int) Max((Size) 1, Min((Size) nthreads, sp->gbuf_size / part_cap));
	}
	while (pos < state->nresult)
	{
		Size		per = Max((Size) 1, (Size) (part_cap / (rec_mean * (sp->columnar ? 1.0 : 1.1))));
		int			nparts = 0;

		CHECK_FOR_INTERRUPTS();
		while (nparts < nthreads && pos < state->nresult)
		{
			GatherPart *part = &parts[nparts];

			part->state = state;
			part->sp = sp;
			part->words = words;
			part->consts = consts;
			part->first = pos;
			part->end = Min(pos + per, state->nresult);
			part->buf = sp->gbuf + nparts * part_cap;
			part->cap = part_cap;
			pos = part->end;
			nparts++;
		}
		if (nparts > 1)
			run_thread_parts(gather_part, parts, sizeof(GatherPart), nparts);
		else
			gather_part(&parts[0]);

		/* the buffers in order; a part that ran out of room is finished here */
		for (int t = 0; t < nparts; t++)
		{
			GatherPart *part = &parts[t];

			for (;;)
			{
				run_write_out(sp, run, part->buf, part->used);
				bytes += part->used;
				part->first += part->done;
				if (part->first >= part->end)
					break;
				if (part->done == 0)
				{
					/* a tuple larger than the buffer (a column record always fits one) */
					if (sp->columnar)
						elog(ERROR, "gpusort: a run record of %zu bytes does not fit a buffer of %zu",
							 sp->rec_bytes, part->cap);
					bytes += write_one_tuple_row(state, sp, run, part->first, words, consts);
					part->first++;
					if (part->first >= part->end)
						break;
				}
				CHECK_FOR_INTERRUPTS();
				gather_part(part);
			}
		}
		if (!sp->columnar)
			rec_mean = (double) bytes / pos;
	}
	return bytes;
}

void
spill_write_run(GpuSortState *state, int nwords, const uint32 *const *words,
				const uint32 *consts)
{
	SpillState *sp = state->spill ? state->spill : spill_begin(state, nwords);
	SpillRun   *run;
	instr_time	start;
	uint64		bytes = 0;

	Assert(sp->nwords == nwords && !sp->merging);
	INSTR_TIME_SET_CURRENT(start);
	if (sp->nruns == sp->runs_cap)
	{
		sp->runs = repalloc(sp->runs, 2 * sp->runs_cap * sizeof(SpillRun));
		memset(sp->runs + sp->runs_cap, 0, sp->runs_cap * sizeof(SpillRun));
		sp->runs_cap *= 2;
	}
	run = &sp->runs[sp->nruns];
	run->file = create_run_file();
	sp->nruns++;				/* closed with the others from now on */

	bytes = write_rows(state, sp, run, words, consts);
	if (state->columnar)
		ExecClearTuple(state->vslot);
	run->rows = state->nresult;
	sp->runs_written++;
	sp->rows_written += run->rows;
	sp->bytes_written += bytes;
	sp->write_ms += ms_since(start);
}

/* ---- the merge ------------------------------------------------------------------ */

/*
 * Read run from its start: a buffer that shares what the budget leaves
 * among the runs (the stores are empty by now), 64 kB to 1 MB each.
 */
static void
run_open_reading(SpillState *sp, SpillRun *run)
{
	if (run->rbuf == NULL)
	{
		Size		share = sp->limit_bytes / (2 * Max(sp->nruns, 1));

		run->rbuf_size = Max(Min(share, RUN_BUFFER_MAX), RUN_BUFFER_MIN);
		/* fixed-size records never straddle two reads: each is read in place */
		if (sp->columnar && sp->rec_bytes <= run->rbuf_size)
			run->rbuf_size -= run->rbuf_size % sp->rec_bytes;
		run->rbuf = MemoryContextAlloc(sp->cxt, run->rbuf_size);
	}
	run_rewind(run);
}

/* The row of a columnar record in a virtual slot, its by-reference values pointing into rec. */
static TupleTableSlot *
record_to_slot(SpillState *sp, const char *rec, TupleTableSlot *slot)
{
	ExecClearTuple(slot);
	for (int c = 0; c < sp->natts; c++)
	{
		slot->tts_isnull[c] = rec[sp->nulls_off + c];
		slot->tts_values[c] = slot->tts_isnull[c] ? (Datum) 0 :
			column_value_get(rec + sp->val_off[c], &sp->types[c], 0);
	}
	return ExecStoreVirtualTuple(slot);
}

/* A row's first two merge words (at words) as one number, in their order. */
static inline uint64
run_head(const SpillState *sp, const char *words)
{
	const uint32 *w = (const uint32 *) words;

	return sp->nwords >= 2 ? ((uint64) w[0] << 32) | w[1] :
		sp->nwords == 1 ? (uint64) w[0] << 32 : 0;
}

/* Read run's next row into its buffer. */
static void
run_read_next(SpillState *sp, SpillRun *run)
{
	uint32		len;

	Assert(run->read < run->rows);
	if (sp->columnar)
	{
		if (run->rpos == run->rlen && run->roff < run->size)
			run_fill(run);
		if (run->rlen - run->rpos >= sp->rec_bytes)
		{
			/* in place: valid until this run reads on */
			run->buf = run->rbuf + run->rpos;
			run->rpos += sp->rec_bytes;
		}
		else
		{
			run->own = grow_buffer(sp, run->own, &run->own_size, sp->rec_bytes);
			run->buf = run->own;
			run_read(run, run->buf, sp->rec_bytes);
		}
		run->read++;
		run->head = run_head(sp, run->buf);
		if (run->slot)
			record_to_slot(sp, run->buf, run->slot);
		return;
	}
	run_read(run, &len, sizeof(len));
	run->own = grow_buffer(sp, run->own, &run->own_size, sp->tuple_off + len);
	run->buf = run->own;
	run_read(run, run->buf, sp->nwords * sizeof(uint32));
	run_read(run, run->buf + sp->tuple_off, len);
	run->tuple = (MinimalTuple) (run->buf + sp->tuple_off);
	run->read++;
	run->head = run_head(sp, run->buf);
	if (run->slot)
		ExecStoreMinimalTuple(run->tuple, run->slot, false);
}

/* Order of the current rows of runs a and b: words, comparators, run number. */
static int
run_compare(SpillState *sp, int a, int b)
{
	SpillRun   *ra = &sp->runs[a];
	SpillRun   *rb = &sp->runs[b];
	const uint32 *wa = (const uint32 *) ra->buf;
	const uint32 *wb = (const uint32 *) rb->buf;

	if (ra->head != rb->head)
		return ra->head < rb->head ? -1 : 1;
	for (int j = 2; j < sp->nwords; j++)
		if (wa[j] != wb[j])
			return wa[j] < wb[j] ? -1 : 1;
	for (int i = 0; i < sp->ncmp; i++)
	{
		SortSupport ssup = &sp->cmp[i];
		bool		null1,
					null2;
		Datum		d1 = slot_getattr(ra->slot, ssup->ssup_attno, &null1);
		Datum		d2 = slot_getattr(rb->slot, ssup->ssup_attno, &null2);
		int			cmp = ApplySortComparator(d1, null1, d2, null2, ssup);

		if (cmp != 0)
			return cmp;
	}
	/* rows of earlier runs were read earlier: the sort stays stable */
	return a < b ? -1 : (a > b ? 1 : 0);
}

/* Does the current row of run a come before run b's?  An exhausted run comes after every other. */
static inline bool
run_before(SpillState *sp, int a, int b)
{
	bool		ea = sp->runs[a].exhausted;
	bool		eb = sp->runs[b].exhausted;

	if (unlikely(ea || eb))
		return ea == eb ? a < b : eb;
	return run_compare(sp, a, b) < 0;
}

/* The winner of the subtree at node (leaves: nodes nruns .. 2 nruns - 1); its losers stored. */
static int
tree_build(SpillState *sp, int node)
{
	int			a,
				b;

	if (node >= sp->nruns)
		return node - sp->nruns;
	a = tree_build(sp, 2 * node);
	b = tree_build(sp, 2 * node + 1);
	if (run_before(sp, a, b))
	{
		sp->tree[node] = b;
		return a;
	}
	sp->tree[node] = a;
	return b;
}

/* Every run from its first row, the tree made. */
static void
merge_start(GpuSortState *state, SpillState *sp)
{
	if (sp->tree_cap < sp->nruns)
	{
		if (sp->tree)
			pfree(sp->tree);
		sp->tree_cap = Max(sp->nruns, 1);
		sp->tree = MemoryContextAlloc(sp->cxt, sp->tree_cap * sizeof(int));
	}
	sp->last = -1;
	sp->emitted = 0;
	for (int r = 0; r < sp->nruns; r++)
	{
		SpillRun   *run = &sp->runs[r];

		if (sp->ncmp > 0 && run->slot == NULL)
		{
			MemoryContext old = MemoryContextSwitchTo(sp->cxt);

			run->slot = MakeSingleTupleTableSlot(state->slot->tts_tupleDescriptor,
												 sp->columnar ? &TTSOpsVirtual :
												 &TTSOpsMinimalTuple);
			MemoryContextSwitchTo(old);
		}
		CHECK_FOR_INTERRUPTS();
		run_open_reading(sp, run);
		run->exhausted = run->rows == 0;
		if (!run->exhausted)
			run_read_next(sp, run);
	}
	sp->tree[0] = sp->nruns > 0 ? tree_build(sp, 1) : 0;
	sp->merging = true;
}

/* The run that holds the next row in the merged order; NULL at the end (or the bound). */
static SpillRun *
merge_next(GpuSortState *state, SpillState *sp)
{
	int			winner;

	if (sp->nruns == 0)
		return NULL;
	if (sp->last >= 0)
	{
		SpillRun   *run = &sp->runs[sp->last];

		/* the row handed up last came from the winner: its next row plays up from its leaf */
		Assert(sp->tree[0] == sp->last);
		if (run->read < run->rows)
			run_read_next(sp, run);
		else
			run->exhausted = true;
		winner = sp->last;
		for (int node = (sp->nruns + winner) / 2; node >= 1; node /= 2)
		{
			int			other = sp->tree[node];

			if (run_before(sp, other, winner))
			{
				sp->tree[node] = winner;
				winner = other;
			}
		}
		sp->tree[0] = winner;
		sp->last = -1;
	}
	winner = sp->tree[0];
	if (sp->runs[winner].exhausted || (state->bound >= 0 && sp->emitted >= (Size) state->bound))
		return NULL;
	sp->last = winner;
	sp->emitted++;
	return &sp->runs[winner];
}

static void run_release(SpillRun *run);

static void
close_runs(SpillState *sp)
{
	for (int r = 0; r < sp->nruns; r++)
		run_release(&sp->runs[r]);
}

/* Random access: merge every run into one file of [length, tuple, length] records. */
static void
merge_into_file(GpuSortState *state, SpillState *sp)
{
	instr_time	start;
	SpillRun   *run;

	INSTR_TIME_SET_CURRENT(start);
	sp->merged = create_file(sp);
	merge_start(state, sp);
	while ((run = merge_next(state, sp)) != NULL)
	{
		bool		free_tuple = false;
		MinimalTuple tuple = sp->columnar ?
			ExecFetchSlotMinimalTuple(record_to_slot(sp, run->buf, state->vslot), &free_tuple) :
			run->tuple;
		uint32		len = tuple->t_len;

		if (sp->merged_rows % ROWS_PER_INTERRUPT_CHECK == 0)
			CHECK_FOR_INTERRUPTS();
		BufFileWrite(sp->merged, &len, sizeof(len));
		BufFileWrite(sp->merged, tuple, len);
		BufFileWrite(sp->merged, &len, sizeof(len));
		sp->merged_rows++;
		sp->bytes_written += len + 2 * sizeof(len);
		if (free_tuple)
			pfree(tuple);
	}
	if (sp->columnar)
		ExecClearTuple(state->vslot);
	close_runs(sp);
	seek_to(sp->merged, 0, 0, SEEK_SET);
	sp->cur = -1;
	sp->merge_ms += ms_since(start);
}

/*
 * The most runs one merge reads at once: each holds a read buffer of at
 * least RUN_BUFFER_MIN, and half the budget holds them (at least 6).
 */
static int
merge_fan_in(SpillState *sp)
{
	return (int) Max(sp->limit_bytes / (2 * RUN_BUFFER_MIN), 6);
}

/* A run's reading state and memory let go, its file closed. */
static void
run_release(SpillRun *run)
{
	if (run->file >= 0)
		FileClose(run->file);
	run->file = -1;
	if (run->slot)
		ExecDropSingleTupleTableSlot(run->slot);
	run->slot = NULL;
	if (run->rbuf)
		pfree(run->rbuf);
	run->rbuf = NULL;
	if (run->own)
		pfree(run->own);
	run->own = NULL;
	run->own_size = 0;
	run->buf = NULL;
}

/*
 * More runs than one merge reads at once (a small budget, a large
 * input): merge consecutive groups of them into one run each, pass after
 * pass, as the tuplesort merges its tapes, until one merge can take them
 * all.  Groups of consecutive runs keep the order of equal rows.
 */
static void
merge_passes(GpuSortState *state, SpillState *sp)
{
	int			fan_in = merge_fan_in(sp);
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	while (sp->nruns > fan_in)
	{
		SpillRun   *old = sp->runs;
		int			nold = sp->nruns;
		int			ngroups = (nold + fan_in - 1) / fan_in;
		SpillRun   *merged = MemoryContextAllocZero(sp->cxt, ngroups * sizeof(SpillRun));

		for (int g = 0; g < ngroups; g++)
		{
			SpillRun   *out = &merged[g];
			SpillRun   *run;

			out->file = -1;
			sp->runs = old + g * fan_in;
			sp->nruns = Min(fan_in, nold - g * fan_in);
			merge_start(state, sp);
			out->file = create_run_file();
			while ((run = merge_next(state, sp)) != NULL)
			{
				if (out->rows % ROWS_PER_INTERRUPT_CHECK == 0)
					CHECK_FOR_INTERRUPTS();
				if (sp->columnar)
					run_write(sp, out, run->buf, sp->rec_bytes);
				else
				{
					uint32		len = run->tuple->t_len;

					run_write(sp, out, &len, sizeof(len));
					run_write(sp, out, run->buf, sp->nwords * sizeof(uint32));
					run_write(sp, out, run->tuple, len);
				}
				out->rows++;
			}
			run_flush(sp, out);
			sp->bytes_written += out->size;
			for (int r = 0; r < sp->nruns; r++)
				run_release(&sp->runs[r]);
			sp->merging = false;
		}
		pfree(old);
		sp->runs = merged;
		sp->nruns = ngroups;
		sp->runs_cap = ngroups;
		sp->passes++;
	}
	sp->merge_ms += ms_since(start);
}

void
spill_finish_input(GpuSortState *state)
{
	SpillState *sp = state->spill;

	gpusort_phase_begin("merge");
	CHECK_FOR_INTERRUPTS();
	/* no more runs from the stores */
	if (sp->gbuf)
		pfree(sp->gbuf);
	sp->gbuf = NULL;
	merge_passes(state, sp);
	if (state->random_access)
		merge_into_file(state, sp);
	else
		merge_start(state, sp);
}

/* ---- reading the merged file -------------------------------------------------------- */

/* The record that ends at the file's position, read; the position is kept. */
static MinimalTuple
read_record_before(SpillState *sp)
{
	uint32		len;

	seek_to(sp->merged, 0, -(off_t) sizeof(len), SEEK_CUR);
	read_exact(sp->merged, &len, sizeof(len));
	seek_to(sp->merged, 0, -(off_t) (len + sizeof(len)), SEEK_CUR);
	sp->rec = grow_buffer(sp, sp->rec, &sp->rec_size, len);
	read_exact(sp->merged, sp->rec, len);
	seek_to(sp->merged, 0, sizeof(len), SEEK_CUR);
	return (MinimalTuple) sp->rec;
}

/* Move back over the record that ends at the file's position. */
static void
skip_record_before(SpillState *sp)
{
	uint32		len;

	seek_to(sp->merged, 0, -(off_t) sizeof(len), SEEK_CUR);
	read_exact(sp->merged, &len, sizeof(len));
	seek_to(sp->merged, 0, -(off_t) (len + 2 * sizeof(len)), SEEK_CUR);
}

/*
 * The file's position is the end of row min(cur, n - 1), or its start
 * when cur is -1: reading on forward takes row cur + 1, reading back the
 * record before.
 */
static MinimalTuple
merged_fetch(SpillState *sp, bool forward)
{
	int64		n = sp->merged_rows;
	uint32		len;

	if (forward)
	{
		if (sp->cur >= n - 1)
		{
			sp->cur = n;
			return NULL;
		}
		read_exact(sp->merged, &len, sizeof(len));
		sp->rec = grow_buffer(sp, sp->rec, &sp->rec_size, len);
		read_exact(sp->merged, sp->rec, len);
		read_exact(sp->merged, &len, sizeof(len));
		sp->cur++;
		return (MinimalTuple) sp->rec;
	}
	if (n == 0 || sp->cur <= 0)
	{
		if (n > 0 && sp->cur == 0)
			skip_record_before(sp);
		sp->cur = -1;
		return NULL;
	}
	if (sp->cur < n)
		skip_record_before(sp);
	sp->cur--;
	return read_record_before(sp);
}

TupleTableSlot *
spill_fetch(GpuSortState *state, bool forward)
{
	SpillState *sp = state->spill;
	MinimalTuple tuple;

	if (++sp->fetches % ROWS_PER_INTERRUPT_CHECK == 0)
		CHECK_FOR_INTERRUPTS();
	if (sp->merged)
		tuple = merged_fetch(sp, forward);
	else
	{
		SpillRun   *run;

		if (!forward)
			elog(ERROR, "gpusort: backward fetch from a GpuSort not made for random access");
		run = merge_next(state, sp);
		if (run != NULL && sp->columnar)
			return record_to_slot(sp, run->buf, state->vslot);
		tuple = run ? run->tuple : NULL;
	}
	if (tuple == NULL)
	{
		if (state->vslot)
			ExecClearTuple(state->vslot);
		return ExecClearTuple(state->slot);
	}
	return ExecStoreMinimalTuple(tuple, state->slot, false);
}

void
spill_rescan(GpuSortState *state)
{
	SpillState *sp = state->spill;

	if (sp->merged)
	{
		seek_to(sp->merged, 0, 0, SEEK_SET);
		sp->cur = -1;
	}
	else
		merge_start(state, sp);
}

void
spill_mark(GpuSortState *state)
{
	SpillState *sp = state->spill;

	if (sp->merged == NULL)
		elog(ERROR, "gpusort: mark in a GpuSort not made for random access");
	sp->mark_cur = sp->cur;
	BufFileTell(sp->merged, &sp->mark_fileno, &sp->mark_offset);
}

void
spill_restore(GpuSortState *state)
{
	SpillState *sp = state->spill;

	if (sp->merged == NULL)
		elog(ERROR, "gpusort: restore in a GpuSort not made for random access");
	seek_to(sp->merged, sp->mark_fileno, sp->mark_offset, SEEK_SET);
	sp->cur = sp->mark_cur;
}

/* ---- the rest ------------------------------------------------------------------------ */

void
spill_to_tuplesort(GpuSortState *state, Tuplesortstate *ts)
{
	SpillState *sp = state->spill;

	Assert(sp->merged == NULL);
	for (int r = 0; r < sp->nruns; r++)
	{
		SpillRun   *run = &sp->runs[r];

		run_open_reading(sp, run);
		while (run->read < run->rows)
		{
			if (run->read % ROWS_PER_INTERRUPT_CHECK == 0)
				CHECK_FOR_INTERRUPTS();
			run_read_next(sp, run);
			tuplesort_puttupleslot(ts, sp->columnar ?
								   record_to_slot(sp, run->buf, state->vslot) :
								   ExecStoreMinimalTuple(run->tuple, state->slot, false));
		}
		ExecClearTuple(state->slot);
		if (state->vslot)
			ExecClearTuple(state->vslot);
		FileClose(run->file);
		run->file = -1;
	}
	spill_close(state);
}

void
spill_close(GpuSortState *state)
{
	SpillState *sp = state->spill;

	if (sp == NULL)
		return;
	close_runs(sp);
	if (sp->merged)
		BufFileClose(sp->merged);
	state->spill = NULL;
	MemoryContextDelete(sp->cxt);
}

void
spill_explain(GpuSortState *state, ExplainState *es, bool show_times)
{
	SpillState *sp = state->spill;
	int64		kb = (int64) ((sp->bytes_written + 1023) / 1024);

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		const char *merge = sp->merged ?
			(show_times ? psprintf("merged into one file in %.3f ms", sp->merge_ms) :
			 "merged into one file") :
			"merged as rows are handed up";

		if (sp->passes > 0)
			merge = psprintf("%s, merge passes before: %d%s", merge, sp->passes,
							 show_times && !sp->merged ?
							 psprintf(" in %.3f ms", sp->merge_ms) : "");

		ExplainPropertyText("Sorted Runs",
							show_times ?
							psprintf("%d runs, %zu rows, " INT64_FORMAT " kB written in %.3f ms, %s",
									 sp->runs_written, sp->rows_written, kb, sp->write_ms, merge) :
							psprintf("%d runs, %zu rows, " INT64_FORMAT " kB written, %s",
									 sp->runs_written, sp->rows_written, kb, merge), es);
	}
	else
	{
		ExplainPropertyInteger("Sorted Runs", NULL, sp->runs_written, es);
		ExplainPropertyInteger("Rows Written to Runs", NULL, (int64) sp->rows_written, es);
		ExplainPropertyInteger("Run Space Used", "kB", kb, es);
		ExplainPropertyBool("Merged Into One File", sp->merged != NULL, es);
		ExplainPropertyInteger("Merge Passes", NULL, sp->passes, es);
		if (show_times)
		{
			ExplainPropertyFloat("Run Write Time", "ms", sp->write_ms, 3, es);
			if (sp->merged || sp->passes > 0)
				ExplainPropertyFloat("Merge Time", "ms", sp->merge_ms, 3, es);
		}
	}
}
